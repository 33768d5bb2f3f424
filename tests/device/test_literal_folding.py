"""Float constants the driver can see through a name keep Python's NaN, inf and -0.0 results.

lavapipe propagated a constant stored in a local (``t = 0.0``), a vector local's components
(``vec3(0.0, -9.8, 0.0)``), a device function's literal argument or constant result, an int
the driver knows (``m = 0``, a ``range`` counter once unrolled, ``n - n``) and folded the
float arithmetic on it as if NaN, infinities and -0.0 did not exist: ``x * t`` gave ``0.0``
for a NaN ``x``, ``x + t`` gave ``-0.0`` for ``x = -0.0``, ``x * u - x`` with ``u = 1.0``
gave ``0.0`` for an infinite ``x`` (codegen/literal_entry.py). Each kernel here is checked
bit for bit against its plain-Python run, in float32 and float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.gpu import GlobalIdx, Gpu, gpu, mat22, vec2, vec3

FLOATS = [np.float32, np.float64]
IDS = ["float32", "float64"]
UINT = {np.float32: np.uint32, np.float64: np.uint64}
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 2.0, -3.0, 1.0]

G_ZERO = 0.0            # module constants read by the kernels
G_ONE = 1.0
G_INF = math.inf


@Gpu.func
def times(v: float, k: float) -> float:
    return v * k


@Gpu.func
def plus(v: float, k: float) -> float:
    return v + k


@Gpu.func
def zero() -> float:
    return 0.0


@Gpu.func
def zero_and(v: float) -> tuple[float, float]:
    return 0.0, v


@Gpu
def through_values(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a, b = zero_and(x[i])           # a tuple result's constant member
    o[i * 5 + 0] = x[i] * a
    m = mat22(0.0, 1.0, 1.0, 0.0)   # a matrix's components
    v = m @ vec2(x[i], x[i] + 1.0)
    o[i * 5 + 1] = v.x
    o[i * 5 + 2] = v.y
    z = 0j                          # complex constants
    o[i * 5 + 3] = (z * complex(x[i], 0.0)).real
    q = 1j
    o[i * 5 + 4] = (q * complex(x[i], 0.0)).real


@Gpu
def through_locals(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    t = 0.0
    z = -0.0
    u = 1.0
    h = math.inf
    o[i * 12 + 0] = x[i] * t
    o[i * 12 + 1] = t * x[i]
    o[i * 12 + 2] = x[i] + t
    o[i * 12 + 3] = t - x[i]
    o[i * 12 + 4] = x[i] - z
    o[i * 12 + 5] = x[i] * z
    o[i * 12 + 6] = x[i] * u - x[i]
    o[i * 12 + 7] = x[i] - x[i] * u
    o[i * 12 + 8] = x[i] * h
    o[i * 12 + 9] = t / x[i]
    c = 2.0
    w = c - 2.0                     # a zero the driver would compute
    o[i * 12 + 10] = x[i] * w
    o[i * 12 + 11] = x[i] / t              # a zero divisor the helpers hide again


@Gpu
def through_statements(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    s = 0.0
    s += x[i]                       # an augmented assignment's start
    o[i * 8 + 0] = s
    a = x[i]
    t = 0.0
    a *= t
    o[i * 8 + 1] = a
    acc = 0.0
    for k in range(3):              # a loop-invariant local
        acc += x[i] * t
    o[i * 8 + 2] = acc
    q = 0.0
    j = 0
    while j < 2:
        q = q + x[i] * q
        j += 1
    o[i * 8 + 3] = q
    c = 0.0
    if n > 1000000:
        c = 1.0
    o[i * 8 + 4] = x[i] * c
    w = x[i] if x[i] > 1e38 else 0.0
    o[i * 8 + 5] = x[i] * w
    u = 1.0
    o[i * 8 + 6] = x[i] * min(u, 0.0)
    o[i * 8 + 7] = x[i] * min(1.0, 0.0)


@Gpu
def through_globals_and_functions(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i * 8 + 0] = x[i] * G_ZERO
    o[i * 8 + 1] = x[i] - x[i] * G_ONE
    g = G_ZERO
    o[i * 8 + 2] = x[i] * g
    o[i * 8 + 3] = x[i] * G_INF
    o[i * 8 + 4] = times(x[i], 0.0)
    o[i * 8 + 5] = plus(x[i], 0.0)
    o[i * 8 + 6] = x[i] * zero()
    o[i * 8 + 7] = x[i] - x[i] * 1.0


@Gpu
def through_ints(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    m = 0
    o[i * 6 + 0] = x[i] * m
    acc = 0.0
    for k in range(3):              # the counter's 0 once the driver unrolls the loop
        acc += x[i] * k
    o[i * 6 + 1] = acc
    nn = n - n
    o[i * 6 + 2] = x[i] * nn
    o[i * 6 + 3] = x[i] * (n - n)
    b = True
    o[i * 6 + 4] = x[i] * (not b)
    o[i * 6 + 5] = m / x[i]


@Gpu
def through_vectors(n: int, dt: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    g = vec3(0.0, -9.8, 0.0)
    v = vec3(1.0, 2.0, 3.0)
    v += g * dt[i]
    o[i * 6 + 0] = v.x
    o[i * 6 + 1] = v.y
    o[i * 6 + 2] = v.z
    p = g * dt[i]
    o[i * 6 + 3] = p.x
    o[i * 6 + 4] = p.z
    o[i * 6 + 5] = (vec3(0.0) + vec3(dt[i])).y


def _same(got, want) -> np.ndarray:
    """Element-wise: the same bits (so the same sign of zero), or both NaN."""
    u = UINT[got.dtype.type]
    return (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))


def _check(kernel, dt, k):
    x = np.array(SPECIAL, dt)
    n = len(x)
    got = np.full(n * k, 7.0, dt)
    gpu(kernel, n, x, got).join()
    want = np.full(n * k, 7.0, dt)
    with np.errstate(all="ignore"):
        kernel.simulate(n, x, want)
    ok = _same(got, want).reshape(n, k)
    bad = [(col, float(x[r]), float(got[r * k + col]), float(want[r * k + col]))
           for r in range(n) for col in range(k) if not ok[r, col]]
    assert not bad, f"{kernel.__name__}: (result, x, device, Python) {bad[:8]}"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
@pytest.mark.parametrize("kernel, k", [(through_locals, 12), (through_statements, 8),
                                       (through_globals_and_functions, 8), (through_ints, 6),
                                       (through_vectors, 6), (through_values, 5)],
                         ids=["locals", "statements", "globals-functions", "ints", "vectors",
                              "tuples-matrices-complex"])
def test_constants_through_names_keep_pythons_results(device_name, kernel, k, dt):
    _check(kernel, dt, k)


@Gpu
def int_forms(n: int, x: list[int], o: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    t = 0
    u = 1
    o[i * 4 + 0] = x[i] * t
    o[i * 4 + 1] = x[i] + t
    o[i * 4 + 2] = x[i] * u - x[i]
    o[i * 4 + 3] = t - x[i]


@pytest.mark.parametrize("dt", [np.int32, np.int64], ids=["int32", "int64"])
def test_int_forms_are_exact(device_name, dt):
    """Int folds are exact: the int locals stay visible to the driver (no hiding)."""
    x = np.array([0, 1, -1, 7, -2**31 + 1, 2**31 - 1], dt)
    n = len(x)
    got, want = np.zeros(4 * n, dt), np.zeros(4 * n, dt)
    gpu(int_forms, n, x, got).join()
    int_forms.simulate(n, x, want)
    np.testing.assert_array_equal(got, want)
    assert "ct_enter" not in int_forms.program.wgsl()


@Gpu
def lane_wise(n: int, x: list[float], y: list[float], z: list[float], w: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    t = 0.0
    y[i] = x[i] * t
    z[i] = times(x[i], 0.0)
    w[i] = x[i] + t


@Gpu
def lane_wise_vec3(n: int, dt: float, v: list[vec3]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    g = vec3(0.0, -9.8, 0.0)
    v[i] += g * dt


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dt", FLOATS, ids=IDS)
def test_the_four_lane_form_hides_them_too(device_name, monkeypatch, dt):
    monkeypatch.setenv("CTHREADS_VEC", "1")
    for k in (lane_wise, lane_wise_vec3):
        k.forget_runtimes()
    try:
        assert lane_wise.program.vec_guard == "n" and lane_wise_vec3.program.vec_guard == "n"
        x = np.array(SPECIAL * 2, dt)
        n = len(x)
        got = [np.full(n, 7.0, dt) for _ in range(3)]
        want = [np.full(n, 7.0, dt) for _ in range(3)]
        gpu(lane_wise, n, x, *got).join()
        with np.errstate(all="ignore"):
            lane_wise.simulate(n, x, *want)
        for g, w in zip(got, want):
            assert _same(g, w).all(), (x, g, w)
        for step in (math.nan, math.inf, -0.0):
            v = np.ones((9, 3), dt)
            ref = v.copy()
            gpu(lane_wise_vec3, 9, step, v).join()
            with np.errstate(all="ignore"):
                lane_wise_vec3.simulate(9, step, ref)
            assert _same(v.ravel(), ref.ravel()).all(), (step, v[0], ref[0])
    finally:
        for k in (lane_wise, lane_wise_vec3):
            k.forget_runtimes()
