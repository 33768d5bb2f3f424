"""A 2-D heat equation on a grid of 2-D lists, kept on the device for all the steps.

The plate starts cold with a hot square in the middle; its edges stay at 0 (Dirichlet). Each
step is one Jacobi sweep ``v[y, x] = u[y, x] + alpha * (laplacian of u)`` written with 2-D
indexes and launched over the grid with ``threads=(w, h)``; the two grids swap roles every
step and stay in a ``GpuArena`` until one ``sync()`` at the end. The result is checked against
the same steps in numpy float64. Run: ``python examples/heat2d.py [n] [steps]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu

ALPHA = 0.2          # below 0.25: the explicit scheme is stable


@Gpu
def heat_step(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        return
    lap = u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1] - 4.0 * u[y, x]
    v[y, x] = u[y, x] + ALPHA * lap


def initial(n: int) -> np.ndarray:
    u = np.zeros((n, n), np.float32)
    u[n // 3:2 * n // 3, n // 3:2 * n // 3] = 100.0
    return u


def numpy_steps(u: np.ndarray, steps: int) -> np.ndarray:
    u = u.astype(np.float64)
    for _ in range(steps):
        v = u.copy()
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + ALPHA * lap
        u = v
    return u


def main(n: int = 512, steps: int = 200) -> dict:
    u = initial(n)
    v = u.copy()
    t0 = time.perf_counter()
    with GpuArena() as arena:
        arena.bind(u=u, v=v)
        for _ in range(steps // 2):
            gpu(heat_step, n, n, u, v, threads=(n, n)).join(download=False)
            gpu(heat_step, n, n, v, u, threads=(n, n)).join(download=False)
        arena.sync()
    seconds = time.perf_counter() - t0
    want = numpy_steps(initial(n), 2 * (steps // 2))
    err = float(np.abs(u - want).max())
    ok = err < 1e-3 * 100.0
    print(f"{n}x{n} plate, {2 * (steps // 2)} steps: {seconds * 1e3:.1f} ms on the device; "
          f"heat left {float(u.sum()):.1f} (numpy {want.sum():.1f}); largest difference "
          f"{err:.2e} -> {'ok' if ok else 'FAILED'}")
    return {"u": u, "numpy": want, "error": err, "seconds": seconds, "ok": ok}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    sys.exit(0 if main(*args)["ok"] else 1)
