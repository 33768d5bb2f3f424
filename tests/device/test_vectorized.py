"""The four-lane variant of element-wise kernels on the device: the same results as numpy, the
plain-Python run and the scalar kernel, and the scalar kernel wherever its conditions fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, GpuIndexError, gpu
from tests.device.kernels import saxpy


@Gpu
def blend4(n: int, t: float, x: list[float], y: list[float], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        d = y[i] - x[i]
        t = t * 0.5
        out[i] = math.sqrt(abs(x[i] + t * d)) / 2.0
        out[i] += -d
        y[i] = out[i] * x[i] / t


@Gpu
def fill4(n: int, c: float, y: list[float], z: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    t = c * 2.0
    y[i] = 19.0
    z[i] = t + 1.0


def test_values_made_of_scalars_only(fresh):
    fresh(True)
    y = [0.0] * 64
    z = [0.0] * 64
    gpu(fill4, 64, 1.25, y, z).join()
    assert _ran_vec(fill4)
    assert y == [19.0] * 64 and z == [3.5] * 64


@Gpu
def ops4(n: int, a: float, x: list[float], y: list[float], z: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    t = x[i]
    t = t * t
    y[i] = -x[i] / (a + x[i]) + t
    y[i] += x[i]
    y[i] -= a
    y[i] *= 2.0
    y[i] /= x[i]
    z[i] = y[i] + 1.0
    a = a + x[i]
    z[i] += a


@Gpu
def math4(n: int, a: float, x: list[float], y: list[float], z: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        y[i] = math.exp(-x[i]) + math.log(x[i]) + math.sin(x[i]) * math.cos(a)
        z[i] = math.tanh(x[i]) + math.atan2(x[i], a) + math.fabs(-x[i]) + abs(a - x[i])
        z[i] += math.degrees(x[i]) / 100.0 + math.log10(x[i]) + math.sqrt(x[i]) + math.log2(a)


@pytest.mark.parametrize("kernel", [ops4, math4], ids=["ops4", "math4"])
def test_lane_wise_kernels_match_plain_python(fresh, kernel):
    n = 4000
    rng = np.random.default_rng(5)
    x = [float(v) for v in rng.uniform(0.25, 4.0, n).astype(np.float32)]
    results = {}
    for vec in (True, False):
        fresh(vec)
        y, z = [0.0] * n, [1.0] * n
        gpu(kernel, n, 1.5, list(x), y, z).join()
        assert _ran_vec(kernel) == vec
        results[vec] = (y, z)
    sy, sz = [0.0] * n, [1.0] * n
    kernel.simulate(n, 1.5, list(x), sy, sz)
    for vec in (True, False):
        np.testing.assert_allclose(results[vec][0], sy, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(results[vec][1], sz, rtol=2e-5, atol=2e-5)


def _ran_vec(kernel) -> bool:
    rt = kernel.runtime_for()
    return any(v.form.startswith("vec_") for v in rt.compiled_variants())


@pytest.fixture
def fresh(monkeypatch, device_name):
    def reset(vec: bool):
        monkeypatch.setenv("CTHREADS_VEC", "1" if vec else "0")
        for k in (saxpy, blend4, fill4, ops4, math4):
            k.forget_runtimes()
    yield reset
    monkeypatch.delenv("CTHREADS_VEC")
    for k in (saxpy, blend4, fill4, ops4, math4):
        k.forget_runtimes()


@pytest.mark.parametrize("n", [4, 64, 1000, 65_536, 1_000_000])
def test_saxpy_matches_numpy_and_the_scalar_kernel(fresh, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    results = {}
    for vec in (True, False):
        fresh(vec)
        y = y0.copy()
        gpu(saxpy, n, -1.25, x, y).join()
        assert _ran_vec(saxpy) == vec
        results[vec] = y
    np.testing.assert_allclose(results[True], results[False], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(results[True], np.float32(-1.25) * x + y0, rtol=1e-6, atol=1e-6)


def test_blend_matches_plain_python(fresh):
    fresh(True)
    n = 4096
    rng = np.random.default_rng(7)
    x = [float(v) for v in rng.uniform(0.5, 2.0, n).astype(np.float32)]
    y = [float(v) for v in rng.uniform(-2.0, 2.0, n).astype(np.float32)]
    out = [0.0] * n
    sx, sy, sout = list(x), list(y), list(out)
    gpu(blend4, n, 3.0, x, y, out).join()
    assert _ran_vec(blend4)
    blend4.simulate(n, 3.0, sx, sy, sout)
    np.testing.assert_allclose(out, sout, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(y, sy, rtol=5e-5, atol=1e-5)
    assert x == sx


@pytest.mark.parametrize("n, size", [(1001, 1004), (1000, 1002), (1003, 1003), (1, 1),
                                     (2, 7), (996, 1000), (65, 129)])
def test_any_n_within_the_lists_runs_four_lanes(fresh, n, size):
    # n not a multiple of 4, lengths not multiples of 4: the last step keeps the lanes past n,
    # and the elements past n (and the buffer's padding past the list) are left alone
    fresh(True)
    x = [float(k % 17) for k in range(size)]
    y = [1.0] * size
    expect = [2.0 * x[k] + 1.0 if k < n else 1.0 for k in range(size)]
    gpu(saxpy, n, 2.0, x, y).join()
    assert y == expect
    assert _ran_vec(saxpy)


def test_odd_lengths_resident_and_numpy(fresh):
    fresh(True)
    n = 4097
    xa = np.arange(n, dtype=np.float32)
    ya = np.ones(n, np.float32)
    gpu(saxpy, n - 2, 0.5, xa, ya).join()
    np.testing.assert_array_equal(ya[:n - 2], np.float32(0.5) * xa[:n - 2] + 1)
    np.testing.assert_array_equal(ya[n - 2:], [1.0, 1.0])
    x = [1.0] * 4099
    y = [0.0] * 4099
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for k in range(5):
            gpu(saxpy, 4099 - k, 1.0, x, y).join(download=False)
        arena.sync()
    assert y == [5.0] * 4095 + [4.0, 3.0, 2.0, 1.0]
    assert _ran_vec(saxpy)


def test_guard_past_the_list_still_raises(fresh):
    fresh(True)
    x = [1.0] * 1000
    y = [0.0] * 1000
    with pytest.raises(GpuIndexError, match="out of range"):
        gpu(saxpy, 1004, 2.0, x, y).join()
    assert y == [0.0] * 1000 and not _ran_vec(saxpy)


def test_resident_loop_with_nan_and_inf(fresh):
    fresh(True)
    n = 1 << 16
    x = np.full(n, 0.5, np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    y = np.zeros(n, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for _ in range(10):
            gpu(saxpy, n, 3.0, x, y).join(download=False)
        arena.sync()
    with np.errstate(all="ignore"):
        expect = np.zeros(n, np.float32)
        for _ in range(10):
            expect = np.float32(3.0) * x + expect
    np.testing.assert_array_equal(y, expect)
    assert _ran_vec(saxpy)
