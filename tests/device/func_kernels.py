"""Device functions and the kernels that call them (module-level, as users write them).

The order of definitions is part of the test: ``late_caller`` calls ``late_helper``, which is
defined after it (and in examples/samples.py, ``norm2`` calls ``sq`` defined after it)."""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu, ThreadIdx, atomic_add, shared, uint32
from cthreads.sync import __sync_threads


@Gpu
def late_caller(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = late_helper(x[i])


@Gpu.func
def late_helper(v: float) -> float:
    return v * 3.0 + 1.0


# -- list parameters, returns anywhere, Python's integer semantics ----------------------------
@Gpu.func
def put(out: list[float], i: int, v: float) -> None:
    if v < 0.0:
        out[i] = 0.0
        return
    out[i] = v


@Gpu.func
def first_above(xs: list[float], start: int, t: float) -> int:
    for k in range(start, len(xs)):
        if xs[k] > t:
            return k
    return -1


@Gpu.func
def int_mix(a: int, b: int) -> int:
    q = a // b
    r = a % b
    if q > r:
        return q - r
    elif q == r:
        return 0
    else:
        return r * 2


@Gpu
def writes_through(n: int, x: list[float], t: float, out: list[float], where: list[int],
                   mix: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    put(out, i, x[i] - 0.5)
    where[i] = first_above(x, i, t)
    mix[i] = int_mix(i - 40, 7) + int_mix(i + 1, -3)


# -- atomics, shared memory and barriers in the calling kernel -------------------------------
@Gpu.func
def bump(h: list[int], k: int) -> None:
    atomic_add(h, k, 1)


@Gpu
def histogram(n: int, bins: int, v: list[int], h: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        bump(h, v[i] % bins)


@Gpu.func
def neighbours(tile: list[float], t: int) -> float:
    left: float = tile[t - 1] if t > 0 else 0.0
    right: float = tile[t + 1] if t < len(tile) - 1 else 0.0
    return left + tile[t] + right


@Gpu
def tile_sums(n: int, x: list[float], out: list[float]) -> None:
    tile: list[float] = shared(64)
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    if i < n:
        tile[t] = x[i]
    __sync_threads()
    if i < n:
        out[i] = neighbours(tile, t)


@Gpu.func
def my_index() -> int:
    return GlobalIdx.x


@Gpu.func
def lane() -> int:
    return ThreadIdx.x


@Gpu
def indexes_in_functions(n: int, gid: list[int], lid: list[int]) -> None:
    i: int = my_index()
    if i < n:
        gid[i] = i
        lid[i] = lane()


# -- bounds checks inside a device function ---------------------------------------------------
@Gpu.func
def shifted(xs: list[float], i: int, by: int) -> float:
    return xs[i + by]


@Gpu
def reads_shifted(n: int, by: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = shifted(x, i, by)


@Gpu(boundscheck=False)
def reads_shifted_unchecked(n: int, by: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = shifted(x, i, by)


# -- a loop in a device function, long enough for the CPU drivers' loop cap -------------------
@Gpu.func
def count_to(m: int) -> int:
    c: int = 0
    k: int = 0
    while k < m:
        c += 1
        k += 1
    return c


@Gpu
def counts(n: int, m: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = count_to(m)


# -- an element-wise kernel with helpers: the four-lane variant still applies ----------------
@Gpu.func
def axpy(a: float, x: float, y: float) -> float:
    return a * x + y


@Gpu
def saxpy_helper(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = axpy(a, x[i], y[i])


# reduction operations with loops (the CPU driver's loop probe runs them)
@Gpu.func
def gcd(a: int, b: int) -> int:
    while b != 0:
        t: int = a % b
        a = b
        b = t
    return abs(a)


@Gpu.func
def add_by_counting(a: int, b: int) -> int:
    s: int = a
    for _ in range(b):
        s += 1
    return s


# an associative operation that is not commutative: x -> m * x + c (mod 1021) as m * 1024 + c,
# ``then(a, b)`` the map a followed by b (axis reductions must keep the axis order)
@Gpu.func
def then(a: int, b: int) -> int:
    ma = a // 1024
    ca = a % 1024
    mb = b // 1024
    cb = b % 1024
    return (mb * ma % 1021) * 1024 + (mb * ca + cb) % 1021


# -- the plain binary operations the reduction and scan tests share ---------------------------

@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


@Gpu.func
def fmax(a: float, b: float) -> float:
    return max(a, b)


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


@Gpu.func
def uadd(a: uint32, b: uint32) -> uint32:
    return a + b
