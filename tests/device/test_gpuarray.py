"""GpuArray: device arrays against numpy -- constructors and transfers of every dtype, kernels
(1-D and 2-D, both widths, checks on and off) with nothing downloaded at join, mixing with an
arena-bound array, f.reduce, atomics, device functions, prepare(), simulate, stream order,
repr, lifetime and every refusal with the caller's data unchanged."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuArray, GpuIndexError, GpuInvalidArgument,
    GpuUseAfterDestroy, atomic_add, empty, empty_like, full, gpu, prepare, shutdown, to_device,
    zeros, zeros_like,
)
from tests.device.func_kernels import histogram
from tests.device.kernels import negate_flags, saxpy, scale_ints
from tests.device.nd_kernels import bad_column, scale_rows

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32, np.bool_]


def _sample(dtype, shape):
    rng = np.random.default_rng(7)
    if dtype is np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -2**40), min(info.max, 2**40)
        return rng.integers(lo, hi, shape, dtype=dtype)
    return rng.standard_normal(shape).astype(dtype)


@Gpu(boundscheck=False)
def saxpy_unchecked(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def add_rows(a: list[list[float]], b: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        b[y, x] = b[y, x] + 2.0 * a[y, x]


@Gpu(boundscheck=False)
def add_rows_unchecked(a: list[list[float]], b: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        b[y, x] = b[y, x] + 2.0 * a[y, x]


@Gpu
def count_odd(n: int, v: list[int], total: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n and v[i] % 2 == 1:
        atomic_add(total, 0, 1)


@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


# -- constructors and transfers -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(37,), (5, 7), (2, 3, 4)])
def test_round_trip_every_dtype(device_name, dtype, shape):
    host = _sample(dtype, shape)
    keep = host.copy()
    d = to_device(host)
    assert (d.shape, d.dtype, d.ndim, d.size, d.nbytes, len(d)) == \
        (shape, np.dtype(dtype), len(shape), host.size, host.nbytes, shape[0])
    assert d.device.startswith("device ")
    np.testing.assert_array_equal(d.numpy(), host)
    np.testing.assert_array_equal(np.asarray(d), host)
    np.testing.assert_array_equal(host, keep)                 # the source is untouched
    other = _sample(dtype, shape)[::-1].copy()
    d.set(other)
    np.testing.assert_array_equal(d.numpy(), other)
    c = d.copy()
    d.set(host)
    np.testing.assert_array_equal(c.numpy(), other)          # a copy, not the same memory
    np.testing.assert_array_equal(d.numpy(), host)


@pytest.mark.parametrize("dtype", DTYPES)
def test_constructors(device_name, dtype):
    z = zeros((3, 4), dtype=dtype)
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4), dtype))
    value = True if dtype is np.bool_ else 3
    f = full(6, value, dtype=dtype)
    np.testing.assert_array_equal(f.numpy(), np.full(6, value, dtype))
    f.fill(False if dtype is np.bool_ else 5)
    np.testing.assert_array_equal(f.numpy(), np.full(6, False if dtype is np.bool_ else 5,
                                                     dtype))
    e = empty(9, dtype=dtype)
    assert e.shape == (9,) and e.dtype == np.dtype(dtype)
    host = _sample(dtype, (2, 5))
    assert empty_like(host).shape == (2, 5) and empty_like(host).dtype == host.dtype
    zl = zeros_like(to_device(host))
    np.testing.assert_array_equal(zl.numpy(), np.zeros_like(host))
    assert empty(4).dtype == np.float32 and zeros(4).dtype == np.float32


def test_to_device_of_a_list_and_of_a_gpuarray(device_name):
    d = to_device([1.5, 2.5])
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d.numpy(), [1.5, 2.5])
    d2 = to_device(d)
    d.fill(0.0)
    np.testing.assert_array_equal(d2.numpy(), [1.5, 2.5])


def test_repr(device_name):
    d = to_device(np.array([1.0, 2.5, 3.0], np.float32))
    text = repr(d)
    assert text.startswith("GpuArray([1. , 2.5, 3. ], dtype=float32, shape=(3,), device=")
    assert d.device in text
    big = zeros(5000, dtype=np.int32)
    assert repr(big) == (f"GpuArray(<5,000 elements>, dtype=int32, shape=(5000,), "
                         f"device={big.device!r})")


def test_pickle_by_value(device_name):
    host = np.arange(12, dtype=np.int64).reshape(3, 4)
    d = pickle.loads(pickle.dumps(to_device(host)))
    assert isinstance(d, GpuArray)
    np.testing.assert_array_equal(d.numpy(), host)


# -- kernels --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", [saxpy, saxpy_unchecked])
def test_saxpy_stays_on_device(device_name, dtype, kernel):
    n = 3000
    x = _sample(dtype, n)
    y = np.ones(n, dtype)
    y_host = y.copy()
    xd, yd = to_device(x), to_device(y)
    for _ in range(5):
        gpu(kernel, n, 0.5, xd, yd).join()
    np.testing.assert_array_equal(y, y_host)         # nothing downloaded into the source
    ref = y.copy()
    for _ in range(5):
        ref = dtype(0.5) * x + ref
    rtol = 1e-6 if dtype is np.float32 else 1e-14
    np.testing.assert_allclose(yd.numpy(), ref, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", [add_rows, add_rows_unchecked])
def test_2d_kernel(device_name, dtype, kernel):
    a = _sample(dtype, (19, 33))
    b = _sample(dtype, (19, 33))
    ad, bd = to_device(a), to_device(b)
    gpu(kernel, ad, bd, threads=(33, 19)).join()
    np.testing.assert_allclose(bd.numpy(), b + 2 * a, rtol=1e-6)
    np.testing.assert_array_equal(ad.numpy(), a)


def test_2d_bounds_check_uses_the_shape(device_name):
    a = to_device(np.ones((4, 6), np.float32))
    out = to_device(np.zeros((4, 6), np.float32))
    with pytest.raises(GpuIndexError):
        gpu(bad_column, 6, 4, a, out, threads=(6, 4)).join()


def test_mixed_with_an_arena_bound_array(device_name):
    n = 500
    x = _sample(np.float32, n)
    y = np.zeros(n, np.float32)
    yd = to_device(y)
    with GpuArena() as arena:
        arena.bind(x=x)
        gpu(saxpy, n, 2.0, x, yd).join()
        gpu(saxpy, n, 1.0, yd, x).join()         # the bound array written from the GpuArray
        arena.sync()
    np.testing.assert_allclose(yd.numpy(), 2 * _sample(np.float32, n), rtol=1e-6)
    np.testing.assert_allclose(x, 3 * _sample(np.float32, n), rtol=1e-6)


def test_reduce(device_name):
    v32 = _sample(np.float32, 10_000)
    assert abs(fadd.reduce(to_device(v32)) - float(v32.astype(np.float64).sum())) < 1e-2
    v64 = _sample(np.float64, 10_000)
    assert fadd.reduce(to_device(v64)) == pytest.approx(float(v64.sum()), rel=1e-12)
    d = to_device(np.ones(100, np.float32))
    gpu(saxpy, 100, 1.0, d, d.copy())             # pending work before the reduction
    assert fadd.reduce(d) == 100.0
    assert fadd.reduce(zeros(0), 5.0) == 5.0


def test_reduce_sees_a_pending_write(device_name):
    x = to_device(np.ones(256, np.float32))
    y = to_device(np.ones(256, np.float32))
    gpu(saxpy, 256, 3.0, x, y)                    # not joined
    assert fadd.reduce(y) == 256 * 4.0


def test_atomics_on_int32(device_name):
    v = np.arange(1000, dtype=np.int32)
    total = zeros(1, dtype=np.int32)
    gpu(count_odd, 1000, to_device(v), total).join()
    assert total.numpy()[0] == 500


def test_device_function_taking_a_gpuarray(device_name):
    v = np.random.default_rng(3).integers(0, 100, 2000).astype(np.int32)
    h = zeros(8, dtype=np.int32)
    gpu(histogram, 2000, 8, to_device(v), h).join()
    np.testing.assert_array_equal(h.numpy(), np.bincount(v % 8, minlength=8))


def test_prepare_then_launch(device_name):
    prepare()
    x = to_device(np.arange(64, dtype=np.float32))
    y = zeros(64)
    gpu(saxpy, 64, 1.0, x, y).join()
    np.testing.assert_array_equal(y.numpy(), np.arange(64, dtype=np.float32))


def test_simulate_writes_back(device_name):
    x = np.arange(10, dtype=np.float32)
    yd = full(10, 1.0)
    saxpy.simulate(10, 2.0, to_device(x), yd)
    np.testing.assert_array_equal(yd.numpy(), 2 * x + 1)
    host = _sample(np.float32, (2, 3))
    a = to_device(host)
    scale_rows.simulate(a, 3.0, threads=(3, 2))
    scale_rows.simulate(host, 3.0, threads=(3, 2))     # the same run on a numpy array
    np.testing.assert_array_equal(a.numpy(), host)
    ad = to_device(_sample(np.float32, (2, 3)))
    gpu(scale_rows, ad, 3.0, threads=(3, 2)).join()     # and the device agrees
    np.testing.assert_allclose(ad.numpy(), host, rtol=1e-6)


# -- stream order ---------------------------------------------------------------------------------

def test_numpy_without_join_sees_the_launch(device_name):
    n = 4096
    x = to_device(np.full(n, 2.0, np.float32))
    y = zeros(n)
    for _ in range(3):
        gpu(saxpy, n, 1.0, x, y)                  # never joined
    np.testing.assert_array_equal(y.numpy(), np.full(n, 6.0, np.float32))


def test_set_after_a_pending_launch_lands_after_it(device_name):
    x = to_device(np.ones(128, np.float32))
    y = zeros(128)
    gpu(saxpy, 128, 1.0, x, y)                    # pending: reads x
    x.set(np.full(128, 5.0, np.float32))
    gpu(saxpy, 128, 1.0, x, y)
    np.testing.assert_array_equal(y.numpy(), np.full(128, 6.0, np.float32))
    c = y.copy()
    gpu(saxpy, 128, 1.0, x, y)
    np.testing.assert_array_equal(c.numpy(), np.full(128, 6.0, np.float32))


def test_bounds_failure_reported_by_numpy(device_name):
    a = to_device(np.ones((4, 6), np.float32))
    out = to_device(np.zeros((4, 6), np.float32))
    gpu(bad_column, 6, 4, a, out, threads=(6, 4))
    with pytest.raises(GpuIndexError):
        out.numpy()


# -- refusals ---------------------------------------------------------------------------------

def test_wrong_dtype_and_ndim(device_name):
    y = to_device(np.zeros(10, np.float32))
    bad = to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(GpuInvalidArgument, match=r"saxpy\(\) parameter 'x' is a GpuArray of "
                       r"shape \(10,\) and dtype int32, but the kernel declares list\[float\]"):
        gpu(saxpy, 10, 1.0, bad, y)
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x' is a 2-D GpuArray of shape "
                       r"\(2, 5\), but the kernel declares a list"):
        gpu(saxpy, 10, 1.0, to_device(np.zeros((2, 5), np.float32)), y)
    with pytest.raises(GpuInvalidArgument, match="plain list"):
        gpu(saxpy, 10, 1.0, to_device(np.zeros(10)), y)   # float64 with float32: one width
    np.testing.assert_array_equal(y.numpy(), np.zeros(10, np.float32))


def test_reduce_wrong_dtype(device_name):
    with pytest.raises(GpuInvalidArgument, match="dtype int32"):
        fadd.reduce(to_device(np.arange(5, dtype=np.int32)))


def test_set_wrong_shape_or_dtype_changes_nothing(device_name):
    d = to_device(np.arange(6, dtype=np.float32))
    with pytest.raises(GpuInvalidArgument, match=r"shape \(3, 2\) and dtype float32, but this "
                       r"GpuArray has shape \(6,\) and dtype float32"):
        d.set(np.zeros((3, 2), np.float32))
    with pytest.raises(GpuInvalidArgument, match="dtype float64"):
        d.set(np.zeros(6))
    with pytest.raises(GpuInvalidArgument, match="takes a numpy array"):
        d.set([0.0] * 6)
    np.testing.assert_array_equal(d.numpy(), np.arange(6, dtype=np.float32))


def test_unsupported_dtypes_and_shapes(device_name):
    assert to_device(np.zeros(3, np.complex128)).dtype == np.complex128   # complex is taken
    wide = np.dtype(np.clongdouble).name
    with pytest.raises(GpuInvalidArgument, match=rf"{wide} is not supported") as info:
        to_device(np.zeros(3, np.clongdouble))
    assert "astype(np.complex128)" in str(info.value)        # keeps both parts, never .real
    with pytest.raises(GpuInvalidArgument, match="float16 is not supported"):
        zeros(3, dtype=np.float16)
    with pytest.raises(GpuInvalidArgument, match="one or more dimensions"):
        zeros(())
    with pytest.raises(GpuArgumentTypeError, match="not an int"):
        zeros("3")


def test_zero_size(device_name):
    e = zeros((0, 4))
    assert e.shape == (0, 4) and e.size == 0 and e.numpy().shape == (0, 4)
    e.set(np.zeros((0, 4), np.float32))
    e.fill(1.0)
    assert e.copy().size == 0
    assert repr(e).startswith("GpuArray(<0 elements>")
    y = zeros(0)
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x' is an empty GpuArray of shape "
                       r"\(0,\); the device needs at least one element"):
        gpu(saxpy, 0, 1.0, zeros(0), y)


def test_more_elements_than_an_index_refused(device_name):
    # past the binding limit is split (test_split_arrays.py); past 2**31 - 1 elements is refused
    with pytest.raises(GpuInvalidArgument, match=r"2,147,483,647 \(2\*\*31 - 1\) elements"):
        empty(2**31, dtype=np.float32)


def test_garbage_collection_returns_memory(device_name):
    from cthreads.backend import get_queue

    pool = get_queue().pool
    d = zeros(1 << 20)                # 4 MiB
    gc.collect()
    idle = pool.idle_bytes
    del d
    gc.collect()
    assert pool.idle_bytes >= idle + (4 << 20)
    before = pool.allocations
    again = zeros(1 << 20)            # from the pool: no new allocation
    assert pool.allocations == before
    del again


def test_after_shutdown(device_name):
    d = to_device(np.arange(4, dtype=np.float32))
    y = zeros(4)
    shutdown()
    for use in (d.numpy, d.copy, lambda: d.set(np.zeros(4, np.float32)),
                lambda: d.fill(1.0), lambda: gpu(saxpy, 4, 1.0, d, y),
                lambda: fadd.reduce(d)):
        with pytest.raises(GpuUseAfterDestroy, match="device this GpuArray lived on"):
            use()
    assert "device is gone" in repr(d)
    fresh = to_device(np.arange(4, dtype=np.float32))   # a new device
    np.testing.assert_array_equal(fresh.numpy(), np.arange(4, dtype=np.float32))


def test_same_array_read_and_written_refused(device_name):
    d = to_device(np.ones(8, np.float32))
    with pytest.raises(GpuInvalidArgument, match=r"parameters 'x' and 'y': the same GpuArray "
                       r"is passed for 'x'.*Pass a copy for 'x' \(d.copy\(\)\)"):
        gpu(saxpy, 8, 1.0, d, d)
    np.testing.assert_array_equal(d.numpy(), np.ones(8, np.float32))


def test_join_downloads_nothing(device_name, monkeypatch):
    from cthreads.runtime import readback

    x, y = to_device(np.ones(64, np.float32)), zeros(64)
    host = np.zeros(64, np.float32)
    added = []
    real = readback.Readback.add_list

    def spy(self, source, target, *rest, **kw):
        added.append(target)
        return real(self, source, target, *rest, **kw)

    monkeypatch.setattr(readback.Readback, "add_list", spy)
    gpu(saxpy, 64, 1.0, x, y).join()
    assert added == []                           # no list to download: only the status words
    gpu(saxpy, 64, 1.0, x, host).join()           # a numpy array in the same launch form is
    assert len(added) == 1 and added[0] is host   # downloaded, as before
    np.testing.assert_array_equal(y.numpy(), np.ones(64, np.float32))


def test_array_belongs_to_its_device(device_name, monkeypatch):
    from cthreads.gpu import devices, use_device

    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    try:
        assert len(devices()) >= 2
        xd = to_device(np.arange(16, dtype=np.float32), device=1)
        assert xd.device.startswith("device 1 ")
        y = zeros(16)                             # on device 0
        with pytest.raises(GpuInvalidArgument, match=r"this GpuArray lives on device 1 .*but "
                           r"the launch runs on device 0"):
            gpu(saxpy, 16, 1.0, xd, y).join()
        with pytest.raises(GpuInvalidArgument, match="device 1"):
            fadd.reduce(xd)
        np.testing.assert_array_equal(y.numpy(), np.zeros(16, np.float32))
        with use_device(1):
            yd = zeros_like(xd)
            assert yd.device == xd.device
            gpu(saxpy, 16, 2.0, xd, yd).join()
            assert fadd.reduce(xd) == 120.0
        np.testing.assert_array_equal(yd.numpy(), 2 * np.arange(16, dtype=np.float32))
        moved = to_device(xd, device=0)
        assert moved.device.startswith("device 0 ")
        np.testing.assert_array_equal(moved.numpy(), np.arange(16, dtype=np.float32))
    finally:
        shutdown()


def test_arena_bind_refuses_a_gpuarray(device_name):
    d = to_device(np.ones(4, np.float32))
    with GpuArena() as arena:
        with pytest.raises(GpuInvalidArgument, match=r"GpuArena.bind\(d=...\) is a GpuArray "
                           r"of shape \(4,\) and dtype float32: its data already lives on "
                           "the device"):
            arena.bind(d=d)
        assert len(arena) == 0
    np.testing.assert_array_equal(d.numpy(), np.ones(4, np.float32))


def test_bool_and_int_parameters(device_name):
    flags = np.array([True, False, False, True, True])
    fd = to_device(flags)
    gpu(negate_flags, fd).join()
    np.testing.assert_array_equal(fd.numpy(), ~flags)
    v = np.arange(-50, 50, dtype=np.int32)
    vd = to_device(v)
    gpu(scale_ints, 100, 3, vd).join()
    np.testing.assert_array_equal(vd.numpy(), 3 * v)
    v64 = np.arange(-50, 50, dtype=np.int64) * 2**33      # plain list[int] follows int64
    vd64 = to_device(v64)
    gpu(scale_ints, 100, 3, vd64).join()
    np.testing.assert_array_equal(vd64.numpy(), 3 * v64)
