"""Width types (float64, int64, uint32 and the 32-bit ones) on the device, with every feature.

Operators are checked against Python's own semantics with the documented device rules (ints
wrap at their width, uint32 modulo 2**32, ``//`` and ``%`` by zero give 0, float division by
zero follows IEEE) and against numpy for conversions and promotion. Each launch evaluates a
whole batch of operand pairs (``width_kernels``), so hypothesis examples stay cheap.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cthreads import config
from cthreads.backend import device as dev
from cthreads.gpu import (GpuArena, GpuIndexError, GpuInvalidArgument,
                          Gpu, compile as gpu_compile, gpu, prepare)
from cthreads.lang.widths import float32, float64

from . import width_kernels as wk


def fused(a, b, c) -> float:
    """a * b + c with one rounding: what a driver that fuses multiply-adds (NVIDIA's) gives
    (language.md, "Types and widths": a documented difference, within the last bit)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def separately_or_fused(got, a, b, c) -> bool:
    """``got`` is ``a * b + c`` rounded twice (numpy, Python) or once (a fused multiply-add)."""
    return got == a * b + c or got == fused(a, b, c)


#: float_ops outputs that are a multiply-add: (index, (factor, addend) from x)
FMA_OUTPUTS = {11: lambda x: (x, 1e-12, 1.0), 18: lambda x: (3.0, x, -1.0)}

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def wrap(v: int, bits: int, signed: bool = True) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def w64(v: int) -> int:
    return wrap(v, 64)


def floordiv(x, y):
    return 0 if y == 0 else x // y


def mod(x, y):
    return 0 if y == 0 else x % y


def compare_bits(x, y) -> int:
    return (x < y) + 2 * (x <= y) + 4 * (x > y) + 8 * (x >= y) + 16 * (x == y) + 32 * (x != y)


def mismatches(got, want, pairs):
    bad = []
    for row, (g, w) in enumerate(zip(got, want)):
        cols = [j for j, (a, b) in enumerate(zip(g, w)) if not same(a, b)]
        if cols:
            bad.append((pairs[row], cols, [g[j] for j in cols], [w[j] for j in cols]))
    return bad


def same(a, b) -> bool:
    if isinstance(b, float):
        if math.isnan(b):
            return math.isnan(a)
        return np.float64(a).view(np.int64) == np.float64(b).view(np.int64)
    return int(a) == int(b)


# ----------------------------------------------------------------------------- int64
I64_EDGES = [-2**63, -2**63 + 1, -2**32, -2**31 - 1, -2**31, -7, -1, 0, 1, 2, 7, 2**31 - 1,
             2**31, 2**32, 2**32 + 1, 2**62, 2**63 - 1]


def int64_reference(x: int, y: int) -> list:
    return [w64(v) for v in (
        x + y, x - y, x * y, floordiv(x, y), mod(x, y), x & y, x | y, x ^ y, x << (y & 63),
        x >> (y & 63), -x, ~x, abs(x), min(x, y), max(x, y), compare_bits(x, y),
        1 if -2**40 < x < y <= 2**62 else 0, x and y, x or y, x if x > y else y, x ** (y & 7),
        wrap(x, 32), wrap(x, 32, False), 1 if (x > 0 and y > 0) or not (x < 0 or y < 0) else 0)]


def run_int64(pairs):
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    out = np.zeros(len(pairs) * wk.K_INT64, np.int64)
    gpu(wk.int64_ops, a, b, out).join()
    got = out.reshape(len(pairs), wk.K_INT64).tolist()
    bad = mismatches(got, [int64_reference(x, y) for x, y in pairs], pairs)
    assert not bad, bad[:5]


def test_int64_operators_at_the_limits(device_name):
    run_int64([(x, y) for x in I64_EDGES for y in I64_EDGES])


int64s = st.one_of(st.integers(-2**63, 2**63 - 1), st.sampled_from(I64_EDGES),
                   st.integers(-2**33, 2**33))


@SETTINGS
@given(pairs=st.lists(st.tuples(int64s, int64s), min_size=1, max_size=200))
def test_int64_operators_match_python(device_name, pairs):
    run_int64(pairs)


# ----------------------------------------------------------------------------- uint32
U32_EDGES = [0, 1, 2, 5, 7, 65536, 123456789, 2**31 - 1, 2**31, 2**31 + 1, 4000000000,
             2**32 - 2, 2**32 - 1]
M32 = 2**32 - 1


def uint32_reference(x: int, y: int) -> tuple[list, list]:
    out = [v & M32 for v in (
        x + y, x - y, x * y, floordiv(x, y), mod(x, y), x & y, x | y, x ^ y, x << (y & 31),
        x >> (y & 31), -x, ~x, abs(x), min(x, y), max(x, y), compare_bits(x, y),
        1 if 5 < x < y <= 4000000000 else 0, x and y, x or y, x ** (y & 7), x + 4000000000,
        ((x * 3) & M32) // 2)]
    wide = [(x - 1) & M32, x - 1, x + y, w64(x * y)]
    return out, wide


def run_uint32(pairs):
    a = np.array([p[0] for p in pairs], np.uint32)
    b = np.array([p[1] for p in pairs], np.uint32)
    out = np.zeros(len(pairs) * wk.K_UINT32, np.uint32)
    wide = np.zeros(len(pairs) * 4, np.int64)
    gpu(wk.uint32_ops, a, b, out, wide).join()
    want = [uint32_reference(x, y) for x, y in pairs]
    bad = mismatches(out.reshape(len(pairs), -1).tolist(), [w[0] for w in want], pairs)
    bad += mismatches(wide.reshape(len(pairs), -1).tolist(), [w[1] for w in want], pairs)
    assert not bad, bad[:5]


def test_uint32_operators_at_the_limits(device_name):
    run_uint32([(x, y) for x in U32_EDGES for y in U32_EDGES])


uint32s = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from(U32_EDGES))


@SETTINGS
@given(pairs=st.lists(st.tuples(uint32s, uint32s), min_size=1, max_size=200))
def test_uint32_operators_match_python(device_name, pairs):
    run_uint32(pairs)


# ----------------------------------------------------------------------------- float64
F64_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, 3.0, 7.25, -7.25, 1e15 + 0.5,
             -123456789.75, 2.0**53, 1e-12, 1e300, -1e300, 5e-324, math.inf, -math.inf, math.nan]


def _ieee(op, x, y) -> float:
    with np.errstate(all="ignore"):
        return float(op(np.float64(x), np.float64(y)))


def py_div(x, y):
    try:
        return x / y
    except ZeroDivisionError:
        return _ieee(np.divide, x, y)


def py_floordiv(x, y):
    try:
        return x // y
    except ZeroDivisionError:
        return _ieee(lambda a, b: np.floor(a / b), x, y)


def py_mod(x, y):
    try:
        return x % y
    except ZeroDivisionError:
        return math.nan


def py_pow2(x):
    try:
        return x ** 2
    except OverflowError:
        return math.inf


def float64_reference(x: float, y: float, row: int, n: int) -> tuple[list, list]:
    finite = math.isfinite(x) and abs(x) < 2**62
    with np.errstate(all="ignore"):
        out = [x + y, x - y, x * y, py_div(x, y), py_floordiv(x, y), py_mod(x, y), -x, abs(x),
               min(x, y), max(x, y), x + 0.1, x * 1e-12 + 1.0, x if x > y else y, x and y,
               x or y, float(int(x) % 7) if finite else None, py_pow2(x),
               float(np.float32(x)) if abs(x) < 3.4e38 or not math.isfinite(x) else None,
               3 * x - 1, x / 3]
    ints = [int(x) if finite else None, round(x) if finite and abs(x) < 2**62 else None,
            compare_bits(x, y), 1 if -1e30 < x < y <= 1e30 else 0,
            int(x) if finite else None, n + row * 3]
    return out, ints


def run_float_ops(pairs):
    a = np.array([p[0] for p in pairs], np.float64)
    b = np.array([p[1] for p in pairs], np.float64)
    out = np.zeros(len(pairs) * wk.K_FLOAT64, np.float64)
    iout = np.zeros(len(pairs) * 6, np.int64)
    gpu(wk.float_ops, a, b, out, iout).join()      # float64 and int64 arrays: a 64-bit launch
    want = [float64_reference(x, y, k, len(pairs)) for k, (x, y) in enumerate(pairs)]
    got_f = out.reshape(len(pairs), -1).tolist()
    for (x, _), g, w in zip(pairs, got_f, want):
        for k, args in FMA_OUTPUTS.items():
            if math.isfinite(x) and w[0][k] is not None and g[k] == fused(*args(x)):
                w[0][k] = g[k]                  # the driver fused the multiply-add
    got_i = iout.reshape(len(pairs), -1).tolist()
    # None marks a value outside the documented range (int() of inf, float32 overflow)
    keep = lambda g, w: ([a for a, b in zip(g, w) if b is not None],
                         [b for b in w if b is not None])
    bad = mismatches(*zip(*[keep(g, w[0]) for g, w in zip(got_f, want)]), pairs)
    bad += mismatches(*zip(*[keep(g, w[1]) for g, w in zip(got_i, want)]), pairs)
    assert not bad, bad[:5]


def test_float64_operators_at_edges(device_name):
    run_float_ops([(x, y) for x in F64_EDGES for y in F64_EDGES])


float64s = st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64),
                     st.floats(-1e6, 1e6), st.sampled_from(F64_EDGES))


@SETTINGS
@given(pairs=st.lists(st.tuples(float64s, float64s), min_size=1, max_size=200))
def test_float64_operators_match_python(device_name, pairs):
    run_float_ops(pairs)


def test_the_same_kernel_in_float32_rounds_to_float32(device_name):
    # the kernel that kept 1 + 1e-12 in float64 loses it with float32 arrays
    a = np.array([1.0, 2.0], np.float32)
    out = np.zeros(2 * wk.K_FLOAT64, np.float32)
    iout = np.zeros(12, np.int32)
    gpu(wk.float_ops, a, a, out, iout).join()
    assert out[11] == 1.0 and out[10] == np.float32(1.0) + np.float32(0.1)
    out64 = np.zeros(2 * wk.K_FLOAT64)
    gpu(wk.float_ops, a.astype(np.float64), a.astype(np.float64), out64,
        iout.astype(np.int64)).join()
    assert out64[11] == 1.0 + 1e-12 and out64[10] == 1.1


# ----------------------------------------------------------------------------- mixed types
def _flushed(x: np.ndarray) -> np.ndarray:
    """float32 values with subnormals flushed to (signed) zero, as NVIDIA's driver computes."""
    return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0, x), x).astype(x.dtype)


def run_mixed(i32, i64, u32, f32, f64):
    """The mixed kernel against numpy: exactly, or as a device that flushes float32 subnormals
    to zero computes (docs/language.md, "Types and widths": NVIDIA does, lavapipe does not)."""
    n = len(i32)
    oi, of = np.zeros(n * 6, np.int64), np.zeros(n * 6)
    of32, ou = np.zeros(n * 3, np.float32), np.zeros(n * 2, np.uint32)
    gpu(wk.mixed, i32, i64, u32, f32, f64, oi, of, of32, ou).join()
    kept = _mixed_want(i32, i64, u32, f32, f64)
    flushed = _mixed_want(i32, i64, u32, _flushed(f32), f64)
    assert oi.reshape(n, 6).tolist() == kept[0]
    for got, k in ((of, 1), (of32, 2), (ou, 3)):
        ok = (got == kept[k]) | (got == flushed[k]) | (np.isnan(got) & np.isnan(kept[k]))
        if k == 2:                      # a float32 result may be flushed too
            ok |= got == _flushed(flushed[k])
        assert ok.all(), (k, got[~ok][:5], kept[k][~ok][:5])


def _mixed_want(i32, i64, u32, f32, f64):
    n = len(i32)
    with np.errstate(all="ignore"):
        a, b, c = i32.tolist(), i64.tolist(), u32.tolist()
        want_i = [[w64(a[k] + b[k]), a[k] * c[k], c[k] - a[k], floordiv(b[k], a[k]),
                   w64(a[k] * 3000000000), c[k] // 3 + a[k] % 5] for k in range(n)]
        want_f = np.stack([i32 + f64, i64 * f64, f64 + 0.1, f32 + f64,
                           f32.astype(np.float64) * 0.1,
                           # uint32 / int: float64, as numpy gives (float32 cannot hold
                           # every uint32)
                           u32.astype(np.float64) / 2.0],
                          1).ravel()
        want_f32 = np.stack([f32 + np.float32(0.1), f32 * i32.astype(np.float32),
                             f64.astype(np.float32)], 1).ravel()
        want_u = np.stack([u32 + np.uint32(1), i32.astype(np.uint32)], 1).ravel()
    return want_i, want_f, want_f32, want_u


def test_mixed_width_expressions_follow_numpy(device_name):
    run_mixed(np.array([-2**31, -7, -1, 0, 1, 5, 2**31 - 1, 3], np.int32),
              np.array([2**62, -2**40, 3, -9, 2**31, 7, -1, 10], np.int64),
              np.array([0, 2**32 - 1, 2**31, 7, 1, 4000000000, 3, 2**31 - 1], np.uint32),
              np.array([0.5, -1.25, 3e38, 1e-3, 7, 0.1, -0.0, 2], np.float32),
              np.array([1e-12, 2.5, -1e300, 1 / 3, 0.1, 7e10, -0.0, 1e308]))


@SETTINGS
@given(rows=st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), int64s, uint32s,
                               st.floats(-2.0**100, 2.0**100, width=32), float64s),
                     min_size=1, max_size=100))
def test_mixed_width_expressions_match_numpy(device_name, rows):
    cols = list(zip(*rows))
    run_mixed(np.array(cols[0], np.int32), np.array(cols[1], np.int64),
              np.array(cols[2], np.uint32), np.array(cols[3], np.float32),
              np.array(cols[4], np.float64))


def test_literals_compared_with_width_types_keep_their_value(device_name):
    x = np.array([0.1, 0.1 + 1e-17, np.float32(0.1), 0.09999999999999999, -1.0])
    u = np.array([0, 6, 4000000000, 4000000001, 2**32 - 1], np.uint32)
    out = [9] * 15
    gpu(wk.compare_literals, x, u, out).join()       # no plain arrays: a 32-bit launch
    want = [[int(a < 0.1), int(a == 0.1), int(5 < b <= 4000000000)]
            for a, b in zip(x.tolist(), u.tolist())]
    assert out == [v for row in want for v in row]


def chains_reference(a: int, b: int, c: float) -> tuple[list, float]:
    # int64 with float64 compares in float64 (numpy's rule), so ints stay below 2**53 here
    return ([int(a < b < c), int(a == b != c), int(c <= a < 2**40)],
            float((a > 0 and b) or c))


@SETTINGS
@given(rows=st.lists(st.tuples(st.integers(-2**53, 2**53), st.sampled_from(U32_EDGES),
                               st.one_of(st.floats(-2**53, 2**53), st.sampled_from(
                                   [0.0, 1.0, 2.0**31, 2.0**32, -1.0, math.nan]))),
                     min_size=1, max_size=100))
def test_chained_comparisons_and_boolean_operators_across_widths(device_name, rows):
    a = np.array([r[0] for r in rows], np.int64)
    b = np.array([r[1] for r in rows], np.uint32)
    c = np.array([r[2] for r in rows])
    out, of = np.zeros(3 * len(rows), np.int32), np.zeros(len(rows))
    gpu(wk.chains, a, b, c, out, of).join()
    want = [chains_reference(*r) for r in rows]
    assert out.reshape(-1, 3).tolist() == [w[0] for w in want]
    assert all(same(g, w[1]) for g, w in zip(of.tolist(), want)), (of, want)


def test_conversions_of_in_range_floats_match_numpy(device_name):
    x = np.array([0.0, -0.0, -1.5, 2.9, -2.9, 2**31 - 0.5, -2**31 + 0.5, 4294967295.0, 3e9,
                  1e18, -1e18, 1 / 3, -7.0, 2.0**62, 1e300, 5e-324])
    a, b = np.zeros(len(x), np.int32), np.zeros(len(x), np.int64)
    c, d = np.zeros(len(x), np.uint32), np.zeros(len(x), np.float32)
    gpu(wk.convert_floats, x, a, b, c, d).join()
    with np.errstate(all="ignore"):
        fits32 = np.abs(x) < 2**31
        fits64 = np.abs(x) < 2**63
        fitsu = (x > -2**31) & (x < 2**32)      # negatives wrap as their int32 value
        np.testing.assert_array_equal(a[fits32], x[fits32].astype(np.int32))
        np.testing.assert_array_equal(b[fits64], x[fits64].astype(np.int64))
        np.testing.assert_array_equal(c[fitsu], x[fitsu].astype(np.int64).astype(np.uint32))
        np.testing.assert_array_equal(d, x.astype(np.float32))
    assert c[2] == 2**32 - 1 and c[4] == 2**32 - 2      # uint32(-1.5), uint32(-2.9)


# ----------------------------------------------------------------------------- launch rules
def test_float64_arrays_make_a_float64_launch(device_name):
    x = np.array([1.0, 2.0, 1e6])
    out = np.zeros(3)
    gpu(wk.add_tiny, x, out).join()
    np.testing.assert_array_equal(out, x + 1e-12)             # float64: the 1e-12 survives
    assert out[0] != 1.0 and out.dtype == np.float64
    x32, out32 = x.astype(np.float32), np.zeros(3, np.float32)
    gpu(wk.add_tiny, x32, out32).join()
    np.testing.assert_array_equal(out32, x32)                  # float32: rounded away


def test_python_lists_adopt_the_launch_precision(device_name):
    x = np.array([1.0, 2.0])
    out = [0.0, 0.0]
    gpu(wk.add_plain, x, [1e-12, 1e-13], out).join()
    assert out == [1.0 + 1e-12, 2.0 + 1e-13]                  # the Python list in float64
    out = [0.0, 0.0]
    gpu(wk.add_plain, [1.0, 2.0], [1e-12, 1e-13], out).join()  # no arrays: float32
    assert out == [1.0, 2.0]


def test_int64_arrays_keep_values_past_2_31(device_name):
    x = np.array([2**31 - 1, 2**40, -2**62, 2**63 - 10], np.int64)
    out = np.zeros(4, np.int64)
    gpu(wk.int_sum, x, 5, out).join()
    assert out.tolist() == [w64(v + 5) for v in x.tolist()]
    out_list = [0] * 4
    gpu(wk.int_sum, x, 3_000_000_000, out_list).join()        # the scalar adopts int64
    assert out_list == [w64(v + 3_000_000_000) for v in x.tolist()]
    small = [0] * 2
    with pytest.raises(GpuInvalidArgument, match="'k'.*int64"):   # 32-bit: says the way out
        gpu(wk.int_sum, [1, 2], 3_000_000_000, small)
    with pytest.raises(GpuInvalidArgument, match=r"'x'\[1\].*int64"):
        gpu(wk.int_sum, [1, 2**40], 1, small)
    assert small == [0, 0]


def test_mixing_float32_and_float64_arrays_names_both(device_name):
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([1.0, 2.0], np.float64)
    out = np.array([7.0, 7.0])
    with pytest.raises(GpuInvalidArgument) as info:
        gpu(wk.add_plain, x, y, out)
    msg = str(info.value)
    assert "'x'" in msg and "'y'" in msg and "float32" in msg and "float64" in msg
    assert out.tolist() == [7.0, 7.0] and x.tolist() == [1.0, 2.0]


def test_width_typed_parameters(device_name):
    out, big = np.zeros(3), np.zeros(3, np.int64)
    gpu(wk.pinned, [0.5, 1.0, 2.0], 2**40 + 1, out, big).join()   # a Python list: float64
    assert out.tolist() == [v * 2.0 + 1e-13 for v in (0.5, 1.0, 2.0)]
    assert big.tolist() == [2**40 + 1, 2**40 + 2, 2**40 + 3]
    before = out.copy()
    with pytest.raises(GpuInvalidArgument) as info:
        gpu(wk.pinned, np.ones(3, np.float32), 1, out, big)
    assert "'x'" in str(info.value)
    with pytest.raises(GpuInvalidArgument):
        gpu(wk.pinned, [1.0] * 3, 2**63, out, big)               # beyond int64
    np.testing.assert_array_equal(out, before)


def test_index_arithmetic_and_len_in_int64_launches(device_name):
    n = 200
    x = np.arange(n, dtype=np.int64) * 2**33
    out = np.zeros(n, np.int64)
    gpu(wk.index_math, n, x, out).join()
    i = np.arange(n)
    np.testing.assert_array_equal(out, x[(i * 3 + 1) % n] * n + i)


def test_range_over_int64_bounds(device_name):
    out = np.zeros(2, np.int64)                               # an int64 launch
    for lo, hi, step in [(2**40, 2**40 + 10, 3), (2**62, 2**62 - 50, -7),
                         (-2**63, -2**63 + 5, 2), (0, 5, 1), (5, 0, 1)]:
        gpu(wk.range_sum, lo, hi, step, out).join()
        r = range(lo, hi, step)
        assert out.tolist() == [w64(sum(r)), len(r)], (lo, hi, step)
    small = [0, 0]
    gpu(wk.range_sum, -3, 10, 4, small).join()                # 32-bit as before
    assert small == [sum(range(-3, 10, 4)), len(range(-3, 10, 4))]


# ----------------------------------------------------------------------------- other features
def test_arena_lists_of_float64_and_int64(device_name):
    x = np.array([1.0, 1e-12, 3.0])
    out = np.zeros(3)
    with GpuArena() as arena:
        arena.bind(x=x, out=out)
        gpu(wk.add_tiny, x, out).join(download=False)
        arena.sync()
    np.testing.assert_array_equal(out, x + 1e-12)
    assert out.dtype == np.float64
    xi = np.array([2**40, -3], np.int64)
    oi = np.zeros(2, np.int64)
    with GpuArena() as arena:
        arena.bind(xi=xi)
        gpu(wk.int_sum, xi, 2**35, oi).join()      # the resident int64 list: an int64 launch
    assert oi.tolist() == [2**40 + 2**35, 2**35 - 3]


def test_arena_float32_list_with_float64_array_names_both(device_name):
    x = [1.0, 2.0]                       # a Python list bound in an arena: float32 on the device
    out = np.array([5.0, 5.0])
    with GpuArena() as arena:
        arena.bind(x=x)
        with pytest.raises(GpuInvalidArgument) as info:
            gpu(wk.add_tiny, x, out)
        assert "'x'" in str(info.value) and "'out'" in str(info.value)
        assert "an arena list of float32" in str(info.value)
    assert out.tolist() == [5.0, 5.0]


def test_mixing_int32_and_int64_arrays_names_both(device_name):
    x, out = np.array([1, 2], np.int64), np.array([7, 7], np.int32)
    with pytest.raises(GpuInvalidArgument) as info:
        gpu(wk.int_sum, x, 1, out)
    msg = str(info.value)
    assert "'x' (an int64 array)" in msg and "'out' (an int32 array)" in msg
    assert out.tolist() == [7, 7] and x.tolist() == [1, 2]


def test_out_of_range_index_in_a_64_bit_kernel(device_name):
    x = np.arange(10, dtype=np.float64)
    idx = np.array([0, 3, 10, 1], np.int64)
    out = np.full(4, -1.0)
    with pytest.raises(GpuIndexError) as info:
        gpu(wk.gather64, x, idx, out).join()
    msg = str(info.value)
    assert "'x'" in msg and "out[i] = x[idx[i]]" in msg and "line" in msg
    assert out.tolist() == [-1.0] * 4


def test_an_int64_index_past_2_31_is_refused_not_wrapped(device_name):
    x = np.arange(10, dtype=np.float64)
    out = np.full(2, -1.0)
    with pytest.raises(GpuIndexError) as info:
        gpu(wk.gather64, x, np.array([1, 2**32 + 1], np.int64), out).join()
    assert "'x'" in str(info.value)
    assert out.tolist() == [-1.0, -1.0]


def test_boundscheck_off_in_float64(device_name):
    x = np.array([1.5, -2.0, 1e-300])
    gpu(wk.scale_unchecked, x, 3.0).join()
    np.testing.assert_array_equal(x, np.array([1.5, -2.0, 1e-300]) * 3.0)   # 1e-300: float64


def test_simulate_agrees_with_the_device_in_float64(device_name):
    a = np.array([0.1, 1e-300, -7.25, 3.0, 1e15 + 0.5])
    b = np.array([3.0, 7.0, 0.5, -2.0, 1 / 3])
    sim_f, sim_i = [0.0] * (5 * wk.K_FLOAT64), [0] * 30
    wk.float_ops.simulate([float64(v) for v in a], [float64(v) for v in b], sim_f, sim_i)
    dev_f, dev_i = np.zeros(5 * wk.K_FLOAT64), np.zeros(30, np.int64)
    gpu(wk.float_ops, a, b, dev_f, dev_i).join()
    for k, x in enumerate(a):
        for j, args in FMA_OUTPUTS.items():
            if dev_f[k * wk.K_FLOAT64 + j] == fused(*args(x)):
                sim_f[k * wk.K_FLOAT64 + j] = float(dev_f[k * wk.K_FLOAT64 + j])
    assert dev_f.tolist() == sim_f
    assert dev_i.tolist() == sim_i


def test_numpy_arrays_are_written_back_in_place_with_their_dtype(device_name):
    for dtype in (np.float64, np.float32):
        x = np.array([1.0, 2.0, 4.0], dtype)
        before = x.__array_interface__["data"][0]
        gpu(wk.scale, x, 0.1).join()
        assert x.dtype == dtype and x.__array_interface__["data"][0] == before
        np.testing.assert_array_equal(x, np.array([1.0, 2.0, 4.0], dtype) * dtype(0.1))


def test_atomics_on_32_bit_lists_in_a_float64_launch(device_name):
    x = np.array([0.1, 0.3, 0.6, 0.9, 0.95, 0.2, 0.7] * 20)
    hist, hits = np.zeros(4, np.uint32), np.full(1, -5, np.int32)
    gpu(wk.count_atomics, x, hist, hits).join()
    bins = (x * 4.0).astype(np.int64)
    np.testing.assert_array_equal(hist, np.bincount(bins % 4, minlength=4))
    assert hits[0] == bins.max()
    plain = [0] * 4
    gpu(wk.count_plain_atomics, x, plain).join()       # plain list[int] stays int32 here
    assert plain == np.bincount(bins % 4, minlength=4).tolist()


def test_atomics_on_a_plain_int_list_given_int64(device_name):
    # 64-bit atomics where the device has them (tests/device/test_atomics_width.py: the
    # refusal naming the int32 array where it does not)
    if dev.get_context().missing(["shader-int64-atomic-all-ops"]):
        pytest.skip("the device has no 64-bit atomics")
    hist = np.zeros(4, np.int64)
    gpu(wk.count_plain_atomics, np.array([0.1, 0.5, 0.6, 0.9]), hist).join()
    assert hist.tolist() == [1, 0, 2, 1]


def test_shared_float64_arrays_with_barriers(device_name):
    x = np.random.default_rng(3).standard_normal(200) * 1e-8 + 1.0
    out = np.zeros(4)
    gpu(wk.block_sums64, x, out).join()
    want = [math.fsum(x[k * 64:(k + 1) * 64]) for k in range(4)]
    np.testing.assert_allclose(out, want, rtol=1e-14)
    out_plain = np.zeros(4)
    gpu(wk.block_sums_plain, x, out_plain).join()          # plain shared: float64 too
    np.testing.assert_allclose(out_plain, want, rtol=1e-14)
    out32 = np.zeros(4, np.float32)
    gpu(wk.block_sums_plain, x.astype(np.float32), out32).join()
    np.testing.assert_allclose(out32, want, rtol=1e-5)


def test_device_functions_follow_the_launch(device_name):
    x = np.array([1.0, 3.0, 1e6])
    out, w = np.zeros(3), np.zeros(3, np.int64)
    gpu(wk.use_funcs, x, out, w).join()
    # plain float: float64 (x * (1 + 1e-12) - x rounds the product unless the driver fuses)
    assert all(separately_or_fused(g, v, 1.0 + 1e-12, -v) for g, v in zip(out, x))
    assert out[0] != 0.0
    assert w.tolist() == [(k + 3000000000) * (k + 7) for k in range(3)]
    out32 = np.zeros(3, np.float32)
    gpu(wk.use_funcs, x.astype(np.float32), out32, w).join()
    want32 = x.astype(np.float32) * np.float32(1.0 + 1e-12) - x.astype(np.float32)
    np.testing.assert_allclose(out32, want32, atol=1e-1)


def test_prepare_and_compile_after_64_bit_launches(device_name):
    x = np.array([2.0, 4.0])
    gpu(wk.elementwise, x, np.zeros(2)).join()
    summary = gpu_compile()
    assert "elementwise" in summary["kernels"]
    assert prepare()["kernels"] == summary["kernels"]
    y = np.zeros(2)
    gpu(wk.elementwise, x, y).join()
    np.testing.assert_array_equal(y, x * 3.0 + 1e-10)


@pytest.mark.parametrize("n", [1, 4, 7, 1000, 4099])
def test_element_wise_float64_launches_are_exact(device_name, n):
    x = np.random.default_rng(n).standard_normal(n) * 1e3
    y = np.zeros(n)
    gpu(wk.elementwise, x, y).join()
    assert all(separately_or_fused(g, v, 3.0, 1e-10) for g, v in zip(y, x))
    x32, y32 = x.astype(np.float32), np.zeros(n, np.float32)
    gpu(wk.elementwise, x32, y32).join()
    np.testing.assert_allclose(y32, x32 * np.float32(3.0), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 5, 4099])
def test_element_wise_int64_and_uint32_launches_are_exact(device_name, n):
    x = np.arange(n, dtype=np.int64) * 2**33 - 2**40
    y = np.zeros(n, np.int64)
    gpu(wk.elementwise_int, x, y).join()
    np.testing.assert_array_equal(y, x * 3 + 1)
    u = (np.arange(n, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    v = np.zeros(n, np.uint32)
    gpu(wk.elementwise_uint32, u, v).join()
    np.testing.assert_array_equal(v, ((u.astype(np.uint64) * 3 + 1) % 2**32).astype(np.uint32))


@pytest.mark.parametrize("kernel, feature, args", [
    (wk.feature_f64, "shader-f64", lambda: (np.ones(3), np.zeros(3))),
    (wk.feature_i64, "shader-int64", lambda: (np.arange(3, dtype=np.int64), 1,
                                               np.zeros(3, np.int64))),
    (wk.feature_pinned, "shader-f64", lambda: ([1.0, 2.0, 3.0], np.zeros(3, np.float32))),
], ids=["float64-array", "int64-array", "float64-parameter"])
def test_a_device_without_the_feature_refuses_at_launch(device_name, kernel, feature, args):
    kernel = Gpu(kernel)        # a kernel of its own, not set up on this device yet
    args = args()
    before = [a.copy() if isinstance(a, np.ndarray) else list(a) if isinstance(a, list) else a
              for a in args]
    with config.override(hide_features=(feature,)):
        with pytest.raises(GpuInvalidArgument) as info:
            gpu(kernel, *args).join()
        msg = str(info.value)
        assert feature in msg and device_name in msg, msg
        assert ("astype(np.float32)" if feature == "shader-f64" else "astype(np.int32)") in msg
        for a, b in zip(args, before):
            np.testing.assert_array_equal(a, b)
        if feature == "shader-f64" and isinstance(args[0], np.ndarray):   # 32-bit still runs
            out = np.zeros(2, np.float32)
            gpu(kernel, np.ones(2, np.float32), out).join()
            assert out.tolist() == [1.0, 1.0]
        elif feature == "shader-int64":
            out = [0, 0]
            gpu(kernel, [1, 2], 5, out).join()
            assert out == [6, 7]


def test_augmented_assignments_of_width_typed_elements(device_name):
    x = np.array([5, -7, 2**40, 1, -2**63], np.int64)
    y = np.array([7, -2, 3, 0, -1], np.int64)
    u = np.array([0, 1, 2**31, 2**32 - 1, 7], np.uint32)
    f = np.array([1.3, -2.2, 0.1, 7.0, -0.0])
    want_x = [floordiv(w64(a + 3000000000), b) for a, b in zip(x.tolist(), y.tolist())]
    want_u = [((a - 1) % 2**32) * 3 % 2**32 for a in u.tolist()]
    want_f = [(a % 0.75) ** 2 for a in f.tolist()]
    gpu(wk.augmented, x, u, f, y).join()
    assert x.tolist() == [w64(v) for v in want_x]
    assert u.tolist() == want_u and f.tolist() == want_f


def test_shift_counts_are_taken_modulo_the_width(device_name):
    c = np.array([1, 33, 64, 65], np.int64)
    x, u = np.full(4, 3, np.int64), np.full(4, 3, np.uint32)
    o, ou = np.zeros(8, np.int64), np.zeros(8, np.uint32)
    gpu(wk.shifts, x, u, c, o, ou).join()
    assert o.tolist() == [w64(3 << (k % 64)) for k in c.tolist()] + \
        [3 >> (k % 64) for k in c.tolist()]
    assert ou.tolist() == [(3 << (k % 32)) % 2**32 for k in c.tolist()] + \
        [3 >> (k % 32) for k in c.tolist()]


def test_uint32_arguments_are_range_checked(device_name):
    out = np.zeros(1, np.uint32)
    for bad in (-1, 2**32):
        with pytest.raises(GpuInvalidArgument, match="'u'.*uint32"):
            gpu(wk.store_uint32, bad, out)
    with pytest.raises(GpuInvalidArgument, match="uint32"):
        gpu(wk.augmented, np.zeros(1, np.int64), np.ones(1, np.int32), np.zeros(1),
            np.ones(1, np.int64))
    lst = [-1]
    with pytest.raises(GpuInvalidArgument, match="uint32"):
        gpu(wk.augmented, np.zeros(1, np.int64), lst, np.zeros(1), np.ones(1, np.int64))
    assert out.tolist() == [0] and lst == [-1]
    gpu(wk.store_uint32, 2**32 - 1, out).join()
    assert out.tolist() == [2**32 - 1]


def test_compile_without_the_feature_names_it(device_name):
    kernel = Gpu(wk.feature_pinned)         # its 32-bit program needs shader-f64
    with config.override(hide_features=("shader-f64",)):
        with pytest.raises(GpuInvalidArgument) as info:
            gpu_compile()
    # (the first kernel not yet set up on this device that needs float64: ours, or another
    # kernel of this module when the tests run in random order)
    assert "shader-f64" in str(info.value) and "astype(np.float32)" in str(info.value)
    out = np.zeros(2, np.float32)
    gpu(kernel, [1.5, 2.5], out).join()      # with the feature: it runs
    assert out.tolist() == [1.5, 2.5]
