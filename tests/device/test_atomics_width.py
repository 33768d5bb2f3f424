"""Atomics on int64 lists: a plain ``list[int]`` given an int64 array (and ``list[int64]``)
uses 64-bit atomics where the device has them (``shader-int64-atomic-all-ops``: lavapipe and
NVIDIA drivers do); on a device without them the launch raises ``GpuInvalidArgument`` naming
the int32 array to pass and the kernel's line, and leaves every list as it was. Results are
checked against numpy or against properties that hold in every order of the threads."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.backend import device as dev
from cthreads.gpu import (BlockIdx, GlobalIdx, Gpu, GpuInvalidArgument, ThreadIdx, atomic_add,
                          atomic_compare_exchange, atomic_exchange, atomic_max, atomic_min,
                          atomic_sub, gpu, int32, int64, shared)
from cthreads.sync import __sync_threads

ATOMIC64 = "shader-int64-atomic-all-ops"


def weighted_hist(n: int, keys: list[int], weights: list[int], bins: list[int]) -> None:
    i = GlobalIdx.x
    if i < n:
        atomic_add(bins, keys[i] % len(bins), weights[i])


def counts(x: list[float], hist: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        atomic_add(hist, int32(x[i] * 4.0) % 4, 1)


@Gpu.func
def bump(h: list[int], k: int, by: int) -> None:
    atomic_add(h, k, by)


def hist_via_function(keys: list[int], h: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(keys):
        bump(h, keys[i] % len(h), keys[i])


@Gpu
def every_op(v: list[int64], x: list[int64], old: list[int64]) -> None:
    i = GlobalIdx.x
    if i >= len(v):
        return
    old[6 * i] = atomic_add(x, 0, v[i])
    old[6 * i + 1] = atomic_sub(x, 1, v[i])
    old[6 * i + 2] = atomic_min(x, 2, v[i])
    old[6 * i + 3] = atomic_max(x, 3, v[i])
    old[6 * i + 4] = atomic_exchange(x, 4, v[i])
    old[6 * i + 5] = atomic_compare_exchange(x, 5, -1, v[i])


@Gpu
def block_totals(x: list[int], out: list[int]) -> None:
    acc: list[int] = shared(2)
    i = GlobalIdx.x
    if i < len(x):
        atomic_add(acc, 0, x[i])
        atomic_max(acc, 1, x[i])
    __sync_threads()
    if ThreadIdx.x == 0:
        out[2 * BlockIdx.x] = acc[0]
        out[2 * BlockIdx.x + 1] = acc[1]


@pytest.fixture
def has_atomic64(device_name):
    if dev.get_context().missing([ATOMIC64]):
        pytest.skip(f"{device_name} has no 64-bit atomics (the refusal is tested below)")


@pytest.mark.parametrize("n", [100, 20_000])        # one index per invocation, and several
def test_atomic_add_on_a_plain_int_list_given_int64_arrays(has_atomic64, n):
    rng = np.random.default_rng(21)
    keys = rng.integers(0, 2**40, n, dtype=np.int64)
    weights = rng.integers(-2**40, 2**40, n, dtype=np.int64)
    bins = np.zeros(7, np.int64)
    gpu(Gpu(weighted_hist), n, keys, weights, bins).join()
    want = np.zeros(7, np.int64)
    np.add.at(want, keys % 7, weights)
    np.testing.assert_array_equal(bins, want)
    assert np.abs(want).max() > 2**31                 # the sums need 64 bits


def test_every_atomic_op_on_int64_values_beyond_32_bits(has_atomic64):
    rng = np.random.default_rng(5)
    v = rng.choice(np.arange(-2**45, 2**45, 2**20 + 1, dtype=np.int64), 300, replace=False)
    x = np.array([0, 0, 2**50, -2**50, 7, -1], np.int64)
    start = x.copy()
    old = np.zeros(6 * v.size, np.int64)
    gpu(every_op, v, x, old).join()
    old = old.reshape(-1, 6)
    assert x[0] == v.sum() and x[1] == -v.sum()
    assert x[2] == min(2**50, v.min()) and x[3] == max(-2**50, v.max())
    # each thread saw the element as some other thread had left it: the values seen and the
    # final value are the start and the values stored, in some order
    for col, step in ((0, v), (1, -v)):
        seen = np.sort(np.append(old[:, col], x[col]))
        np.testing.assert_array_equal(seen, np.sort(np.append(old[:, col] + step, start[col])))
    np.testing.assert_array_equal(np.sort(np.append(old[:, 4], x[4])),
                                  np.sort(np.append(v, start[4])))
    # compare_exchange from -1: exactly one thread wins, the others see the winner's value
    winners = np.flatnonzero(old[:, 5] == -1)
    assert winners.size == 1 and x[5] == v[winners[0]]
    assert (np.delete(old[:, 5], winners) == x[5]).all()


def test_int64_atomics_on_a_shared_array(has_atomic64):
    x = (np.arange(256, dtype=np.int64) - 100) * 2**35
    out = np.zeros(8, np.int64)
    gpu(block_totals, x, out).join()
    blocks = x.reshape(4, 64)
    # shared(2) starts at zeros, as in Python: the max of a block of negatives is 0
    want = np.stack([blocks.sum(1), np.maximum(blocks.max(1), 0)], 1).ravel()
    np.testing.assert_array_equal(out, want)
    out32 = np.zeros(8, np.int32)
    gpu(block_totals, np.arange(256, dtype=np.int32), out32).join()   # the int32 launch
    b32 = np.arange(256).reshape(4, 64)
    np.testing.assert_array_equal(out32, np.stack([b32.sum(1), b32.max(1)], 1).ravel())


def test_without_64_bit_atomics_the_launch_names_the_int32_array(device_name):
    kernel = Gpu(weighted_hist)       # a kernel of its own, not set up on this device yet
    keys = np.arange(10, dtype=np.int64)
    weights = np.full(10, 3, np.int64)
    bins = np.full(4, 5, np.int64)
    with config.override(hide_features=(ATOMIC64,)):
        with pytest.raises(GpuInvalidArgument) as info:
            gpu(kernel, 10, keys, weights, bins).join()
    msg = str(info.value)
    assert ATOMIC64 in msg and device_name in msg, msg
    assert "'bins'" in msg and "np.zeros(n, np.int32)" in msg, msg
    assert "'bins: list[int32]'" in msg and "'keys', 'weights'" in msg, msg
    assert f'File "{__file__}"' in msg and "atomic_add(bins, keys[i] % len(bins)" in msg, msg
    np.testing.assert_array_equal(bins, [5, 5, 5, 5])
    np.testing.assert_array_equal(keys, np.arange(10))
    np.testing.assert_array_equal(weights, np.full(10, 3))
    # what the message says works: int32 arrays for the plain list[int] parameters
    bins32 = np.zeros(4, np.int32)
    with config.override(hide_features=(ATOMIC64,)):
        gpu(kernel, 10, keys.astype(np.int32), weights.astype(np.int32), bins32).join()
    np.testing.assert_array_equal(bins32, np.bincount(np.arange(10) % 4, minlength=4) * 3)


def test_without_64_bit_atomics_a_kernel_with_one_int_list(device_name):
    kernel = Gpu(counts)
    hist = np.zeros(4, np.int64)
    x = np.array([0.1, 0.5, 0.6, 0.9])
    with config.override(hide_features=(ATOMIC64,)):
        with pytest.raises(GpuInvalidArgument) as info:
            gpu(kernel, x, hist).join()
    msg = str(info.value)
    assert "'hist'" in msg and "np.zeros(n, np.int32)" in msg and "take one width" not in msg
    assert hist.tolist() == [0, 0, 0, 0] and x.tolist() == [0.1, 0.5, 0.6, 0.9]


def test_int64_atomics_in_a_device_function(device_name):
    keys = np.arange(1, 101, dtype=np.int64) << 33
    h = np.zeros(3, np.int64)
    want = np.zeros(3, np.int64)
    np.add.at(want, keys % 3, keys)
    if not dev.get_context().missing([ATOMIC64]):
        gpu(Gpu(hist_via_function), keys, h).join()
        np.testing.assert_array_equal(h, want)
    h[:] = 0
    with config.override(hide_features=(ATOMIC64,)):
        with pytest.raises(GpuInvalidArgument) as info:
            gpu(Gpu(hist_via_function), keys, h).join()
    msg = str(info.value)
    assert "'h'" in msg and "in bump" in msg and "atomic_add(h, k, by)" in msg, msg
    assert h.tolist() == [0, 0, 0]
