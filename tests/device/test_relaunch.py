"""Repeated launches on arena lists (cthreads/runtime/relaunch.py): a repeat checks only what can have
changed, and every change of the lists, the arena, the device or the kernel's runtimes is
seen; results against numpy, refusals with the caller's data unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import (GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuIndexError,
                          GpuInvalidArgument, GpuUseAfterDestroy, atomic_add, gpu, shutdown)
from cthreads.gpu import compile as compile_kernels

from .kernels import saxpy


@Gpu
def scale_rows(w: int, h: int, a: float, m: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        m[y, x] = a * m[y, x]


def _memo_used(kernel) -> bool:
    return kernel.memo_slot.memo is not None


def test_repeats_see_each_scalar_and_match_numpy(device_name):
    rng = np.random.default_rng(3)
    x = rng.random(1000).astype(np.float32)
    y = rng.random(1000).astype(np.float32)
    want = y.copy()
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for k in range(20):
            gpu(saxpy, 1000 - k, float(k) * 0.25, x, y)
            want[:1000 - k] += np.float32(k * 0.25) * x[:1000 - k]
            assert _memo_used(saxpy)
        arena.sync("y")
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_a_bad_scalar_on_a_repeat_is_refused_with_the_data_unchanged(device_name):
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        gpu(saxpy, 64, 1.0, x, y).join()
        with pytest.raises(GpuArgumentTypeError, match="'a'"):
            gpu(saxpy, 64, "2", x, y)
        with pytest.raises(GpuInvalidArgument, match="'n'"):
            gpu(saxpy, 2**40, 1.0, x, y)
        gpu(saxpy, 64, 1.0, x, y).join()
    assert np.array_equal(y, np.full(64, 2.0, np.float32))


def test_rebinding_resizing_and_releasing_are_seen(device_name):
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    lst = [0.0] * 64
    with GpuArena() as arena:
        arena.bind(x=x, y=y, lst=lst)
        gpu(saxpy, 64, 1.0, x, y).join()
        y[:] = 10.0                     # a host edit, then a re-bind uploads it
        arena.bind(y=y)
        gpu(saxpy, 64, 1.0, x, y).join()
        gpu(saxpy, 64, 1.0, x, lst).join()
        lst.append(0.0)                 # a bound list that changed length
        with pytest.raises(GpuInvalidArgument, match="changed length"):
            gpu(saxpy, 64, 1.0, x, lst)
    assert np.array_equal(y, np.full(64, 11.0, np.float32))
    assert lst[:64] == [1.0] * 64
    # released: the same objects are ordinary lists again (uploaded, written back)
    y2 = y.copy()
    gpu(saxpy, 64, 1.0, x, y).join()
    assert np.array_equal(y, y2 + 1.0)


def test_a_new_arena_for_the_same_arrays(device_name):
    x = np.ones(32, np.float32)
    y = np.zeros(32, np.float32)
    for k in range(3):
        with GpuArena() as arena:
            arena.bind(x=x, y=y)
            gpu(saxpy, 32, 2.0, x, y)
            gpu(saxpy, 32, 2.0, x, y).join()
    assert np.array_equal(y, np.full(32, 12.0, np.float32))


def test_n_d_repeats_and_a_changed_launch_shape(device_name):
    m = np.ones((6, 10), np.float32)
    with GpuArena() as arena:
        arena.bind(m=m)
        for _ in range(3):
            gpu(scale_rows, 10, 6, 2.0, m, threads=(10, 6))
        gpu(scale_rows, 10, 3, 0.5, m, threads=(10, 3)).join()   # half the rows
        arena.sync("m")
    want = np.full((6, 10), 8.0, np.float32)
    want[:3] = 4.0
    assert np.array_equal(m, want)


def test_recompiled_kernels_and_shutdown_are_seen(device_name):
    x = np.ones(16, np.float32)
    y = np.zeros(16, np.float32)
    arena = GpuArena()
    arena.bind(x=x, y=y)
    gpu(saxpy, 16, 1.0, x, y).join()
    compile_kernels(force=True)         # new runtimes: the repeat takes the full path
    gpu(saxpy, 16, 1.0, x, y).join()
    arena.sync("y")
    assert np.array_equal(y, np.full(16, 2.0, np.float32))
    shutdown()
    with pytest.raises(GpuUseAfterDestroy, match="shutdown"):
        arena.sync()
    gpu(saxpy, 16, 1.0, x, y).join()    # ordinary arrays again, on a new device
    assert np.array_equal(y, np.full(16, 3.0, np.float32))
    arena.release()


def test_the_memo_keeps_no_caller_data_alive(device_name):
    import gc
    import weakref

    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    arena = GpuArena()
    arena.bind(x=x, y=y)
    gpu(saxpy, 64, 1.0, x, y).join()
    assert _memo_used(saxpy)
    gone = weakref.ref(y)
    arena.release()
    del arena, x, y
    gc.collect()
    assert gone() is None


@Gpu
def shift_add(n: int, off: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i + off] = y[i + off] + x[i]


@Gpu
def count_into(n: int, data: list[int], bins: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        atomic_add(bins, data[i], 1)


def test_a_repeat_checks_bounds_with_its_own_scalars(device_name):
    x = np.ones(16, np.float32)
    y = np.zeros(16, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        gpu(shift_add, 8, 0, x, y).join()
        assert _memo_used(shift_add)
        with pytest.raises(GpuIndexError):
            gpu(shift_add, 8, 12, x, y).join()     # y[12 + 4] .. y[12 + 7] are past the end
        gpu(shift_add, 8, 8, x, y).join()
        arena.sync("y")
    # the out-of-range writes were skipped, the in-range ones of that launch (y[12:16]) made,
    # as docs/language.md ("Bounds checks") says
    want = np.ones(16, np.float32)
    want[12:] = 2.0
    assert np.array_equal(y, want)


def test_repeated_atomic_launches_count_every_value(device_name):
    data = np.random.default_rng(4).integers(0, 8, 5000).astype(np.int32)
    bins = np.zeros(8, np.int32)
    with GpuArena() as arena:
        arena.bind(data=data, bins=bins)
        for _ in range(4):
            gpu(count_into, 5000, data, bins)
        arena.sync("bins")
    assert np.array_equal(bins, 4 * np.bincount(data, minlength=8))


def test_forget_runtimes_drops_the_memo_and_the_next_launch_makes_both_again(device_name):
    x = np.arange(64, dtype=np.float32)
    y = np.ones(64, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        gpu(saxpy, 64, 2.0, x, y)
        rt = saxpy.runtime_for()
        assert _memo_used(saxpy) and saxpy.memo_slot.memo.rt is rt
        saxpy.forget_runtimes()
        assert not _memo_used(saxpy)
        gpu(saxpy, 64, 2.0, x, y)
        assert _memo_used(saxpy) and saxpy.memo_slot.memo.rt is not rt
        assert saxpy.runtime_for() is saxpy.memo_slot.memo.rt
        gpu(saxpy, 64, 2.0, x, y).join()
        arena.sync("y")
    np.testing.assert_allclose(y, 1.0 + 3 * 2.0 * np.arange(64, dtype=np.float32))  # 3 launches
