"""Kernels of the width-type tests (module-level, as users write them).

Each ``*_ops`` kernel evaluates many operators on one pair of operands per thread and writes
``K`` results per pair, so that one launch checks a whole batch of operand pairs.
"""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu, atomic_add, atomic_max, shared
from cthreads.sync import __sync_threads
from cthreads.lang.widths import float32, float64, int32, int64, uint32

K_INT64 = 24


@Gpu
def int64_ops(a: list[int64], b: list[int64], out: list[int64]) -> None:
    i = GlobalIdx.x
    if i >= len(a):
        return
    x = a[i]
    y = b[i]
    o = i * 24
    out[o] = x + y
    out[o + 1] = x - y
    out[o + 2] = x * y
    out[o + 3] = x // y
    out[o + 4] = x % y
    out[o + 5] = x & y
    out[o + 6] = x | y
    out[o + 7] = x ^ y
    out[o + 8] = x << (y & 63)
    out[o + 9] = x >> (y & 63)
    out[o + 10] = -x
    out[o + 11] = ~x
    out[o + 12] = abs(x)
    out[o + 13] = min(x, y)
    out[o + 14] = max(x, y)
    out[o + 15] = (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) \
        + 32 * (x != y)
    out[o + 16] = 1 if -2**40 < x < y <= 2**62 else 0
    out[o + 17] = x and y
    out[o + 18] = x or y
    out[o + 19] = x if x > y else y
    out[o + 20] = x ** (y & 7)
    out[o + 21] = int32(x)
    out[o + 22] = uint32(x)
    out[o + 23] = 1 if (x > 0 and y > 0) or not (x < 0 or y < 0) else 0


K_UINT32 = 22


@Gpu
def uint32_ops(a: list[uint32], b: list[uint32], out: list[uint32], wide: list[int64]) -> None:
    i = GlobalIdx.x
    if i >= len(a):
        return
    x = a[i]
    y = b[i]
    o = i * 22
    out[o] = x + y
    out[o + 1] = x - y
    out[o + 2] = x * y
    out[o + 3] = x // y
    out[o + 4] = x % y
    out[o + 5] = x & y
    out[o + 6] = x | y
    out[o + 7] = x ^ y
    out[o + 8] = x << (y & 31)
    out[o + 9] = x >> (y & 31)
    out[o + 10] = -x
    out[o + 11] = ~x
    out[o + 12] = abs(x)
    out[o + 13] = min(x, y)
    out[o + 14] = max(x, y)
    out[o + 15] = (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) \
        + 32 * (x != y)
    out[o + 16] = 1 if 5 < x < y <= 4000000000 else 0
    out[o + 17] = x and y
    out[o + 18] = x or y
    out[o + 19] = x ** (y & 7)
    out[o + 20] = x + 4000000000
    out[o + 21] = x * 3 // 2
    w = i * 4
    wide[w] = x - 1              # uint32 minus a literal: uint32 (wraps)
    wide[w + 1] = x - int32(1)   # uint32 with int32: int64 (numpy), no wrap
    wide[w + 2] = x + int64(y)
    wide[w + 3] = int64(x) * int64(y)


K_FLOAT64 = 20


@Gpu
def float_ops(a: list[float], b: list[float], out: list[float], iout: list[int]) -> None:
    """Plain types: float64 and int64 when the launch's arrays are."""
    i = GlobalIdx.x
    if i >= len(a):
        return
    x = a[i]
    y = b[i]
    o = i * 20
    out[o] = x + y
    out[o + 1] = x - y
    out[o + 2] = x * y
    out[o + 3] = x / y
    out[o + 4] = x // y
    out[o + 5] = x % y
    out[o + 6] = -x
    out[o + 7] = abs(x)
    out[o + 8] = min(x, y)
    out[o + 9] = max(x, y)
    out[o + 10] = x + 0.1
    out[o + 11] = x * 1e-12 + 1.0
    out[o + 12] = x if x > y else y
    out[o + 13] = x and y
    out[o + 14] = x or y
    out[o + 15] = float(int(x) % 7)
    out[o + 16] = x ** 2
    out[o + 17] = float32(x)
    out[o + 18] = 3 * x - 1
    out[o + 19] = x / 3
    j = i * 6
    iout[j] = int(x)
    iout[j + 1] = round(x)
    iout[j + 2] = (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) \
        + 32 * (x != y)
    iout[j + 3] = 1 if -1e30 < x < y <= 1e30 else 0
    iout[j + 4] = int64(x)
    iout[j + 5] = len(a) + i * 3


@Gpu
def mixed(i32: list[int32], i64: list[int64], u32: list[uint32], f32: list[float32],
          f64: list[float64], oi: list[int64], of: list[float64], of32: list[float32],
          ou: list[uint32]) -> None:
    i = GlobalIdx.x
    if i >= len(i32):
        return
    a = i32[i]
    b = i64[i]
    c = u32[i]
    d = f32[i]
    e = f64[i]
    k = i * 6
    oi[k] = a + b                 # int32 with int64: int64
    oi[k + 1] = a * c             # int32 with uint32: int64
    oi[k + 2] = c - a             # int64: no wrap at 2**32
    oi[k + 3] = b // a
    oi[k + 4] = int64(a) * 3000000000
    oi[k + 5] = c // 3 + a % 5
    of[k] = a + e                 # int with float64: float64
    of[k + 1] = b * e
    of[k + 2] = e + 0.1           # the literal is float64
    of[k + 3] = d + e             # float32 with float64: float64
    of[k + 4] = float64(d) * 0.1
    of[k + 5] = c / 2
    of32[i * 3] = d + 0.1         # the literal is float32
    of32[i * 3 + 1] = d * a       # float32 with int32: float32
    of32[i * 3 + 2] = float32(e)
    ou[i * 2] = c + 1             # the literal is uint32
    ou[i * 2 + 1] = uint32(a)


@Gpu
def convert_floats(x: list[float64], oi32: list[int32], oi64: list[int64],
                   ou: list[uint32], of32: list[float32]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        oi32[i] = int32(x[i])
        oi64[i] = int64(x[i])
        ou[i] = uint32(x[i])
        of32[i] = float32(x[i])


# ----------------------------------------------------------------------------- launch rules
@Gpu
def add_tiny(x: list[float], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] + 1e-12


# (plain functions: the feature tests decorate a fresh kernel each time, since a device's
# features are checked when a kernel's variant is first set up on it)
def feature_f64(x: list[float], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] + 1e-12


def feature_i64(x: list[int], k: int, out: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] + k


def feature_pinned(x: list[float64], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = float(x[i])


@Gpu
def add_plain(x: list[float], y: list[float], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] + y[i]


@Gpu
def int_sum(x: list[int], k: int, out: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] + k


@Gpu
def pinned(x: list[float64], s: int64, out: list[float64], big: list[int64]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = x[i] * 2.0 + 1e-13
        big[i] = s + i


@Gpu
def index_math(n: int, x: list[int], out: list[int]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    j = (i * 3 + 1) % n
    out[i] = x[j] * len(x) + i


@Gpu
def range_sum(lo: int, hi: int, step: int, out: list[int]) -> None:
    """Plain ints: an int64 ``out`` makes the bounds and the loop variable int64."""
    i = GlobalIdx.x
    if i == 0:
        s = 0
        c = 0
        for k in range(lo, hi, step):
            s += k
            c += 1
        out[0] = s
        out[1] = c


@Gpu
def gather64(x: list[float], idx: list[int], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(idx):
        out[i] = x[idx[i]]


@Gpu(boundscheck=False)
def scale_unchecked(x: list[float], k: float) -> None:
    i = GlobalIdx.x
    if i < len(x):
        x[i] = x[i] * k


@Gpu
def scale(x: list[float], k: float) -> None:
    i = GlobalIdx.x
    if i < len(x):
        x[i] = x[i] * k


# ----------------------------------------------------------------------------- atomics
@Gpu
def count_atomics(x: list[float], hist: list[uint32], hits: list[int32]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        b = int(x[i] * 4.0)
        atomic_add(hist, b % 4, uint32(1))
        atomic_max(hits, 0, int32(b))


@Gpu
def count_plain_atomics(x: list[float], hist: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        atomic_add(hist, int32(x[i] * 4.0) % 4, 1)


# ----------------------------------------------------------------------------- shared memory
@Gpu
def block_sums64(x: list[float64], out: list[float64]) -> None:
    t: list[float64] = shared(64)
    i = GlobalIdx.x
    lid = i % 64
    t[lid] = x[i] if i < len(x) else 0.0
    __sync_threads()
    s = 32
    while s > 0:
        if lid < s:
            t[lid] = t[lid] + t[lid + s]
        __sync_threads()
        s = s // 2
    if lid == 0:
        out[i // 64] = t[0]


@Gpu
def block_sums_plain(x: list[float], out: list[float]) -> None:
    t: list[float] = shared(64)
    i = GlobalIdx.x
    lid = i % 64
    t[lid] = x[i] if i < len(x) else 0.0
    __sync_threads()
    s = 32
    while s > 0:
        if lid < s:
            t[lid] = t[lid] + t[lid + s]
        __sync_threads()
        s = s // 2
    if lid == 0:
        out[i // 64] = t[0]


# ----------------------------------------------------------------------------- device functions
@Gpu.func
def axpb(a: float, x: float, b: float) -> float:
    return a * x + b


@Gpu.func
def wide_mul(a: int64, b: uint32) -> int64:
    return a * b


@Gpu
def use_funcs(x: list[float], out: list[float], w: list[int64]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        out[i] = axpb(x[i], 1.0 + 1e-12, -x[i])
        w[i] = wide_mul(int64(i) + 3000000000, uint32(i + 7))


# ----------------------------------------------------------------------------- element-wise
@Gpu
def elementwise(x: list[float], y: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        y[i] = x[i] * 3.0 + 1e-10


@Gpu
def compare_literals(x: list[float64], u: list[uint32], out: list[int]) -> None:
    """Literals compared with width-typed values take their type (a 32-bit launch)."""
    i = GlobalIdx.x
    if i < len(x):
        out[i * 3] = 1 if x[i] < 0.1 else 0
        out[i * 3 + 1] = 1 if x[i] == 0.1 else 0
        out[i * 3 + 2] = 1 if 5 < u[i] <= 4000000000 else 0


@Gpu
def augmented(x: list[int64], u: list[uint32], f: list[float64], y: list[int64]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        x[i] += 3000000000
        x[i] //= y[i]
        u[i] -= 1
        u[i] *= 3
        f[i] %= 0.75
        f[i] **= 2


@Gpu
def shifts(x: list[int64], u: list[uint32], c: list[int64], o: list[int64],
           ou: list[uint32]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        o[i] = x[i] << c[i]
        ou[i] = u[i] << uint32(c[i])
        o[i + len(x)] = x[i] >> c[i]
        ou[i + len(x)] = u[i] >> uint32(c[i])


@Gpu
def store_uint32(u: uint32, out: list[uint32]) -> None:
    out[0] = u


@Gpu
def chains(a: list[int64], b: list[uint32], c: list[float64], out: list[int32],
           of: list[float64]) -> None:
    """Chained comparisons and and/or over list reads of three widths (evaluated lazily)."""
    i = GlobalIdx.x
    if i < len(a):
        out[i * 3] = 1 if a[i] < b[i] < c[i] else 0
        out[i * 3 + 1] = 1 if a[i] == b[i] != c[i] else 0
        out[i * 3 + 2] = 1 if c[i] <= a[i] < 2**40 else 0
        of[i] = (a[i] > 0 and b[i]) or c[i]


@Gpu
def elementwise_int(x: list[int], y: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        y[i] = x[i] * 3 + 1


@Gpu
def elementwise_uint32(x: list[uint32], y: list[uint32]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        y[i] = x[i] * 3 + 1
