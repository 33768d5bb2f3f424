"""Device functions with tuple results and the kernels that unpack them (module-level, as
users write them)."""

from __future__ import annotations

import math

from cthreads.gpu import GlobalIdx, Gpu, ThreadIdx, float64, int64, shared, uint32
from cthreads.sync import __sync_threads


@Gpu.func
def sincos(x: float) -> tuple[float, float]:
    return math.sin(x), math.cos(x)


@Gpu
def polar(n: int, r: list[float], t: list[float], xs: list[float], ys: list[float],
          c0: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    sincos(r[i])                        # a call as a statement: its result dropped
    s, c = sincos(t[i])                 # new locals, inferred
    xs[i] = r[i] * c
    ys[i] = r[i] * s
    c0[i] = sincos(t[i])[0] - sincos(t[i])[-2] + sincos(t[i])[1]   # one member by index


@Gpu
def into_lists(n: int, t: list[float], s: list[float], c: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        s[i], c[i] = sincos(t[i])       # list elements as targets (each checked)


@Gpu
def declared_targets(n: int, t: list[float], out: list[float], m: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a: float = 0.0
    b: float
    k: int = 0
    a, b = sincos(t[i])                 # locals declared before
    k, a = idivmod(i, 3)                # into an int local and an existing float (the int
    out[i] = a + b                      # converts as an assignment would)
    m[i] = k


@Gpu.func
def idivmod(a: int, b: int) -> tuple[int, int]:
    return a // b, a % b


@Gpu
def divmods(n: int, a: list[int], b: list[int], q: list[int], r: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        q[i], r[i] = idivmod(a[i], b[i])


@Gpu.func
def classify(x: float) -> tuple[bool, int, float, uint32]:
    return x > 0.0, int(x), x * 0.5, uint32(abs(int(x)))


@Gpu
def mixed(n: int, x: list[float], pos: list[bool], whole: list[int], half: list[float],
          mag: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p, w, h, u = classify(x[i])
        pos[i] = p
        whole[i] = w
        half[i] = h
        mag[i] = int(u)


# -- nested calls, loops, branches ----------------------------------------------------------
@Gpu.func
def rotate(x: float, y: float, angle: float) -> tuple[float, float]:
    s, c = sincos(angle)                # a tuple function calling another one
    return c * x - s * y, s * x + c * y


@Gpu.func
def rotate_twice(x: float, y: float, angle: float) -> tuple[float, float]:
    x, y = rotate(x, y, angle)          # parameters reassigned from a tuple result
    return rotate(x, y, angle)          # the callee's tuple, passed on


@Gpu.func
def as_floats(a: int, b: int) -> tuple[float, float]:
    return idivmod(a, b)                # a tuple of ints returned as a tuple of floats


@Gpu.func
def collatz(v: int) -> tuple[int, int]:
    """(steps to reach 1, highest value met): a while loop with returns in branches."""
    steps = 0
    top = v
    while v != 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        top = max(top, v)
        steps += 1
        if steps > 1000:
            return -1, top
    if steps == 0:
        return 0, v
    return steps, top


@Gpu
def nested(n: int, m: int, x: list[float], y: list[float], a: list[int], b: list[float],
           c: list[float], steps: list[int], tops: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    px = x[i]
    py = y[i]
    for k in range(m):                  # a tuple result carried through a loop
        px, py = rotate(px, py, 0.25)
        if px > 1e30:                   # (an early exit: the CPU drivers' loop variant)
            break
    x[i], y[i] = rotate_twice(px, py, -0.125)
    if a[i] > 0:
        b[i], c[i] = as_floats(a[i], 7)
    else:
        b[i], c[i] = sincos(float(a[i]))
    steps[i], tops[i] = collatz(i + 1)


# -- float64, bounds-checked lists, N-D ----------------------------------------------------
@Gpu.func
def prod_quot(a: float, b: float) -> tuple[float, float]:
    """a * b and a / b + 1, rounded at the launch's float width."""
    return a * b, a / b + 1.0


@Gpu
def sums(n: int, a: list[float], b: list[float], s: list[float], e: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        s[i], e[i] = prod_quot(a[i], b[i])


@Gpu.func
def wide_pair(a: float64, k: int64) -> tuple[float64, int64]:
    return a * 0.5, k * 3


@Gpu
def wide(n: int, a: list[float64], k: list[int64], h: list[float64], t: list[int64]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        h[i], t[i] = wide_pair(a[i], k[i])


@Gpu.func
def window(xs: list[float], lo: int, hi: int) -> tuple[float, float]:
    """(min, max) of xs[lo:hi], read through the caller's list (bounds-checked)."""
    small = xs[lo]
    big = xs[lo]
    for k in range(lo + 1, hi):
        small = min(small, xs[k])
        big = max(big, xs[k])
    return small, big


@Gpu
def windows(n: int, w: int, xs: list[float], lo: list[float], hi: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        lo[i], hi[i] = window(xs, i, i + w)


@Gpu.func
def cell() -> tuple[int, int]:
    return GlobalIdx.x, GlobalIdx.y     # index builtins inside a tuple function


@Gpu
def grid(w: int, h: int, img: list[list[float]], out: list[list[float]]) -> None:
    x, y = cell()
    if x >= w or y >= h:
        return
    s, c = sincos(img[y, x])
    out[y, x] = s * s + c


@Gpu.func
def larger(a: float, b: float) -> tuple[float, float]:
    if a >= b:
        return a, b
    return b, a


@Gpu.func
def keep_larger(a: float, b: float) -> float:
    return larger(a, b)[0]              # a reduction's operation calling a tuple function


@Gpu
def pair_sums(n: int, x: list[float], out: list[float]) -> None:
    """Workgroup memory and a barrier next to an unpacked tuple: each even thread adds its
    odd neighbour's element."""
    tile: list[float] = shared(64)
    t: int = ThreadIdx.x
    i: int = GlobalIdx.x
    half, odd = idivmod(t, 2)
    tile[t] = x[i] if i < n else 0.0
    __sync_threads()
    if odd == 0 and i < n:
        out[i // 2] = tile[2 * half] + tile[2 * half + 1]


# -- the four-lane variant (tests/codegen/test_tuple_errors.py checks its text) ----------------
@Gpu.func
def scaled(x: float, k: float) -> tuple[float, float]:
    return x * k, x + k


@Gpu.func
def passed_on(x: float) -> tuple[float, float]:
    return scaled(x, 2.0)


@Gpu
def lanes(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a, b = scaled(x[i], 3.0)
    c, d = passed_on(x[i])
    y[i] = a * b + c - d + passed_on(a)[1]


@Gpu.func
def mixed_pair(x: float) -> tuple[float, int]:
    return x, 1


@Gpu
def int_member(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a, k = mixed_pair(x[i])
    y[i] = a * float(k)
