"""Module-level struct classes and kernels for tests/device/test_structs.py (importable, so
the kernels pickle by reference and the struct classes by name)."""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu, uint32, vec3


@Gpu.struct
class Particle:
    pos: vec3
    vel: vec3
    mass: float
    alive: bool


@Gpu.struct
class Stats:
    hits: int
    total: float


@Gpu.struct
class Tracked:
    p: Particle
    stats: Stats


@Gpu
def integrate(n: int, dt: float, p: list[Particle]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    if p[i].alive:
        p[i].vel += vec3(0.0, -9.8, 0.0) * dt
        p[i].pos += p[i].vel * dt
        if p[i].pos.y < 0.0:
            p[i].pos.y = 0.0
            p[i].alive = False
    p[i].mass = p[i].mass * 0.5


@Gpu.func
def bounce(q: Particle, floor: float) -> Particle:
    out = Particle(q)
    if out.pos.y < floor:
        out.pos.y = floor
        out.vel = Particle(q).vel * -0.5
    return out


@Gpu
def nested(n: int, dt: float, t: list[Tracked], out: list[Particle]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    q: Particle = Particle(t[i].p)
    q.pos += q.vel * dt
    q = bounce(q, 0.25)
    t[i].p = q
    t[i].stats.hits += 1
    t[i].stats.total = t[i].stats.total + q.mass * float(t[i].stats.hits)
    out[n - 1 - i] = Particle(pos=q.pos, vel=vec3(float(i)), mass=q.mass, alive=q.pos.y > 0.5)


@Gpu
def grid_mass(g: list[list[Particle]], out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(g) and x < g.shape[1]:
        out[y][x] = g[y][x].mass + g[y, x].pos.z
        g[y][x].vel.x = float(x + 10 * y)


@Gpu
def write_n(n: int, p: list[Particle]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i].mass = 1.0


@Gpu
def fill_from(n: int, q: Particle, t: Tracked, p: list[Particle]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] = q
        p[i].pos.x = float(i) + t.stats.total
        p[i].alive = t.p.alive and q.alive
        p[i].mass = q.mass * float(t.stats.hits)


@Gpu.struct
class Tagged:
    tag: uint32
    x: float
    n: int


@Gpu
def retag(c: list[Tagged]) -> None:
    i: int = GlobalIdx.x
    if i < len(c):
        c[i].tag = c[i].tag * uint32(3) + uint32(1)
        c[i].n -= 5
        c[i].x = float(c[i].tag)
