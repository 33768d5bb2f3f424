"""Arrays past the storage-binding limit, split across bindings behind the scenes: GpuArrays,
numpy arrays and lists passed straight, in kernels (reads, writes, +=, atomics, compare_exchange,
N-D with bounds checks, device functions, shared memory) and transfers, against numpy or the
plain-Python run. ``config.override(binding_bytes=4096)`` makes 4 KiB "the limit", so small
arrays split; one test crosses lavapipe's real 128 MiB limit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import (
    float32, float64, GlobalIdx, Gpu, GpuIndexError, GpuInvalidArgument, atomic_add, atomic_compare_exchange, empty,
    gpu, to_device, zeros,
)
from tests.device.func_kernels import histogram, tile_sums
from tests.device.kernels import saxpy
from tests.device.nd_kernels import bad_column, scale_rows, tile_transpose

LIMIT = 4096                       # bytes per binding in these tests


@pytest.fixture
def small_limit():
    with config.override(binding_bytes=LIMIT):
        yield


def _sample(dtype, shape, seed=3):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@Gpu
def saxpy_int(n: int, a: int, x: list[int], y: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] += a * x[i]


@Gpu
def reverse_into(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[n - 1 - i] = x[i] * 2.0


@Gpu
def past_the_end(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i + 1] = 1.0


@Gpu
def count_mod(n: int, v: list[int], h: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        atomic_add(h, v[i] % len(h), 1)


@Gpu
def claim(n: int, owner: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        atomic_compare_exchange(owner, i % len(owner), -1, i % 7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_saxpy_on_split_gpuarrays(device_name, small_limit, dtype):
    n = 5000                                    # 5 or 10 parts
    x, y = _sample(dtype, n), _sample(dtype, n, 4)
    xd, yd = to_device(x), to_device(y)
    assert len(yd._slot.parts) > 1
    kernel, a = (saxpy_int, 3) if dtype is np.int32 else (saxpy, 0.5)
    gpu(kernel, n, a, xd, yd).join()
    np.testing.assert_allclose(yd.numpy(), y + a * x, rtol=1e-6)
    np.testing.assert_array_equal(xd.numpy(), x)


def test_writes_across_parts(device_name, small_limit):
    n = 3000
    x = _sample(np.float32, n)
    yd = zeros(n)
    gpu(reverse_into, n, to_device(x), yd).join()
    np.testing.assert_array_equal(yd.numpy(), (x * 2)[::-1])


def test_bounds_check_by_the_logical_length(device_name, small_limit):
    d = to_device(np.zeros(2500, np.float32))     # 3 parts: 1024, 1024, 452
    gpu(past_the_end, 2499, d).join()             # index 1024 (part 1's first) .. 2499 work
    np.testing.assert_array_equal(d.numpy()[1:], 1.0)
    with pytest.raises(GpuIndexError, match="index 2500 is out of range for list 'x' of "
                       "length 2500"):
        gpu(past_the_end, 2500, d).join()


def test_atomics_on_a_split_list(device_name, small_limit):
    n = 4000
    v = np.random.default_rng(1).integers(0, 100000, n).astype(np.int32)
    h = zeros(1500, dtype=np.int32)               # 2 parts
    gpu(count_mod, n, to_device(v), h).join()
    np.testing.assert_array_equal(h.numpy(), np.bincount(v % 1500, minlength=1500))
    hist = zeros(2000, dtype=np.int32)
    gpu(histogram, n, 2000, to_device(v), hist).join()          # atomics in a device function
    np.testing.assert_array_equal(hist.numpy(), np.bincount(v % 2000, minlength=2000))


def test_compare_exchange_on_a_split_list(device_name, small_limit):
    owner = np.full(3000, -1, np.int32)
    d = to_device(owner)
    gpu(claim, 3000, d).join()
    np.testing.assert_array_equal(d.numpy(), np.arange(3000) % 7)
    host = owner.copy()
    claim.simulate(3000, host)                     # the plain-Python run of every thread
    np.testing.assert_array_equal(d.numpy(), host)


def test_2d_split_array(device_name, small_limit):
    a = _sample(np.float32, (40, 70))              # 2,800 elements: 3 parts
    ad = to_device(a)
    assert len(ad._slot.parts) == 3
    gpu(scale_rows, ad, 3.0, threads=(70, 40)).join()
    host = a.copy()
    scale_rows.simulate(host, 3.0, threads=(70, 40))
    np.testing.assert_allclose(ad.numpy(), host, rtol=1e-6)
    out = to_device(np.zeros((40, 70), np.float32))
    with pytest.raises(GpuIndexError, match="dimension 1 .*of size 70"):
        gpu(bad_column, 70, 40, ad, out, threads=(70, 40)).join()


def test_shared_memory_with_split_arrays(device_name, small_limit):
    n = 64 * 40 + 17
    x = _sample(np.float32, n)
    out = zeros(n)
    gpu(tile_sums, n, to_device(x), out).join()    # shared memory and a device function
    host = np.zeros(n, np.float32)
    tile_sums.simulate(n, x.copy(), host)
    np.testing.assert_allclose(out.numpy(), host, rtol=1e-5)
    a = _sample(np.float32, (48, 48))              # 2-D, split, through a shared tile
    t = zeros((48, 48))
    gpu(tile_transpose, 48, to_device(a), t, threads=(48, 48)).join()
    np.testing.assert_array_equal(t.numpy(), a.T)


def test_numpy_arrays_and_lists_passed_straight(device_name, small_limit):
    n = 3000
    x, y = _sample(np.float32, n), _sample(np.float32, n, 5)
    y_np = y.copy()
    gpu(saxpy, n, 2.0, x, y_np).join()
    np.testing.assert_allclose(y_np, y + 2 * x, rtol=1e-6)
    y_list = [float(v) for v in y]
    gpu(saxpy, n, 2.0, [float(v) for v in x], y_list).join()
    np.testing.assert_allclose(np.array(y_list, np.float32), y + 2 * x, rtol=1e-6)
    grid = [[float(v) for v in row] for row in _sample(np.float32, (30, 50))]   # nested, 2-D
    host = np.array(grid, np.float32)
    gpu(scale_rows, grid, 2.0, threads=(50, 30)).join()
    np.testing.assert_allclose(np.array(grid, np.float32), host * 2 + 1, rtol=1e-6)


def test_split_and_unsplit_arguments_in_one_launch(device_name, small_limit):
    n = 3000
    x = _sample(np.float32, n)
    y = _sample(np.float32, n, 6)
    xd = to_device(x)                              # split
    y_small = y[:800].copy()                       # one binding
    gpu(saxpy, 800, 0.25, xd, y_small).join()
    np.testing.assert_allclose(y_small, y[:800] + 0.25 * x[:800], rtol=1e-6)
    yd = to_device(y)
    gpu(saxpy, n, 0.25, x, yd).join()              # a numpy array split, a GpuArray split
    np.testing.assert_allclose(yd.numpy(), y + 0.25 * x, rtol=1e-6)


def test_relaunch_reuses_the_split_variant(device_name, small_limit):
    n = 3000
    x = _sample(np.float32, n)
    xd, yd = to_device(x), zeros(n)
    gpu(reverse_into, n, xd, yd).join()            # not element-wise: the split addressing
    rt = reverse_into.runtime_for(None)
    before = rt.compiled_variants()
    for _ in range(3):
        gpu(reverse_into, n, xd, yd)
    np.testing.assert_array_equal(yd.numpy(), (2 * x)[::-1])
    assert rt.compiled_variants() == before         # the same split variant, no new pipeline
    assert any(v.split == (("x", 3, 10), ("y", 3, 10)) for v in before)


@Gpu
def scale_all(x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(y):
        y[i] = x[i] * 3.0


@Gpu
def axpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] += a * x[i]


@pytest.mark.parametrize("n", [1, 1024, 1025, 2999, 3000])
def test_element_wise_kernels_run_part_by_part(device_name, small_limit, n):
    x, y = _sample(np.float32, 3000), _sample(np.float32, 3000, 9)
    xd, yd = to_device(x), to_device(y)
    gpu(axpy, n, 2.0, xd, yd).join()               # the guard anywhere in the parts
    want = y.copy()
    want[:n] += 2 * x[:n]
    np.testing.assert_allclose(yd.numpy(), want, rtol=1e-6)
    assert not any(v.split for v in axpy.runtime_for(None).compiled_variants())
    gpu(scale_all, xd, yd).join()                  # no count parameter: the longest list
    np.testing.assert_allclose(yd.numpy(), 3 * x, rtol=1e-6)


def test_element_wise_with_other_part_sizes_uses_the_addressing(device_name, small_limit):
    @Gpu
    def widen(n: int, x: list[float32], y: list[float64]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            y[i] = float64(x[i]) * 2.0

    x = _sample(np.float32, 3000)
    yd = zeros(3000, dtype=np.float64)             # 512 per part, x 1,024
    gpu(widen, 3000, to_device(x), yd).join()
    np.testing.assert_array_equal(yd.numpy(), x.astype(np.float64) * 2)
    with pytest.raises(GpuIndexError, match="index 3000 is out of range for list 'x'"):
        gpu(saxpy, 3001, 1.0, to_device(x), zeros(3001)).join()   # the guard past a list


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_transfers(device_name, small_limit, dtype):
    a = (np.arange(3500) % 3 == 0) if dtype is np.bool_ else _sample(dtype, 3500)
    a = a.reshape(35, 100)
    d = to_device(a)
    assert len(d._slot.parts) > 1
    np.testing.assert_array_equal(d.numpy(), a)
    np.testing.assert_array_equal(np.asarray(d), a)
    c = d.copy()
    d.fill(True if dtype is np.bool_ else 7)
    np.testing.assert_array_equal(c.numpy(), a)                      # the copy is its own
    np.testing.assert_array_equal(d.numpy(), np.full_like(a, True if dtype is np.bool_ else 7))
    d.set(a[::-1].copy())
    np.testing.assert_array_equal(d.numpy(), a[::-1])
    back = pickle.loads(pickle.dumps(d))
    np.testing.assert_array_equal(back.numpy(), a[::-1])
    assert "shape=(35, 100)" in repr(d)
    e = empty((35, 100), dtype=dtype)
    assert len(e._slot.parts) == len(d._slot.parts)


def test_more_elements_than_an_index(device_name):
    with pytest.raises(GpuInvalidArgument, match=r"2\*\*31 - 1"):
        zeros(2**31, dtype=np.float32)


def test_past_lavapipes_real_binding_limit(device_name):
    from cthreads.backend import get_queue

    limit = get_queue().pool.binding_bytes()
    n = limit // 4 + 4096                          # float32: just past the real limit
    if n > 50_000_000:
        pytest.skip("the device's binding limit is large; covered at small sizes above")
    x = np.arange(n, dtype=np.float32)
    xd, yd = to_device(x), zeros(n)
    assert len(xd._slot.parts) == 2
    gpu(saxpy, n, 2.0, xd, yd).join()
    np.testing.assert_array_equal(yd.numpy(), 2 * x)


def test_simulate_and_prepare_with_split_arrays(device_name, small_limit):
    from cthreads.gpu import prepare

    prepare()                                      # the unsplit variants; the split one follows
    n = 2500
    x, y = _sample(np.float32, n), _sample(np.float32, n, 8)
    xd, yd = to_device(x), to_device(y)
    saxpy.simulate(n, 2.0, xd, yd)                 # runs on host copies, writes back
    np.testing.assert_allclose(yd.numpy(), y + 2 * x, rtol=1e-6)
    gpu(saxpy, n, 2.0, xd, yd).join()
    np.testing.assert_allclose(yd.numpy(), y + 4 * x, rtol=1e-5)


def test_more_parts_than_the_device_binds(device_name):
    from cthreads.backend import get_queue

    if get_queue().ctx.limit("max-storage-buffers-per-shader-stage") > 90:
        pytest.skip("the device binds more storage buffers than this test's 95 parts")
    with config.override(binding_bytes=256):       # 64 float32 per part: 47 parts each
        x, y = np.ones(3000, np.float32), np.zeros(3000, np.float32)
        xd, yd = to_device(x), to_device(y)
        with pytest.raises(GpuInvalidArgument, match=r"storage buffers .*'x' in 47 parts.*"
                           r"nothing was submitted"):
            gpu(reverse_into, 3000, xd, yd).join()
        with pytest.raises(GpuInvalidArgument, match="storage buffers"):
            gpu(reverse_into, 3000, x, y).join()
        gpu(saxpy, 3000, 1.0, xd, yd).join()       # element-wise: 47 dispatches of one part
        np.testing.assert_array_equal(yd.numpy(), 1.0)
        yd.fill(0.0)
    np.testing.assert_array_equal(yd.numpy(), 0.0)          # nothing changed
    np.testing.assert_array_equal(y, 0.0)
    np.testing.assert_array_equal(x, 1.0)


@Gpu.func
def _add(a: float, b: float) -> float:
    return a + b


def test_reduce_of_a_split_gpuarray(device_name, small_limit):
    # reduced part by part where it lives (more cases: tests/device/test_split_reduce.py)
    d = to_device(np.ones(3000, np.float32))
    assert len(d._slot.parts) > 1
    assert _add.reduce(d) == 3000.0
    np.testing.assert_array_equal(d.numpy(), 1.0)


def test_batched_part_by_part_launches_each_see_their_scalars(device_name, small_limit):
    n = 3000
    x = _sample(np.float32, n)
    xd, yd = to_device(x), zeros(n)
    for a in (1.0, 2.0, 4.0):                      # unjoined: one batch, each part its guard
        gpu(axpy, n, a, xd, yd)
    gpu(axpy, 1500, 8.0, xd, yd)
    want = 7 * x
    want[:1500] += 8 * x[:1500]
    np.testing.assert_allclose(yd.numpy(), want, rtol=1e-5)


@Gpu(boundscheck=False)
def reverse_unchecked(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[n - 1 - i] = x[i] * 2.0


def test_checks_off_nd_tiles_and_an_arena_array(device_name, small_limit):
    from cthreads.gpu import GpuArena

    x = _sample(np.float32, 3000)
    yd = zeros(3000)
    gpu(reverse_unchecked, 3000, to_device(x), yd).join()
    np.testing.assert_array_equal(yd.numpy(), (2 * x)[::-1])
    with config.override(nd_tiles_on_cpu=True):    # the GPUs' N-D form
        a = _sample(np.float32, (40, 70))
        ad = to_device(a)
        gpu(scale_rows, ad, 3.0, threads=(70, 40)).join()
        np.testing.assert_allclose(ad.numpy(), a * 3 + 1, rtol=1e-6)
    host = x.copy()
    arena = GpuArena().bind(x=host)                # one binding, next to a split GpuArray
    yd2 = zeros(3000)
    gpu(reverse_into, 3000, host, yd2).join()
    np.testing.assert_array_equal(yd2.numpy(), (2 * x)[::-1])
    arena.release()


def test_download_larger_than_a_buffer_goes_in_groups(device_name, small_limit, monkeypatch):
    from cthreads.backend import get_queue

    a = _sample(np.float64, 5000)                  # 10 parts of 4,096 bytes
    d = to_device(a)
    gpu(reverse_into, 5000, to_device(a), d).join()
    from cthreads.runtime import device_array

    seen = []
    groups = device_array._download_groups
    monkeypatch.setattr(device_array, "_download_groups",
                        lambda slot, limit: seen.append(groups(slot, limit)) or seen[-1])
    monkeypatch.setitem(get_queue().ctx.limits, "max-buffer-size", 8192)
    got = d.numpy()                                # five staging buffers of two parts each
    monkeypatch.undo()
    assert [len(g) for g in seen[0]] == [2] * 5
    np.testing.assert_array_equal(got, (2 * a)[::-1])


def test_views_of_a_split_array(device_name, small_limit):
    a = _sample(np.float32, (30, 100))             # 3 parts
    d = to_device(a)
    flat = d.ravel()                               # a view from element 0: the same parts
    assert len(flat._slot.parts) == 3
    gpu(saxpy, 3000, 1.0, to_device(np.ones(3000, np.float32)), flat).join()
    np.testing.assert_allclose(d.numpy(), a + 1, rtol=1e-6)
    top = d[:15]                                   # 1,500 elements: 2 of the parts
    assert len(top._slot.parts) == 2
    yd = zeros(1500)
    gpu(reverse_into, 1500, top.ravel(), yd).join()
    np.testing.assert_allclose(yd.numpy(), (2 * (a[:15] + 1)).ravel()[::-1], rtol=1e-6)
    np.testing.assert_allclose(top.numpy(), a[:15] + 1, rtol=1e-6)
    with pytest.raises(GpuInvalidArgument, match="held in several device buffers"):
        d[15:]


def test_out_of_device_memory_before_any_part(device_name, small_limit, monkeypatch):
    from cthreads.backend import get_queue
    from cthreads.gpu import VulkanOutOfMemory

    pool = get_queue().pool
    pool.trim()                                    # idle buffers would be dropped for room
    monkeypatch.setattr(pool, "limit", pool.live_bytes + 10_000)   # room for 2 of 5 parts
    before = pool.allocations
    with pytest.raises(VulkanOutOfMemory):
        zeros(5000)
    with pytest.raises(VulkanOutOfMemory):
        to_device(np.ones(5000, np.float32))
    assert pool.allocations == before              # no part was allocated
