"""GpuArray views against numpy: reshape, ravel and row slices share the array's memory (1-D and
N-D bases, negative and open bounds, empty slices), kernels and f.reduce bind them from their
offset (1-D and 2-D, both widths, bounds checks by the view's shape, atomics, device functions,
the four-lane variant, an arena array in the same launch, simulate), transfers of views, stream
order between a view and its array, the refusals (strided views, offsets the device cannot bind,
one buffer read and written in one launch) with the data unchanged, lifetime, shutdown and
pickling."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuIndexError, GpuInvalidArgument,
    GpuUseAfterDestroy, atomic_add, empty, gpu, shutdown, to_device, zeros,
)
from tests.device.func_kernels import histogram, saxpy_helper
from tests.device.kernels import copy_floats, saxpy, scale_ints
from tests.device.nd_kernels import bad_column, scale_rows


@Gpu
def add_rows(a: list[list[float]], b: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        b[y, x] = b[y, x] + 2.0 * a[y, x]


@Gpu
def bump_all(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = x[i] + 1.0


@Gpu
def bump_unguarded(x: list[float]) -> None:
    i: int = GlobalIdx.x
    x[i] = x[i] + 1.0


@Gpu
def lengths(x: list[float], m: list[list[float]], out: list[int]) -> None:
    if GlobalIdx.x == 0:
        out[0] = len(x)
        out[1] = m.shape[0]
        out[2] = m.shape[1]


@Gpu
def swap(n: int, a: list[float], b: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        t: float = a[i]
        a[i] = b[i]
        b[i] = t


@Gpu
def count_odd(n: int, v: list[int], total: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n and v[i] % 2 == 1:
        atomic_add(total, 0, 1)


@Gpu
def doubled_into(out: list[float], src: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(src):
        out[i] = 2.0 * src[i]


@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


def _host(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


# -- views against numpy --------------------------------------------------------------------------

@pytest.mark.parametrize("key", [
    slice(8, 24), slice(None, 16), slice(40, None), slice(-16, None), slice(-24, -8),
    slice(None), slice(-100, 100), slice(3, 10), slice(60, 70),
])
def test_row_slices_of_a_1d_array(device_name, key):
    host = _host((64,))
    d = to_device(host)
    v = d[key]
    want = host[key]
    assert (v.shape, v.dtype, v.size, v.nbytes, len(v)) == \
        (want.shape, want.dtype, want.size, want.nbytes, len(want))
    np.testing.assert_array_equal(v.numpy(), want)
    np.testing.assert_array_equal(np.asarray(v), want)


@pytest.mark.parametrize("key", [
    0, 3, -1, -6, slice(1, 4), slice(None, 2), slice(-3, None), (2,), (slice(1, 5), slice(None)),
    (slice(2, 4), Ellipsis), (slice(1, 3), slice(0, 4), slice(None, None, 1)),
    (1, slice(2, 5)), (-2, slice(None, 3)), Ellipsis, (4, Ellipsis), (1, 3, slice(None)),
])
def test_views_of_a_3d_array(device_name, key):
    host = _host((6, 4, 5), np.float64)
    d = to_device(host)
    v = d[key]
    want = host[key]
    assert v.shape == want.shape and v.dtype == want.dtype
    np.testing.assert_array_equal(v.numpy(), want)


def test_reshape_and_ravel_share_memory(device_name):
    host = _host((4, 6), np.int32)
    d = to_device(host)
    for shape in [(24,), (3, 8), (2, -1), (-1, 4, 3), [6, 4], (24, 1)]:
        v = d.reshape(shape)
        np.testing.assert_array_equal(v.numpy(), host.reshape(shape))
    np.testing.assert_array_equal(d.reshape(2, 12).numpy(), host.reshape(2, 12))
    r = d.ravel()
    np.testing.assert_array_equal(r.numpy(), host.ravel())
    # writes through a view are seen through the array, and the reverse
    r[8:16].fill(-1)
    host.ravel()[8:16] = -1
    np.testing.assert_array_equal(d.numpy(), host)
    d[3].set(np.full(6, 7, np.int32))
    host[3] = 7
    np.testing.assert_array_equal(r.numpy(), host.ravel())
    # views of views
    vv = d.reshape(8, 3)[2:6].ravel()[1:7]
    np.testing.assert_array_equal(vv.numpy(), host.reshape(8, 3)[2:6].ravel()[1:7])
    vv.set(np.arange(100, 106, dtype=np.int32))
    host.reshape(8, 3)[2:6].ravel()[1:7] = np.arange(100, 106)
    np.testing.assert_array_equal(d.numpy(), host)


def test_empty_slices_behave_as_numpy(device_name):
    host = _host((8, 3))
    d = to_device(host)
    for key in [slice(5, 5), slice(7, 2), slice(8, None), slice(-1, -3)]:
        v = d[key]
        assert v.shape == host[key].shape and v.size == 0
        assert v.numpy().shape == host[key].shape
        v.fill(1.0)                                  # nothing to write
        v.set(np.empty(host[key].shape, np.float32))
        assert v.copy().shape == host[key].shape
    e = to_device(np.arange(8, dtype=np.float32))[3:3]
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x' is an empty GpuArray of shape "
                       r"\(0,\); the device needs at least one element"):
        gpu(bump_all, 1, e)
    assert fadd.reduce(e, init=5.0) == 5.0
    with pytest.raises(ValueError, match="empty sequence with no init"):
        fadd.reduce(e)
    np.testing.assert_array_equal(d.numpy(), host)


def test_bad_reshapes_and_indexes_refused(device_name):
    host = _host((4, 6))
    d = to_device(host)
    with pytest.raises(GpuInvalidArgument, match=r"cannot reshape an array of 24 elements "
                       r"\(shape \(4, 6\)\) into \(5, 5\)"):
        d.reshape(5, 5)
    with pytest.raises(GpuInvalidArgument, match=r"cannot reshape .* into \(7, -1\)"):
        d.reshape(7, -1)
    with pytest.raises(GpuInvalidArgument, match="at most one of them -1"):
        d.reshape(-1, -1)
    with pytest.raises(GpuArgumentTypeError, match="the shape must be ints"):
        d.reshape(2.0, 12)
    with pytest.raises(IndexError, match="index out of range for axis 0 of size 4"):
        d[4]
    with pytest.raises(GpuInvalidArgument, match=r"one element of a 1-D array is not a view; "
                       r"use d.numpy\(\)\[3\] .* or d\[3:4\]"):
        d.ravel()[3]
    with pytest.raises(GpuInvalidArgument, match=r"GpuArray\[1, 2\]: one element is not a view; "
                       r"use d.numpy\(\)\[1, 2\] \(a download\) or d\[1, 2:3\]"):
        d[1, 2]
    with pytest.raises(GpuInvalidArgument, match=r"or d\[-1, 5:6\]"):
        d[-1, -1]
    np.testing.assert_array_equal(d.numpy(), host)


@pytest.mark.parametrize("index, fix", [
    (lambda d: d[:, 0], r"d.numpy\(\)\[:, 0\]"),
    (lambda d: d[1:3, 2:4], r"d.numpy\(\)\[1:3, 2:4\]"),
    (lambda d: d[..., 1], r"d.numpy\(\)\[\.\.\., 1\]"),
    (lambda d: d[None], r"d.numpy\(\)\[None\]"),
    (lambda d: d.T, r"d.numpy\(\).T.copy\(\)"),
    (lambda d: d.transpose(), r"d.numpy\(\).transpose\(\).copy\(\)"),
    (lambda d: d[::2], r"a step other than 1 needs a strided view.*d.numpy\(\)\[::2\]"),
    (lambda d: d[::-1], r"a step other than 1.*d.numpy\(\)\[::-1\]"),
    (lambda d: d[1:4:2], r"a step other than 1.*d.numpy\(\)\[1:4:2\]"),
    (lambda d: d[[0, 2]], r"indexing with a list \(an index array or a mask\).*d.numpy\(\)"),
    (lambda d: d[np.array([0, 2])], r"indexing with a ndarray.*d.numpy\(\)\[index\]"),
    (lambda d: d[np.array([True, False, True, False])], r"indexing with a ndarray"),
    (lambda d: d[True], r"indexing with a bool"),
    (lambda d: d[1.0], r"indexing with a float"),
])
def test_strided_views_refused(device_name, index, fix):
    host = _host((4, 6))
    d = to_device(host)
    with pytest.raises(GpuInvalidArgument, match=fix):
        index(d)
    np.testing.assert_array_equal(d.numpy(), host)


# -- kernels and reductions on views --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_reads_and_writes_row_slices(device_name, dtype):
    n = 13                                   # not a multiple of 4: the four-lane tail too
    xh = np.linspace(-1, 1, 96).astype(dtype)
    yh = np.linspace(3, 5, 96).astype(dtype)
    x, y = to_device(xh), to_device(yh)
    # offsets 64 and 128 elements (aligned for every dtype), lengths 13
    gpu(saxpy, n, 0.5, x[64:64 + n], y[32:32 + n])
    yh[32:32 + n] = np.asarray(0.5, dtype) * xh[64:64 + n] + yh[32:32 + n]
    gpu(saxpy_helper, n, 2.0, x[8:8 + n], y[72:72 + n])       # a device function
    yh[72:72 + n] = np.asarray(2.0, dtype) * xh[8:8 + n] + yh[72:72 + n]
    np.testing.assert_allclose(y.numpy(), yh, rtol=1e-6 if dtype is np.float32 else 1e-15)
    np.testing.assert_array_equal(x.numpy(), xh)


def test_the_same_buffer_at_two_offsets_binds_each(device_name):
    # cached bind groups: the same buffer and size at another offset is another bind group
    host = np.zeros(64, np.float32)
    d = to_device(host)
    for k, start in enumerate([0, 8, 16, 8, 0, 40]):
        gpu(bump_all, 8, d[start:start + 8])
        host[start:start + 8] += 1
    np.testing.assert_array_equal(d.numpy(), host)


def test_kernel_on_2d_row_slices(device_name):
    ah = _host((24, 8), np.float64) / 7
    bh = np.ones((16, 8), np.float64)
    a, b = to_device(ah), to_device(bh)
    gpu(add_rows, a[4:12], b[8:16], threads=(8, 8))          # plain float follows float64
    bh[8:16] += 2.0 * ah[4:12]
    np.testing.assert_allclose(b.numpy(), bh, rtol=1e-15)
    s = to_device(_host((6, 4, 8)))
    gpu(scale_rows, s[2].reshape(4, 8), 3.0, threads=(8, 4))   # one block of a 3-D array
    want = _host((6, 4, 8))
    want[2] = want[2] * 3 + 1
    np.testing.assert_allclose(s.numpy(), want, rtol=1e-6)


def test_lengths_and_shapes_in_the_kernel_are_the_views(device_name):
    x = to_device(np.zeros(40, np.float32))
    m = to_device(np.zeros((10, 8), np.float32))
    out = zeros(3, np.int32)
    gpu(lengths, x[8:19], m[2:5], out, threads=1).join()
    assert out.numpy().tolist() == [11, 3, 8]


def test_bounds_checks_use_the_views_shape(device_name):
    host = np.arange(64, dtype=np.float32)
    d = to_device(host)
    # which failing invocation reports first is the device's choice (16 on lavapipe, 32 seen
    # on the H200): any index from the view's length on
    with pytest.raises(GpuIndexError, match=r"kernel bump_unguarded: index \d+ is out of "
                       r"range for list 'x' of length 16") as err:
        gpu(bump_unguarded, d[16:32]).join()
        d.numpy()
    assert int(str(err.value).split("index ")[1].split()[0]) >= 16
    got = d.numpy()
    # nothing past the view was written (the index was checked against the view's length)
    np.testing.assert_array_equal(got[:16], host[:16])
    np.testing.assert_array_equal(got[32:], host[32:])
    a = to_device(_host((12, 8)))
    out = to_device(np.full((12, 8), -1.0, np.float32))
    with pytest.raises(GpuIndexError, match=r"index 8 is out of range for dimension 1 .* of list "
                       r"'a', of size 8 along that dimension"):
        gpu(bad_column, 8, 4, a[4:8], out[0:4], threads=(8, 4)).join()
        out.numpy()
    with pytest.raises(GpuIndexError, match=r"index 4 is out of range for dimension 0 .* of "
                       r"size 4 along that dimension"):
        gpu(bad_column, 7, 5, a[4:8], out[0:4], threads=(7, 5)).join()
        out.numpy()


def test_base_numpy_reports_a_views_writer(device_name):
    # the writers are tracked on the shared memory: the array's numpy() waits for the kernel
    # that wrote a view and reports its bounds-check failure
    d = to_device(np.zeros(64, np.float32))
    gpu(bump_unguarded, d[32:48])             # not joined
    with pytest.raises(GpuIndexError, match="length 16"):
        d.numpy()
    np.testing.assert_array_equal(d.numpy()[32:48], np.ones(16, np.float32))


def test_reduce_a_view(device_name):
    host = np.random.default_rng(3).standard_normal(1000).astype(np.float64)
    d = to_device(host)
    assert fadd.reduce(d[200:900]) == pytest.approx(host[200:900].sum(), rel=1e-12)
    assert fadd.reduce(d[996:]) == pytest.approx(host[996:].sum(), rel=1e-12)   # < 4 elements
    m = to_device(_host((50, 8), np.int64))
    assert iadd.reduce(m[10:20]) == int(_host((50, 8), np.int64)[10:20].sum())
    assert iadd.reduce(m[7].ravel()) == int(_host((50, 8), np.int64)[7].sum())
    # the same buffer and size at other offsets: other cached bind groups
    sums = [iadd.reduce(m[k]) for k in (3, 4, 3, 9)]
    assert sums == [int(_host((50, 8), np.int64)[k].sum()) for k in (3, 4, 3, 9)]


def test_unaligned_views_refused_in_kernels_and_reduce(device_name):
    xh = np.arange(32, dtype=np.float32)
    x, y = to_device(xh), to_device(np.ones(32, np.float32))
    msg = (r"parameter 'x' is a GpuArray view of shape \(10,\) and dtype float32 that starts "
           r"at element 3 of its array \(byte 12\); .* binds memory only from multiples of "
           r"(\d+) bytes \(its min-storage-buffer-offset-alignment\).*Pass view.copy\(\)")
    with pytest.raises(GpuInvalidArgument, match=msg):
        gpu(saxpy, 10, 1.0, x[3:13], y[0:10])
    with pytest.raises(GpuInvalidArgument, match=r"argument 'values' is a GpuArray view .* "
                       r"starts at element 3"):
        fadd.reduce(x[3:13])
    np.testing.assert_array_equal(x.numpy(), xh)
    np.testing.assert_array_equal(y.numpy(), np.ones(32, np.float32))
    gpu(saxpy, 10, 1.0, x[3:13].copy(), y[0:10])              # the fix works
    np.testing.assert_array_equal(y.numpy()[:10], xh[3:13] + 1)


def test_views_with_atomics_an_arena_and_ints(device_name):
    v = to_device(np.arange(100, dtype=np.int32))
    counts = zeros(24, np.int32)
    gpu(count_odd, 50, v[40:90], counts[8:9]).join()
    assert counts.numpy().tolist() == [0] * 8 + [25] + [0] * 15
    h = zeros(24, np.int32)
    gpu(histogram, 64, 8, v[32:96], h[16:24]).join()           # device function with atomics
    want = np.bincount(np.arange(32, 96) % 8, minlength=8)
    np.testing.assert_array_equal(h.numpy(), np.r_[np.zeros(16, np.int32), want])
    k = to_device(np.arange(40, dtype=np.int64))
    gpu(scale_ints, 16, 3, k[8:24]).join()                     # plain list[int] as int64
    np.testing.assert_array_equal(k.numpy(), np.r_[np.arange(8), 3 * np.arange(8, 24),
                                                   np.arange(24, 40)])
    bound = np.arange(16, dtype=np.float32)
    out = to_device(np.zeros(48, np.float32))
    with GpuArena() as arena:
        arena.bind(src=bound)
        gpu(copy_floats, bound, out[16:32]).join()
    np.testing.assert_array_equal(out.numpy(), np.r_[np.zeros(16), bound, np.zeros(16)])


def test_a_buffer_read_and_written_in_one_launch_refused(device_name):
    host = np.arange(64, dtype=np.float32)
    d = to_device(host)
    for x, y, what in [(d[0:16], d, r"views of one GpuArray \(shapes \(16,\) and \(64,\)"),
                       (d, d[16:32], r"views of one GpuArray \(shapes \(64,\) and \(16,\)"),
                       (d[0:16], d[16:32], r"views of one GpuArray"),
                       (d.reshape(8, 8)[1].ravel(), d[8:16], r"views of one GpuArray"),
                       (d[8:24], d[8:24], r"views of one GpuArray \(shapes \(16,\) and "
                        r"\(16,\)"),
                       (d, d, r"the same GpuArray is passed")]:
        with pytest.raises(GpuInvalidArgument, match=r"saxpy\(\) parameters 'x' and 'y': "
                           + what + r".*which the kernel only reads.*Pass a copy for 'x' "
                           r"\(d.copy\(\)\)"):
            gpu(saxpy, 16, 1.0, x, y)
    np.testing.assert_array_equal(d.numpy(), host)
    # written through both (one buffer bound writable twice) and read through both are fine
    gpu(swap, 8, d[0:8], d[8:16])
    host[0:8], host[8:16] = host[8:16].copy(), host[0:8].copy()
    np.testing.assert_array_equal(d.numpy(), host)


# -- transfers and stream order -------------------------------------------------------------------

def test_transfers_of_views_touch_only_their_range(device_name):
    host = np.arange(30, dtype=np.float64).reshape(10, 3)
    d = to_device(host)
    d[3:5].set(np.full((2, 3), -1.0))                       # offset 72 bytes: not aligned, fine
    host[3:5] = -1.0
    d[7].fill(9.5)
    host[7] = 9.5
    np.testing.assert_array_equal(d.numpy(), host)
    c = d[2:6].copy()
    np.testing.assert_array_equal(c.numpy(), host[2:6])
    c.fill(0.0)                                              # a copy: d unchanged
    np.testing.assert_array_equal(d.numpy(), host)
    np.testing.assert_array_equal(to_device(d[1:3]).numpy(), host[1:3])
    with pytest.raises(GpuInvalidArgument, match=r"the host array has shape \(3, 3\) .* but "
                       r"this GpuArray has shape \(2, 3\)"):
        d[3:5].set(np.zeros((3, 3)))
    with pytest.raises(GpuInvalidArgument, match="GpuArray.fill"):
        d[0:2].fill("x")
    np.testing.assert_array_equal(d.numpy(), host)
    assert "shape=(2, 3)" in repr(d[3:5]) and "-1." in repr(d[3:5])


def test_stream_order_between_a_view_and_its_array(device_name):
    n = 4096
    d = to_device(np.zeros(2 * n, np.float32))
    one = to_device(np.ones(n, np.float32))
    for _ in range(3):
        gpu(saxpy, n, 1.0, one, d[n:])                 # never joined
    np.testing.assert_array_equal(d.numpy(), np.r_[np.zeros(n), np.full(n, 3.0)])
    gpu(saxpy, 2 * n, 2.0, to_device(np.ones(2 * n, np.float32)), d)   # the array, then
    np.testing.assert_array_equal(d[:n].numpy(), np.full(n, 2.0))     # a view reads it
    gpu(saxpy, n, 1.0, one, d[:n])
    d.set(np.full(2 * n, 7.0, np.float32))             # lands after the pending launch
    gpu(saxpy, n, 1.0, one, d[n:])
    np.testing.assert_array_equal(d[n:].numpy(), np.full(n, 8.0))
    np.testing.assert_array_equal(d[:n].numpy(), np.full(n, 7.0))
    # reductions see the writes issued before them, through a view and through the array
    gpu(bump_all, n, d[n:])                            # never joined
    assert fadd.reduce(d) == 7.0 * n + 9.0 * n
    gpu(saxpy, 2 * n, 1.0, to_device(np.ones(2 * n, np.float32)), d)
    assert fadd.reduce(d[n:]) == 10.0 * n


def test_simulate_with_views(device_name):
    xh = np.arange(40, dtype=np.float32)
    yh = np.ones(40, np.float32)
    x, y = to_device(xh), to_device(yh)
    saxpy.simulate(8, 2.0, x[8:16], y[16:24])
    yh[16:24] = 2 * xh[8:16] + 1
    np.testing.assert_array_equal(y.numpy(), yh)
    np.testing.assert_array_equal(x.numpy(), xh)
    # a view the kernel only reads, of the array it writes, is not written back over the
    # kernel's writes (simulate writes back only what the kernel writes)
    d = to_device(np.arange(16, dtype=np.float32))
    doubled_into.simulate(d, d[0:8])
    ref = np.arange(16, dtype=np.float32)
    ref[:8] *= 2
    np.testing.assert_array_equal(d.numpy(), ref)
    m = to_device(_host((6, 3)))
    scale_rows.simulate(m[2:4], 3.0, threads=(3, 2))
    host = _host((6, 3))
    host[2:4] = host[2:4] * 3 + 1
    np.testing.assert_array_equal(m.numpy(), host)


# -- lifetime, pickling, shutdown -----------------------------------------------------------------

def test_a_view_keeps_its_arrays_memory(device_name):
    host = np.arange(1 << 14, dtype=np.float32)
    v = to_device(host)[4096:8192]        # the array is only reachable through the view
    gc.collect()
    churn = [to_device(np.full(1 << 14, -5.0, np.float32)) for _ in range(4)]
    np.testing.assert_array_equal(v.numpy(), host[4096:8192])
    gpu(bump_all, 4096, v).join()
    np.testing.assert_array_equal(v.numpy(), host[4096:8192] + 1)
    r = v.reshape(64, 64)[10]
    del v
    gc.collect()
    np.testing.assert_array_equal(r.numpy(), host[4096 + 640:4096 + 704] + 1)
    for c in churn:
        np.testing.assert_array_equal(c.numpy()[:4], np.full(4, -5.0))


def test_memory_returns_when_the_array_and_its_views_are_gone(device_name):
    from cthreads.backend import get_queue

    pool = get_queue().pool
    d = zeros(1 << 20)                # 4 MiB
    v = d[1 << 19:]
    r = d.reshape(1024, 1024)[3]
    gc.collect()
    idle = pool.idle_bytes
    del d
    gc.collect()
    assert pool.idle_bytes < idle + (4 << 20)    # the views hold it
    del v
    gc.collect()
    assert pool.idle_bytes < idle + (4 << 20)
    r.fill(2.0)
    assert r.numpy().tolist() == [2.0] * 1024
    del r
    gc.collect()
    assert pool.idle_bytes >= idle + (4 << 20)


def test_arrays_collected_in_a_reference_cycle_leave_the_pool_usable(device_name):
    # the garbage collector finalizes the wgpu buffer of an array (and its views) collected in
    # a cycle, while the array's finalizer hands its PooledBuffer back: never handed out again
    class Holder:
        pass

    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(3):
            h = Holder()
            h.me = h
            h.arr = to_device(np.arange(64, dtype=np.float32))
            h.view = h.arr[8:16]
            del h
            gc.collect()
    finally:
        if was:
            gc.enable()
    a, b = to_device(np.arange(64, dtype=np.float32)), zeros(64)
    gpu(copy_floats, a[8:], b[:56]).join()
    np.testing.assert_array_equal(b.numpy(), np.r_[np.arange(8, 64), np.zeros(8)])


def test_pickled_view_holds_its_values(device_name):
    host = _host((8, 4))
    d = to_device(host)
    back = pickle.loads(pickle.dumps(d[2:5]))
    assert back.shape == (3, 4)
    np.testing.assert_array_equal(back.numpy(), host[2:5])
    back.fill(0.0)                        # its own memory now
    np.testing.assert_array_equal(d.numpy(), host)
    r = pickle.loads(pickle.dumps(d.ravel()[5:9]))
    np.testing.assert_array_equal(r.numpy(), host.ravel()[5:9])


def test_views_after_shutdown(device_name):
    d = to_device(np.arange(64, dtype=np.float32))
    v = d[8:40]
    w = d.reshape(8, 8)[4:]
    y = zeros(32)
    shutdown()
    for arr in (d, v, w):
        for use in (arr.numpy, arr.copy, lambda: arr.fill(1.0), arr.ravel, lambda: arr[0:1],
                    lambda: arr.set(np.zeros(arr.shape, np.float32)),
                    lambda: gpu(copy_floats, arr, y), lambda: fadd.reduce(arr)):
            with pytest.raises(GpuUseAfterDestroy, match="device this GpuArray lived on"):
                use()
        assert "device is gone" in repr(arr)
    fresh = to_device(np.arange(4, dtype=np.float32))     # a new device
    np.testing.assert_array_equal(fresh[2:].numpy(), [2.0, 3.0])


# -- more combinations --------------------------------------------------------------------------

def test_views_with_shared_memory_3d_bools_and_prepare(device_name):
    from cthreads.gpu import prepare
    from tests.device.func_kernels import tile_sums
    from tests.device.kernels import negate_flags
    from tests.device.nd_kernels import fill_volume

    prepare()
    xh = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    x, out = to_device(xh), zeros(256)
    gpu(tile_sums, 128, x[64:192], out[128:]).join()          # shared() tiles of a view
    tiles = xh[64:192].reshape(2, 64)
    want = tiles + np.pad(tiles, ((0, 0), (1, 0)))[:, :-1] + np.pad(tiles, ((0, 0), (0, 1)))[:, 1:]
    np.testing.assert_allclose(out.numpy()[128:], want.ravel(), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out.numpy()[:128], np.zeros(128))
    v = zeros((6, 4, 8), np.int32)
    gpu(fill_volume, v[2:4], threads=(8, 4, 2)).join()        # a 3-D view
    z, y, xx = np.meshgrid(np.arange(2), np.arange(4), np.arange(8), indexing="ij")
    want = np.zeros((6, 4, 8), np.int32)
    want[2:4] = 10000 * z + 100 * y + xx
    np.testing.assert_array_equal(v.numpy(), want)
    flags = np.arange(40) % 3 == 0
    f = to_device(flags)
    gpu(negate_flags, f[16:32]).join()                        # bools: 4 device bytes each
    flags[16:32] = ~flags[16:32]
    np.testing.assert_array_equal(f.numpy(), flags)


def test_unaligned_rows_of_2d_and_float64_views(device_name):
    a = to_device(_host((16, 3)))             # rows of 12 bytes: rows 0, 8 start aligned
    out = zeros((8, 3))
    gpu(add_rows, a[8:16], out, threads=(3, 8)).join()
    np.testing.assert_allclose(out.numpy(), 2.0 * _host((16, 3))[8:16])
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'a' is a GpuArray view of shape "
                       r"\(8, 3\) and dtype float32 that starts at element 3 "):
        gpu(add_rows, a[1:9], out, threads=(3, 8))
    d = to_device(np.arange(20, dtype=np.float64))
    with pytest.raises(GpuInvalidArgument, match=r"starts at element 2 of its array \(byte 16\)"
                       r".* a multiple of \d+ float64 elements"):
        fadd.reduce(d[2:])
    assert fadd.reduce(d[4:]) == float(np.arange(4, 20).sum())
    np.testing.assert_allclose(out.numpy(), 2.0 * _host((16, 3))[8:16])


def test_a_view_belongs_to_its_arrays_device(device_name, monkeypatch):
    from cthreads.gpu import use_device

    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    try:
        d = to_device(np.arange(64, dtype=np.float32), device=1)
        v = d[32:48]
        assert v.device == d.device and v.device.startswith("device 1 ")
        y = zeros(16)                                   # on device 0
        with pytest.raises(GpuInvalidArgument, match=r"this GpuArray lives on device 1 .*but "
                           r"the launch runs on device 0"):
            gpu(saxpy, 16, 1.0, v, y).join()
        with use_device(1):
            y1 = zeros(16)
            gpu(saxpy, 16, 1.0, v, y1).join()
            assert fadd.reduce(v) == float(np.arange(32, 48).sum())
        np.testing.assert_array_equal(y1.numpy(), np.arange(32, 48, dtype=np.float32))
        moved = to_device(v, device=0)
        assert moved.device.startswith("device 0 ")
        np.testing.assert_array_equal(moved.numpy(), np.arange(32, 48, dtype=np.float32))
    finally:
        shutdown()
