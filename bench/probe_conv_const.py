"""conv1d / conv2d of ``bench/compute_bound.py`` written with the tap count as a module-level
constant instead of the parameter ``m`` (the loop bound becomes a WGSL literal), checked
kernels, against the parameter form and CUDA C (CuPy RawKernel) in the same process.

    python bench/probe_conv_const.py [--small] [--reps R]

``bench/probe_conv_forms.py`` showed on the H200 that NVIDIA's Vulkan compiler unrolls a loop
only when its bound is a constant: the hand WGSL with ``const M`` ran conv1d at 0.93x CUDA and
conv2d at 1.04x, against 0.71-0.75x with the bound read from the uniform. Kernels reach the
same WGSL when the bound is a constant the decorator can see (a module-level int, or a closure
value: ``docs/language.md``). Every result is checked against numpy (``Problem.check``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import compute_bound as CB  # noqa: E402
import compute_kernels as CK  # noqa: E402
from cthreads.gpu import GlobalIdx, Gpu, device_name  # noqa: E402


def const_kernels(m1: int, m2: int) -> dict:
    """conv1d with ``m1`` taps and conv2d with ``m2`` x ``m2``, the counts closure constants
    (``m`` stays a parameter, unused, so the launches are the same)."""

    def conv1d(n: int, m: int, x: list[float], f: list[float], out: list[float]) -> None:
        i: int = GlobalIdx.x
        if i >= n:
            return
        acc: float = 0.0
        for j in range(m1):
            acc += x[i + j] * f[j]
        out[i] = acc

    def conv2d(w: int, h: int, m: int, img: list[list[float]], f: list[list[float]],
               out: list[list[float]]) -> None:
        px: int = GlobalIdx.x
        py: int = GlobalIdx.y
        if px >= w or py >= h:
            return
        acc: float = 0.0
        for dy in range(m2):
            for dx in range(m2):
                acc += img[py + dy, px + dx] * f[dy, dx]
        out[py, px] = acc

    return {"conv1d": Gpu(conv1d), "conv2d": Gpu(conv2d)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    sizes = {name: CB.SIZES[name][0 if args.small else 1] for name in ("conv1d", "conv2d")}
    const = const_kernels(sizes["conv1d"]["m"], sizes["conv2d"]["m"])
    cp, why = CB._cupy()
    module = cp.RawModule(code=CK.CUDA_SOURCE) if cp is not None else None
    print(f"device: {device_name()}; CUDA: {'CuPy RawKernel' if cp else why}")
    for name, size in sizes.items():
        prob = CB.Problem(name, size)
        k = CB.LAUNCHES[name][0 if args.small else 1]
        forms = {"checked, m a parameter": lambda: CB.ours_form(prob, CK.CHECKED[name], k),
                 "checked, m a constant": lambda: CB.ours_form(prob, const[name], k)}
        if module is not None:
            forms["cuda"] = lambda: CB.cupy_form(cp, module, prob, k)
        got = CB.measure(prob, forms, args.reps)
        print(f"\n{name} {prob.label}: ms per launch (best of {args.reps} samples of {k})")
        ref = got.get("cuda")
        for form, t in got.items():
            if not isinstance(t, float):
                print(f"  {form:24s} {t}")
                continue
            ratio = f"   {ref / t:.2f}x CUDA" if isinstance(ref, float) else ""
            print(f"  {form:24s} {t * 1e3 / k:8.4f}{ratio}")
        if any(not isinstance(t, float) for t in got.values()):
            raise SystemExit(1)


if __name__ == "__main__":
    main()
