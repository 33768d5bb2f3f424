"""Tuple results of device functions on the device, against numpy and the plain-Python run of
the same kernels (``simulate``)."""

from __future__ import annotations

import builtins
import math
import pickle
import textwrap

import numpy as np
import pytest

from cthreads.gpu import GpuIndexError, compile, gpu, prepare, to_device

from tests.conftest import run_python

from . import tuple_kernels as tk


def test_sincos_unpacked_and_indexed(device_name):
    rng = np.random.default_rng(1)
    r = rng.random(1000).astype(np.float32)
    t = (rng.random(1000) * 6.0 - 3.0).astype(np.float32)
    xs, ys, c0 = (np.zeros(1000, np.float32) for _ in range(3))
    gpu(tk.polar, 1000, r, t, xs, ys, c0).join()
    np.testing.assert_allclose(xs, r * np.cos(t), atol=2e-6)
    np.testing.assert_allclose(ys, r * np.sin(t), atol=2e-6)
    np.testing.assert_allclose(c0, np.cos(t), atol=2e-6)        # [0] - [-2] + [1]
    assert "struct ct_tup_f32_f32 { m0: f32, m1: f32 }" in tk.polar.wgsl


def test_device_and_simulate_agree(device_name):
    rng = np.random.default_rng(2)
    r = [float(v) for v in rng.random(200).astype(np.float32)]
    t = [float(v) for v in (rng.random(200) * 6.0).astype(np.float32)]
    dev = [[0.0] * 200 for _ in range(3)]
    sim = [[0.0] * 200 for _ in range(3)]
    gpu(tk.polar, 200, r, t, *dev).join()
    tk.polar.simulate(200, r, t, *sim)
    for d, s in zip(dev, sim):
        np.testing.assert_allclose(d, s, atol=2e-6)
    # the device function called from Python runs its body: a Python tuple
    assert tk.sincos(0.0) == (0.0, 1.0) and tk.idivmod(-7, 2) == (-4, 1)


def test_targets_list_elements_declared_and_existing_locals(device_name):
    t = np.linspace(-2.0, 2.0, 300).astype(np.float32)
    s, c = np.zeros(300, np.float32), np.zeros(300, np.float32)
    gpu(tk.into_lists, 300, t, s, c).join()
    np.testing.assert_allclose(s, np.sin(t), atol=2e-6)
    np.testing.assert_allclose(c, np.cos(t), atol=2e-6)
    out, m = np.zeros(300, np.float32), np.zeros(300, np.int32)
    gpu(tk.declared_targets, 300, t, out, m).join()
    i = np.arange(300)
    np.testing.assert_allclose(out, (i % 3) + np.cos(t), atol=2e-6)   # a = i % 3, b = cos
    np.testing.assert_array_equal(m, i // 3)
    sim_out, sim_m = [0.0] * 300, [0] * 300
    tk.declared_targets.simulate(300, [float(v) for v in t], sim_out, sim_m)
    np.testing.assert_allclose(out, sim_out, atol=2e-6)
    assert m.tolist() == sim_m


def test_divmod_has_python_semantics(device_name):
    a = np.array([7, -7, 7, -7, 0, 2**31 - 1, -2**31, 5], np.int32)
    b = np.array([2, 2, -2, -2, 3, 10, 7, -1], np.int32)
    q, r = np.zeros(8, np.int32), np.zeros(8, np.int32)
    gpu(tk.divmods, 8, a, b, q, r).join()
    assert q.tolist() == [x // y for x, y in zip(a.tolist(), b.tolist())]
    assert r.tolist() == [x % y for x, y in zip(a.tolist(), b.tolist())]


def test_mixed_member_types(device_name):
    x = np.array([-3.75, -0.5, 0.0, 0.25, 2.5, 1e9, -7.0], np.float32)
    n = len(x)
    pos, whole, half, mag = (np.zeros(n, bool), np.zeros(n, np.int32),
                             np.zeros(n, np.float32), np.zeros(n, np.int32))
    gpu(tk.mixed, n, x, pos, whole, half, mag).join()
    sim = [[False] * n, [0] * n, [0.0] * n, [0] * n]
    tk.mixed.simulate(n, [float(v) for v in x], *sim)
    assert pos.tolist() == sim[0] == (x > 0).tolist()
    assert whole.tolist() == sim[1] == [int(v) for v in x]
    assert half.tolist() == sim[2]
    assert mag.tolist() == sim[3]
    assert "struct ct_tup_bool_i32_f32_u32" in tk.mixed.wgsl


def test_nested_calls_loops_and_branches(device_name):
    n, m = 64, 9
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = rng.integers(-20, 40, n).astype(np.int32)
    outs = [np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32),
            np.zeros(n, np.int32)]
    xd, yd = x.copy(), y.copy()
    gpu(tk.nested, n, m, xd, yd, a, *outs).join()
    # reference: rotating by 9 * 0.25 - 2 * 0.125 = 2.0 radians in all
    ang = m * 0.25 - 0.25
    np.testing.assert_allclose(xd, np.cos(ang) * x - np.sin(ang) * y, atol=2e-5)
    np.testing.assert_allclose(yd, np.sin(ang) * x + np.cos(ang) * y, atol=2e-5)
    b_ref = np.where(a > 0, a // 7, np.sin(a.astype(np.float32)))
    c_ref = np.where(a > 0, a % 7, np.cos(a.astype(np.float32)))
    np.testing.assert_allclose(outs[0], b_ref, atol=2e-6)
    np.testing.assert_allclose(outs[1], c_ref, atol=2e-6)
    for k in range(n):
        assert (outs[2][k], outs[3][k]) == tk.collatz(k + 1)
    sim = [[float(v) for v in x], [float(v) for v in y]] + [[0] * n for _ in range(4)]
    tk.nested.simulate(n, m, sim[0], sim[1], a.tolist(), *sim[2:])
    np.testing.assert_allclose(xd, sim[0], atol=2e-5)
    np.testing.assert_allclose(outs[0], sim[2], atol=2e-6)
    assert outs[2].tolist() == sim[4] and outs[3].tolist() == sim[5]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_float_members_follow_the_launch_width(device_name, dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(500) * 1e4).astype(dtype)
    b = rng.standard_normal(500).astype(dtype)
    s, e = np.zeros(500, dtype), np.zeros(500, dtype)
    gpu(tk.sums, 500, a, b, s, e).join()
    np.testing.assert_array_equal(s, a * b)                 # numpy at the same width
    np.testing.assert_array_equal(e, a / b + dtype(1.0))
    if dtype == np.float64:                                 # not float32 values widened
        assert np.any(s != (a.astype(np.float32) * b.astype(np.float32)).astype(np.float64))


def test_width_types_as_members(device_name):
    a = np.array([1.0, -3.0, 1e300], np.float64)
    k = np.array([1, -2, 2**40], np.int64)
    h, t = np.zeros(3, np.float64), np.zeros(3, np.int64)
    gpu(tk.wide, 3, a, k, h, t).join()
    np.testing.assert_array_equal(h, a * 0.5)
    np.testing.assert_array_equal(t, k * 3)
    assert "struct ct_tup_f64_i64 { m0: f64, m1: i64 }" in tk.wide.wgsl


def test_bounds_checked_list_in_a_tuple_function(device_name):
    xs = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32)
    lo, hi = np.zeros(6, np.float32), np.zeros(6, np.float32)
    gpu(tk.windows, 6, 3, xs, lo, hi).join()
    assert lo.tolist() == [xs[i:i + 3].min() for i in range(6)]
    assert hi.tolist() == [xs[i:i + 3].max() for i in range(6)]
    lo[:], hi[:] = -1.0, -1.0
    with pytest.raises(GpuIndexError) as info:
        gpu(tk.windows, 6, 4, xs, lo, hi).join()     # the last window reads xs[8]
    msg = str(info.value)
    assert "in window" in msg and "xs[k]" in msg, msg
    assert lo.tolist() == [-1.0] * 6 and hi.tolist() == [-1.0] * 6


def test_nd_launch_with_index_builtins_in_a_tuple_function(device_name):
    rng = np.random.default_rng(5)
    img = rng.random((13, 21)).astype(np.float32)
    out = np.zeros_like(img)
    gpu(tk.grid, 21, 13, img, out, threads=(21, 13)).join()
    np.testing.assert_allclose(out, np.sin(img) ** 2 + np.cos(img), atol=3e-6)


def test_gpuarrays_and_prepare(device_name):
    compile()
    prepare()
    t = np.linspace(0.0, 1.0, 100).astype(np.float32)
    dt = to_device(t)
    s, c = to_device(np.zeros(100, np.float32)), to_device(np.zeros(100, np.float32))
    gpu(tk.into_lists, 100, dt, s, c).join()
    np.testing.assert_allclose(s.numpy(), np.sin(t), atol=2e-6)
    np.testing.assert_allclose(c.numpy(), np.cos(t), atol=2e-6)
    assert math.isclose(tk.sincos(1.0)[0], math.sin(1.0))


def test_a_reduction_whose_operation_calls_a_tuple_function(device_name):
    rng = np.random.default_rng(6)
    xs = rng.standard_normal(5000).astype(np.float32)
    assert tk.keep_larger.reduce(xs) == xs.max()
    assert "struct ct_tup_f32_f32" in tk.keep_larger.reduce_op().text


@pytest.mark.parametrize("n", [1000, 1003])
def test_the_four_lane_variant_agrees_with_the_python_run(device_name, n):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    assert tk.lanes.program.vec_guard == "n"
    gpu(tk.lanes, n, x, y).join()
    sim = [0.0] * n
    tk.lanes.simulate(n, x.tolist(), sim)
    a, b = x * 3, x + 3
    c, d = x * 2, x + 2
    np.testing.assert_allclose(y, a * b + c - d + (a + 2), rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(y, sim, rtol=1e-6, atol=1e-5)


def test_workgroup_memory_and_barriers_beside_a_tuple(device_name):
    x = np.arange(200, dtype=np.float32)
    out = np.zeros(100, np.float32)
    gpu(tk.pair_sums, 200, x, out).join()
    np.testing.assert_array_equal(out, x[0::2] + x[1::2])
    sim = [0.0] * 100
    tk.pair_sums.simulate(200, x.tolist(), sim)
    assert out.tolist() == sim


PICKLED = '''
import math
from cthreads.gpu import Gpu, GlobalIdx


@Gpu.func
def sincos(x: float) -> tuple[float, float]:
    return math.sin(x), math.cos(x)


@Gpu
def unit(x: list[float], s: list[float], c: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        s[i], c[i] = sincos(x[i])
'''


def test_a_kernel_with_a_tuple_function_pickles_by_value(tmp_path, device_name):
    path = tmp_path / "script.py"
    path.write_text(PICKLED)
    namespace = {"__name__": "__main__"}
    exec(builtins.compile(PICKLED, str(path), "exec"), namespace)  # noqa: S102
    path.unlink()
    blob = tmp_path / "kernel.pickle"
    blob.write_bytes(pickle.dumps(namespace["unit"]))
    out = run_python(textwrap.dedent(f'''
        import pickle
        import numpy as np
        from cthreads.gpu import gpu
        kernel = pickle.loads(open({str(blob)!r}, "rb").read())
        x = np.linspace(0.0, 3.0, 50).astype(np.float32)
        s, c = np.zeros_like(x), np.zeros_like(x)
        gpu(kernel, x, s, c).join()
        print(float(np.abs(s - np.sin(x)).max() + np.abs(c - np.cos(x)).max()))
    '''))
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.splitlines()[-1]) < 1e-5
