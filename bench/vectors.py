"""Issue 24's vector targets in one run: each program written with ``list[vec3]`` against the
same program written with separate arrays, float32 and float64 (float64 arrays: the launch's
width machinery compiles the float64 kernels).

    python bench/vectors.py [--n N] [--nbody-n M] [--repeats R] [--rounds K] [--out FILE]

Rows (ratios of the two forms timed in alternating rounds, the median of ``K`` rounds):

* saxpy: ``list[vec3]`` over ``(n, 3)`` against the scalar saxpy over the ``3n`` floats, GB/s
  (12 bytes per float32 component: x read, y read and written); target >= 0.95x (H200);
* particle step: ``v += g * dt; p += v * dt`` with ``g: vec3`` against separate x/y/z arrays
  with three float parameters (the same program: all three components updated); target
  <= 1.05x of the x/y/z time;
* N-body step: all-pairs accelerations with a softening and a kick (one launch), then a drift
  (another), over ``m`` bodies; vec3 against x/y/z arrays; target <= 1.05x.

Every launch runs on resident GpuArrays (no transfers timed): ``R`` launches, then one join,
timed on the host. No asserts: a measurement (``--out`` also writes the printed report).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, device_name, dot, gpu, to_device, vec3

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.samples import saxpy  # noqa: E402  (the saxpy every benchmark times)


@Gpu
def saxpy_vec3(n: int, a: float, x: list[vec3], y: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def step_vec3(n: int, dt: float, g: vec3, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += g * dt
    p[i] += v[i] * dt


@Gpu
def step_xyz(n: int, dt: float, gx: float, gy: float, gz: float,
             px: list[float], py: list[float], pz: list[float],
             vx: list[float], vy: list[float], vz: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    vx[i] += gx * dt
    vy[i] += gy * dt
    vz[i] += gz * dt
    px[i] += vx[i] * dt
    py[i] += vy[i] * dt
    pz[i] += vz[i] * dt


@Gpu
def kick_vec3(n: int, dt: float, eps2: float, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    pi: vec3 = p[i]
    acc = vec3(0.0)
    for j in range(n):
        d = p[j] - pi
        r2 = dot(d, d) + eps2
        s = 1.0 / (r2 * math.sqrt(r2))
        acc += d * s
    v[i] += acc * dt


@Gpu
def drift_vec3(n: int, dt: float, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] += v[i] * dt


@Gpu
def kick_xyz(n: int, dt: float, eps2: float, px: list[float], py: list[float],
             pz: list[float], vx: list[float], vy: list[float], vz: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    xi = px[i]
    yi = py[i]
    zi = pz[i]
    ax = 0.0
    ay = 0.0
    az = 0.0
    for j in range(n):
        dx = px[j] - xi
        dy = py[j] - yi
        dz = pz[j] - zi
        r2 = dx * dx + dy * dy + dz * dz + eps2
        s = 1.0 / (r2 * math.sqrt(r2))
        ax += dx * s
        ay += dy * s
        az += dz * s
    vx[i] += ax * dt
    vy[i] += ay * dt
    vz[i] += az * dt


@Gpu
def drift_xyz(n: int, dt: float, px: list[float], py: list[float], pz: list[float],
              vx: list[float], vy: list[float], vz: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        px[i] += vx[i] * dt
        py[i] += vy[i] * dt
        pz[i] += vz[i] * dt


def _launches(calls, repeats: int) -> float:
    """Seconds per repetition of ``calls`` (kernel, args) pairs: ``repeats`` of them, then a
    join."""
    t0 = time.perf_counter()
    job = None
    for _ in range(repeats):
        for kernel, args in calls:
            job = gpu(kernel, *args)
    job.join()
    return (time.perf_counter() - t0) / repeats


def _compare(a, b, repeats: int, rounds: int):
    """(median seconds of ``a``, of ``b``) in ``rounds`` alternating rounds, after a warm-up."""
    _launches(a, 1)
    _launches(b, 1)
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(_launches(a, repeats))
        tb.append(_launches(b, repeats))
    return statistics.median(ta), statistics.median(tb)


def _saxpy_row(n, dtype, repeats, rounds):
    host = np.random.default_rng(0).random((n, 3)).astype(dtype)
    xs, ys = to_device(host.reshape(-1)), to_device(host.reshape(-1))
    xv, yv = to_device(host), to_device(host)
    t_vec, t_sc = _compare([(saxpy_vec3, (n, 0.5, xv, yv))], [(saxpy, (3 * n, 0.5, xs, ys))],
                           repeats, rounds)
    nbytes = 3 * host.nbytes
    return (f"saxpy {np.dtype(dtype).name:8s} list[vec3] {nbytes / t_vec / 1e9:7.2f} GB/s, "
            f"scalar over 3n {nbytes / t_sc / 1e9:7.2f} GB/s, ratio {t_sc / t_vec:.3f} "
            "(target >= 0.95)")


def _split(host):
    return [to_device(np.ascontiguousarray(host[:, k])) for k in range(3)]


def _step_row(n, dtype, repeats, rounds):
    rng = np.random.default_rng(1)
    p0, v0 = rng.random((n, 3)).astype(dtype), rng.random((n, 3)).astype(dtype)
    g = vec3(0.0, -9.8, 0.0)
    vec = [(step_vec3, (n, 0.01, g, to_device(p0), to_device(v0)))]
    xyz = [(step_xyz, (n, 0.01, 0.0, -9.8, 0.0, *_split(p0), *_split(v0)))]
    t_vec, t_xyz = _compare(vec, xyz, repeats, rounds)
    return (f"particle {np.dtype(dtype).name:8s} list[vec3] {t_vec * 1e3:8.2f} ms, x/y/z "
            f"{t_xyz * 1e3:8.2f} ms, ratio {t_vec / t_xyz:.3f} (target <= 1.05)")


def _nbody_row(m, dtype, repeats, rounds):
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal((m, 3)).astype(dtype)
    v0 = (0.1 * rng.standard_normal((m, 3))).astype(dtype)
    p, v = to_device(p0), to_device(v0)
    px, py, pz = _split(p0)
    vx, vy, vz = _split(v0)
    dt, eps2 = 1e-3, 1e-2
    vec = [(kick_vec3, (m, dt, eps2, p, v)), (drift_vec3, (m, dt, p, v))]
    xyz = [(kick_xyz, (m, dt, eps2, px, py, pz, vx, vy, vz)),
           (drift_xyz, (m, dt, px, py, pz, vx, vy, vz))]
    t_vec, t_xyz = _compare(vec, xyz, repeats, rounds)
    return (f"N-body   {np.dtype(dtype).name:8s} list[vec3] {t_vec * 1e3:8.2f} ms, x/y/z "
            f"{t_xyz * 1e3:8.2f} ms, ratio {t_vec / t_xyz:.3f} (target <= 1.05)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4 * 1024 * 1024,
                    help="vec3 elements of the saxpy and the particle step")
    ap.add_argument("--nbody-n", type=int, default=4096, help="bodies of the N-body step")
    ap.add_argument("--repeats", type=int, default=10, help="launches per timed round")
    ap.add_argument("--nbody-repeats", type=int, default=3, help="N-body steps per round")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (median)")
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args()
    lines = [f"device: {device_name()}  n = {args.n} vec3, N-body {args.nbody_n} bodies, "
             f"median of {args.rounds} alternating rounds"]
    print(lines[0], flush=True)
    rows = []
    for dtype in (np.float32, np.float64):
        rows.append(lambda d=dtype: _saxpy_row(args.n, d, args.repeats, args.rounds))
        rows.append(lambda d=dtype: _step_row(args.n, d, args.repeats, args.rounds))
        rows.append(lambda d=dtype: _nbody_row(args.nbody_n, d, args.nbody_repeats,
                                               args.rounds))
    for row in rows:
        lines.append(row())
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
