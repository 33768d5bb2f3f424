"""N-dimensional lists and launches on the device, against numpy."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cthreads.gpu import (GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuIndexError,
                          GpuInvalidArgument, GpuKernelTypeError, compile, gpu, prepare)

from cthreads import config
from cthreads.kernel import GpuKernel

from . import nd_kernels as nk


@pytest.fixture(autouse=True, params=["rows", "tiles"])
def nd_form(request):
    """Every test runs both forms of N-D launches of kernels that do not observe workgroups:
    rows along x (what CPU drivers run) and the GPUs' tiles (variants.GPU_ND_TILES)."""
    kernels = [k for mod in (nk, globals()) for k in
               (vars(mod).values() if not isinstance(mod, dict) else mod.values())
               if isinstance(k, GpuKernel)]
    for k in kernels:
        k.forget_runtimes()
    with config.override(nd_tiles_on_cpu=request.param == "tiles"):
        yield request.param
    for k in kernels:
        k.forget_runtimes()


def _blur_numpy(img: np.ndarray) -> np.ndarray:
    h, w = img.shape
    pad = np.pad(img.astype(np.float64), 1, mode="edge")
    return sum(pad[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9.0


def test_blur_on_a_2d_array(device_name):
    rng = np.random.default_rng(0)
    img = rng.random((37, 53)).astype(np.float32)
    out = np.zeros_like(img)
    gpu(nk.blur, 53, 37, img, out, threads=(53, 37)).join()
    np.testing.assert_allclose(out, _blur_numpy(img), rtol=1e-6, atol=1e-7)


def test_nested_lists_are_written_back_into_their_rows(device_name):
    rng = np.random.default_rng(1)
    img = rng.random((9, 11)).astype(np.float32)
    rows = [[0.0] * 11 for _ in range(9)]
    keep = list(rows)
    gpu(nk.blur, 11, 9, img.tolist(), rows, threads=(11, 9)).join()
    assert all(a is b for a, b in zip(keep, rows))          # the same row objects
    np.testing.assert_allclose(np.array(rows), _blur_numpy(img), rtol=1e-6, atol=1e-7)


def test_ragged_lists_are_refused_naming_the_row(device_name):
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0]]
    before = [list(r) for r in a]
    with pytest.raises(GpuInvalidArgument, match=r"'a'\[2\] has 2 elements but .*\[0\] has 3"):
        gpu(nk.scale_rows, a, 2.0, threads=(3, 3))
    with pytest.raises(GpuArgumentTypeError, match=r"\[1\] is float"):
        gpu(nk.scale_rows, [[1.0], 2.0], 2.0, threads=(1, 2))
    assert a == before


def test_augmented_stores_len_and_shape(device_name):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = a * 3 + 1
    gpu(nk.scale_rows, a, 3.0, threads=(4, 3)).join()
    np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("shape", [(5, 6, 7), (21, 13, 3), (1, 1, 300), (2, 150, 64)])
def test_a_3d_volume(device_name, shape):
    v = np.zeros(shape, np.int32)    # few rows; many; one; enough for several rows per invocation
    gpu(nk.fill_volume, v, threads=shape[::-1]).join()
    z, y, x = np.indices(v.shape)
    np.testing.assert_array_equal(v, 10000 * z + 100 * y + x)
    if shape != (5, 6, 7):
        return
    nested3 = v.tolist()
    gpu(nk.fill_volume, nested3, threads=(7, 6, 5)).join()
    assert nested3 == v.tolist()


def test_index_builtins_report_every_axis(device_name):
    w, h = 21, 13
    gx = np.zeros((h, w), np.int32)
    gy = np.zeros((h, w), np.int32)
    info = [0] * 6
    gpu(nk.indexes_2d, w, h, gx, gy, info, threads=(w, h)).join()
    yy, xx = np.indices((h, w))
    np.testing.assert_array_equal(gx, xx)
    np.testing.assert_array_equal(gy, yy)
    assert info == [8, 8, 1, 3, 2, 0]


def test_a_chosen_workgroup(device_name):
    w, h = 35, 9
    out = np.zeros((h, w), np.int32)
    dims = [0, 0]
    gpu(nk.wide_groups, w, h, out, dims, threads=(w, h)).join()
    np.testing.assert_array_equal(out, np.arange(w * h).reshape(h, w))
    assert dims == [16, 4]
    with pytest.raises(TypeError, match="workgroup"):
        Gpu(workgroup=(0, 4))


def test_atomics_on_a_2d_list(device_name):
    rng = np.random.default_rng(2)
    img = rng.integers(0, 100, (20, 30)).astype(np.int32)
    bins = np.zeros((2, 4), np.int32)
    gpu(nk.histogram_2d, 30, 20, img, bins, threads=(30, 20)).join()
    want = np.zeros((2, 4), np.int64)
    for r in range(2):
        want[r] = np.bincount((img[r::2] % 4).ravel(), minlength=4)
    np.testing.assert_array_equal(bins, want)


def test_shared_memory_and_barriers_in_2d_workgroups(device_name):
    n = 20
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    out = np.zeros_like(a)
    gpu(nk.tile_transpose, n, a, out, threads=(n, n)).join()
    np.testing.assert_array_equal(out, a.T)


def test_1d_launch_of_a_2d_list_and_shape(device_name):
    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    sums = np.zeros(5, np.float32)
    gpu(nk.row_sums, a, sums).join()                      # 1-D: n = len(a) = 5 rows
    np.testing.assert_array_equal(sums, a.sum(axis=1))
    ys = [-1] * 10
    gpu(nk.count_1d_y, 10, ys, threads=10).join()         # .y/.z of a 1-D launch
    assert ys == [100] * 10


def test_out_of_range_index_names_the_dimension(device_name):
    a = np.ones((4, 6), np.float32)
    out = np.zeros((4, 6), np.float32)
    with pytest.raises(GpuIndexError) as info:
        gpu(nk.bad_column, 6, 4, a, out, threads=(6, 4)).join()
    msg = str(info.value)
    assert "index 6 is out of range for dimension 1" in msg and "'a'" in msg
    lines, first = inspect.getsourcelines(nk.bad_column.fn)
    assert f"line {first + 5}, in bad_column" in msg
    assert not out.any()                                  # nothing written back
    # inside the row, inside the buffer, but past the row's end: still refused
    with pytest.raises(GpuIndexError, match="dimension 1"):
        gpu(nk.bad_column, 6, 1, a, out, threads=(6, 1)).join()


def test_device_function_with_a_2d_list_in_an_arena(device_name):
    rng = np.random.default_rng(3)
    u = rng.random((24, 32)).astype(np.float32)
    v = u.copy()
    ref = u.astype(np.float64)
    with GpuArena() as arena:
        arena.bind(u=u, v=v)
        for _ in range(5):
            gpu(nk.jacobi, 32, 24, u, v, threads=(32, 24)).join(download=False)
            gpu(nk.jacobi, 32, 24, v, u, threads=(32, 24)).join(download=False)
        arena.sync()
    for _ in range(10):
        lap = ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2] + ref[1:-1, 2:] - 4 * ref[1:-1, 1:-1]
        ref = ref.copy()
        ref[1:-1, 1:-1] += 0.25 * lap
    np.testing.assert_allclose(u, ref, atol=1e-5)


def test_float64_2d(device_name):
    img = np.random.default_rng(4).random((8, 9))
    out = np.zeros_like(img)
    gpu(nk.blur, 9, 8, img, out, threads=(9, 8)).join()
    np.testing.assert_allclose(out, _blur_numpy(img), rtol=1e-14)


def test_past_65535_workgroups_in_one_dimension(device_name):
    n = 65536 * 8 + 3                  # 65,537 workgroups of 8 along x
    a = np.ones((1, n), np.float32)
    gpu(nk.scale_rows, a, 2.0, threads=(n, 1)).join()
    assert (a == 3.0).all()


def test_wrong_shapes_and_partial_indexes(device_name):
    with pytest.raises(GpuInvalidArgument, match="1-D numpy array, but the kernel declares a "
                                                 "2-D list"):
        gpu(nk.scale_rows, np.ones(4, np.float32), 1.0, threads=(4, 1))
    with pytest.raises(GpuKernelTypeError, match="indexes 1 of the 2 dimensions"):
        @Gpu
        def partial(a: list[list[float]], out: list[float]) -> None:
            out[0] = a[0]
    with pytest.raises(TypeError, match="threads="):
        gpu(nk.scale_rows, np.ones((2, 2), np.float32), 1.0, threads=(2.0, 2))
    with pytest.raises(GpuInvalidArgument, match="threads="):
        gpu(nk.scale_rows, np.ones((2, 2), np.float32), 1.0, threads=(0, 2))


def test_prepare_and_compile_take_threads(device_name):
    assert prepare(threads=(8, 8))["kernels"]
    assert compile(threads=(4, 4, 4))["kernels"]
    a = np.zeros((3, 3), np.float32)
    gpu(nk.scale_rows, a, 1.0, threads=(3, 3)).join()
    assert (a == 1.0).all()


def test_simulate_runs_the_n_d_threads(device_name):
    rng = np.random.default_rng(6)
    img = rng.random((9, 13)).astype(np.float32)
    sim, dev = np.zeros_like(img), np.zeros_like(img)
    nk.blur.simulate(13, 9, img, sim, threads=(13, 9))
    gpu(nk.blur, 13, 9, img, dev, threads=(13, 9)).join()
    np.testing.assert_allclose(sim, _blur_numpy(img), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dev, sim, rtol=1e-6, atol=1e-6)
    v = np.zeros((3, 4, 5), np.int32)
    nk.fill_volume.simulate(v, threads=(5, 4, 3))
    z, y, x = np.indices(v.shape)
    np.testing.assert_array_equal(v, 10000 * z + 100 * y + x)


@Gpu
def _shape_from_the_end(n: int, v: list[list[list[float]]], o: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        o[i] = v.shape[-1] + 10 * v.shape[-2] + 100 * v.shape[-3] + 1000 * len(v)


def test_shape_takes_a_negative_literal_dimension(device_name):
    """``a.shape[-1]`` counts from the end, as language.md says (it was refused)."""
    v = np.zeros((2, 3, 5), np.float32)
    o = np.zeros(4, np.int32)
    gpu(_shape_from_the_end, 4, v, o).join()
    assert o.tolist() == [5 + 30 + 200 + 2000] * 4
    o2 = [0] * 4
    _shape_from_the_end.simulate(4, v, o2)
    assert o2 == o.tolist()
