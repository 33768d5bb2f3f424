"""The V2 workload (ours only): device functions and float64, each against its own baseline
measured in the same process, alternating.

* ``fn_mem_*_ms``: an element-wise kernel that calls two small ``@Gpu.func`` helpers
  (``sqrt(norm2(x, y))``, ``norm2`` calling ``sq``) against the same kernel written inline,
  resident, n values; ``fn_nbody_*_ms``: the N-body accelerations of ``examples/nbody.py``
  (helpers ``inv_r3`` and ``pull`` in the inner loop) against the same loop written inline.
  The target: helpers cost nothing (<= 1.02x the inline time).
* ``saxpy32_GBps`` / ``saxpy64_GBps``: the saxpy of ``examples.samples`` resident on float32
  and on float64 arrays (the launch follows the arrays' dtype), 12 and 24 bytes per element.
  The target: float64 >= 0.9x float32's GB/s.
* ``mandel32_ms`` / ``mandel64_ms``: Mandelbrot with float32 and float64 arithmetic (the same
  kernel body; float64 pinned with width types), resident int32 result.

Every result is checked against numpy; a wrong one is an error, never a time.
"""

from __future__ import annotations

import math

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, dot, gpu, to_device, vec3
from examples.samples import lengths, lengths_inline, mandelbrot, mandelbrot_numpy, saxpy
from cthreads.lang.widths import float64

from examples.nbody import SOFTENING2, accelerations
from timing import alternating_ms


@Gpu
def accelerations_inline(n: int, p: list[vec3], m: list[float], acc: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    here: vec3 = p[i]
    total = vec3(0.0)
    for j in range(n):
        d = p[j] - here
        r2 = dot(d, d) + SOFTENING2
        w = 1.0 / (r2 * math.sqrt(r2))
        total += d * (m[j] * w)
    acc[i] = total


@Gpu
def mandelbrot64(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    px: int = i % width
    py: int = i // width
    cx: float64 = -2.2 + 3.0 * float64(px) / float64(width)
    cy: float64 = -1.2 + 2.4 * float64(py) / float64(height)
    x: float64 = 0.0
    y: float64 = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float64 = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[i] = k




def _functions(p: dict, m: dict) -> str | None:
    n = p["n_mem"]
    rng = np.random.default_rng(7)
    xs = rng.standard_normal(n).astype(np.float32)
    ys = rng.standard_normal(n).astype(np.float32)
    out_h, out_i = np.zeros(n, np.float32), np.zeros(n, np.float32)
    with GpuArena() as arena:
        arena.bind(xs=xs, ys=ys, out_h=out_h, out_i=out_i)
        run = {"helper": lambda: gpu(lengths, n, xs, ys, out_h).join(download=False),
               "inline": lambda: gpu(lengths_inline, n, xs, ys, out_i).join(download=False)}
        for f in run.values():
            f()
        ms = alternating_ms(run, p["reps"])
        arena.sync()
    m["fn_mem_helper_ms"], m["fn_mem_inline_ms"] = ms["helper"], ms["inline"]
    want = np.hypot(xs.astype(np.float64), ys.astype(np.float64))
    for name, got in (("helper", out_h), ("inline", out_i)):
        if not np.allclose(got, want, rtol=1e-6, atol=0):
            return f"lengths ({name}) differs from numpy"

    b = p["bodies"]
    pos = rng.standard_normal((b, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1.5, b).astype(np.float32) / b
    dp, dm = to_device(pos), to_device(mass)                # list[vec3] over (b, 3)
    out = {k: to_device(np.zeros((b, 3), np.float32)) for k in ("helper", "inline")}
    run = {"helper": lambda: gpu(accelerations, b, dp, dm, out["helper"]).join(),
           "inline": lambda: gpu(accelerations_inline, b, dp, dm, out["inline"]).join()}
    for f in run.values():
        f()
    ms = alternating_ms(run, p["reps"])
    acc = {k: a.numpy() for k, a in out.items()}
    m["fn_nbody_helper_ms"], m["fn_nbody_inline_ms"] = ms["helper"], ms["inline"]
    d = pos[None, :, :].astype(np.float64) - pos[:, None, :].astype(np.float64)
    r2 = (d * d).sum(axis=2) + SOFTENING2
    want = (d * (mass.astype(np.float64)[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(axis=1)
    scale = np.abs(want).max()
    for name, got in acc.items():
        if np.abs(got - want).max() > 1e-4 * scale:
            return f"N-body accelerations ({name}) differ from numpy"
    return None


def _float64(p: dict, m: dict) -> str | None:
    n = p["n_saxpy"]
    runs, arrays = {}, {}
    with GpuArena() as arena:
        for bits, dt in ((32, np.float32), (64, np.float64)):
            x = np.arange(n, dtype=dt) % 1000
            y = np.ones(n, dt)
            arena.bind(**{f"x{bits}": x, f"y{bits}": y})
            arrays[bits] = (x, y)
            runs[bits] = (lambda x=x, y=y: gpu(saxpy, n, 0.5, x, y).join(download=False))
        for f in runs.values():
            f()
        ms = alternating_ms(runs, p["reps"])
        arena.sync()
    for bits, (x, y) in arrays.items():
        calls = p["reps"] + 1
        if not np.array_equal(y, 1.0 + calls * 0.5 * x.astype(y.dtype)):
            return f"float{bits} saxpy differs from numpy"
        m[f"saxpy{bits}_GBps"] = n * 3 * (bits // 8) / ms[bits] / 1e6

    w, h, it = p["mandel"]
    counts = {32: np.zeros(w * h, np.int32), 64: np.zeros(w * h, np.int32)}
    with GpuArena() as arena:
        arena.bind(c32=counts[32], c64=counts[64])
        runs = {32: lambda: gpu(mandelbrot, w * h, w, h, it, counts[32]).join(download=False),
                64: lambda: gpu(mandelbrot64, w * h, w, h, it, counts[64]).join(download=False)}
        for f in runs.values():
            f()
        ms = alternating_ms(runs, p["reps"])
        arena.sync()
    m["mandel32_ms"], m["mandel64_ms"] = ms[32], ms[64]
    want = mandelbrot_numpy(w, h, it)
    for bits, got in counts.items():
        # float32 and float64 orbits part ways on the set's boundary: most pixels agree
        if np.mean(got == want) < (0.99 if bits == 32 else 0.95):
            return f"float{bits} Mandelbrot differs from numpy on too many pixels"
    return None


def v2(p: dict) -> dict:
    m: dict = {}
    err = _functions(p, m) or _float64(p, m)
    return {"error": err, "metrics": m}


WORKLOADS = {"V2": v2}
