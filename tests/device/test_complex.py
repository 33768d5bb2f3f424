"""Complex numbers in kernels (codegen/complexes.py, library/complex.wgsl) on the device:
arithmetic and the cmath functions over random inputs against numpy, at both widths (complex64
in float32 launches, complex128 where a complex128 array makes the launch float64); a complex
Mandelbrot against numpy; GpuArrays, N-D arrays, Python lists (flat and nested, written back in
place), device functions returning complex, complex scalar parameters, bounds checks,
prepare(); and the plain-Python run (simulate) agreeing with the device."""

from __future__ import annotations

import cmath
import pickle

import numpy as np
import pytest

import cthreads.gpu as G
from cthreads.errors import GpuIndexError, GpuInvalidArgument
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, ThreadIdx, gpu
from cthreads.lang.intrinsics import shared
from cthreads.sync import __sync_threads

DTYPES = (np.complex64, np.complex128)
#: the unit roundoff of each width's float parts
EPS = {np.complex64: 2.0 ** -24, np.complex128: 2.0 ** -53}
#: the operations of ``ops`` below, in its output order
OPS = ("add", "sub", "mul", "div", "neg", "conj", "mixed", "rdiv", "abs", "real", "imag", "eq",
       "ne", "exp", "sqrt", "log", "phase", "make")


@Gpu
def ops(n: int, a: list[complex], b: list[complex], out: list[list[complex]]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    z: complex = a[i]
    w = b[i]
    out[0][i] = z + w
    out[1][i] = z - w
    out[2][i] = z * w
    out[3][i] = z / w
    out[4][i] = -z
    out[5][i] = z.conjugate()
    out[6][i] = 2.5 * z - 1 + 1j
    out[7][i] = 3.0 / w
    out[8][i] = abs(z)
    out[9][i] = z.real
    out[10][i] = z.imag
    out[11][i] = 1.0 if z == w else 0.0
    out[12][i] = 1.0 if z != w else 0.0
    out[13][i] = cmath.exp(z)
    out[14][i] = cmath.sqrt(z)
    out[15][i] = cmath.log(z)
    out[16][i] = cmath.phase(z)
    out[17][i] = complex(w.imag, z.real)


def _numpy_ops(a, b):
    return [a + b, a - b, a * b, a / b, -a, a.conj(), 2.5 * a - 1 + 1j, 3.0 / b, np.abs(a),
            a.real, a.imag, (a == b) * 1.0, (a != b) * 1.0, np.exp(a), np.sqrt(a), np.log(a),
            np.angle(a), b.imag + 1j * a.real]


def _inputs(dt, n=4096, seed=1):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3).astype(dt)
    b = (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3).astype(dt)
    b[::7] = a[::7]                                  # some equal pairs for == and !=
    return a, b


#: error bound of each operation in units of the width's roundoff, relative to |result|
#: (the parts of a product or quotient may cancel: the bound is on the complex value)
BOUND = {"exp": 64, "log": 64, "phase": 16, "sqrt": 8, "abs": 4, "div": 8, "rdiv": 8}


@pytest.mark.parametrize("dt", DTYPES)
def test_arithmetic_and_cmath_match_numpy(dt):
    a, b = _inputs(dt)
    n = len(a)
    out = np.zeros((len(OPS), n), dt)
    gpu(ops, n, a, b, out).join()
    with np.errstate(all="ignore"):
        want = _numpy_ops(a.astype(np.complex128), b.astype(np.complex128))
    for k, name in enumerate(OPS):
        ref = np.asarray(want[k], np.complex128)
        err = np.abs(out[k] - ref) / np.maximum(np.abs(ref), 1e-30)
        bound = BOUND.get(name, 4) * EPS[dt]
        assert err.max() <= bound, (name, float(err.max() / EPS[dt]))


@pytest.mark.parametrize("dt", DTYPES)
def test_the_plain_python_run_agrees_with_the_device(dt):
    a, b = _inputs(dt, n=256, seed=2)
    out = np.zeros((len(OPS), 256), dt)
    sim = np.zeros((len(OPS), 256), dt)
    gpu(ops, 256, a, b, out).join()
    ops.simulate(256, a, b, sim)
    err = np.abs(out.astype(np.complex128) - sim) / np.maximum(np.abs(sim), 1e-30)
    assert err.max() <= 64 * EPS[dt], float(err.max() / EPS[dt])


@Gpu
def divide(n: int, a: list[complex], b: list[complex], out: list[complex]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = a[i] / b[i]


@pytest.mark.parametrize("dt", DTYPES)
def test_division_does_not_overflow_for_large_and_small_divisors(dt):
    big = 1e30 if dt is np.complex64 else 1e300
    small = 1e-30 if dt is np.complex64 else 1e-300
    a = np.array([1 + 1j, big + big * 1j, small - small * 1j, 3 - 4j, 1j, 2.0], dt)
    b = np.array([big + big * 1j, big - 0.5j * big, small + 2 * small * 1j, big * 1j,
                  small * 1j, -small], dt)
    out = np.zeros_like(a)
    gpu(divide, len(a), a, b, out).join()
    # the quotients in exact arithmetic (Python's complex division, itself Smith's method)
    want = np.array([complex(x) / complex(y) for x, y in zip(a.tolist(), b.tolist())])
    assert np.all(np.isfinite(out))
    err = np.abs(out.astype(np.complex128) - want) / np.abs(want)
    assert err.max() <= 8 * EPS[dt]


def test_special_values_follow_numpy():
    a = np.array([0j, -1 + 0j, complex(0.0, -0.0), complex(float("inf"), 0), 1 + 0j], np.complex128)
    out = np.zeros((len(OPS), len(a)), np.complex128)
    b = np.ones_like(a)
    gpu(ops, len(a), a, b, out).join()
    assert out[14].tolist()[:3] == [0j, 1j, complex(0.0, -0.0)]      # cmath.sqrt
    assert out[13][0] == 1 and out[13][4] == np.e                      # cmath.exp
    assert out[15][0].real == -np.inf                                  # log(0): numpy's -inf
    assert out[8][3] == np.inf and out[16][1] == np.pi                 # abs(inf), phase(-1)


@Gpu
def mandelbrot(w: int, h: int, c: list[complex], iters: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= w * h:
        return
    z = 0j
    k = 0
    while k < iters and abs(z) <= 2.0:
        z = z * z + c[i]
        k += 1
    out[i] = k


def _numpy_mandelbrot(c, iters):
    z = np.zeros_like(c)
    k = np.zeros(c.shape, np.int32)
    for _ in range(iters):
        live = np.abs(z) <= 2.0
        z = np.where(live, z * z + c, z)
        k += live
    return k


@pytest.mark.parametrize("dt", DTYPES)
def test_mandelbrot_matches_numpy(dt):
    w, h, iters = 96, 64, 64
    xs = np.linspace(-2.2, 0.8, w)
    ys = np.linspace(-1.2, 1.2, h)
    c = (xs[None, :] + 1j * ys[:, None]).astype(dt).ravel()
    out = np.zeros(w * h, np.int32)
    gpu(mandelbrot, w, h, c, iters, out).join()
    want = _numpy_mandelbrot(c, iters)
    # chaotic at the boundary: one rounding may change a count there; the rest agree exactly
    assert np.mean(out != want) < 0.01
    assert abs(int(out.sum()) - int(want.sum())) < 0.01 * int(want.sum())


@Gpu.func
def rotate(z: complex, t: float) -> complex:
    return z * cmath.exp(complex(0.0, t))


@Gpu
def spin(n: int, s: complex, a: list[complex]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        a[i] += rotate(a[i], 0.5) * s


@pytest.mark.parametrize("dt", DTYPES)
def test_device_functions_and_complex_scalars(dt):
    a = (np.arange(16) + 1j * np.arange(16)[::-1]).astype(dt)
    want = a.copy()
    spin.simulate(16, 2 - 1j, want)
    gpu(spin, 16, 2 - 1j, a).join()
    assert np.allclose(a, want, rtol=16 * EPS[dt], atol=16 * EPS[dt])


def test_gpuarrays_of_complex():
    for dt in DTYPES:
        host = (np.arange(32) * (1 + 2j)).astype(dt)
        g = G.to_device(host)
        assert g.dtype == dt
        gpu(spin, 32, 1j, g).join()
        want = host.copy()
        spin.simulate(32, 1j, want)
        assert np.allclose(g.numpy(), want, rtol=16 * EPS[dt], atol=16 * EPS[dt])
        z = G.zeros(8, dt)
        assert z.numpy().dtype == dt and not z.numpy().any()


@Gpu
def square_plus(h: int, w: int, m: list[list[complex]]) -> None:
    i: int = GlobalIdx.x
    j: int = GlobalIdx.y
    if i < h and j < w:
        m[i, j] = m[i, j] * m[i, j] + 1j * i


def test_nd_arrays_and_nested_lists_are_written_in_place():
    m = np.array([[1 + 1j, 2, 5j], [3j, -1, 0.5]], np.complex128)
    want = m.copy()
    square_plus.simulate(2, 3, want, threads=(2, 3))
    gpu(square_plus, 2, 3, m, threads=(2, 3)).join()
    assert np.allclose(m, want, rtol=4 * EPS[np.complex128], atol=0)
    rows = [[1 + 1j, 2, 5j], [3j, -1, 0.5]]
    keep = rows[0]
    gpu(square_plus, 2, 3, rows, threads=(2, 3)).join()
    assert rows[0] is keep and all(type(v) is complex for r in rows for v in r)
    assert np.allclose(np.array(rows), want, rtol=1e-6)     # a Python list: complex64


def test_flat_python_lists_are_written_back():
    a = [complex(k, 1) for k in range(8)]
    want = list(a)
    spin.simulate(8, 1j, want)
    gpu(spin, 8, 1j, a).join()
    assert all(type(v) is complex for v in a)
    assert max(abs(p - q) for p, q in zip(a, want)) < 1e-5


def test_complex128_arrays_make_the_launch_float64():
    @Gpu
    def scale(n: int, a: list[complex], x: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            a[i] = a[i] * x[i] + 1e-12j

    a = np.ones(4, np.complex128)
    gpu(scale, 4, a, np.full(4, 1 + 2.0 ** -40)).join()
    assert a.dtype == np.complex128
    assert np.all(a == complex(1 + 2.0 ** -40, 1e-12))       # float64 parts, not rounded
    with pytest.raises(GpuInvalidArgument, match="one width"):
        gpu(scale, 4, a, np.ones(4, np.float32))
    assert np.all(a == complex(1 + 2.0 ** -40, 1e-12))       # unchanged by the refusal


def test_bounds_checks_on_complex_lists():
    @Gpu
    def shift(n: int, a: list[complex], out: list[complex]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            out[i + 1] = a[i]

    a = np.ones(4, np.complex64)
    out = np.zeros(4, np.complex64)
    with pytest.raises(GpuIndexError, match="'out'"):
        gpu(shift, 4, a, out).join()


def test_prepare_compiles_complex_kernels():
    summary = G.prepare()
    assert "mandelbrot" in summary["kernels"] and "ops" in summary["kernels"]
    out = np.zeros(4, np.int32)
    gpu(mandelbrot, 2, 2, np.zeros(4, np.complex64), 5, out).join()
    assert out.tolist() == [5, 5, 5, 5]


def test_a_string_in_a_complex_list_is_refused():
    a = [1j, "2j"]
    with pytest.raises(GpuInvalidArgument, match=r"\[1\] is str"):
        gpu(spin, 2, 1j, a)
    assert a == [1j, "2j"]


@Gpu
def inside(n: int, a: list[complex], out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = int(abs(a[i]) <= 2.0) + 2 * int(abs(a[i]) > 0.5)


@pytest.mark.parametrize("dt", DTYPES)
def test_abs_against_a_constant_agrees_with_numpy_away_from_the_constant(dt):
    # compiled without a square root (complexes.abs_compare): the same answers as numpy's abs,
    # except within a few ulps of the constant, where the rounding of |z| itself decides
    rng = np.random.default_rng(5)
    r = np.concatenate([rng.uniform(0, 3, 4000), np.full(64, 2.0), np.full(64, 0.5)])
    t = rng.uniform(-np.pi, np.pi, r.size)
    a = (r * np.exp(1j * t)).astype(dt)
    a[:4] = [complex(np.inf, 0), complex(0, -np.inf), complex(np.nan, 1), 0j]
    out = np.zeros(a.size, np.int32)
    gpu(inside, a.size, a, out).join()
    mag = np.abs(a.astype(np.complex128))
    with np.errstate(invalid="ignore"):
        want = (np.abs(a) <= 2.0) * 1 + 2 * (np.abs(a) > 0.5)
        near = (np.abs(mag - 2.0) < 8 * EPS[dt] * 2) | (np.abs(mag - 0.5) < 8 * EPS[dt])
    assert out[:4].tolist() == [2, 2, 0, 1]
    assert np.all((out == want) | near)


@Gpu
def by_constants(n: int, a: list[complex], x: list[float], out: list[list[complex]]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[0][i] = a[i] * 1j
        out[1][i] = a[i] * 2.0
        out[2][i] = x[i] * a[i]
        out[3][i] = a[i] / 2.0


@pytest.mark.parametrize("dt", DTYPES)
def test_real_and_constant_operands_keep_pythons_special_values(dt):
    # a real is converted to (x, 0.0) as Python converts it: inf * 0.0 is NaN, signs of zero
    # follow the full product (the driver must not fold the zero parts away)
    inf = float("inf")
    a = np.array([complex(63, 0), complex(inf, 1), complex(-0.0, 2), complex(1, -0.0)], dt)
    x = np.array([2.0, 2.0, -1.0, 3.0], dt().real.dtype)
    out = np.zeros((4, 4), dt)
    gpu(by_constants, 4, a, x, out).join()
    want = [[complex(v) * 1j for v in a.tolist()], [complex(v) * complex(2.0) for v in a.tolist()],
            [complex(float(r)) * complex(v) for r, v in zip(x, a.tolist())],
            [complex(v) / complex(2.0) for v in a.tolist()]]
    for got_row, want_row in zip(out.tolist(), want):
        assert [repr(g) for g in got_row] == [repr(w) for w in want_row]


@Gpu
def widen_and_share(n: int, a: list[complex]) -> None:
    t: list[complex] = shared(64)
    i: int = GlobalIdx.x
    j: int = ThreadIdx.x
    acc = 0.0                       # an inferred local: float, widened to complex below
    if i < n:
        t[j] = a[i]
        acc = a[i].real
    __sync_threads()
    if i < n:
        acc = acc + t[63 - j] ** 2 * 1j
        a[i] = acc


def test_shared_complex_arrays_inferred_widening_and_pickling():
    a = (np.arange(64) + 0.5j * np.arange(64)).astype(np.complex64)
    want = a.copy()
    widen_and_share.simulate(64, want)
    again = pickle.loads(pickle.dumps(widen_and_share))
    gpu(again, 64, a).join()
    assert np.allclose(a, want, rtol=8 * EPS[np.complex64], atol=0)


def test_arena_lists_of_complex():
    a = (np.arange(16) * (1 - 1j)).astype(np.complex128)
    want = a.copy()
    spin.simulate(16, 0.5j, want)
    arena = GpuArena()
    arena.bind(a=a)
    gpu(spin, 16, 0.5j, a).join()
    arena.sync()
    assert np.allclose(a, want, rtol=16 * EPS[np.complex128], atol=0)


def test_a_plain_python_call_runs_the_body_with_pythons_complex():
    a = (np.arange(4) + 1j).astype(np.complex128)
    direct, sim, dev = a.copy(), a.copy(), a.copy()
    spin(4, 2j, direct)                         # a plain call: thread 0's work, in Python
    spin.simulate(4, 2j, sim)
    gpu(spin, 4, 2j, dev).join()
    assert direct[0] == sim[0] and np.array_equal(direct[1:], a[1:])
    assert abs(dev[0] - direct[0]) < 1e-14


def test_wrong_dtypes_and_out_of_range_values_are_refused_unchanged():
    @Gpu
    def pinned(n: int, a: list[np.complex64]) -> None:       # numpy's type pins the width
        i: int = GlobalIdx.x
        if i < n:
            a[i] = a[i] * 2.0

    wide = np.array([1 + 1j, 2j], np.complex128)
    with pytest.raises(GpuInvalidArgument, match=r"astype\(np.complex64\), which rounds each "
                                                 "part"):
        gpu(pinned, 2, wide)
    assert wide.tolist() == [1 + 1j, 2j]
    real = np.ones(2, np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"float32.*list\[complex\]"):
        gpu(spin, 2, 1j, real)
    assert real.tolist() == [1.0, 1.0]
    big = [1j, complex(1e39, 0)]                  # beyond float32 in a complex64 launch
    with pytest.raises(GpuInvalidArgument, match=r"\[1\] = .* beyond float32's range"):
        gpu(spin, 2, 1j, big)
    assert big == [1j, complex(1e39, 0)]
    with pytest.raises(GpuInvalidArgument, match="beyond float32's range"):
        gpu(spin, 2, complex(0, 1e39), [1j, 2j])


@Gpu.func
def polar_parts(z: complex) -> tuple[float, complex]:
    return abs(z), z.conjugate()


@Gpu
def to_polar(n: int, a: list[complex], r: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        m, c = polar_parts(a[i])
        r[i] = m
        a[i] = c


@pytest.mark.parametrize("dt", DTYPES)
def test_tuple_results_with_complex_members(dt):
    a = np.array([3 + 4j, 1j, -2.5 - 0.5j], dt)
    r = np.zeros(3, a.real.dtype)
    a2, r2 = a.copy(), r.copy()
    gpu(to_polar, 3, a, r).join()
    to_polar.simulate(3, a2, r2)
    assert np.array_equal(a, a2) and np.allclose(r, r2, rtol=4 * EPS[dt], atol=0)


@Gpu
def mirror(n: int, a: list[complex], b: list[complex]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        b[n - 1 - i] += a[i] * (1 - 1j)


@pytest.mark.parametrize("dt", DTYPES)
def test_complex_arrays_past_the_binding_limit(dt):
    # config.override(binding_bytes=4096) makes 4 KiB "the limit" (as test_split_arrays.py):
    # the arrays split across bindings, as past lavapipe's real 128 MiB
    from cthreads import config
    n = 3000
    a, b = _inputs(dt, n=n, seed=9)
    want = b.copy()
    mirror.simulate(n, a, want)
    with config.override(binding_bytes=4096):
        ad, bd = G.to_device(a), G.to_device(b)
        assert len(bd._slot.parts) > 1
        gpu(mirror, n, ad, bd).join()
        got = bd.numpy()
        numpy_b = b.copy()
        gpu(mirror, n, a, numpy_b).join()          # numpy arrays passed straight, in parts
    assert np.allclose(got, want, rtol=8 * EPS[dt], atol=8 * EPS[dt])
    assert np.allclose(numpy_b, want, rtol=8 * EPS[dt], atol=8 * EPS[dt])


@Gpu
def squares(a: list[complex], out: list[complex], out2: list[complex], out3: list[complex]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        z = a[i]
        w = a[i]
        out[i] = z * z              # one operand twice: the squaring form (complexes.c_sq)
        out2[i] = z ** 2
        out3[i] = z * w             # two operands: the general product


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_squares_are_the_textbook_product(dt):
    """``z * z`` and ``z ** 2`` compile to a squaring helper; they agree with the general
    product ``z * w`` and with the textbook product in numpy (x*x - y*y, x*y + y*x) to the
    rounding a fused multiply-add may change (docs/language.md), and inf / NaN / -0.0 parts
    give the textbook product's values."""
    ft = np.float32 if dt == np.complex64 else np.float64
    r = np.random.default_rng(0)
    a = (r.standard_normal(2000) * np.exp(r.uniform(-20, 20, 2000))
         + 1j * r.standard_normal(2000) * np.exp(r.uniform(-20, 20, 2000))).astype(dt)
    a[:4] = [complex(np.inf, 1), complex(np.nan, 0), complex(-0.0, 0.0), complex(3e38, 0.0)]
    before = a.copy()
    out, out2, out3 = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
    gpu(squares, a, out, out2, out3).join()
    x, y = a.real.astype(ft), a.imag.astype(ft)
    with np.errstate(all="ignore"):
        re, im = x * x - y * y, x * y + y * x          # float arrays: no complex arithmetic
        ulp = 4 * np.finfo(ft).eps * (x * x + y * y)[4:]
    for got in (out, out2, out3):
        for part, want in ((got.real, re), (got.imag, im)):
            assert np.all(np.abs(part[4:] - want[4:]) <= ulp)
    # the special values through the squaring form (the general product of two equal values
    # may be re-associated by the driver into (x + x) * y, docs/language.md)
    for got in (out, out2):
        for part, want in ((got.real, re), (got.imag, im)):
            np.testing.assert_array_equal(part[:4], want[:4])
            assert (np.signbit(part[:4]) == np.signbit(want[:4])).all()
    np.testing.assert_array_equal(a, before)
