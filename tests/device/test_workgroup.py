"""Barriers, shared memory, atomics and bounds checks on the device."""

from __future__ import annotations

import inspect
import random

import numpy as np
import pytest

from cthreads.gpu import (Gpu, GpuIndexError, GlobalIdx, GridDim, ThreadIdx, BlockIdx, gpu, shared,
                          atomic_add, atomic_sub, atomic_min, atomic_max, atomic_exchange,
                          atomic_compare_exchange)
from cthreads.sync import Barrier, __sync_threads

TILE = 64


@Gpu
def block_sums(n: int, x: list[float], out: list[float]) -> None:
    tile: list[float] = shared(TILE)
    i = GlobalIdx.x
    t = ThreadIdx.x
    if i >= n:                       # early return before the barriers: restructured
        return
    tile[t] = x[i]
    __sync_threads()
    s = 32
    while s > 0:
        if t < s and i + s < n:
            tile[t] += tile[t + s]
        Barrier.arrive_and_wait()
        s //= 2
    if t == 0:
        out[BlockIdx.x] = tile[0]


def test_shared_tree_reduction_with_early_return():
    n = 64 * 5 + 17
    x = [float(k % 13) - 6.0 for k in range(n)]
    out = [0.0] * 6
    gpu(block_sums, n, x, out).join()
    expect = [sum(x[b * 64:min(n, b * 64 + 64)]) for b in range(6)]
    assert out == expect


@Gpu
def histogram(n: int, data: list[int], bins: list[int]) -> None:
    i = GlobalIdx.x
    if i < n:
        atomic_add(bins, data[i], 1)


def test_histogram_matches_bincount():
    rng = random.Random(5)
    data = [rng.randrange(10) for _ in range(5000)]
    bins = [0] * 10
    gpu(histogram, len(data), data, bins).join()
    assert bins == np.bincount(data, minlength=10).tolist()


@Gpu
def float_total(n: int, x: list[float], total: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        atomic_add(total, 0, x[i])


def test_float_atomic_add():
    x = [0.5] * 1000
    total = [0.0]
    gpu(float_total, 1000, x, total).join()
    assert total == [500.0]
    assert "shader-float32-atomic" in float_total.program.needs_features


@Gpu
def atomics_mix(n: int, v: list[int], old: list[int]) -> None:
    i = GlobalIdx.x
    if i < n:
        atomic_min(v, 0, 100 - i)
        atomic_max(v, 1, i * 3)
        atomic_sub(v, 2, 2)
        old[i] = atomic_compare_exchange(v, 3, 0, i + 1)   # exactly one thread wins
        atomic_exchange(v, 4, 7)
        v[5] = 1                         # ordinary store to an atomic list


def test_atomic_operations():
    n = 200
    v = [1000, -5, 0, 0, 0, 0]
    old = [0] * n
    gpu(atomics_mix, n, v, old).join()
    assert v[0] == 100 - (n - 1) and v[1] == 3 * (n - 1) and v[2] == -2 * n
    assert v[4] == 7 and v[5] == 1
    winners = [k for k in range(n) if old[k] == 0]
    assert len(winners) == 1 and v[3] == winners[0] + 1


@Gpu
def shared_counts(n: int, data: list[int], out: list[int]) -> None:
    counts: list[int] = shared(4)
    i = GlobalIdx.x
    if i < n:
        atomic_add(counts, data[i] % 4, 1)
    __sync_threads()
    if ThreadIdx.x < 4:
        atomic_add(out, ThreadIdx.x, counts[ThreadIdx.x])


def test_shared_int_atomics():
    data = list(range(300))
    out = [0] * 4
    gpu(shared_counts, len(data), data, out).join()
    assert out == [75, 75, 75, 75]
    assert shared_counts.program.workgroup_bytes == 16


def test_out_of_range_write_is_caught_with_its_line():
    @Gpu
    def shift(n: int, x: list[float], y: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            y[i + 1] = x[i]
    bad_line = inspect.currentframe().f_lineno - 1
    x = [1.0, 2.0, 3.0]
    y = [0.0, 0.0, 0.0]
    with pytest.raises(GpuIndexError) as info:
        gpu(shift, 3, x, y).join()
    text = str(info.value)
    assert "shift" in text and str(bad_line) in text and "y" in text and "3" in text
    assert y == [0.0, 0.0, 0.0]        # nothing written back after the failure
    check = shift.program.checks
    assert any(c.lineno == bad_line and c.list_name == "y" for c in check)


def test_negative_index_is_caught():
    @Gpu
    def back(n: int, x: list[int]) -> None:
        i = GlobalIdx.x
        if i < n:
            x[i - 1] = 5
    x = [0, 0]
    with pytest.raises(GpuIndexError, match="-1"):
        gpu(back, 2, x).join()


def test_boundscheck_false_has_no_checks():
    @Gpu(boundscheck=False)
    def fast(n: int, x: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            x[i] = x[i] * 2.0
    assert fast.program.status_binding is None and fast.program.checks == ()
    assert "ct_status" not in fast.wgsl
    x = [1.0, 2.0]
    gpu(fast, 2, x).join()
    assert x == [2.0, 4.0]


def test_literal_negative_index_counts_from_the_end():
    @Gpu
    def last(n: int, x: list[int]) -> None:
        if GlobalIdx.x == 0:
            x[-1] = len(x)
    x = [0, 0, 0, 0]
    gpu(last, 1, x).join()
    assert x == [0, 0, 0, 4]


def test_float_atomic_on_shared_is_a_located_error():
    import inspect

    from cthreads.gpu import GpuKernelTypeError

    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def shared_float_atomic(n: int, x: list[float], out: list[float]) -> None:
            acc: list[float] = shared(1)
            if GlobalIdx.x < n:
                atomic_add(acc, 0, x[GlobalIdx.x])
    line = inspect.currentframe().f_lineno - 1        # the atomic_add line just above
    assert f"line {line}" in str(info.value) and "shared list[float]" in str(info.value)


def test_grid_dim_pins_workgroup_width(device_name):
    @Gpu
    def count_all(n: int, total: int, hits: list[int]) -> None:
        for k in range(GlobalIdx.x, total, GridDim.x * 64):
            atomic_add(hits, k, 1)

    assert count_all.program.fixed_workgroup_size
    hits = [0] * 1000
    gpu(count_all, 256, 1000, hits).join()
    assert hits == [1] * 1000


BIG = 16384                     # 64 KiB of floats: over lavapipe's 32 KiB and NVIDIA's 48 KiB


def test_shared_over_the_device_limit_is_located_at_decoration(device_name):
    from cthreads.gpu import GpuKernelError, init

    init()                      # with a device up, decoration knows the limit
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def too_big(out: list[float]) -> None:
            tile: list[float] = shared(BIG)
            tile[ThreadIdx.x] = 1.0
            __sync_threads()
            out[GlobalIdx.x] = tile[0]
    line = inspect.currentframe().f_lineno - 4       # the shared() line
    msg = str(info.value)
    assert f"line {line}" in msg and "65,536 bytes" in msg and "shared(BIG)" in msg
