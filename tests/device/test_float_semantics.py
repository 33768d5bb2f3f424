"""Float semantics on the device against numpy / Python, for float32 and float64 launches.

The inputs of each cause the random-kernel campaign found (issue 21, item 4: F01-F08) plus a
few thousand random ones (fixed seeds): `/` correctly rounded and `%`, `math.fmod`, `//` exact
on a driver whose float32 fma rounds twice (lavapipe's), the sign of `-0.0 / y`, float-to-int
saturation at the int's limits, `**` special values, `float(int(x))` without -0.0, IEEE
results of a division by a zero the driver can see, and the folds the drivers make in a
kernel's own arithmetic as docs/language.md states them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import GlobalIdx, Gpu, float32, float64, gpu, int32, int64, uint32

FLOATS = [np.float32, np.float64]
IDS = ["float32", "float64"]
UINT = {np.float32: np.uint32, np.float64: np.uint64}


def _same(got, want) -> np.ndarray:
    """Element-wise: the same value and sign of zero, or both NaN."""
    got, want = np.asarray(got), np.asarray(want)
    bits = got.view(UINT[got.dtype.type]) == want.view(UINT[want.dtype.type])
    return bits | (np.isnan(got) & np.isnan(want))


def _assert_same(name, x, y, got, want):
    ok = _same(got, want)
    bad = [(float(a), float(b), float(g), float(w)) for a, b, g, w, k in
           zip(x, y, got, want, ok) if not k]
    assert not bad, f"{name}: {len(bad)} of {len(ok)} differ (x, y, device, expected): {bad[:8]}"


# ------------------------------------------------------------------- / % fmod // (F01, F02)
@Gpu
def divmod_all(n: int, x: list[float], y: list[float], q: list[float], m: list[float],
               f: list[float], d: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    q[i] = x[i] / y[i]
    m[i] = x[i] % y[i]
    f[i] = math.fmod(x[i], y[i])
    d[i] = x[i] // y[i]


#: the pairs of F01 (float32 quotients 1 ulp off, fmod inexact, // off by one on lavapipe),
#: F02 (-0.0 / y) and a few at the scaling thresholds of the exact helpers
FOUND = [(914.4672, -25.617651), (33.04371, 1.1722554), (-1.6290995, 7.312295e-05),
         (-513.17804, -0.00023421708), (16777216.0, -14.1), (-0.0, 5.0), (-0.0, 1e30),
         (0.0, -3.0), (-6.0, 3.0), (6.0, -3.0), (-7.5, 2.0), (7.0, 7.0), (-0.0, -2.0),
         (3.5 * 2.0**-120, 1.25 * 2.0**-121), (-5.0 * 2.0**-100, 3.0 * 2.0**-101),
         (2.0**120 * 1.75, 2.0**110 * 1.3), (-2.0**105 * 3.0, 2.0**101 * 1.1),
         (1.0, 3.0), (2.0, 3.0), (10.0, 0.1), (-1.0, 10.0)]


def _random_pairs(dt, n, seed):
    """Pairs with exponents spread over [-40, 40] and random signs."""
    rng = np.random.default_rng(seed)
    mant = rng.uniform(1.0, 2.0, (2, n))
    expo = rng.integers(-40, 41, (2, n))
    sign = rng.choice([-1.0, 1.0], (2, n))
    x, y = (sign * mant * np.exp2(expo)).astype(dt)
    return x, y


def _divmod_inputs(dt, n=4000, seed=21):
    x, y = _random_pairs(dt, n, seed)
    # quotients below 2^24 and integral-ish ones, where // and fmod are most delicate
    k = np.arange(n // 4)
    y2 = y[:n // 4]
    x2 = (y2 * (k % 5000 + 1)).astype(dt)
    fx, fy = zip(*FOUND)
    return (np.concatenate([np.array(fx, dt), x, x2]),
            np.concatenate([np.array(fy, dt), y, y2]))


def _run_divmod(dt, x, y, hide=()):
    """The four results; ``hide``: device features to hide (``shader-f64`` makes a CPU
    driver run the fma-free float32 helpers in float32, Dekker's form, instead of float64)."""
    n = len(x)
    q, m, f, d = (np.zeros(n, dt) for _ in range(4))
    divmod_all.forget_runtimes()
    try:
        with config.override(hide_features=hide):
            gpu(divmod_all, n, x, y, q, m, f, d).join()
    finally:
        divmod_all.forget_runtimes()
    return q, m, f, d


#: (launch type, features hidden): float32 in each form the device may run, and float64
FORMS = [(np.float32, ()), (np.float32, ("shader-f64",)), (np.float64, ())]
FORM_IDS = ["float32", "float32-without-f64", "float64"]


@pytest.mark.parametrize("dt, hide", FORMS, ids=FORM_IDS)
def test_division_is_correctly_rounded(device_name, dt, hide):
    x, y = _divmod_inputs(dt)
    q = _run_divmod(dt, x, y, hide)[0]
    with np.errstate(all="ignore"):
        _assert_same("/", x, y, q, x / y)


@pytest.mark.parametrize("dt, hide", FORMS, ids=FORM_IDS)
def test_remainders_and_floor_division_are_exact(device_name, dt, hide):
    x, y = _divmod_inputs(dt)
    _, m, f, d = _run_divmod(dt, x, y, hide)
    # docs/language.md: exact for quotients below 2^24 (float32; the float64 helpers are
    # exact for every quotient)
    keep = np.abs(x.astype(np.float64) / y.astype(np.float64)) < 2.0**24
    x, y, m, f, d = x[keep], y[keep], m[keep], f[keep], d[keep]
    assert len(x) > 3000
    want_f = np.array([math.fmod(float(a), float(b)) for a, b in zip(x, y)], dt)
    want_d = np.array([float(math.floor(_exact_ratio(a, b))) for a, b in zip(x, y)], dt)
    want_d = np.where(want_d == 0, np.copysign(np.zeros_like(want_d), x / y), want_d)
    _assert_same("fmod", x, y, f, want_f)
    _assert_same("%", x, y, m, np.remainder(x, y))
    _assert_same("//", x, y, d, want_d)


def _exact_ratio(a, b):
    from fractions import Fraction
    return Fraction(float(a)) / Fraction(float(b))


# ------------------------------------------------------------ the four-lane variant's `/`
@Gpu
def quotient4(n: int, x: list[float], y: list[float], q: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    q[i] = x[i] / y[i]


@pytest.mark.parametrize("hide", [(), ("shader-f64",)], ids=["", "without-f64"])
def test_four_lane_division_is_correctly_rounded(device_name, monkeypatch, hide):
    monkeypatch.setenv("CTHREADS_VEC", "1")
    quotient4.forget_runtimes()
    try:
        x, y = _divmod_inputs(np.float32)
        n = len(x) // 4 * 4
        x, y = x[:n], y[:n]
        q = np.zeros(n, np.float32)
        with config.override(hide_features=hide):
            gpu(quotient4, n, x, y, q).join()
        assert any(v.form.startswith("vec_") for v in quotient4.runtime_for().compiled_variants()), \
            "four-lane form not run"
        with np.errstate(all="ignore"):
            _assert_same("/ (four lanes)", x, y, q, x / y)
    finally:
        quotient4.forget_runtimes()


def test_the_exact_helpers_follow_the_device_fma(device_name):
    """The pipeline constant that picks the fma-free helpers is the device's flag."""
    from cthreads.backend import device as _device
    from cthreads.backend.pipeline import device_constants
    assert divmod_all.program.overrides == ("ct_fused_f32",)
    ctx = _device.get_context()
    assert device_constants(ctx, ("ct_fused_f32",)) == (("ct_fused_f32",
                                                          ctx.fma_rounds_once),)
    assert ctx.fma_rounds_once == (not ctx.is_cpu)
    with config.override(hide_features=("shader-f64",)):
        assert not ctx.exact_f32_in_f64
    assert ctx.exact_f32_in_f64 == (not ctx.fma_rounds_once and "shader-f64" in ctx.features)


# ------------------------------------------------------------ division by a visible zero (F05)
@Gpu
def by_zero(n: int, x: list[float], z: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    w: float = 0.0
    o[i * 6 + 0] = x[i] / (n - n)
    o[i * 6 + 1] = x[i] / w
    o[i * 6 + 2] = x[i] / z[i]
    o[i * 6 + 3] = x[i] // w
    o[i * 6 + 4] = x[i] % w
    o[i * 6 + 5] = x[i] // z[i]


@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_division_by_a_zero_the_driver_sees_is_ieee(device_name, dt):
    xs = np.array([math.inf, -math.inf, math.nan, -0.0, 0.0, 2.0, -3.5, 1e-30], dt)
    n = len(xs)
    z = np.array([0.0, -0.0] * (n // 2), dt)
    o = np.zeros(6 * n, dt)
    gpu(by_zero, n, xs, z, o).join()
    zero = np.zeros(n, dt)
    with np.errstate(all="ignore"):
        want = np.stack([xs / zero, xs / zero, xs / z, np.floor(xs / zero),
                         np.full(n, np.nan, dt), np.floor(xs / z)], axis=1).ravel()
    _assert_same("x / 0", np.repeat(xs, 6), np.tile(np.arange(6.0), n), o, want.astype(dt))


# ------------------------------------------------------------ float-to-int saturation (F03)
@Gpu
def to_ints(n: int, x: list[float32], y: list[float64], a: list[int32], b: list[uint32],
            c: list[int64], d: list[int32], e: list[uint32], f: list[int64]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a[i] = int32(x[i])
    b[i] = uint32(x[i])
    c[i] = int64(x[i])
    d[i] = int32(y[i])
    e[i] = uint32(y[i])
    f[i] = int64(y[i])


def _saturate(v: float, lo: int, hi: int) -> int:
    if v >= hi:
        return hi
    if v <= lo:
        return lo
    return int(v)


def _uint32_of(v: float) -> int:
    # negative floats wrap as their (saturated) int32 value would; others saturate
    if v < 0:
        return _saturate(v, -2**31, 2**31 - 1) % 2**32
    return _saturate(v, 0, 2**32 - 1)


SATURATING = [3e9, 1e18, 1e30, 2.0**31, 2.0**32, 2.0**63, 2147483520.0, 4294967040.0,
              9223371487098961920.0, 9223372036854774784.0, 1e19, 2147483647.5, math.inf,
              -math.inf, -3e9, -2.0**31, -2.0**63, -1e30, 1.5, -1.5, -0.0, 0.99, 4294967295.0]


def test_float_to_int_conversions_saturate_at_the_limits(device_name):
    rng = np.random.default_rng(3)
    rand = rng.choice([-1.0, 1.0], 3000) * np.exp2(rng.uniform(0, 70, 3000))
    vals = np.array(SATURATING + rand.tolist())
    x32 = vals.astype(np.float32)
    n = len(vals)
    outs = [np.zeros(n, t) for t in (np.int32, np.uint32, np.int64, np.int32, np.uint32,
                                     np.int64)]
    gpu(to_ints, n, x32, vals, *outs).join()
    for k, (src, lo, hi) in enumerate([(x32, -2**31, 2**31 - 1), (x32, None, None),
                                       (x32, -2**63, 2**63 - 1), (vals, -2**31, 2**31 - 1),
                                       (vals, None, None), (vals, -2**63, 2**63 - 1)]):
        want = [_uint32_of(float(v)) if lo is None else _saturate(float(v), lo, hi)
                for v in src]
        got = outs[k].tolist()
        bad = [(float(v), g, w) for v, g, w in zip(src, got, want) if g != w]
        assert not bad, f"conversion {k}: {len(bad)} differ (value, device, expected): {bad[:6]}"


# ------------------------------------------------------------ float(int(x)), round (F08)
@Gpu
def int_round_trip(n: int, x: list[float], o: list[float], p: list[float],
                   q: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i] = float(int(x[i]))
    p[i] = round(x[i])
    q[i] = 1.0 / float(int(x[i]))


@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_a_float_of_an_int_has_no_negative_zero(device_name, dt):
    rng = np.random.default_rng(8)
    x = np.concatenate([np.array([-0.5, -0.0, -0.3, -0.999, 0.0, -0.49, 0.4, -1.0, -1.5,
                                  2.5, -2.5]), -rng.uniform(0, 1, 2000),
                        rng.uniform(-1e6, 1e6, 2000)]).astype(dt)
    n = len(x)
    o, p, q = (np.zeros(n, dt) for _ in range(3))
    gpu(int_round_trip, n, x, o, p, q).join()
    want_o = np.array([float(int(v)) for v in x.tolist()], dt)
    want_p = np.array([float(round(v)) for v in x.tolist()], dt)
    with np.errstate(all="ignore"):
        want_q = (1.0 / want_o).astype(dt)
    _assert_same("float(int(x))", x, x, o, want_o)
    _assert_same("round(x)", x, x, p, want_p)
    _assert_same("1 / float(int(x))", x, x, q, want_q)


# ------------------------------------------------------------ ** special values (F04)
@Gpu
def power(n: int, a: list[float], b: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i] = a[i] ** b[i]


def _py_pow(x: float, y: float) -> float:
    """Python's value, numpy's where Python raises (0.0 ** -1), NaN for a complex result."""
    try:
        r = x ** y
        return math.nan if isinstance(r, complex) else r
    except ZeroDivisionError:
        with np.errstate(all="ignore"):
            return float(np.power(x, y))
    except OverflowError:
        if x < 0 and y != math.floor(y):
            return math.nan
        return math.copysign(math.inf, x) if (y % 2 == 1) else math.inf


SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, -0.5, 2.0, -2.0, 3.0,
           -3.0, 2.5, -2.5, 1e-3, 1e30, -1e30]


@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_power_special_values_follow_python(device_name, dt):
    rng = np.random.default_rng(4)
    pairs = [(a, b) for a in SPECIAL for b in SPECIAL + [41.26, -7.0, 7.0]]
    ra = rng.uniform(-4, 4, 3000)
    rb = np.where(rng.random(3000) < 0.5, rng.integers(-8, 9, 3000), rng.uniform(-4, 4, 3000))
    pairs += list(zip(ra.tolist(), rb.tolist()))
    a = np.array([p[0] for p in pairs], dt)
    b = np.array([p[1] for p in pairs], dt)
    o = np.zeros(len(pairs), dt)
    gpu(power, len(pairs), a, b, o).join()
    bad = []
    for x, y, g in zip(a.tolist(), b.tolist(), o.tolist()):
        with np.errstate(all="ignore"):
            w = float(dt(_py_pow(x, y)))
        if math.isnan(w) or math.isinf(w) or w == 0 or abs(w) == 1:
            ok = (math.isnan(g) and math.isnan(w)) or (g == w and math.copysign(1, g) ==
                                                       math.copysign(1, w))
        else:
            # the driver's pow (float32) / cthreads' library (float64): close, same sign
            ok = math.isfinite(g) and abs(g - w) <= 1e-4 * abs(w) and (g < 0) == (w < 0)
        if not ok:
            bad.append((x, y, g, w))
    assert not bad, f"{len(bad)} differ (base, exponent, device, expected): {bad[:8]}"


# ------------------------------------------------------------ folds the drivers make (F05, F06)
@Gpu
def fold_prone(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i * 9 + 0] = x[i] * 0.0
    o[i * 9 + 1] = 0.0 * x[i]
    o[i * 9 + 2] = x[i] * -0.0
    o[i * 9 + 3] = x[i] + 0.0
    o[i * 9 + 4] = x[i] - x[i]
    o[i * 9 + 5] = -x[i] + x[i]
    o[i * 9 + 6] = (x[i] + 1.0) - (x[i] + 1.0)
    o[i * 9 + 7] = abs(-0.0)
    o[i * 9 + 8] = 0.0 - x[i]


@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_literal_zeros_and_self_differences_keep_ieee_results(device_name, dt):
    rng = np.random.default_rng(5)
    x = np.concatenate([np.array([math.inf, -math.inf, math.nan, -0.0, 0.0, 2.0]),
                        rng.standard_normal(2000) * 1e3]).astype(dt)
    n = len(x)
    o = np.zeros(9 * n, dt)
    gpu(fold_prone, n, x, o).join()
    zero, one = dt(0.0), dt(1.0)
    with np.errstate(all="ignore"):
        want = np.stack([x * zero, zero * x, x * -zero, x + zero, x - x, -x + x,
                         (x + one) - (x + one), np.full(n, 0.0, dt), zero - x],
                        axis=1).ravel()
    _assert_same("fold-prone shapes", np.repeat(x, 9), np.tile(np.arange(9.0), n), o, want)


@Gpu
def times_zero4(n: int, x: list[float], y: list[float], z: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = x[i] * 0.0
    z[i] = x[i] - x[i]


def test_fold_prone_shapes_in_an_element_wise_kernel(device_name, monkeypatch):
    """With the four-lane variant on, such a kernel keeps the IEEE values (it runs scalar)."""
    monkeypatch.setenv("CTHREADS_VEC", "1")
    times_zero4.forget_runtimes()
    try:
        x = np.array([math.inf, math.nan, -0.0, 2.0, -3.0, 0.0, math.inf, 1.0], np.float32)
        y, z = np.ones(8, np.float32), np.ones(8, np.float32)
        gpu(times_zero4, 8, x, y, z).join()
        with np.errstate(all="ignore"):
            _assert_same("x * 0.0", x, x, y, x * np.float32(0.0))
            _assert_same("x - x", x, x, z, x - x)
    finally:
        times_zero4.forget_runtimes()


@Gpu
def driver_folds(n: int, x: list[float], s: list[float], y: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    w: float = 0.0
    o[i * 4 + 0] = x[i] * w
    o[i * 4 + 1] = x[i] + w
    o[i * 4 + 2] = (x[i] + s[i]) - x[i]
    o[i * 4 + 3] = (x[i] * y[i]) * 0.001


@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_driver_folds_give_one_of_the_documented_values(device_name, dt):
    """docs/language.md, "What the drivers' compilers may change": a local set to 0.0 reaches
    the driver hidden (codegen/literal_entry.py), so x * w and x + w are IEEE's values (they
    were 0.0 and x on lavapipe); a kernel's own arithmetic may be re-associated: (x + s) - x is
    the rounded value or s, and (x * y) * c is that, x * (y * c) or (x * c) * y."""
    rng = np.random.default_rng(6)
    x = np.concatenate([np.array([math.inf, -math.inf, math.nan, -0.0, 1e30, 3.4e38]),
                        rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 30, 2000)])
    x = x.astype(dt)
    n = len(x)
    s = np.concatenate([np.array([1.0, 1.0, 1.0, 1.0, 1.0, 2.5]),
                        rng.standard_normal(2000)]).astype(dt)
    y = np.concatenate([np.array([2.0, 2.0, 2.0, 2.0, -31.0, -31.0]),
                        rng.standard_normal(2000)]).astype(dt)
    o = np.zeros(4 * n, dt)
    gpu(driver_folds, n, x, s, y, o).join()
    o = o.reshape(n, 4)
    zero, c = dt(0.0), dt(0.001)
    with np.errstate(all="ignore"):
        allowed = [((x * zero),), ((x + zero),), ((x + s) - x, s),
                   ((x * y) * c, x * (y * c), (x * c) * y)]
    for k, values in enumerate(allowed):
        ok = np.zeros(n, bool)
        for v in values:
            ok |= _same(o[:, k], v)
        bad = [(float(a), float(o[j, k]), *(float(v[j]) for v in values))
               for j, a in enumerate(x) if not ok[j]]
        assert not bad, f"column {k}: (x, device, IEEE, folded ...) {bad[:6]}"


# ------------------------------------------------------------ int64 beside float64 code (F07)
@Gpu
def int64_beside_f64(n: int, x1: list[int], x3: list[float], s0: int64, o0: list[int64],
                     o1: list[int64]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    v5 = (x1[i] % (o0[i] * 65535))
    v4: int32 = math.floor((3.14159 / 1000.0))
    if ((850 // 2) * abs(v4)):
        pass
    else:
        if ((s0 << s0) < o1[i]):
            pass
    o1[i] = v5


@Gpu
def int64_beside_f64_one(n: int, x1: list[int], x3: list[float], s0: int64, o0: list[int64],
                         o1: list[int64]) -> None:
    i = GlobalIdx.x
    if i:
        return
    v5 = (x1[i] % (o0[i] * 65535))
    v4: int32 = math.floor((3.14159 / 1000.0))
    if ((850 // 2) * abs(v4)):
        pass
    else:
        if ((s0 << s0) < o1[i]):
            pass
    o1[i] = v5


@pytest.mark.parametrize("a, b", [(-5, 14), (-1, 3), (7, -2), (-2**31, 1), (-70000, 5)])
def test_int64_remainder_of_the_finding(device_name, a, b):
    """F07 as found: one thread (lavapipe gave 65531 for -5 % (14 * 65535))."""
    o1 = np.zeros(1, np.int64)
    gpu(int64_beside_f64_one, 1, np.array([a], np.int32), np.array([-1.05]), -32,
        np.array([b], np.int64), o1).join()
    assert int(o1[0]) == a % (b * 65535)


def test_int64_remainder_does_not_depend_on_unrelated_code(device_name):
    rng = np.random.default_rng(7)
    x1 = np.concatenate([[-5, -1, 5, -2**31, 2**31 - 1],
                         rng.integers(-2**31, 2**31, 3000)]).astype(np.int32)
    o0 = np.concatenate([[14, 14, -14, 3, -7],
                         rng.integers(-2**20, 2**20, 3000) | 1]).astype(np.int64)
    n = len(x1)
    o1 = np.zeros(n, np.int64)
    gpu(int64_beside_f64, n, x1, np.full(n, -1.05), -32, o0, o1).join()
    want = [int(a) % (int(b) * 65535) for a, b in zip(x1, o0)]
    bad = [(int(a), int(b), int(g), w) for a, b, g, w in zip(x1, o0, o1, want) if g != w]
    assert not bad, f"{len(bad)} differ (x1, o0, device, Python): {bad[:6]}"


# ------------------------------------------------------------ the helpers in a reduction
@Gpu.func
def max_by_division(a: float, b: float) -> float:
    # the larger of the two, through the division and fmod helpers (x / 1.0 == x; the
    # fmod term is a zero for finite values)
    return max(a / 1.0, b / 1.0) + math.fmod(a, 1.0) * 0.0


def test_a_reduction_gets_the_device_form_of_the_helpers(device_name):
    """A reduction's pipeline takes the pipeline constant and the helper texts too (a wrong
    one would refuse the shader or round the quotients)."""
    rng = np.random.default_rng(9)
    values = (rng.standard_normal(5000) * 1e3).astype(np.float32)
    assert max_by_division.reduce(values) == float(values.max())


@Gpu
def _log_base_kernel(n: int, x: list[float], b: float, o: list[float], o1: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        o[i] = math.log(x[i], b)
        o1[i] = math.log(x[i], 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_with_a_base_of_one_follows_the_division_rule(dtype, device_name):
    """log(x, b) is log(x) / log(b) with the language's division: a base of 1 (a literal or a
    scalar) divides by zero (inf, -inf, nan by the float rule; a plain '/' gave 0.0 on
    lavapipe), and other bases agree with numpy."""
    x = np.array([2.0, 0.5, 1.0, 8.0], dtype)
    expect_one = np.array([np.inf, -np.inf, np.nan, np.inf])
    for b in (1.0, 2.0, 10.0):
        o = np.zeros(4, dtype)
        o1 = np.zeros(4, dtype)
        gpu(_log_base_kernel, 4, x, b, o, o1).join()
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.log(x.astype(np.float64)) / np.log(b)
        np.testing.assert_allclose(o, want.astype(dtype), rtol=2e-6 if dtype == np.float32 else 1e-14)
        np.testing.assert_array_equal(o1, expect_one.astype(dtype))


@Gpu
def _self_difference_divisor(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        o[i] = x[i] / (x[i] - x[i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_divisor_computed_as_zero_follows_the_division_rule(dtype, device_name):
    """x / (x - x): the zero that hides the self-difference from the driver must be one it
    cannot fold (lavapipe folds uniforms' values into the shader: float64 gave 0.0)."""
    x = np.array([2.0, -0.5, 0.0, np.inf], dtype)
    o = np.zeros(4, dtype)
    gpu(_self_difference_divisor, 4, x, o).join()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = x / (x - x)
    np.testing.assert_array_equal(o, want)


@Gpu.func
def _nan_sum(a: float, b: float) -> float:
    return a + b + (b - b) / (b - b)


def test_a_reduction_whose_operation_divides_by_a_computed_zero(device_name):
    """The reduction shader's hidden zero is not a uniform's either: (b - b) / (b - b) is NaN,
    so the fold of any two values, in any order, is NaN (the division-by-zero rule; plain
    Python raises ZeroDivisionError)."""
    values = np.arange(1.0, 201.0)
    with pytest.raises(ZeroDivisionError):
        _nan_sum(1.0, 2.0)
    assert math.isnan(_nan_sum.reduce(values))
    assert math.isnan(_nan_sum.reduce(values.astype(np.float32)))
