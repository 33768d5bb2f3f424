"""A value a vector uses more than once is evaluated once, as Python evaluates it: a scalar
spread over the components (``v * f(x)``, ``vec3(f(x))``, ``clamp(v, lo, f(x))``) and a vector
whose components a function reads twice (``normalize``, ``length``, ``cross``) call a device
function once per evaluation in the source, on the device as in plain Python."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, cross, gpu, length, normalize, vec3


@Gpu.func
def counted(c: list[int], i: int, x: float) -> float:
    c[i] += 1                       # a side effect: how many times the call ran
    return x


@Gpu.func
def counted_vec(c: list[int], i: int, v: vec3) -> vec3:
    c[i] += 10
    return v


@Gpu
def spread(v: list[vec3], out: list[vec3], s: list[float], c: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < len(c):
        a = v[i] * counted(c, i, 2.0)                     # scalar on the right
        b = counted(c, i, 0.5) * v[i]                     # scalar on the left
        w = vec3(counted(c, i, 1.5))                      # one number for every component
        n = normalize(counted_vec(c, i, v[i]) + a)        # a vector read twice by normalize
        x = cross(b, counted_vec(c, i, w))
        out[i] = a + b + w + n + x
        s[i] = length(v[i] * counted(c, i, 3.0))


def _run(v):
    n = len(v)
    out, s, c = np.zeros_like(v), np.zeros(n, v.dtype), np.zeros(n, np.int32)
    return out, s, c


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_call_runs_once_as_in_python(dtype):
    v = np.random.default_rng(3).standard_normal((257, 3)).astype(dtype)
    out, s, c = _run(v)
    gpu(spread, v, out, s, c).join()
    sim_out, sim_s, sim_c = _run(v)
    spread.simulate(v, sim_out, sim_s, sim_c)
    assert (sim_c == 24).all()                 # 4 scalar calls and 2 vector calls, once each
    np.testing.assert_array_equal(c, sim_c)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, sim_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(s, sim_s, rtol=tol)


def test_a_call_spread_over_components_inside_and_is_a_located_error():
    v = np.ones((4, 3), np.float32)
    c, out = np.zeros(4, np.int32), np.full(4, 7.0, np.float32)
    with pytest.raises(GpuKernelTypeError, match="uses more than once") as info:
        @Gpu
        def lazy_spread(v: list[vec3], c: list[int], out: list[float]) -> None:
            i: int = GlobalIdx.x
            if i < len(c):
                out[i] = 1.0 if i > 3 and length(v[i] * counted(c, i, 2.0)) > 1.0 else 0.0

        gpu(lazy_spread, v, c, out).join()
    assert "length(v[i] * counted(c, i, 2.0))" in str(info.value)
    assert "assign the call's result to a local first" in str(info.value)
    assert (out == 7.0).all() and (c == 0).all()
