"""Build at install time what a first process would otherwise compute (the start-up entry of
``backend/native/shipped_cache.py``: wgpu.h's parse and the C type strings of a first launch).

    python -m cthreads.prebuild                 # ci/setup.sh runs it after each install
    python -m cthreads.prebuild --into FOLDER   # the wheel's build hook (hatch_build.py)

It runs itself again in a child process with empty cache folders (``--child PATH``), where two
tiny launches show which C types wgpu-py needs on the way to a first result.
"""

from __future__ import annotations

import sys

from .backend.native import header_cache, shipped_cache


def _first_launches() -> None:
    """A tiny launch on lists and one on numpy arrays, their results checked."""
    import numpy as np  # noqa: PLC0415

    from .gpu import GlobalIdx, Gpu, gpu  # noqa: PLC0415

    @Gpu
    def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            y[i] = a * x[i] + y[i]

    y = [1.0, 2.0, 3.0]
    gpu(saxpy, 3, 2.0, [1.0, 1.0, 1.0], y).join()
    ya = np.ones(8, np.float32)
    gpu(saxpy, 8, 2.0, np.ones(8, np.float32), ya).join()
    if y != [3.0, 4.0, 5.0] or not (ya == 3.0).all():
        raise RuntimeError(f"wrong results {y}, {ya}")


def build(folder: str | None = None) -> str:
    """Build the entry into ``folder`` (default: the package's); returns its path."""
    return shipped_cache.build([sys.executable, "-m", "cthreads.prebuild", "--child"], folder)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"] and len(argv) == 2:
        header_cache.write_build_entry(argv[1], _first_launches)
        return 0
    if argv[:1] == ["--into"] and len(argv) == 2:
        print(build(argv[1]))
        return 0
    if argv:
        print("usage: python -m cthreads.prebuild [--into FOLDER]", file=sys.stderr)
        return 2
    print(build())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
