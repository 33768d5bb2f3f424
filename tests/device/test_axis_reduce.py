"""``func.reduce(x, axis=...)``: reductions along axes against numpy (``np.<ufunc>.reduce``),
for every axis and tuple of axes of 2-D to 4-D arrays, every input form (numpy, lists,
GpuArrays, arena-bound arrays), empty axes, and the refusals with the caller's data
unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import Gpu, GpuArena, GpuArray, GpuDeviceError, GpuInvalidArgument, gpu
from cthreads.gpu import GlobalIdx, to_device
from cthreads.runtime.axis_reducer import plan_steps
from tests.device.func_kernels import add_by_counting, fadd, fmax, gcd, iadd, then, uadd

U32 = 2.0**-24


@Gpu.func
def imul(a: int, b: int) -> int:
    return a * b


@Gpu.func
def cmul(a: complex, b: complex) -> complex:
    return a * b


@Gpu
def scale_floats(n: int, k: float, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = y[i] * k


def all_axes(ndim):
    """Every int axis (both signs) and every tuple of distinct axes."""
    out = []
    for k in range(ndim):
        out += [k, k - ndim]
    for r in range(0, ndim + 1):
        out += list(itertools.combinations(range(ndim), r))
    return out


def check_float32(got, x, axis):
    """float32 sums against float64 numpy, within the bound of any summation order."""
    want = np.add.reduce(x.astype(np.float64), axis=axis)
    length = x.size // max(np.size(want), 1)
    scale = np.add.reduce(np.abs(x.astype(np.float64)), axis=axis)
    assert np.shape(got) == np.shape(want)
    assert np.all(np.abs(np.asarray(got, np.float64) - want) <= 2 * length * U32 * scale + 1e-30)


@pytest.mark.parametrize("shape", [(5, 7), (3, 70, 9), (2, 3, 4, 5), (130, 3)])
def test_every_axis_float32_sum_and_max(device_name, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    keep = x.copy()
    for axis in all_axes(len(shape)):
        got = fadd.reduce(x, axis=axis)
        check_float32(got, x, axis)
        got = fmax.reduce(x, axis=axis)
        want = np.maximum.reduce(x, axis=axis)
        assert np.shape(got) == np.shape(want) and np.array_equal(got, want)
        assert isinstance(got, type(want))
    np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_ints_exact(device_name, dtype):
    x = np.random.default_rng(2).integers(0, 1000, (4, 6, 10)).astype(dtype)
    op = iadd
    if dtype == np.uint32:
        op = uadd
    for axis in all_axes(3):
        got = op.reduce(x, axis=axis)
        want = np.add.reduce(x, axis=axis, dtype=x.dtype)    # the operation's type
        assert np.array_equal(got, want) and np.asarray(got).dtype == want.dtype, axis


def test_float64_and_complex(device_name):
    x = np.random.default_rng(3).standard_normal((6, 9, 5))
    for axis in (0, 1, 2, (0, 2), (1, 2)):
        np.testing.assert_allclose(fadd.reduce(x, axis=axis), np.add.reduce(x, axis=axis),
                                   rtol=1e-12)
    z = (np.random.default_rng(4).standard_normal((4, 5, 3))
         + 1j * np.random.default_rng(5).standard_normal((4, 5, 3)))
    for axis in (0, 1, 2, (0, 1)):
        got = cmul.reduce(z, axis=axis)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, np.multiply.reduce(z, axis=axis), rtol=1e-10)


def test_user_ops_with_loops(device_name):
    x = (np.random.default_rng(6).integers(1, 200, (30, 40)) * 6).astype(np.int32)
    for axis in (0, 1, -1):
        got = gcd.reduce(x, axis=axis)
        np.testing.assert_array_equal(got, np.gcd.reduce(x, axis=axis))
    y = np.random.default_rng(7).integers(0, 20, (9, 50)).astype(np.int32)
    np.testing.assert_array_equal(add_by_counting.reduce(y, axis=1), y.sum(axis=1))
    np.testing.assert_array_equal(add_by_counting.reduce(y, axis=0), y.sum(axis=0))
    small = np.random.default_rng(8).integers(-3, 4, (5, 6)).astype(np.int32)
    np.testing.assert_array_equal(imul.reduce(small, axis=0), np.multiply.reduce(small, 0))


def test_loop_budget_stop_raises(device_name):
    long = np.full((4, 10), 30_000, np.int32)
    keep = long.copy()
    if device_name.startswith("llvmpipe"):
        with pytest.raises(GpuDeviceError, match="ended a loop"):
            add_by_counting.reduce(long, axis=1)
    else:
        np.testing.assert_array_equal(add_by_counting.reduce(long, axis=1), long.sum(1))
    np.testing.assert_array_equal(long, keep)
    np.testing.assert_array_equal(add_by_counting.reduce(np.ones((3, 4), np.int32), axis=0), 3)


def test_init_keepdims_and_long_axes(device_name):
    x = np.random.default_rng(9).integers(-50, 50, (3, 5, 7)).astype(np.int64)
    for axis in (0, 1, 2, (0, 2), ()):
        np.testing.assert_array_equal(iadd.reduce(x, 2**40, axis=axis),
                                      np.add.reduce(x, axis=axis, initial=2**40))
        np.testing.assert_array_equal(iadd.reduce(x, axis=axis, keepdims=True),
                                      np.add.reduce(x, axis=axis, keepdims=True))
    # reduced axes longer than one dispatch's chunk on a CPU driver (several chunks)
    long = np.random.default_rng(10).integers(-9, 9, (3, 300_000)).astype(np.int32)
    np.testing.assert_array_equal(iadd.reduce(long, axis=1), long.sum(axis=1))
    np.testing.assert_array_equal(iadd.reduce(long.T.copy(), axis=0), long.sum(axis=1))
    np.testing.assert_array_equal(iadd.reduce(long, 5, axis=1), long.sum(axis=1) + 5)


def test_float32_accuracy_long_rows(device_name):
    x = np.random.default_rng(11).random((8, 20_000)).astype(np.float32)
    check_float32(fadd.reduce(x, axis=1), x, 1)
    check_float32(fadd.reduce(x.T.copy(), axis=0), x.T, 0)


def test_gpu_array_in_out_and_views(device_name):
    x = np.random.default_rng(12).integers(0, 100, (6, 8, 4)).astype(np.int32)
    d = to_device(x)
    got = iadd.reduce(d, axis=(0, 2))
    assert isinstance(got, GpuArray) and got.shape == (8,)
    np.testing.assert_array_equal(got.numpy(), x.sum(axis=(0, 2)))
    again = iadd.reduce(got, axis=0)            # a result feeds the next reduction on device
    np.testing.assert_array_equal(again.numpy(), [x.sum()])
    view = d[2:5]
    np.testing.assert_array_equal(iadd.reduce(view, axis=1).numpy(), x[2:5].sum(axis=1))
    np.testing.assert_array_equal(d.numpy(), x)     # the input unchanged


def test_lists_give_numpy(device_name):
    rows = [[1.5, 2.0, 3.0], [4.0, 5.0, 6.5]]
    got = fadd.reduce(rows, axis=1)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_array_equal(got, [6.5, 15.5])
    assert rows == [[1.5, 2.0, 3.0], [4.0, 5.0, 6.5]]
    np.testing.assert_array_equal(iadd.reduce([[1, 2], [3, 4]], axis=0), [4, 6])
    assert fadd.reduce(rows, axis=(0, 1)) == np.float32(22.0)


def test_arena_bound_array_uses_its_device_copy(device_name):
    n = 4000
    y = np.ones(n, np.float32)
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(scale_floats, n, 3.0, y)               # queued: only the device copy is 3s
        got = fadd.reduce(y.reshape(40, 100), axis=1)
        np.testing.assert_array_equal(got, np.full(40, 300.0, np.float32))
        np.testing.assert_array_equal(y, 1.0)      # the host copy untouched until sync
    grid = np.arange(60, dtype=np.int32).reshape(6, 10)
    with GpuArena() as arena:
        arena.bind(grid=grid)
        np.testing.assert_array_equal(iadd.reduce(grid, axis=0), grid.sum(axis=0))
        np.testing.assert_array_equal(iadd.reduce(grid, axis=None, keepdims=True),
                                      grid.sum(keepdims=True))


def test_empty_axes(device_name):
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(fadd.reduce(e, 2.0, axis=0), np.full(3, 2.0, np.float32))
    assert fadd.reduce(e, axis=1).shape == (0,)
    with pytest.raises(ValueError, match="init="):
        fadd.reduce(e, axis=0)
    assert fadd.reduce(np.zeros((3, 0)), axis=0).shape == (0,)
    got = fadd.reduce(to_device(np.zeros((0, 4), np.float32)), 1.0, axis=0)
    assert isinstance(got, GpuArray)
    np.testing.assert_array_equal(got.numpy(), np.ones(4, np.float32))


def test_axis_errors_leave_data_unchanged(device_name):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep = x.copy()
    with pytest.raises(np.exceptions.AxisError):
        fadd.reduce(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        fadd.reduce(x, axis=(0, -3))
    with pytest.raises(ValueError, match="repeated axis"):
        fadd.reduce(x, axis=(1, -1))
    with pytest.raises(TypeError):
        fadd.reduce(x, axis=1.0)
    with pytest.raises(GpuInvalidArgument, match="dtype int32"):
        fadd.reduce(x.astype(np.int32), axis=0)
    np.testing.assert_array_equal(x, keep)


def test_past_the_binding_limit_is_a_clear_error(device_name):
    x = np.ones((64, 64), np.float32)
    with config.override(binding_bytes=4096):
        with pytest.raises(GpuInvalidArgument, match="storage-binding limit"):
            fadd.reduce(x, axis=1)
        assert fadd.reduce(x) == 4096.0           # whole: in parts, as before
        d = to_device(x)                          # a split GpuArray
        with pytest.raises(GpuInvalidArgument, match="storage-binding limit"):
            fadd.reduce(d, axis=0)
        assert fadd.reduce(d) == 4096.0
    np.testing.assert_array_equal(x, 1.0)


@pytest.mark.parametrize("force", ["rows_as_cols", "quads", "shared"])
def test_every_kernel_on_this_device(device_name, monkeypatch, force):
    """The kernels this device would not pick by itself (the cols kernel for contiguous rows,
    the vec4 cols4 kernel for strided axes), forced, against numpy."""
    from cthreads.runtime import axis_reducer
    if force == "quads":
        monkeypatch.setattr(axis_reducer, "QUADS", True)
    elif force == "shared":
        monkeypatch.setattr(axis_reducer, "VARIANT", "shared")
    else:
        monkeypatch.setattr(axis_reducer, "FORCE_COLS", True)
    x = np.random.default_rng(13).integers(-99, 99, (6, 40, 8)).astype(np.int32)
    f = np.random.default_rng(14).standard_normal((5, 12, 20))
    for axis in all_axes(3):
        np.testing.assert_array_equal(iadd.reduce(x, 3, axis=axis),
                                      np.add.reduce(x, axis=axis, initial=3, dtype=np.int32))
        np.testing.assert_allclose(fadd.reduce(f, axis=axis), np.add.reduce(f, axis=axis),
                                   rtol=1e-12, atol=1e-12)
    d = to_device(x.astype(np.uint32))
    np.testing.assert_array_equal(uadd.reduce(d[1:], axis=1).numpy(),
                                  x.astype(np.uint32)[1:].sum(axis=1, dtype=np.uint32))
    rows = np.random.default_rng(16).integers(0, 9, (2, 1_050_000)).astype(np.int32)
    np.testing.assert_array_equal(iadd.reduce(rows, 1, axis=1), rows.sum(axis=1) + 1)
    np.testing.assert_array_equal(iadd.reduce(rows[:, :1_049_998].copy(), axis=1),
                                  rows[:, :1_049_998].sum(axis=1))
    long = np.random.default_rng(15).integers(0, 9, (5000, 8)).astype(np.int32)
    np.testing.assert_array_equal(iadd.reduce(long, axis=0), long.sum(axis=0, dtype=np.int32))
    np.testing.assert_array_equal(gcd.reduce(long * 6 + 6, axis=0),
                                  np.gcd.reduce(long * 6 + 6, axis=0))


def _then(a, b):
    ma, ca, mb, cb = a // 1024, a % 1024, b // 1024, b % 1024
    return (mb * ma % 1021) * 1024 + (mb * ca + cb) % 1021


def _then_reduce(x, axis, init=None):
    """``then`` folded along ``axis`` in axis order (``init`` first), in numpy."""
    x = np.moveaxis(x, axis, 0)
    acc = x[0] if init is None else _then(np.full(x.shape[1:], init, x.dtype), x[0])
    for row in x[1:]:
        acc = _then(acc, row)
    return acc


def _maps(rng, shape):
    return (rng.integers(0, 1021, shape) * 1024 + rng.integers(0, 1021, shape)).astype(np.int32)


@pytest.mark.parametrize("chunk", [1, 3, 7])
@pytest.mark.parametrize("quads", [False, True])
def test_two_pass_form_keeps_axis_order(device_name, monkeypatch, chunk, quads):
    """The GPUs' two-pass form of strided axes (chunks of the axis into a scratch buffer, then
    the chunks folded per output), forced on this device with small and uneven chunks (axis
    lengths not a multiple of the chunk), under a non-commutative operation against numpy."""
    from cthreads.runtime import axis_reducer
    monkeypatch.setattr(axis_reducer, "CHUNK", chunk)
    monkeypatch.setattr(axis_reducer, "QUADS", quads)
    rng = np.random.default_rng(20 + chunk)
    x = _maps(rng, (4, 23, 8))
    for axis in (0, 1, (0, 1)):
        got = then.reduce(x, axis=axis)
        want = _then_reduce(x.reshape(92, 8) if axis == (0, 1) else x, 0 if axis == (0, 1)
                            else axis)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(then.reduce(x, 5 * 1024 + 3, axis=1, keepdims=True),
                                  _then_reduce(x, 1, 5 * 1024 + 3)[:, None, :])
    y = _maps(rng, (3, 10, 5, 6))              # axes apart: two steps, both two-pass
    np.testing.assert_array_equal(then.reduce(y, axis=(1, 3)),
                                  _then_reduce(_then_reduce(y, 3), 1))
    d = to_device(x)
    np.testing.assert_array_equal(then.reduce(d[1:], axis=0).numpy(), _then_reduce(x[1:], 0))
    long = np.random.default_rng(15).integers(0, 9, (301, 8)).astype(np.int32)
    np.testing.assert_array_equal(gcd.reduce(long * 6 + 6, axis=0),  # the loop probe's path
                                  np.gcd.reduce(long * 6 + 6, axis=0))
    np.testing.assert_array_equal(iadd.reduce(long, 2, axis=0), long.sum(axis=0) + 2)


def test_two_pass_plan():
    """The chunks the GPU rule picks: enough invocations, chunks of at least 64 rows."""
    from cthreads.runtime import axis_reducer

    class Ctx:
        is_cpu = False

    class Red:
        ctx = Ctx()
        old = True
    split = axis_reducer._split
    assert split(Red, "cols4", 2048, 8192, False) is None          # CTHREADS_AXIS_REDUCE=old
    Red.old = False
    assert split(Red, "cols4", 2048, 8192, False) == (128, 64)     # 8192 x 8192, axis=0
    assert split(Red, "cols", 8192, 8192, False) == (32, 256)
    assert split(Red, "cols", 8192, 100, False) is None            # too short to cut
    assert split(Red, "cols", 1 << 20, 8192, False) is None        # enough invocations
    chunks, length = split(Red, "cols", 1000, 1000, False)
    assert (chunks - 1) * length < 1000 <= chunks * length and length >= 64
    assert split(Red, "rows4", 8192, 8192, False) is None
    assert split(Red, "cols4", 2048, 128, False, 1) == (8, 16)     # its combine, cut again
    assert split(Red, "cols4", 2048, 8, False, 2) is None          # and that one's: one pass
    assert split(Red, "cols4", 2048, 20, False, 1) is None         # short: one pass


def test_form_variable():
    assert config.from_environ({"HOME": "/h"}).axis_reduce == ""
    assert config.from_environ({"HOME": "/h", "CTHREADS_AXIS_REDUCE": " Old "}).axis_reduce \
        == "old"
    assert config.from_environ({"HOME": "/h", "CTHREADS_AXIS_REDUCE": "r2"}).axis_reduce \
        == "r2"
    assert config.from_environ({"HOME": "/h", "CTHREADS_AXIS_REDUCE": "r3"}).axis_reduce \
        == "r3"
    with pytest.raises(GpuInvalidArgument, match="CTHREADS_AXIS_REDUCE='new'"):
        config.from_environ({"HOME": "/h", "CTHREADS_AXIS_REDUCE": "new"}).axis_reduce


def test_plan_steps_merges_axes():
    assert plan_steps((4, 5, 6), (1, 2)) == [(4, 30, 1)]
    assert plan_steps((4, 5, 6), (0, 1)) == [(1, 20, 6)]
    assert plan_steps((4, 1, 6), (0, 2)) == [(1, 24, 1)]          # length-1 axis between
    assert plan_steps((4, 5, 6), (0, 2)) == [(20, 6, 1), (1, 4, 5)]
    assert plan_steps((4, 5), ()) == [(20, 1, 1)]


@pytest.mark.parametrize("kind", ["line4", "rowsg", "rows", None])
def test_row_kernels_forced(device_name, monkeypatch, kind):
    """Each kernel of contiguous rows forced on this device (``line4``: an invocation per row
    with 16-byte loads; ``rowsg``: a subgroup per row, where the device has subgroups, else the
    workgroup kernel; ``rows``), on rows shorter than a workgroup and than a subgroup pass,
    lengths not a multiple of 4 (the scalar forms), a view, 3-D tuples of
    axes, float64, ints with init, and rows long enough for several dispatches on a CPU
    driver; ``None`` this device's own rule."""
    from cthreads.runtime import axis_reducer
    monkeypatch.setattr(axis_reducer, "ROWS_KIND", kind)
    rng = np.random.default_rng(30)
    for shape in [(3, 4), (7, 5), (70, 36), (9, 130), (300, 8), (2, 3, 1000)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for axis in (-1, tuple(range(1, len(shape)))):
            check_float32(fadd.reduce(x, axis=axis), x, axis)
            np.testing.assert_array_equal(fmax.reduce(x, axis=axis), np.maximum.reduce(
                x, axis=axis))
    cube = rng.integers(-50, 50, (4, 6, 44)).astype(np.int32)
    for axis in ((1, 2), 2, (0, 2)):
        np.testing.assert_array_equal(iadd.reduce(cube, 7, axis=axis),
                                      np.add.reduce(cube, axis=axis, initial=7, dtype=np.int32))
    d = to_device(cube.reshape(-1))
    view = d[8:8 + 5 * 52].reshape(5, 52)          # a view: the binding's offset
    np.testing.assert_array_equal(iadd.reduce(view, axis=1).numpy(),
                                  cube.reshape(-1)[8:268].reshape(5, 52).sum(axis=1))
    f64 = rng.standard_normal((40, 68))
    np.testing.assert_allclose(fadd.reduce(f64, axis=1), f64.sum(axis=1), rtol=1e-12,
                               atol=1e-12)
    long = rng.integers(0, 9, (3, 70_000)).astype(np.int32)    # 70,000 / 4 > 16,384 passes
    np.testing.assert_array_equal(iadd.reduce(long, 1, axis=1), long.sum(axis=1) + 1)


@pytest.mark.parametrize("kind", ["line4", "cols"])
def test_invocation_per_row_keeps_row_order(device_name, monkeypatch, kind):
    """An invocation per row folds it in order: a non-commutative operation against numpy."""
    from cthreads.runtime import axis_reducer
    monkeypatch.setattr(axis_reducer, "ROWS_KIND", kind)
    x = _maps(np.random.default_rng(31), (300, 24))
    np.testing.assert_array_equal(then.reduce(x, axis=1), _then_reduce(x, 1))
    np.testing.assert_array_equal(then.reduce(x, 5 * 1024 + 3, axis=1),
                                  _then_reduce(x, 1, 5 * 1024 + 3))


@pytest.mark.parametrize("kind", ["cols16", "cols4u", "cols4", "cols", None])
@pytest.mark.parametrize("chunk", [None, 5])
def test_strided_kernels_forced(device_name, monkeypatch, kind, chunk):
    """Each kernel of strided axes forced on this device (``cols16``: sixteen outputs per
    invocation; ``cols4u``: four, four rows loaded per pass; the wider kernels fall back to
    ``cols`` where the inner length does not divide), in one pass and in the two-pass form with
    uneven chunks, under a non-commutative operation (the axis order kept), ints with init,
    float64, float32 sums of 3-D tuples of axes, and a loop-probed operation."""
    from cthreads.runtime import axis_reducer
    monkeypatch.setattr(axis_reducer, "COLS_KIND", kind)
    monkeypatch.setattr(axis_reducer, "CHUNK", chunk)
    rng = np.random.default_rng(40)
    for shape in [(23, 16), (9, 48), (3, 5, 32), (11, 20), (6, 4), (17, 3)]:
        x = _maps(rng, shape)
        np.testing.assert_array_equal(then.reduce(x, axis=0), _then_reduce(x, 0))
    x = _maps(rng, (4, 23, 32))
    np.testing.assert_array_equal(then.reduce(x, 7, axis=1), _then_reduce(x, 1, 7))
    ints = rng.integers(-50, 50, (30, 64)).astype(np.int32)
    np.testing.assert_array_equal(iadd.reduce(ints, 3, axis=0),
                                  np.add.reduce(ints, axis=0, initial=3, dtype=np.int32))
    f64 = rng.standard_normal((21, 32))
    np.testing.assert_allclose(fadd.reduce(f64, axis=0), f64.sum(axis=0), rtol=1e-12, atol=1e-12)
    f32 = rng.standard_normal((6, 7, 16, 16)).astype(np.float32)
    for axis in ((0, 1), (0, 2), 0, (1, 2)):
        check_float32(fadd.reduce(f32, axis=axis), f32, axis)
    long = rng.integers(0, 9, (301, 16)).astype(np.int32)
    np.testing.assert_array_equal(gcd.reduce(long * 6 + 6, axis=0),
                                  np.gcd.reduce(long * 6 + 6, axis=0))


@pytest.mark.parametrize("chunk", [4, 12, 64])
def test_rowsg_two_pass_form(device_name, monkeypatch, chunk):
    """The GPUs' two-pass form of few long rows (each row cut into chunks, a subgroup each,
    into an (outer, chunks) scratch, then the chunks folded per row), forced on this device
    with small chunks: row lengths not a multiple of the chunk nor of 4, init, a view."""
    from cthreads.runtime import axis_reducer
    monkeypatch.setattr(axis_reducer, "ROWS_KIND", "rowsg")
    monkeypatch.setattr(axis_reducer, "ROW_CHUNK", chunk)
    rng = np.random.default_rng(50)
    for shape in [(3, 1000), (2, 257), (5, 64), (1, 7), (4, 3, 90)]:
        ints = rng.integers(-50, 50, shape).astype(np.int32)
        np.testing.assert_array_equal(iadd.reduce(ints, 5, axis=-1),
                                      np.add.reduce(ints, axis=-1, initial=5, dtype=np.int32))
        x = rng.standard_normal(shape).astype(np.float32)
        check_float32(fadd.reduce(x, axis=-1), x, -1)
        np.testing.assert_array_equal(fmax.reduce(x, axis=-1, keepdims=True),
                                      np.maximum.reduce(x, axis=-1, keepdims=True))
    d = to_device(rng.integers(0, 9, 4096).astype(np.int32))
    view = d[8:8 + 3 * 1000].reshape(3, 1000)
    np.testing.assert_array_equal(iadd.reduce(view, axis=1).numpy(),
                                  d.numpy()[8:3008].reshape(3, 1000).sum(axis=1))


def test_row_kernel_rule():
    """The kernel and the cuts the GPU rule picks for contiguous rows (this round's form):
    a subgroup per row for many or short rows, few long rows cut into chunks of 2,048+."""
    from cthreads.runtime import axis_reducer

    class Ctx:
        is_cpu = False
        features = frozenset({"subgroup"})

    class Red:
        ctx = Ctx()
        form = ""
        size = 256

        def subgroups(self, ty):
            return ty != "float64"
    red = Red()
    kind = axis_reducer._kind
    assert kind(red, 8192, 8192, 1, "float", 0) == "rowsg4"       # the target's shape
    assert kind(red, 8192, 8190, 1, "float", 0) == "rowsg"        # scalar loads
    assert kind(red, 10, 8192, 1, "float", 0) == "rowsg4"         # few rows: cut in two passes
    assert kind(red, 10, 8192, 1, "float64", 0) == "rows4"        # 64-bit: no shuffles
    assert kind(red, 10, 16, 1, "float", 0) == "line4"
    assert kind(red, 5000, 64, 1, "float", 0) == "rowsg"          # short rows: every lane loads
    assert kind(red, 4, 8192, 8192, "float", 0) == "cols4u"
    split = axis_reducer._split_rows
    assert split(red, "rowsg4", 16, 1 << 20, 0) == (512, 2048)
    assert split(red, "rowsg4", 8192, 8192, 0) is None            # enough subgroups
    assert split(red, "rowsg4", 16, 1 << 20, 1) is None           # its combine: one pass
    red.form = "r2"
    assert kind(red, 8192, 8192, 1, "float", 0) == "rows4"        # the second round's kernels
    assert split(red, "rowsg4", 16, 1 << 20, 0) is None
