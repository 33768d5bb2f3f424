"""A particle fountain with a struct, vectors and a matrix.

Each particle is a ``Particle`` (``@Gpu.struct``: position and velocity ``vec3``, age, and an
``alive`` flag) in one numpy structured array of ``Particle.dtype`` that stays on the device as
a ``GpuArray``. Every step a kernel ages the live particles, turns their velocity by a small
rotation about the vertical axis (a ``mat33`` kernel parameter: the swirl), applies gravity,
moves them, bounces them off the floor with some loss (a device function taking and returning
a ``Particle``), and retires those past their lifetime. The same steps are then run by
``simulate()`` (the kernel as plain Python, over the same structured array) and compared, and
a few invariants are checked: no live particle below the floor, every retired one retired in
the step its age passed the lifetime.
Run: ``python examples/particles.py [n] [steps]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu, mat33, to_device, vec3

GRAVITY = -9.8
BOUNCE = 0.6            # the share of vertical speed a bounce keeps
LIFETIME = 3.0          # seconds a particle lives


@Gpu.struct
class Particle:
    pos: vec3
    vel: vec3
    age: float
    alive: bool = True


@Gpu.func
def bounce(q: Particle) -> Particle:
    out = Particle(q)                       # a copy: q is the caller's particle in Python
    if out.pos.y < 0.0:
        out.pos.y = -out.pos.y * BOUNCE
        out.vel.y = -out.vel.y * BOUNCE
    return out


@Gpu
def step(n: int, dt: float, swirl: mat33, p: list[Particle]) -> None:
    i: int = GlobalIdx.x
    if i >= n or not p[i].alive:
        return
    p[i].age += dt
    if p[i].age > LIFETIME:
        p[i].alive = False
        return
    p[i].vel = swirl @ p[i].vel + vec3(0.0, GRAVITY * dt, 0.0)
    p[i].pos += p[i].vel * dt
    p[i] = bounce(p[i])


def rotation_y(angle: float) -> mat33:
    c, s = math.cos(angle), math.sin(angle)
    return mat33(vec3(c, 0.0, s), vec3(0.0, 1.0, 0.0), vec3(-s, 0.0, c))


def fountain(n: int, seed: int = 0) -> np.ndarray:
    """n particles leaving the origin upwards, with ages spread over their lifetime."""
    rng = np.random.default_rng(seed)
    p = np.zeros(n, dtype=Particle.dtype)
    p["pos"][:, 1] = 0.01
    angle = rng.uniform(0.0, 2.0 * math.pi, n)
    spread = rng.uniform(0.5, 1.5, n)
    p["vel"][:, 0] = spread * np.cos(angle)
    p["vel"][:, 1] = rng.uniform(4.0, 8.0, n)
    p["vel"][:, 2] = spread * np.sin(angle)
    p["age"] = rng.uniform(0.0, LIFETIME, n)
    p["alive"] = True
    return p


def main(n: int = 100_000, steps: int = 100, dt: float = 0.01, check: int = 500) -> dict:
    start = fountain(n)
    swirl = rotation_y(0.02)
    t0 = time.perf_counter()
    d = to_device(start)
    for _ in range(steps):
        gpu(step, n, dt, swirl, d)
    got = d.numpy()
    seconds = time.perf_counter() - t0
    m = min(n, check)                       # simulate() runs in Python: the first m particles
    sim = start[:m].copy()
    for _ in range(steps):
        step.simulate(m, dt, swirl, sim)
    live = got["alive"]
    pos_err = float(np.abs(got["pos"][:m] - sim["pos"]).max())
    same_alive = bool((got["alive"][:m] == sim["alive"]).all())
    above = bool((got["pos"][live][:, 1] >= 0.0).all())
    ages = got["age"][~live]                # retired in the step their age passed LIFETIME
    still = bool(((ages > LIFETIME) & (ages <= LIFETIME + 2 * dt)).all())
    ok = pos_err < 1e-3 and same_alive and above and still
    print(f"{n:,} particles, {steps} steps: {seconds * 1e3:.1f} ms on the device; "
          f"{int(live.sum()):,} alive at the end")
    print(f"  largest position difference from simulate() (first {m:,}): {pos_err:.2e}")
    print(f"  alive flags agree: {same_alive}; live ones above the floor: {above}; "
          f"retired at their lifetime: {still}  -> {'ok' if ok else 'FAILED'}")
    return {"start": start, "particles": got, "simulated": sim, "checked": m,
            "position_error": pos_err, "seconds": seconds, "ok": ok}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    result = main(*args)
    sys.exit(0 if result["ok"] else 1)
