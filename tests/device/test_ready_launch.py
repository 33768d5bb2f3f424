"""Ready launches (cthreads/runtime/ready.py): a repeated resident launch reuses its bind group
and entries, keyed by the buffers it binds; each change that matters gives a new one. Every
result against numpy, launch by launch: a freed GpuArray and a new one of the same size (which
may get the same pooled buffer), arena re-binding, a different scalar every launch (signed
zeros, a NaN, an infinity, values past float32's range refused), views at other offsets, two
arrays taking turns. Runs in both forms (CTHREADS_LAUNCH_PATH=old: no ready launches)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, GpuInvalidArgument, gpu, to_device
from tests.device.kernels import saxpy

N = 64


@Gpu
def scale(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i]


@Gpu
def add_int(n: int, k: int, y: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = y[i] + k


def _new_form() -> bool:
    return config.current().launch_path != "old"


def _ready(kernel):
    memo = kernel.memo_slot.memo
    return memo.rt.ready if memo is not None else None


def _want_saxpy(a, x, y):
    return (np.float32(a) * x + y).astype(np.float32)


def test_a_freed_array_and_a_new_one_of_the_same_size():
    x_host = np.arange(N, dtype=np.float32)
    x = to_device(x_host)
    buffers = set()
    for step in range(6):
        y_host = np.full(N, float(step), np.float32)
        y = to_device(y_host)
        buffers.add(id(y._slot.pooled))
        gpu(saxpy, N, 2.0, x, y).join(download=False)     # a new array: the full checks
        gpu(saxpy, N, 2.0, x, y).join(download=False)     # its repeat
        want = _want_saxpy(2.0, x_host, _want_saxpy(2.0, x_host, y_host))
        np.testing.assert_array_equal(y.numpy(), want)
        del y                           # its buffer goes back to the pool for the next one
        gc.collect()
    if _new_form():
        assert len(_ready(saxpy)) >= 1
    assert len(buffers) < 6             # the pool handed a freed buffer to a new array


def test_arrays_taking_turns_and_views_at_other_offsets():
    host = np.arange(4 * N, dtype=np.float32)
    base = to_device(host)
    x_host = np.linspace(-1, 1, N).astype(np.float32)
    x = to_device(x_host)
    want = host.copy()
    for step in range(8):
        start = (step % 3) * N              # offsets 0, 64, 128 elements (aligned everywhere)
        gpu(saxpy, N, 0.5, x, base[start:start + N]).join(download=False)
        want[start:start + N] = _want_saxpy(0.5, x_host, want[start:start + N])
        np.testing.assert_array_equal(base.numpy(), want)
    a_host, b_host = np.ones(N, np.float32), np.zeros(N, np.float32)
    a, b = to_device(a_host), to_device(b_host)
    for _ in range(5):                      # a, b = b, a: the other array each launch
        gpu(saxpy, N, 3.0, a, b).join(download=False)
        b_host = _want_saxpy(3.0, a_host, b_host)
        a, b, a_host, b_host = b, a, b_host, a_host
    np.testing.assert_array_equal(a.numpy(), a_host)
    np.testing.assert_array_equal(b.numpy(), b_host)


def test_a_different_scalar_each_launch():
    x_host = np.linspace(0.5, 2.0, N).astype(np.float32)
    with GpuArena() as arena:
        x, y = x_host.copy(), np.ones(N, np.float32)
        arena.bind(x=x, y=y)
        values = [2.0, -0.0, 0.0, -0.0, 4.0, float("inf"), -3.5, float("nan"), 0.25, -0.0,
                  3.4e38, -1e-30]
        for a in values:
            gpu(scale, N, a, x, y).join(download=False)
            arena.sync("y")
            with np.errstate(all="ignore"):            # 3.4e38 * 2: inf, as on the device
                want = (np.float32(a) * x_host).astype(np.float32)
            np.testing.assert_array_equal(y, want)
            # the sign of zero reaches the device (-0.0 == 0.0 for numpy's comparison)
            np.testing.assert_array_equal(np.signbit(y), np.signbit(want))
        if _new_form():
            assert len(_ready(scale)) >= 1      # the repeats took ready launches
        before = y.copy()
        with pytest.raises(GpuInvalidArgument):
            gpu(scale, N, 1e300, x, y)        # past float32: refused as on the full path
        arena.sync("y")
        np.testing.assert_array_equal(y, before)
        ints = np.zeros(N, np.int32)
        arena.bind(k=ints)
        total = np.zeros(N, np.int64)
        for k in (1, -7, 2**31 - 1, -(2**31), 5, 0):
            gpu(add_int, N, k, ints).join(download=False)
            total = (total + k + 2**31) % 2**32 - 2**31      # int32 wraps
            arena.sync("k")
            np.testing.assert_array_equal(ints, total.astype(np.int32))
        with pytest.raises(GpuInvalidArgument):
            gpu(add_int, N, 2**31, ints)
        with pytest.raises(GpuInvalidArgument):
            gpu(add_int, N, 1.5, ints)


def test_arena_rebinding():
    x_host = np.arange(N, dtype=np.float32)
    with GpuArena() as arena:
        x = x_host.copy()
        y = np.zeros(N, np.float32)
        arena.bind(x=x, y=y)
        for _ in range(3):
            gpu(saxpy, N, 1.0, x, y).join(download=False)
        arena.sync("y")
        np.testing.assert_array_equal(y, 3 * x_host)
        y2 = np.full(N, 10.0, np.float32)
        arena.bind(y=y2)                    # another array under the same name
        for _ in range(2):
            gpu(saxpy, N, 1.0, x, y2).join(download=False)
        arena.sync("y")
        np.testing.assert_array_equal(y2, 10 + 2 * x_host)
        x[:] = -1                           # re-bind x with new contents
        arena.bind(x=x)
        gpu(saxpy, N, 1.0, x, y2).join(download=False)
        arena.sync("y")
        np.testing.assert_array_equal(y2, 10 + 2 * x_host - 1)
    with GpuArena() as other:               # a new arena: new buffers, the same arrays
        other.bind(x=x, y=y2)
        gpu(saxpy, N, 2.0, x, y2).join()
        np.testing.assert_array_equal(y2, 10 + 2 * x_host - 3)


def test_the_form_in_force():
    x = to_device(np.ones(N, np.float32))
    y = to_device(np.zeros(N, np.float32))
    for _ in range(3):
        gpu(saxpy, N, 1.0, x, y)
    gpu(saxpy, N, 1.0, x, y).join(download=False)
    np.testing.assert_array_equal(y.numpy(), np.full(N, 4.0, np.float32))
    ready = _ready(saxpy)
    assert (ready is not None) == _new_form()


# -- spare command buffers (cthreads/backend/spare.py) ------------------------------------------

def _queue():
    from cthreads.backend import get_queue

    return get_queue()


def _encode_spare(queue) -> bool:
    """What a join does while the device works; whether a spare is now ready."""
    if queue._spare.wanted():
        queue._spare.encode_for(queue)
    return queue._spare.cb is not None


def test_a_spare_carries_each_launchs_scalars_and_data():
    x_host = np.linspace(-2, 2, N).astype(np.float32)
    x, y = to_device(x_host), to_device(np.zeros(N, np.float32))
    queue = _queue()
    used = 0
    spare_ready = False
    for a in (1.0, 1.0, 2.5, -0.0, 7.0, 7.0, -1.5):
        job = gpu(scale, N, a, x, y)
        if spare_ready:
            used += queue._spare.cb is None          # the launch submitted it
        spare_ready = _encode_spare(queue)           # as the join does while the device works
        job.join(download=False)
        want = (np.float32(a) * x_host).astype(np.float32)
        got = y.numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    gpu(scale, N, 3.0, x, y).join(download=False)
    gpu(scale, N, 3.0, x, y).join(download=False)
    assert _encode_spare(queue) == _new_form()
    x_host = x_host[::-1].copy()
    x.set(x_host)                       # new data in a bound buffer, then the spare
    job = gpu(scale, N, 3.0, x, y)
    taken = queue._spare.cb is None     # (its join may encode the next spare)
    job.join(download=False)
    np.testing.assert_array_equal(y.numpy(), (np.float32(3.0) * x_host).astype(np.float32))
    if _new_form():
        assert used >= 4 and taken


def test_a_spare_after_arena_rebinding_and_a_freed_array():
    x_host = np.arange(N, dtype=np.float32)
    queue = _queue()
    with GpuArena() as arena:
        x, y = x_host.copy(), np.zeros(N, np.float32)
        arena.bind(x=x, y=y)
        for _ in range(3):
            gpu(saxpy, N, 1.0, x, y).join(download=False)
        assert _encode_spare(queue) == _new_form()
        x[:] = 5
        arena.bind(x=x)                 # an upload into a buffer the spare binds
        gpu(saxpy, N, 1.0, x, y).join(download=False)
        arena.sync("y")
        np.testing.assert_array_equal(y, 3 * x_host + 5)
    xd = to_device(x_host)
    for step in range(4):
        yd = to_device(np.full(N, float(step), np.float32))
        for _ in range(3):
            job = gpu(saxpy, N, 2.0, xd, yd)
            _encode_spare(queue)
            job.join(download=False)
        np.testing.assert_array_equal(yd.numpy(), step + 6 * x_host)
        del yd
        gc.collect()


def test_alternating_launches_make_no_spare():
    x, y = to_device(np.ones(N, np.float32)), to_device(np.zeros(N, np.float32))
    queue = _queue()
    for k in range(6):
        if k % 2:
            gpu(saxpy, N, 1.0, x, y).join(download=False)
        else:
            gpu(scale, N, 2.0, x, y).join(download=False)
        assert not queue._spare.wanted()
    np.testing.assert_array_equal(y.numpy(), np.full(N, 3.0, np.float32))


def test_a_dropped_buffer_takes_the_spare_with_it():
    big = (1 << 20) // 4                    # 1 MiB: the pool lets buffers this large go
    x_host = np.ones(big, np.float32)
    x, y = to_device(x_host), to_device(np.zeros(big, np.float32))
    queue = _queue()
    for _ in range(2):
        gpu(saxpy, big, 1.0, x, y).join(download=False)
    job = gpu(saxpy, big, 1.0, x, y)
    made = _encode_spare(queue)
    job.join(download=False)
    np.testing.assert_array_equal(y.numpy(), np.full(big, 3.0, np.float32))
    assert made == _new_form()
    del x, y, job
    gc.collect()
    queue.pool.trim()                       # the buffers are dropped: so is the spare
    # gone now, or at the next submission when another thread held the queue's lock
    assert (queue._spare.cb is None or queue._spare.stale) and not queue._spare.wanted()
    x, y = to_device(x_host), to_device(np.full(big, 2.0, np.float32))
    for _ in range(3):
        gpu(saxpy, big, 1.0, x, y).join(download=False)
    np.testing.assert_array_equal(y.numpy(), np.full(big, 5.0, np.float32))
