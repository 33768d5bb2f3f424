"""Jacobi iterations for the 2-D Laplace equation with arrays that never leave the device.

An n x n plate has its top edge held at 1 and its other edges at 0; the inside starts at 0.
Each step replaces every inside value by the mean of its four neighbours (one Jacobi sweep),
written with 2-D indexes and launched with ``threads=(n, n)``. The two grids are ``GpuArray``s
that swap roles every step. Every ``check`` steps a kernel writes the squared change of each
cell into a third ``GpuArray`` and ``add.reduce`` sums it on the device: only that one number
comes back, and the loop stops when its square root falls below ``tol``. The grid is
downloaded once, at the end, and compared with the same number of steps in numpy float64.

For comparison the same sweep is also timed with numpy arrays passed to each launch (uploaded
and downloaded every time). float32 by default; ``--float64`` computes in float64.
Run: ``python examples/jacobi_gpuarray.py [n] [steps] [--float64]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu, to_device, zeros


@Gpu
def sweep(n: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= n - 1 or y >= n - 1:
        return
    v[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])


@Gpu
def squared_change(n: int, u: list[list[float]], v: list[list[float]], d: list[float]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= n or y >= n:
        return
    c = v[y, x] - u[y, x]
    d[y * n + x] = c * c


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def initial(n: int, dtype=np.float32) -> np.ndarray:
    u = np.zeros((n, n), dtype)
    u[0, :] = 1.0                      # the hot edge; the others stay 0
    return u


def numpy_steps(u: np.ndarray, steps: int) -> np.ndarray:
    u = u.astype(np.float64)
    v = u.copy()
    for _ in range(steps):
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u, v = v, u
    return u


def error_bound(steps: int, dtype) -> float:
    """How far ``steps`` device sweeps may be from the exact (float64 numpy) ones. A sweep
    rounds three additions (the multiply by 0.25 is exact), each by at most u times a value of
    at most 1 (the values stay in [0, 1]); the error already made is averaged, which never
    makes its largest value grow. So at most 3 * u * steps, u = 2**-24 (float32) or 2**-53,
    plus 2**-100 for values that a device may flush to zero."""
    u = 2.0**-24 if np.dtype(dtype) == np.float32 else 2.0**-53
    return 3 * u * steps + 2.0**-100


def solve(n: int, steps: int, tol: float, check: int, dtype) -> dict:
    """Run at most ``steps`` sweeps on the device, measuring the change every ``check``."""
    ud = to_device(initial(n, dtype))
    vd = ud.copy()                      # the edges are in both grids and never written
    dd = zeros(n * n, dtype=dtype)
    done, change, residuals = 0, math.inf, []
    while done < steps:
        gpu(sweep, n, ud, vd, threads=(n, n))
        done += 1
        if done % check == 0 or done == steps:
            gpu(squared_change, n, ud, vd, dd, threads=(n, n))
            change = math.sqrt(add.reduce(dd))        # one number downloaded
            residuals.append((done, change))
        ud, vd = vd, ud                                # the new grid is ud
        if change < tol:
            break
    return {"grid": ud, "steps": done, "change": change, "residuals": residuals}


def copying_seconds_per_step(n: int, steps: int, dtype) -> float:
    """The same sweep with numpy arrays passed to each launch: up and back every time."""
    u = initial(n, dtype)
    v = u.copy()
    t0 = time.perf_counter()
    for _ in range(steps):
        gpu(sweep, n, u, v, threads=(n, n)).join()
        u, v = v, u
    return (time.perf_counter() - t0) / steps


def main(n: int = 256, steps: int = 2000, tol: float = 1e-4, check: int = 50,
         float64: bool = False, compare_steps: int = 20) -> dict:
    dtype = np.float64 if float64 else np.float32
    solve(n, 1, tol, 1, dtype)                        # compile the kernels: not timed
    t0 = time.perf_counter()
    r = solve(n, steps, tol, check, dtype)
    u = r["grid"].numpy()                              # the only download of the grid
    seconds = time.perf_counter() - t0
    done = r["steps"]

    t0 = time.perf_counter()
    want = numpy_steps(initial(n, dtype), done)
    numpy_seconds = time.perf_counter() - t0
    err = float(np.abs(u.astype(np.float64) - want).max())
    bound = error_bound(done, dtype)
    copying = copying_seconds_per_step(n, compare_steps, dtype) if compare_steps else math.nan
    ok = err <= bound and u.dtype == dtype

    name = np.dtype(dtype).name
    print(f"{n}x{n} Laplace, {name}: {done} Jacobi steps on the device "
          f"(change {r['change']:.2e}, tolerance {tol:g}, checked every {check})")
    print(f"  device-resident: {seconds * 1e3:.1f} ms ({seconds / done * 1e3:.3f} ms/step); "
          f"numpy float64: {numpy_seconds * 1e3:.1f} ms ({numpy_seconds / done * 1e3:.3f} ms/step)")
    if compare_steps:
        print(f"  numpy arrays copied each launch: {copying * 1e3:.3f} ms/step "
              f"({copying / (seconds / done):.1f}x the resident step)")
    print(f"  largest difference from numpy {err:.2e} (bound {bound:.2e}) -> "
          f"{'ok' if ok else 'FAILED'}")
    return {"u": u, "numpy": want, "steps": done, "change": r["change"],
            "residuals": r["residuals"], "error": err, "bound": bound, "seconds": seconds,
            "numpy_seconds": numpy_seconds, "copying_seconds_per_step": copying,
            "dtype": dtype, "ok": ok}


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [int(a) for a in sys.argv[1:] if not a.startswith("--")][:2]
    sys.exit(0 if main(*args, float64="--float64" in flags)["ok"] else 1)
