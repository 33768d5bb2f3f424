"""Structs with the other features (issue 24, slice "structmore"): atomics on int fields of
struct list elements, structs as members of tuple results, shared arrays of structs,
list[Struct] parameters of device functions, views of struct GpuArrays -- float32 and float64
layouts, against numpy and simulate()."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cthreads.gpu import GpuArena, GpuIndexError, GpuInvalidArgument, gpu, to_device
from tests.device.struct_combo_kernels import (
    Bin, Body, bump, bump_grid, count_at, grid_count, histogram, other_atomics, reverse_tiles,
    split, weigh_all,
)

WIDTHS = [np.float32, np.float64]


def _bodies(n, dtype, seed=3):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, Body.dtype_for(dtype))
    a["pos"] = rng.random((n, 3))
    a["mass"] = np.arange(n) + 0.25
    a["n"] = rng.integers(-5, 5, n)
    a["alive"] = rng.random(n) > 0.4
    return a


# -- atomics on int fields ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", WIDTHS)
def test_atomics_on_int_fields_match_numpy_and_simulate(dtype):
    x = np.random.default_rng(0).random(3000).astype(dtype)
    b = np.zeros(5, Bin.dtype_for(dtype))
    b["total"] = 7.0                         # other fields of the words keep their values
    sim = b.copy()
    first, first_sim = np.zeros(5, np.int32), np.zeros(5, np.int32)
    gpu(histogram, x, b, first).join()
    histogram.simulate(x, sim, first_sim)
    k = (x * 5).astype(int)
    np.testing.assert_array_equal(b["count"], np.bincount(k, minlength=5))
    np.testing.assert_array_equal(b["top"], [np.flatnonzero(k == j).max() for j in range(5)])
    np.testing.assert_array_equal(b["total"], 0.5)
    np.testing.assert_array_equal(first, 1)
    np.testing.assert_array_equal(b, sim)
    np.testing.assert_array_equal(first_sim, 1)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_every_atomic_operation_on_int_fields(dtype):
    c = np.zeros(3, Bin.dtype_for(dtype))
    c["total"] = 2.5
    sim = c.copy()
    gpu(other_atomics, c, threads=100).join()
    other_atomics.simulate(sim, threads=100)
    assert 1 <= c["count"][0] <= 100                  # the first thread to swap, any of them
    c["count"][0] = sim["count"][0] = 0
    np.testing.assert_array_equal(c["top"], [0, -sum(range(100)), 7])
    np.testing.assert_array_equal(c["count"], [0, -50, 0])
    np.testing.assert_array_equal(c["total"], 2.5)
    np.testing.assert_array_equal(c, sim)


def test_atomics_on_fields_of_a_2d_struct_array():
    g = np.zeros((2, 3), Bin.dtype)
    sim = g.copy()
    gpu(grid_count, g, threads=64).join()
    grid_count.simulate(sim, threads=64)
    want = np.zeros((2, 3), np.int64)
    for i in range(64):
        want[i % 2, i % 3] += i
    np.testing.assert_array_equal(g["count"], want)
    np.testing.assert_array_equal(g, sim)


def test_atomic_out_of_range_is_reported_as_the_element_and_changes_nothing():
    b = np.zeros(4, Bin.dtype)
    with pytest.raises(GpuIndexError, match="index 4 is out of range for list 'b' of length 4"):
        gpu(count_at, 10, 4, b).join()
    assert not b["count"].any()
    gpu(count_at, 10, 3, b).join()
    np.testing.assert_array_equal(b["count"], [0, 0, 0, 10])


@pytest.mark.parametrize("dtype", WIDTHS)
def test_atomics_on_struct_gpuarrays_arenas_and_pickled_kernels(dtype):
    d = to_device(np.zeros(3, Bin.dtype_for(dtype)))
    gpu(count_at, 100, 1, d).join()
    gpu(pickle.loads(pickle.dumps(count_at)), 50, 1, d).join()
    np.testing.assert_array_equal(d.numpy()["count"], [0, 150, 0])
    a = np.zeros(3, Bin.dtype_for(dtype))
    with GpuArena() as arena:
        arena.bind(b=a)
        gpu(count_at, 20, 2, a).join(download=False)
        gpu(count_at, 20, 2, a).join(download=False)
        assert not a["count"].any()                 # resident until synced
        arena.sync()
    np.testing.assert_array_equal(a["count"], [0, 0, 40])


def test_plain_python_elements_take_field_names():
    from cthreads.gpu import atomic_add
    from cthreads.lang.structs import StructList
    b = StructList(np.zeros(2, Bin.dtype), Bin)
    assert atomic_add(b[1], "count", 3) == 0 and atomic_add(b[1], "count", 2) == 3
    assert b[1]["count"] == 5 and b[1].count == 5
    with pytest.raises(TypeError, match="indexed by a field name"):
        b[1][0]


# -- structs in tuple results ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", WIDTHS)
def test_struct_members_of_tuple_results(dtype):
    a = _bodies(100, dtype)
    out = np.zeros(100, dtype)
    sim, out_sim = a.copy(), out.copy()
    gpu(split, a, out).join()
    split.simulate(sim, out_sim)
    np.testing.assert_array_equal(a, sim)
    np.testing.assert_array_equal(out, out_sim)
    m = _bodies(100, dtype)["mass"]
    np.testing.assert_allclose(a["mass"], m * dtype(0.5))
    np.testing.assert_allclose(out, m * dtype(0.5) + m * dtype(0.5) * 2)
    np.testing.assert_array_equal(a["n"], _bodies(100, dtype)["n"] + 1)
    np.testing.assert_array_equal(a["alive"], _bodies(100, dtype)["n"] + 2 > 3)


# -- shared arrays of structs ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", WIDTHS)
def test_shared_arrays_of_structs(dtype):
    a = _bodies(128, dtype)
    out, sim = np.zeros_like(a), np.zeros_like(a)
    gpu(reverse_tiles, a, out).join()
    reverse_tiles.simulate(a, sim)
    np.testing.assert_array_equal(out, sim)
    want = a.reshape(2, 64)[:, ::-1].reshape(-1).copy()
    want["mass"] *= 2
    want["n"][[63, 127]] += 64                       # t[0].n after 64 atomic adds
    want["n"][[0, 64]] = want["n"][[63, 127]]        # thread 0 writes t[0].n
    np.testing.assert_array_equal(out, want)


# -- list[Struct] parameters of device functions -----------------------------------------------
@pytest.mark.parametrize("dtype", WIDTHS)
def test_struct_lists_passed_to_device_functions(dtype):
    a = _bodies(12, dtype)
    g = _bodies(12, dtype, seed=5).reshape(3, 4)
    out = np.zeros(12, dtype)
    sa, sg, so = a.copy(), g.copy(), out.copy()
    gpu(weigh_all, a, g, out).join()
    weigh_all.simulate(sa, sg, so)
    b = _bodies(12, dtype)
    gg = g.reshape(-1)
    np.testing.assert_allclose(out, b["mass"] + b["pos"][:, 0] + gg["mass"] * gg["alive"])
    np.testing.assert_array_equal(a["n"], b["n"] * 2)
    np.testing.assert_allclose(out, so, rtol=1e-6)     # simulate adds in Python floats
    np.testing.assert_array_equal(a, sa)


# -- views of struct GpuArrays -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", WIDTHS)
def test_views_of_struct_gpuarrays(dtype):
    a = _bodies(24, dtype)
    d = to_device(a)
    v = d[8:16]
    assert v.shape == (8,) and v.dtype == a.dtype
    np.testing.assert_array_equal(v.numpy(), a[8:16])
    gpu(bump, v).join()
    want = a.copy()
    want["mass"][8:16] += 1
    want["n"][8:16] += np.arange(8)
    np.testing.assert_array_equal(d.numpy(), want)
    r = d.reshape(4, 6)
    assert r.shape == (4, 6) and d.ravel().shape == (24,) and r[1].shape == (6,)
    gpu(bump_grid, r).join()
    want["n"] += (10 * np.arange(4)[:, None] + np.arange(6)).ravel()
    np.testing.assert_array_equal(d.numpy(), want)
    np.testing.assert_array_equal(r[2:4].numpy(), want.reshape(4, 6)[2:4])
    with pytest.raises(GpuInvalidArgument, match="one element of a 1-D array is not a view"):
        d[3]


# -- Python lists of struct objects ------------------------------------------------------------
def _objects(n):
    from cthreads.gpu import vec3
    return [Body(vec3(1.0, 2.0 + i, 3.0), 0.5 + i, i - 2, i % 2 == 0) for i in range(n)]


def test_python_lists_of_struct_objects_are_written_back_into_the_objects():
    from tests.device.struct_combo_kernels import touch
    objs = _objects(6)
    keep = objs[3]
    pos = objs[3].pos
    sim = [Body(o) for o in objs]
    gpu(touch, objs, 6).join()
    touch.simulate(sim, 6)
    assert objs == sim and objs[3] is keep and objs[3].pos is pos     # the same objects
    assert objs[3].pos.y == 6.0 and objs[3].mass == 7.0 and objs[3].n == 4
    assert objs[3].alive
    grid = [_objects(3), _objects(3)]
    gpu(bump_grid, grid).join()
    assert [[o.n for o in row] for row in grid] == [[-2, 0, 2], [8, 10, 12]]


def test_python_lists_of_struct_objects_errors_change_nothing():
    from tests.device.struct_combo_kernels import touch
    objs = _objects(4)
    before = [Body(o) for o in objs]
    with pytest.raises(GpuIndexError, match="index 4 is out of range for list 'p' of length 4"):
        gpu(touch, objs, 5).join()
    assert objs == before
    with pytest.raises(Exception, match="element 1 .row-major. is int"):
        gpu(touch, [objs[0], 3], 1).join()
    assert objs == before


def test_python_lists_of_struct_objects_follow_the_launch_width():
    from tests.device.struct_combo_kernels import touch_with
    objs = _objects(3)
    gpu(touch_with, objs, np.array([0.1, 0.2, 0.3])).join()     # a float64 launch
    assert [o.mass for o in objs] == [0.1, 0.2, 0.3]
    gpu(touch_with, objs, np.array([0.1, 0.2, 0.3], np.float32)).join()
    assert [o.mass for o in objs] == [float(np.float32(v)) for v in (0.1, 0.2, 0.3)]


def test_plain_python_calls_and_prepare_agree():
    from cthreads.gpu import prepare
    prepare()
    b, plain = np.zeros(3, Bin.dtype), np.zeros(3, Bin.dtype)
    gpu(count_at, 1, 2, b).join()
    count_at(1, 2, plain)                       # one call: GlobalIdx.x is 0
    np.testing.assert_array_equal(b, plain)
    np.testing.assert_array_equal(plain["count"], [0, 0, 1])
    a = _bodies(4, np.float32)
    out, pout = np.zeros(4, np.float32), np.zeros(4, np.float32)
    pa = a.copy()
    gpu(split, a, out, threads=1).join()
    split(pa, pout)
    np.testing.assert_array_equal(a[0], pa[0])
    np.testing.assert_array_equal(out[0], pout[0])


@pytest.mark.parametrize("dtype", WIDTHS)
def test_atomics_on_fields_of_nested_structs(dtype):
    from tests.device.struct_combo_kernels import Tagged, count_nested
    t = np.zeros(2, Tagged.dtype_for(dtype))
    t["w"] = 1.5
    sim = t.copy()
    gpu(count_nested, t, threads=40).join()
    count_nested.simulate(sim, threads=40)
    np.testing.assert_array_equal(t["bin"]["count"], [20, 20])
    np.testing.assert_array_equal(t["bin"]["top"], [38, 39])
    np.testing.assert_array_equal(t, sim)


def test_atomics_on_a_struct_gpuarray_split_across_bindings(device_name):
    from cthreads import config
    from cthreads.gpu import zeros
    from tests.device.struct_combo_kernels import count_spread
    with config.override(binding_bytes=4096):
        d = zeros(700, dtype=Bin.dtype)           # 8,400 bytes: 3 parts
        gpu(count_spread, 2100, d).join()
        got = d.numpy()
    np.testing.assert_array_equal(got["count"], 3)
    np.testing.assert_array_equal(got["top"], np.arange(700))
    np.testing.assert_array_equal(got["total"], np.arange(700) * 0.5)
