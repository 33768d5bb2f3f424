"""Where the vec3 N-body step and the complex Mandelbrot lose time against their x/y/z and
re/im-pair forms on a GPU (issue 24's rows): each variant's ``device_time`` (median of
``--reps`` timed launches), same data, one process. No asserts: a measurement.

    python bench/probe_vec_layout.py [--bodies 32768] [--side 4096] [--reps 9]

N-body accelerations (one kick): ``list[vec3]`` over (n, 3); three arrays; a ``list[float]``
over the same (n, 3) memory indexed ``p[3 * j + k]``; ``list[vec4]`` over a padded (n, 4).
Mandelbrot: re/im pairs with ``2.0 * x * y``; the pairs with the textbook product's imaginary
part ``x * y + y * x``; complex ``z * z + c``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cthreads.gpu import GlobalIdx, Gpu, device_name, gpu, to_device, vec3, vec4, dot, zeros  # noqa


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@Gpu
def kick_flat(n: int, dt: float, eps2: float, p: list[float], v: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    xi = p[3 * i]
    yi = p[3 * i + 1]
    zi = p[3 * i + 2]
    ax = 0.0
    ay = 0.0
    az = 0.0
    for j in range(n):
        dx = p[3 * j] - xi
        dy = p[3 * j + 1] - yi
        dz = p[3 * j + 2] - zi
        r2 = dx * dx + dy * dy + dz * dz + eps2
        s = 1.0 / (r2 * math.sqrt(r2))
        ax += dx * s
        ay += dy * s
        az += dz * s
    v[3 * i] += ax * dt
    v[3 * i + 1] += ay * dt
    v[3 * i + 2] += az * dt


@Gpu
def kick_vec4(n: int, dt: float, eps2: float, p: list[vec4], v: list[vec4]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    pi: vec4 = p[i]
    acc = vec4(0.0)
    for j in range(n):
        d = p[j] - pi
        r2 = dot(d, d) + eps2
        s = 1.0 / (r2 * math.sqrt(r2))
        acc += d * s
    v[i] += acc * dt


@Gpu
def pairs_textbook(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    cx: float = -2.2 + 3.0 * (i % width) / width
    cy: float = -1.2 + 2.4 * (i // width) / height
    x: float = 0.0
    y: float = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float = x * x - y * y + cx
        t = x * y
        y = t + t + cy
        x = xt
        k += 1
    counts[i] = k


def _device_ms(kernel, args, reps: int) -> float:
    gpu(kernel, *args).join(download=False)
    times = []
    for _ in range(reps):
        job = gpu(kernel, *args, timed=True)
        job.join(download=False)
        times.append(job.device_time)
    if any(t is None for t in times):
        return float("nan")
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", type=int, default=32768)
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    vb, cm = _load("vectors"), _load("complex_mandelbrot")
    print(device_name())
    m = a.bodies
    rng = np.random.default_rng(2)
    for dt in (np.float32, np.float64):
        p0 = rng.standard_normal((m, 3)).astype(dt)
        p, v = to_device(p0), to_device(np.zeros_like(p0))
        xyz = [to_device(np.ascontiguousarray(p0[:, k])) for k in range(3)]
        vxyz = [to_device(np.zeros(m, dt)) for _ in range(3)]
        pf, vf = to_device(p0.reshape(-1)), to_device(np.zeros(3 * m, dt))
        p4 = np.zeros((m, 4), dt)
        p4[:, :3] = p0
        p4, v4 = to_device(p4), to_device(np.zeros((m, 4), dt))
        rows = {"list[vec3]": (vb.kick_vec3, (m, 1e-3, 1e-2, p, v)),
                "x/y/z": (vb.kick_xyz, (m, 1e-3, 1e-2, *xyz, *vxyz)),
                "flat p[3j+k]": (kick_flat, (m, 1e-3, 1e-2, pf, vf)),
                "list[vec4]": (kick_vec4, (m, 1e-3, 1e-2, p4, v4))}
        base = None
        for name, (k, args) in rows.items():
            ms = _device_ms(k, args, a.reps)
            base = base or ms
            print(f"kick {np.dtype(dt).name:8s} {name:14s} {ms:9.3f} ms  {ms / base:.3f}x of vec3")
    n = a.side * a.side
    counts = zeros(n, np.int32)
    base = None
    for name, k in (("pairs 2xy", cm.pairs), ("pairs x*y+y*x", pairs_textbook),
                    ("complex z*z+c", cm.complex_sq), ("complex abs", cm.complex_abs)):
        ms = _device_ms(k, (n, a.side, a.side, 256, counts), a.reps)
        base = base or ms
        print(f"mandelbrot {name:16s} {ms:8.3f} ms  {ms / base:.3f}x of pairs")


if __name__ == "__main__":
    main()
