"""``matmul(a, b, out=None)`` and ``GpuArray @``: every result against numpy's product in float64
(float32 within a rounding bound growing as sqrt(k), float64 tight), for odd shapes that cross
the tile edges, batches, 1-D operands, GpuArray and host operands, ``out=``, arena-bound arrays,
empty dimensions, shape and dtype errors (the caller's data unchanged), and the tile
configuration of GPUs run here too."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuArray, GpuInvalidArgument, gpu, matmul,
    to_device, zeros,
)
from cthreads.runtime import matmul_runner

RNG = np.random.default_rng(26)


def _pair(a_shape, b_shape, dtype=np.float32):
    return (RNG.standard_normal(a_shape).astype(dtype),
            RNG.standard_normal(b_shape).astype(dtype))


def _check(got, a, b):
    want = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    got = got.numpy() if isinstance(got, GpuArray) else got
    assert got.shape == want.shape
    k = np.shape(a)[-1]
    dtype = np.result_type(np.asarray(a).dtype, np.asarray(b).dtype)
    unit = 2.0**-24 if dtype == np.float32 else 2.0**-53
    scale = np.matmul(np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64)))
    bound = 4 * unit * np.sqrt(max(k, 1)) * 4 * scale + 1e-300
    assert np.all(np.abs(got - want) <= bound), np.abs(got - want).max()


SHAPES = [((1, 1), (1, 1)), ((1, 7), (7, 1)), ((1, 300), (300, 5)), ((17, 33), (33, 65)),
          ((127, 129), (129, 131)), ((64, 8), (8, 64)), ((65, 9), (9, 63)), ((3, 1), (1, 4))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES)
def test_numpy_operands(device_name, shapes, dtype):
    a, b = _pair(*shapes, dtype)
    a0, b0 = a.copy(), b.copy()
    got = matmul(a, b)
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    _check(got, a, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpuarray_operands_stay_on_device(device_name, dtype):
    a, b = _pair((45, 70), (70, 33), dtype)
    ga, gb = to_device(a), to_device(b)
    got = ga @ gb
    assert isinstance(got, GpuArray) and got.dtype == dtype and got.shape == (45, 33)
    _check(got, a, b)
    _check(matmul(ga, b), a, b)
    np.testing.assert_array_equal(ga.numpy(), a)
    chained = (got @ to_device(np.eye(33, dtype=dtype))).numpy()
    _check(chained, got.numpy(), np.eye(33))


def test_rmatmul_with_numpy_left(device_name):
    a, b = _pair((5, 6), (6, 7))
    got = a.tolist() @ to_device(b)
    assert isinstance(got, GpuArray)
    _check(got, a, b)
    got = a @ to_device(b)                     # numpy defers to the GpuArray
    assert isinstance(got, GpuArray)
    _check(got, a, b)
    assert isinstance(np.matmul(a, to_device(b)), GpuArray)
    np.testing.assert_array_equal(np.add(to_device(b), 1.0), b + 1.0)   # other ufuncs: host


def test_batched(device_name):
    a, b = _pair((3, 17, 20), (3, 20, 9))
    _check(matmul(a, b), a, b)
    _check(to_device(a) @ to_device(b), a, b)
    a2, _ = _pair((17, 20), (1, 1))
    _check(matmul(a2, b), a2, b)                       # 2-D against 3-D: broadcast
    _check(to_device(a) @ to_device(b[0]), a, b[0])
    c, d = _pair((2, 1, 4, 5), (1, 3, 5, 6))           # partial broadcast (host operands)
    _check(matmul(c, d), c, d)
    _check(matmul(a[:1], b), a[:1], b)                 # a batch of one broadcast


def test_one_dimensional(device_name):
    a, b = _pair((20,), (20, 7))
    got = matmul(a, b)
    assert got.shape == (7,)
    _check(got, a, b)
    got = matmul(b.T.copy(), a)
    assert got.shape == (7,)
    _check(got, b.T.copy(), a)
    dot = matmul(a, a)
    assert dot.shape == ()
    _check(dot, a, a)
    _check(matmul(np.ones((2, 3, 4), np.float32), np.arange(4.0, dtype=np.float32)),
           np.ones((2, 3, 4)), np.arange(4.0))


def test_dtypes_promote_as_numpy(device_name):
    a, b = _pair((6, 5), (5, 4), np.float32)
    got = matmul(a, b.astype(np.float64))
    assert got.dtype == np.float64
    _check(got, a, b.astype(np.float64))
    got = to_device(a) @ to_device(b.astype(np.float64))         # mixed on the device
    assert got.dtype == np.float64
    _check(got, a, b.astype(np.float64))
    ints = [[1, 2], [3, 4]]
    got = matmul(ints, ints)                           # integers: computed in float64
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.matmul(ints, ints))


def test_lists_give_numpy(device_name):
    a = [[1.5, 2.0, -1.0], [0.0, 3.0, 4.0]]
    b = [[1.0], [2.0], [3.0]]
    got = matmul(a, b)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    assert a == [[1.5, 2.0, -1.0], [0.0, 3.0, 4.0]]


def test_out_numpy_and_gpuarray(device_name):
    a, b = _pair((30, 40), (40, 50))
    out = np.full((30, 50), 7.0, np.float32)
    assert matmul(a, b, out=out) is out
    _check(out, a, b)
    gout = zeros((30, 50), np.float32)
    ga = to_device(a)
    assert matmul(ga, b, out=gout) is gout
    _check(gout, a, b)
    sq = to_device(RNG.standard_normal((16, 16)).astype(np.float32))
    host = sq.numpy()
    assert matmul(sq, sq, out=sq) is sq                # out aliasing the operands
    _check(sq, host, host)
    host_out = np.zeros((30, 50), np.float32)
    assert matmul(ga, to_device(b), out=host_out) is host_out     # GpuArrays into numpy out
    _check(host_out, a, b)
    strided = np.zeros((50, 30), np.float32).T             # a non-contiguous numpy out
    matmul(a, b, out=strided)
    _check(strided, a, b)
    big = zeros((40, 50), np.float32)                  # out a row view (element offset 10*50)
    matmul(ga, b, out=big[10:40][:30])
    _check(big.numpy()[10:40], a, b)
    assert not big.numpy()[:10].any()


def test_k_long_ranges(device_name, monkeypatch):
    """k past one dispatch's range (``MAX_STEPS`` lowered): the later ranges add to C."""
    from cthreads.codegen import matmul as codegen
    monkeypatch.setattr(codegen, "MAX_STEPS", 2)
    a, b = _pair((9, 100), (100, 11))
    _check(matmul(a, b), a, b)
    _check(matmul(a.astype(np.float64), b.astype(np.float64)), a, b)


def test_batches_past_one_grid(device_name, monkeypatch):
    """More batches than a dispatch's z holds (``MAX_BATCH`` lowered): several dispatches."""
    monkeypatch.setattr(matmul_runner, "MAX_BATCH", 2)
    a, b = _pair((5, 6, 7), (5, 7, 3))
    _check(matmul(a, b), a, b)
    _check(matmul(a, b[0]), a, b[0])
    _check(to_device(a[0]) @ to_device(b), a[0], b)


@pytest.mark.parametrize("form", ["new", "old"])
def test_gpu_tiles_here(device_name, monkeypatch, form):
    """The GPUs' tile configurations (the default and CTHREADS_MATMUL_TILES=old) give the same
    products (run on this device)."""
    state = matmul_runner.state()
    tiles = matmul_runner.TILES_GPU if form == "new" else matmul_runner.TILES_GPU_OLD
    if form == matmul_runner.tiles_form() == "new":
        assert matmul_runner.gpu_tiles(state.ctx) == tiles     # the room is there here too
    monkeypatch.setattr(state, "tiles", tiles)
    for dtype in (np.float32, np.float64):
        a, b = _pair((130, 17), (17, 133), dtype)
        _check(matmul(a, b), a, b)
        a, b = _pair((131, 36), (36, 132), dtype)     # k and n multiples of 4: vector loads
        _check(matmul(a, b), a, b)
        _check(matmul(a[:, :35].copy(), b[:35]), a[:, :35], b[:35])   # A scalar, B vectors
        _check(matmul(a, b[:, :130].copy()), a, b[:, :130])           # A vectors, B scalar
        big = to_device(np.concatenate([np.zeros((1, 36), dtype), a]))
        _check(big[1:] @ to_device(b), a, b)          # a view at element 36: vectors
        a, b = _pair((3, 20, 8), (3, 8, 12), dtype)
        _check(matmul(a, b), a, b)
        _check(matmul(a, b[0]), a, b[0])
        a, b = _pair((2, 5, 9), (9, 3), dtype)
        _check(matmul(a, b), a, b)
    a, b = _pair((131, 36), (36, 132))
    _check(matmul(a, b.astype(np.float64)), a, b)     # float32 @ float64 -> float64 tiles
    _check(matmul(a[:, :35].astype(np.float64), b[:35]), a[:, :35], b[:35])
    from cthreads.codegen import matmul as codegen
    monkeypatch.setattr(codegen, "MAX_STEPS", 2)      # k ranges of 2 bk: later ones add to C
    a, b = _pair((70, 77), (77, 66))
    _check(to_device(a) @ to_device(b), a, b)


def test_tiles_variable(monkeypatch):
    """CTHREADS_MATMUL_TILES picks the GPU tiles ("new" by default, "old"); other values raise
    naming the variable."""
    for value, want in (("", "new"), ("new", "new"), (" OLD ", "old")):
        monkeypatch.setattr(matmul_runner, "_tiles_choice", [])
        monkeypatch.setenv(matmul_runner.TILES_VARIABLE, value)
        assert matmul_runner.tiles_form() == want
    monkeypatch.setattr(matmul_runner, "_tiles_choice", [])
    monkeypatch.setenv(matmul_runner.TILES_VARIABLE, "fast")
    with pytest.raises(GpuInvalidArgument, match="CTHREADS_MATMUL_TILES"):
        matmul_runner.tiles_form()


def test_empty_dimensions(device_name):
    a = np.ones((3, 0), np.float32)
    b = np.ones((0, 4), np.float32)
    got = matmul(a, b)
    np.testing.assert_array_equal(got, np.zeros((3, 4), np.float32))
    got = to_device(a) @ to_device(b)
    assert isinstance(got, GpuArray)
    np.testing.assert_array_equal(got.numpy(), np.zeros((3, 4), np.float32))
    assert matmul(np.ones((0, 5)), np.ones((5, 2))).shape == (0, 2)
    assert (to_device(np.ones((4, 5))) @ to_device(np.ones((5, 0)))).shape == (4, 0)
    assert matmul(np.ones((0, 2, 3)), np.ones((3, 4))).shape == (0, 2, 4)
    out = np.full((3, 4), 5.0, np.float32)
    matmul(a, b, out=out)
    assert not out.any()


def test_shape_errors_leave_data(device_name):
    a, b = _pair((3, 4), (5, 6))
    a0 = a.copy()
    for x, y in ((a, b), (to_device(a), to_device(b))):
        with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
            matmul(x, y)
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        matmul(np.float32(2.0), a)
    with pytest.raises(ValueError, match="could not be broadcast"):
        matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    out = np.zeros((3, 5), np.float32)
    with pytest.raises(ValueError, match="has shape"):
        matmul(a, np.ones((4, 6), np.float32), out=out)
    with pytest.raises(TypeError, match="dtype"):
        matmul(a, np.ones((4, 5), np.float32), out=out.astype(np.float64))
    with pytest.raises(TypeError, match="float32 or float64"):
        matmul(to_device(np.ones((2, 2), np.int32)), to_device(np.ones((2, 2), np.int32)))
    with pytest.raises(TypeError, match="complex128"):
        matmul(np.ones((2, 2), complex), np.ones((2, 2)))
    np.testing.assert_array_equal(a, a0)
    assert not out.any()


def test_split_arrays_refused(device_name):
    with config.override(binding_bytes=4096):
        big = to_device(np.ones((40, 40), np.float32))          # 6,400 bytes: two parts
        with pytest.raises(GpuInvalidArgument, match="storage-binding limit"):
            big @ big
        np.testing.assert_array_equal(big.numpy(), 1.0)
        host = np.ones((40, 40), np.float32)
        with pytest.raises(GpuInvalidArgument, match="storage-binding limit"):
            matmul(host, host)                                  # the upload would be split
        with pytest.raises(GpuInvalidArgument, match="the result of shape"):
            matmul(np.ones((40, 1), np.float32), np.ones((1, 40), np.float32))
        np.testing.assert_array_equal(host, 1.0)


@Gpu
def scale_floats(n: int, k: float, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = k * y[i]


def test_arena_bound_reads_device_copy(device_name):
    y = np.ones(12, np.float32)
    b = RNG.standard_normal((12, 3)).astype(np.float32)
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(scale_floats, 12, 3.0, y)             # the device copy is now 3.0, the host's 1.0
        got = matmul(y, b)
        _check(got, np.full(12, 3.0, np.float32), b)
        np.testing.assert_array_equal(y, 1.0)
