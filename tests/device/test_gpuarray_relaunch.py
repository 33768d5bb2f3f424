"""Repeated launches on GpuArrays (cthreads/runtime/relaunch.py): a loop that swaps its arrays
each step (as a Jacobi solver does) repeats through the kernel's memo -- the full argument
checks run once -- and every change that matters is still seen: another dtype, shape or
device, a shutdown, the same array read and written. Results against numpy; refusals with the
arrays unchanged."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from cthreads.gpu import (GlobalIdx, Gpu, GpuArena, GpuIndexError, GpuInvalidArgument,
                          GpuUseAfterDestroy, gpu, prepare, shutdown, to_device, zeros)
from cthreads.runtime import args as launch_args
from tests.device.func_kernels import histogram, tile_sums
from tests.device.kernels import saxpy


@Gpu
def relax(n: int, src: list[float], dst: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    if i == 0 or i == n - 1:
        dst[i] = src[i]
    else:
        dst[i] = 0.5 * (src[i - 1] + src[i + 1])


@Gpu
def relax_2d(src: list[list[float]], dst: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    h: int = src.shape[0]
    w: int = src.shape[1]
    if y >= h or x >= w:
        return
    if x == 0 or y == 0 or x == w - 1 or y == h - 1:
        dst[y, x] = src[y, x]
    else:
        dst[y, x] = 0.25 * (src[y - 1, x] + src[y + 1, x] + src[y, x - 1] + src[y, x + 1])


@Gpu
def shifted(k: int, src: list[float], dst: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(dst):
        dst[i] = src[i + k]


@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


def _relax_numpy(u):
    out = u.copy()
    out[1:-1] = u.dtype.type(0.5) * (u[:-2] + u[2:])
    return out


def _relax_2d_numpy(u):
    out = u.copy()
    out[1:-1, 1:-1] = u.dtype.type(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                            + u[1:-1, 2:])
    return out


@pytest.fixture
def full_checks(monkeypatch):
    """The number of launches that took gpu()'s full path (checked every argument)."""
    calls = []
    real = launch_args.check_args

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(launch_args, "check_args", spy)
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_swapped_arrays_repeat_and_match_numpy(device_name, full_checks, dtype):
    n, steps = 301, 40
    u0 = np.random.default_rng(1).standard_normal(n).astype(dtype)
    a, b = to_device(u0), zeros(n, dtype)
    want = u0.copy()
    for _ in range(steps):
        gpu(relax, n, a, b)
        a, b = b, a
        want = _relax_numpy(want)
    assert len(full_checks) == 1              # the 39 repeats took the memo
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a.numpy(), want, rtol=rtol, atol=rtol)


def test_swapped_2d_arrays_repeat_and_a_new_shape_is_seen(device_name, full_checks):
    u0 = np.random.default_rng(2).random((13, 21)).astype(np.float32)
    a, b = to_device(u0), zeros(u0.shape)
    want = u0.copy()
    for _ in range(10):
        gpu(relax_2d, a, b, threads=(21, 13))
        a, b = b, a
        want = _relax_2d_numpy(want)
    assert len(full_checks) == 1
    np.testing.assert_allclose(a.numpy(), want, rtol=1e-5)
    # another shape (the shape rides in the uniform): the full path, then repeats again
    v0 = np.random.default_rng(3).random((9, 30)).astype(np.float32)
    c, d = to_device(v0), zeros(v0.shape)
    want = v0.copy()
    for _ in range(6):
        gpu(relax_2d, c, d, threads=(30, 9))
        c, d = d, c
        want = _relax_2d_numpy(want)
    assert len(full_checks) == 2
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-5)


def test_widths_alternate_between_float64_and_float32_arrays(device_name):
    x64, x32 = np.arange(50, dtype=np.float64) / 3, np.arange(50, dtype=np.float32) / 3
    y64, y32 = to_device(np.ones(50)), to_device(np.ones(50, np.float32))
    xd64, xd32 = to_device(x64), to_device(x32)
    for _ in range(5):
        gpu(saxpy, 50, 0.1, xd64, y64)
        gpu(saxpy, 50, 0.1, xd32, y32)
    want64, want32 = np.ones(50), np.ones(50, np.float32)
    for _ in range(5):
        want64 = 0.1 * x64 + want64
        want32 = np.float32(0.1) * x32 + want32
    np.testing.assert_allclose(y64.numpy(), want64, rtol=1e-14)
    np.testing.assert_allclose(y32.numpy(), want32, rtol=1e-5)
    assert y64.numpy().dtype == np.float64


def test_repeats_mixing_an_arena_array_and_gpuarrays(device_name, full_checks):
    x = np.linspace(0, 1, 200, dtype=np.float32)
    ya, yb = to_device(np.zeros(200, np.float32)), to_device(np.ones(200, np.float32))
    with GpuArena() as arena:
        arena.bind(x=x)
        for k in range(8):
            gpu(saxpy, 200, 1.0, x, ya if k % 2 == 0 else yb)
    assert len(full_checks) == 2              # each GpuArray's first launch checks it fully
    np.testing.assert_allclose(ya.numpy(), 4 * x, rtol=1e-6)
    np.testing.assert_allclose(yb.numpy(), 1 + 4 * x, rtol=1e-6)


def test_numpy_reduce_and_simulate_see_the_repeats(device_name):
    x = to_device(np.full(128, 2.0, np.float32))
    y = zeros(128)
    for _ in range(10):
        gpu(saxpy, 128, 0.5, x, y)                # never joined
    assert fadd.reduce(y) == 128 * 10.0
    saxpy.simulate(128, 1.0, x, y)                # on a host copy, written back
    gpu(saxpy, 128, 0.5, x, y)
    np.testing.assert_array_equal(y.numpy(), np.full(128, 13.0, np.float32))


def test_a_bounds_failure_on_a_repeat_is_reported_by_numpy(device_name):
    src = to_device(np.arange(64, dtype=np.float32))
    dst = zeros(32)
    gpu(shifted, 0, src, dst).join()
    gpu(shifted, 16, src, dst)                    # a repeat, in range
    np.testing.assert_array_equal(dst.numpy(), np.arange(16, 48, dtype=np.float32))
    gpu(shifted, 40, src, dst)                    # a repeat that reads past src
    with pytest.raises(GpuIndexError, match="'src' of length 64"):
        dst.numpy()


def test_same_array_read_and_written_on_a_repeat_is_refused(device_name):
    x, y = to_device(np.ones(32, np.float32)), to_device(np.zeros(32, np.float32))
    gpu(saxpy, 32, 1.0, x, y).join()
    for same in (x, y):
        with pytest.raises(GpuInvalidArgument, match=r"parameters 'x' and 'y': the same "
                           r"GpuArray is passed for 'x'"):
            gpu(saxpy, 32, 1.0, same, same)
    gpu(saxpy, 32, 1.0, x, y)                     # the memo still repeats afterwards
    np.testing.assert_array_equal(x.numpy(), np.ones(32, np.float32))
    np.testing.assert_array_equal(y.numpy(), np.full(32, 2.0, np.float32))


def test_another_dtype_or_shape_on_a_repeat_is_refused(device_name):
    x, y = to_device(np.ones(16, np.float32)), zeros(16)
    gpu(saxpy, 16, 1.0, x, y).join()
    ints = to_device(np.arange(16, dtype=np.int32))
    with pytest.raises(GpuInvalidArgument, match=r"'x' is a GpuArray of shape \(16,\) and "
                       "dtype int32"):
        gpu(saxpy, 16, 1.0, ints, y)
    grid = to_device(np.ones((4, 4), np.float32))
    with pytest.raises(GpuInvalidArgument, match=r"'y' is a 2-D GpuArray of shape \(4, 4\)"):
        gpu(saxpy, 16, 1.0, x, grid)
    np.testing.assert_array_equal(y.numpy(), np.ones(16, np.float32))
    np.testing.assert_array_equal(ints.numpy(), np.arange(16, dtype=np.int32))
    np.testing.assert_array_equal(grid.numpy(), np.ones((4, 4), np.float32))


def test_shutdown_between_repeats(device_name):
    x, y = to_device(np.ones(64, np.float32)), zeros(64)
    gpu(saxpy, 64, 1.0, x, y).join()
    gpu(saxpy, 64, 1.0, x, y).join()
    shutdown()
    with pytest.raises(GpuUseAfterDestroy, match="device this GpuArray lived on"):
        gpu(saxpy, 64, 1.0, x, y)
    fresh = to_device(np.ones(64, np.float32))    # a new device: launches work again
    with pytest.raises(GpuUseAfterDestroy, match="device this GpuArray lived on"):
        gpu(saxpy, 64, 1.0, fresh, y)             # y is still of the old device
    y2 = zeros(64)
    for _ in range(3):
        gpu(saxpy, 64, 1.0, fresh, y2)
    np.testing.assert_array_equal(y2.numpy(), np.full(64, 3.0, np.float32))


def test_another_device_between_repeats(device_name, monkeypatch):
    from cthreads.gpu import use_device

    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    try:
        x, y = to_device(np.ones(16, np.float32)), zeros(16)       # device 0
        gpu(saxpy, 16, 1.0, x, y).join()
        x1 = to_device(np.arange(16, dtype=np.float32), device=1)
        with pytest.raises(GpuInvalidArgument, match=r"this GpuArray lives on device 1 .*but "
                           r"the launch runs on device 0"):
            gpu(saxpy, 16, 1.0, x1, y)
        with use_device(1):
            y1 = zeros(16)
            for _ in range(2):
                gpu(saxpy, 16, 1.0, x1, y1)
            with pytest.raises(GpuInvalidArgument, match=r"this GpuArray lives on device 0 "
                               r".*but the launch runs on device 1"):
                gpu(saxpy, 16, 1.0, x1, y)
        gpu(saxpy, 16, 1.0, x, y)
        np.testing.assert_array_equal(y.numpy(), np.full(16, 2.0, np.float32))
        np.testing.assert_array_equal(y1.numpy(), 2 * np.arange(16, dtype=np.float32))
        np.testing.assert_array_equal(x1.numpy(), np.arange(16, dtype=np.float32))
    finally:
        shutdown()


def test_the_memo_keeps_no_array_alive(device_name):
    x, y = to_device(np.ones(8, np.float32)), zeros(8)
    for _ in range(3):
        gpu(saxpy, 8, 1.0, x, y).join()
    refs = [weakref.ref(x), weakref.ref(y)]
    del x, y
    gc.collect()
    assert all(r() is None for r in refs)


def test_views_repeat_and_unaligned_or_aliased_views_are_refused(device_name, full_checks):
    host = np.arange(128, dtype=np.float32)
    base = to_device(host)
    x = to_device(np.full(64, 2.0, np.float32))
    halves = (base[:64], base[64:])               # aligned views (64 float32 = 256 bytes)
    for k in range(6):
        gpu(saxpy, 64, 1.0, x, halves[k % 2])     # the halves take turns
    assert len(full_checks) == 2                  # each view's first launch checks it
    want = host + 6.0
    np.testing.assert_array_equal(base.numpy(), want)
    with pytest.raises(GpuInvalidArgument, match="min-storage-buffer-offset-alignment"):
        gpu(saxpy, 64, 1.0, x, base[1:65])        # a repeat's shape, an unbindable offset
    with pytest.raises(GpuInvalidArgument, match="views of one GpuArray"):
        gpu(saxpy, 64, 1.0, halves[0], halves[1])  # one buffer read and written
    gpu(saxpy, 64, 1.0, x, halves[1])
    want[64:] += 2.0
    np.testing.assert_array_equal(base.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), np.full(64, 2.0, np.float32))


def test_repeats_with_atomics_shared_memory_device_functions_and_prepare(device_name,
                                                                       full_checks):
    rng = np.random.default_rng(5)
    values = [rng.integers(0, 100, 3000).astype(np.int32) for _ in range(2)]
    vs = [to_device(v) for v in values]
    h = zeros(8, dtype=np.int32)
    for k in range(6):                            # atomics through a device function
        gpu(histogram, 3000, 8, vs[k % 2], h)
    want = 3 * (np.bincount(values[0] % 8, minlength=8) + np.bincount(values[1] % 8,
                                                                        minlength=8))
    np.testing.assert_array_equal(h.numpy(), want)
    prepare()                                     # compiling again keeps the runtimes
    x0 = rng.random(192).astype(np.float32)       # whole workgroups: every tile filled
    a, b = to_device(x0), zeros(192)
    want = x0.copy()
    for _ in range(5):                            # shared() memory, swapped arrays
        gpu(tile_sums, 192, a, b)
        a, b = b, a
        out = np.empty_like(want)
        for t0 in range(0, 192, 64):              # each workgroup of 64 sums its neighbours
            seg = want[t0:t0 + 64]
            out[t0:t0 + 64] = seg + np.concatenate([[0], seg[:-1]]) + \
                np.concatenate([seg[1:], [0]])
        want = out
    np.testing.assert_allclose(a.numpy(), want, rtol=1e-5)
    assert len(full_checks) == 3      # each histogram input's first launch, tile_sums' first
