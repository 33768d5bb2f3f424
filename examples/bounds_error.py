"""An off-by-one bug caught by the bounds checks, then fixed, then the checks turned off.

``smooth_buggy`` averages each element with its right neighbour and forgets that the last
element has none: its last thread reads ``x[n]``. Indexing is bounds-checked by default, so the
read does not touch memory outside ``x`` (it gives 0), and ``join()`` raises ``GpuIndexError``
(an ``IndexError``) naming the kernel, the Python file and line, the list and the index. No list
is written back after such an error: the caller's ``y`` keeps what it held before the launch.

``smooth`` is the fix. ``smooth_unchecked`` is the same fixed kernel with
``@Gpu(boundscheck=False)``: no checks and no status buffer, for the last percent of speed once
the indexing is known to be right. Run: ``python examples/bounds_error.py [n]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuIndexError, gpu


@Gpu
def smooth_buggy(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = 0.5 * (x[i] + x[i + 1])          # BUG: x[n] when i == n - 1


@Gpu
def smooth(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    if i + 1 < n:
        y[i] = 0.5 * (x[i] + x[i + 1])
    else:
        y[i] = x[i]                         # the last element has no right neighbour


@Gpu(boundscheck=False)
def smooth_unchecked(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    if i + 1 < n:
        y[i] = 0.5 * (x[i] + x[i + 1])
    else:
        y[i] = x[i]


def smooth_numpy(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y[:-1] = np.float32(0.5) * (x[:-1] + x[1:])
    return y


def best_time(kernel, n, x, y, repeats: int) -> float:
    gpu(kernel, n, x, y).join()                     # compiles on first use: not timed
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        gpu(kernel, n, x, y).join()
        best = min(best, time.perf_counter() - t0)
    return best


def main(n: int = 1_000_000, seed: int = 0, repeats: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.full(n, -1.0, np.float32)                # what the caller holds before the launch
    y_before = y.copy()

    # 1. the bug: join() raises, and y is left exactly as it was
    job = gpu(smooth_buggy, n, x, y)
    try:
        job.join()
        error = None
    except GpuIndexError as exc:
        error = exc
    message = str(error) if error is not None else ""
    y_after_error = y.copy()
    unchanged = bool(np.array_equal(y_after_error, y_before))
    print("smooth_buggy raised GpuIndexError:" if error is not None else
          "smooth_buggy did NOT raise")
    for line in message.splitlines()[:3]:
        print(f"  | {line}")
    print(f"  y unchanged after the error: {unchanged}")

    # 2. the fix gives numpy's answer (one multiply and one add: float32 rounds them alike)
    gpu(smooth, n, x, y).join()
    fixed = y.copy()
    fixed_ok = bool(np.array_equal(fixed, smooth_numpy(x)))
    print(f"smooth (fixed) equals numpy: {fixed_ok}")

    # 3. the same kernel without bounds checks: same result, no check per access (what that
    #    saves depends on the device and the kernel: measure, as here)
    t_checked = best_time(smooth, n, x, y, repeats)
    z = np.zeros(n, np.float32)
    t_unchecked = best_time(smooth_unchecked, n, x, z, repeats)
    unchecked_ok = bool(np.array_equal(z, fixed))
    print(f"boundscheck on: {1e3 * t_checked:.2f} ms, off: {1e3 * t_unchecked:.2f} ms per "
          f"launch (best of {repeats}); same result: {unchecked_ok}")
    ok = error is not None and unchanged and fixed_ok and unchecked_ok
    return {"x": x, "y_before": y_before, "y_after_error": y_after_error,
            "error": error, "message": message, "unchanged": unchanged, "fixed": fixed,
            "unchecked": z, "seconds_checked": t_checked, "seconds_unchecked": t_unchecked,
            "ok": ok}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    sys.exit(0 if result["ok"] else 1)
