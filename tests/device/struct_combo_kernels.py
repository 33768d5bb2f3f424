"""Module-level struct classes and kernels for tests/device/test_struct_combos.py (importable,
so the kernels pickle by reference): atomics on struct fields, struct members of tuple results,
shared arrays of structs, list[Struct] parameters of device functions."""

from __future__ import annotations

from cthreads.gpu import (
    GlobalIdx, Gpu, ThreadIdx, atomic_add, atomic_compare_exchange, atomic_exchange, atomic_max,
    atomic_min, atomic_sub, shared, vec3,
)
from cthreads.sync import __sync_threads


@Gpu.struct
class Bin:
    total: float
    count: int
    top: int


@Gpu.struct
class Body:
    pos: vec3
    mass: float
    n: int
    alive: bool


@Gpu.func
def tally(b: list[Bin], k: int, i: int) -> int:
    atomic_max(b[k], "top", i)
    return atomic_add(b[k], "count", 1)


@Gpu
def histogram(x: list[float], b: list[Bin], first: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < len(x):
        k: int = int(x[i] * len(b))
        old: int = tally(b, k, i)
        if old == 0:
            first[k] = 1            # exactly one thread per bin sees the count at 0
            b[k].total = 0.5


@Gpu
def count_at(n: int, k: int, b: list[Bin]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        atomic_add(b[k], "count", 1)


@Gpu
def grid_count(g: list[list[Bin]]) -> None:
    i: int = GlobalIdx.x
    if i < 64:
        atomic_add(g[i % 2, i % 3], "count", i)


@Gpu.func
def halve(q: Body, f: float) -> tuple[Body, float]:
    r = Body(q)
    r.mass = q.mass * f
    r.n = q.n + 1
    return r, q.mass - r.mass


@Gpu.func
def halve_again(q: Body) -> tuple[Body, float]:
    return halve(q, 0.5)


@Gpu
def split(p: list[Body], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(out):
        p[i], out[i] = halve_again(p[i])
        out[i] += halve(p[i], 2.0)[0].mass
        s, d = halve(p[i], 1.0)
        p[i].alive = s.n > 3 and d == 0.0


@Gpu
def reverse_tiles(p: list[Body], out: list[Body]) -> None:
    t: list[Body] = shared(64)
    i: int = GlobalIdx.x
    j: int = ThreadIdx.x
    t[j] = p[i]
    t[j].mass = t[j].mass * 2.0
    __sync_threads()
    atomic_add(t[0], "n", 1)
    __sync_threads()
    out[i] = t[63 - j]
    if j == 0:
        out[i].n = t[0].n


@Gpu.func
def weigh(p: list[Body], i: int) -> float:
    p[i].n = p[i].n * 2
    return p[i].mass + p[i].pos.x


@Gpu.func
def weigh_row(g: list[list[Body]], i: int, j: int) -> float:
    return g[i, j].mass * float(g[i, j].alive)


@Gpu
def weigh_all(p: list[Body], g: list[list[Body]], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(out):
        out[i] = weigh(p, i) + weigh_row(g, i // 4, i % 4)


@Gpu
def bump(p: list[Body]) -> None:
    i: int = GlobalIdx.x
    if i < len(p):
        p[i].mass += 1.0
        p[i].n += i


@Gpu
def bump_grid(g: list[list[Body]]) -> None:
    i: int = GlobalIdx.x
    if i < len(g):
        for j in range(g.shape[1]):
            g[i, j].n += 10 * i + j


@Gpu
def other_atomics(c: list[Bin]) -> None:
    i: int = GlobalIdx.x
    if i < 100:
        atomic_compare_exchange(c[0], "count", 0, i + 1)
        atomic_sub(c[1], "top", i)
        atomic_min(c[1], "count", i - 50)
        atomic_exchange(c[2], "top", 7)


@Gpu
def touch(p: list[Body], n: int) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i].pos.y += 1.0
        p[i].mass = p[i].mass * 2.0
        p[i].n += i
        p[i].alive = not p[i].alive


@Gpu
def touch_with(p: list[Body], x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(p):
        p[i].mass = x[i]


@Gpu.struct
class Tagged:
    w: float
    bin: Bin


@Gpu
def count_nested(t: list[Tagged]) -> None:
    i: int = GlobalIdx.x
    if i < 40:
        atomic_add(t[i % 2].bin, "count", 1)
        atomic_max(t[i % 2].bin, "top", i)


@Gpu
def count_spread(n: int, b: list[Bin]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        k: int = i % len(b)
        atomic_add(b[k], "count", 1)
        atomic_compare_exchange(b[k], "top", 0, k)
        if i < len(b):
            b[k].total = float(k) * 0.5
