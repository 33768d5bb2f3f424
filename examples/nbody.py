"""Gravitational N-body steps with vectors (``vec3``) and small device functions.

Every body pulls on every other: ``accelerations`` loops over all bodies and asks two helpers
for each pair (``inv_r3(d)``: the softened 1/r**3 of the separation ``d``, ``pull(d, mass)``:
the pull as a ``vec3``), and ``advance`` kicks the velocities and drifts the positions. The
positions, velocities and accelerations are ``(n, 3)`` float32 arrays seen by the kernels as
``list[vec3]``; they stay on the device as ``GpuArray``s for all the steps, and come back once.
The result is checked against the same steps computed with numpy in float64, and the total
momentum (which the forces conserve) is checked too. Run: ``python examples/nbody.py [n] [steps]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, dot, gpu, to_device, vec3

SOFTENING2 = 0.01       # squared softening length: keeps close encounters finite


@Gpu.func
def inv_r3(d: vec3) -> float:
    r2 = dot(d, d) + SOFTENING2
    return 1.0 / (r2 * math.sqrt(r2))


@Gpu.func
def pull(d: vec3, mass: float) -> vec3:
    return d * (mass * inv_r3(d))


@Gpu
def accelerations(n: int, p: list[vec3], m: list[float], acc: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    here: vec3 = p[i]
    total = vec3(0.0)
    for j in range(n):
        total += pull(p[j] - here, m[j])
    acc[i] = total


@Gpu
def advance(n: int, dt: float, p: list[vec3], v: list[vec3], acc: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += acc[i] * dt
    p[i] += v[i] * dt


def numpy_steps(pos, vel, m, dt, steps):
    """The same steps in float64 with numpy (the reference)."""
    pos, vel = pos.astype(np.float64), vel.astype(np.float64)
    m = m.astype(np.float64)
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]              # d[i, j] = pos[j] - pos[i]
        r2 = (d * d).sum(axis=2) + SOFTENING2
        w = 1.0 / (r2 * np.sqrt(r2))
        acc = (d * (m[None, :] * w)[:, :, None]).sum(axis=1)
        vel += acc * dt
        pos += vel * dt
    return pos, vel


def main(n: int = 2048, steps: int = 10, seed: int = 0, dt: float = 1e-3) -> dict:
    rng = np.random.default_rng(seed)
    pos = rng.standard_normal((n, 3)).astype(np.float32)
    vel = (0.1 * rng.standard_normal((n, 3))).astype(np.float32)
    m = rng.uniform(0.5, 1.5, n).astype(np.float32) / n
    t0 = time.perf_counter()
    p, v = to_device(pos), to_device(vel)            # (n, 3) arrays: list[vec3] on the device
    dm, acc = to_device(m), to_device(np.zeros_like(pos))
    for _ in range(steps):
        gpu(accelerations, n, p, dm, acc)
        gpu(advance, n, dt, p, v, acc)
    got_pos, got_vel = p.numpy().astype(np.float64), v.numpy().astype(np.float64)
    seconds = time.perf_counter() - t0
    ref_pos, ref_vel = numpy_steps(pos, vel, m, dt, steps)
    pos_err = float(np.abs(got_pos - ref_pos).max())
    momentum = (got_vel * m[:, None]).sum(axis=0)
    start_momentum = (vel.astype(np.float64) * m[:, None]).sum(axis=0)
    drift = float(np.abs(momentum - start_momentum).max())
    ok = pos_err < 1e-4 and drift < 1e-5
    pairs = n * n * steps
    print(f"{n:,} bodies, {steps} steps: {seconds * 1e3:.1f} ms on the device "
          f"({pairs / seconds / 1e9:.2f} G pair interactions/s)")
    print(f"  largest position difference from numpy float64: {pos_err:.2e}")
    print(f"  total momentum drift: {drift:.2e}  -> {'ok' if ok else 'FAILED'}")
    return {"start_pos": pos, "start_vel": vel, "m": m, "dt": dt, "steps": steps,
            "pos": got_pos, "vel": got_vel, "numpy_pos": ref_pos, "numpy_vel": ref_vel,
            "position_error": pos_err, "momentum_drift": drift, "seconds": seconds, "ok": ok}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    result = main(*args)
    sys.exit(0 if result["ok"] else 1)
