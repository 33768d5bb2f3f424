"""Library calls that return a device result without waiting give their scratch buffers back to
the pool at once (``reducer._release_when_done``): a loop of such calls creates no new device
buffers, and results stay right when the next call reuses the buffers while the previous
call's work is still pending -- queue order protects them, host inputs uploaded into a reused
buffer included (``CTHREADS_SCRATCH=old``: dropped instead, the previous form)."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.backend import get_queue
from cthreads.gpu import Gpu, to_device
from cthreads.runtime import reducer


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


def _inputs(k: int, n: int) -> np.ndarray:
    return (np.arange(n, dtype=np.int64) * (k + 3) % 11 - 5).astype(np.float32)


def test_queued_device_sums_of_reused_scratch_are_right(device_name):
    n = 300_000
    hosts = [_inputs(k, n) for k in range(6)]
    devs = [to_device(h) for h in hosts]
    before = [h.copy() for h in hosts]
    # nothing waited for in between: each call may take the buffers of the one before it
    out = []
    for k in range(6):
        out.append(add.reduce(devs[k], to_device=True))
        out.append(add.reduce(hosts[k], to_device=True))       # uploaded into pooled scratch
        out.append(add.reduce(devs[k].reshape(600, 500), axis=1))
    for k in range(6):
        want = float(hosts[k].astype(np.float64).sum())     # small integers: exact
        assert float(out[3 * k].numpy()) == want
        assert float(out[3 * k + 1].numpy()) == want
        np.testing.assert_array_equal(
            out[3 * k + 2].numpy(), hosts[k].reshape(600, 500).astype(np.float64).sum(axis=1))
        np.testing.assert_array_equal(hosts[k], before[k])  # the inputs never change
        np.testing.assert_array_equal(devs[k].numpy(), before[k])


def test_queued_integer_sums_then_numbers(device_name):
    xs = [np.arange(k, k + 70_000, dtype=np.int32) % 97 for k in range(4)]
    out = [iadd.reduce(x, to_device=True) for x in xs]
    numbers = [iadd.reduce(x) for x in xs]
    for x, o, v in zip(xs, out, numbers):
        assert int(o.numpy()) == int(x.astype(np.int64).sum()) == v


def test_a_loop_of_device_sums_creates_no_buffers(device_name):
    if reducer.scratch_form() == "old":
        pytest.skip("CTHREADS_SCRATCH=old drops pending scratch (the previous form)")
    d = to_device(_inputs(1, 1 << 18))
    pool = get_queue().pool
    held = None
    for _ in range(3):                         # compile, fill the pool
        held = add.reduce(d, to_device=True)
    held.numpy()
    made = pool.allocations
    for _ in range(6):
        held = add.reduce(d, to_device=True)   # the previous result dropped here
    assert float(held.numpy()) == float(_inputs(1, 1 << 18).astype(np.float64).sum())
    assert pool.allocations == made


def test_staged_uniform_bytes_never_overwrite_a_pending_upload(device_name):
    """A sort of a host array gives its upload back while its dispatches are still in the open
    batch; the flush that submits them may need a new buffer for the batch's staged uniform
    bytes (written right before the submission): that buffer must not be the upload, which
    the submission still reads (it was: a 2-element int64 sort returned other words)."""
    from cthreads.gpu import sort
    queue = get_queue()
    for k in range(12):
        x = (np.arange(1 + k % 3, dtype=np.int64) * 37 % 11 - 5) * (k + 1)
        queue._staging = None                   # the next flush takes a new staging buffer
        np.testing.assert_array_equal(sort(x), np.sort(x, kind="stable"))
