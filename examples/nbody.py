"""Gravitational N-body steps with small device functions (``@Gpu.func``).

Every body pulls on every other: ``accelerations`` loops over all bodies and asks two helpers
for each pair (``inv_r3``: the softened 1/r**3, ``pull``: one component of the pull), and
``kick_drift`` (a helper that writes through its list parameters) advances velocities and
positions. The bodies stay on the device in a ``GpuArena`` for all the steps; the result is
checked against the same steps computed with numpy in float64, and the total momentum (which
the forces conserve) is checked too. Run: ``python examples/nbody.py [n] [steps]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu

SOFTENING2 = 0.01       # squared softening length: keeps close encounters finite


@Gpu.func
def inv_r3(dx: float, dy: float, dz: float) -> float:
    r2 = dx * dx + dy * dy + dz * dz + SOFTENING2
    return 1.0 / (r2 * math.sqrt(r2))


@Gpu.func
def pull(d: float, mass: float, w: float) -> float:
    return d * mass * w


@Gpu.func
def kick_drift(p: list[float], v: list[float], a: list[float], i: int, dt: float) -> None:
    v[i] += a[i] * dt
    p[i] += v[i] * dt


@Gpu
def accelerations(n: int, x: list[float], y: list[float], z: list[float], m: list[float],
                  ax: list[float], ay: list[float], az: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    sx: float = 0.0
    sy: float = 0.0
    sz: float = 0.0
    for j in range(n):
        dx = x[j] - x[i]
        dy = y[j] - y[i]
        dz = z[j] - z[i]
        w = inv_r3(dx, dy, dz)
        sx += pull(dx, m[j], w)
        sy += pull(dy, m[j], w)
        sz += pull(dz, m[j], w)
    ax[i] = sx
    ay[i] = sy
    az[i] = sz


@Gpu
def advance(n: int, dt: float, x: list[float], y: list[float], z: list[float],
            vx: list[float], vy: list[float], vz: list[float],
            ax: list[float], ay: list[float], az: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    kick_drift(x, vx, ax, i, dt)
    kick_drift(y, vy, ay, i, dt)
    kick_drift(z, vz, az, i, dt)


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
    x, y, z = (np.ascontiguousarray(pos[:, k]) for k in range(3))
    vx, vy, vz = (np.ascontiguousarray(vel[:, k]) for k in range(3))
    ax, ay, az = (np.zeros(n, np.float32) for _ in range(3))
    t0 = time.perf_counter()
    with GpuArena() as arena:
        arena.bind(x=x, y=y, z=z, m=m, vx=vx, vy=vy, vz=vz, ax=ax, ay=ay, az=az)
        for _ in range(steps):
            gpu(accelerations, n, x, y, z, m, ax, ay, az).join(download=False)
            gpu(advance, n, dt, x, y, z, vx, vy, vz, ax, ay, az).join(download=False)
        arena.sync()
    seconds = time.perf_counter() - t0
    ref_pos, ref_vel = numpy_steps(pos, vel, m, dt, steps)
    got_pos = np.stack([x, y, z], axis=1).astype(np.float64)
    got_vel = np.stack([vx, vy, vz], axis=1).astype(np.float64)
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
