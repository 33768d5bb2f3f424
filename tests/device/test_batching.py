"""Deferred submission: launches not joined in between share one queue submission.

Every test runs on the real device and compares with numpy or plain Python; none asserts
timings. The same scenarios run in subprocesses with ``CTHREADS_BATCH=0`` (one submission per
launch, as before batching) and with the public wgpu-py encoder (``CTHREADS_NATIVE_ENCODER=0``).
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from cthreads.gpu import GpuArena, GpuIndexError, GpuUseAfterDestroy, gpu, shutdown
from tests.conftest import run_python
from tests.device.kernels import add_one, copy_floats, saxpy


def _queue():
    from cthreads.backend import get_queue
    return get_queue()


def test_500_queued_resident_launches_one_join(device_name):
    _queued_launches(batched=_queue().batching)


def _queued_launches(batched: bool) -> None:
    n, launches = 1000, 500
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xl, yl = x.tolist(), y.tolist()
    q = _queue()
    with GpuArena() as arena:
        arena.bind(x=xl, y=yl)
        before = q.submitted
        jobs = [gpu(saxpy, n, 0.5, xl, yl) for _ in range(launches)]
        jobs[-1].join(download=False)
        submissions = q.submitted - before
        assert all(j.done() for j in jobs)
        arena.sync()
    ref = y.copy()
    for _ in range(launches):
        ref = np.float32(0.5) * x + ref
    np.testing.assert_allclose(np.array(yl, np.float32), ref, rtol=1e-5, atol=1e-5)
    if batched:
        assert submissions < launches, submissions


def test_changing_scalars_each_seen(device_name):
    n = 256
    ones = [1.0] * n
    y = [0.0] * n
    with GpuArena() as arena:
        arena.bind(x=ones, y=y)
        jobs = [gpu(saxpy, n, float(k), ones, y) for k in range(50)]     # y += k
        jobs[-1].join(download=False)
        arena.sync()
    assert y == [float(sum(range(50)))] * n


def test_changing_n_and_alternating_kernels(device_name):
    """Different grid sizes, uniform values and pipelines interleaved in the queue."""
    size = 3000
    ones = [1.0] * size
    y = [0.0] * size
    ref = np.zeros(size, np.float32)
    rng = np.random.default_rng(3)
    with GpuArena() as arena:
        arena.bind(x=ones, y=y)
        for k in range(120):
            m = int(rng.integers(1, size + 1))
            if k % 3 == 0:
                gpu(add_one, m, y)
                ref[:m] += 1
            else:
                gpu(saxpy, m, float(k % 7), ones, y)
                ref[:m] += k % 7
        arena.sync("y")
    np.testing.assert_array_equal(np.array(y, np.float32), ref)


def test_unchanged_scalars_between_other_kernels(device_name):
    """Two kernels alternating with the same scalars each: their uniforms are not rewritten."""
    n = 512
    twos = [2.0] * n
    y = [0.0] * n
    with GpuArena() as arena:
        arena.bind(x=twos, y=y)
        for _ in range(40):
            gpu(saxpy, n, 3.0, twos, y)      # y += 6
            gpu(add_one, n, y)               # y += 1
        arena.sync()
    assert y == [280.0] * n


def test_arena_writes_binds_and_syncs_between_queued_launches(device_name):
    n = 300
    y = [0.0] * n
    with GpuArena() as arena:
        arena.bind(y=y)
        for _ in range(10):
            gpu(add_one, n, y)
        arena.sync()                                  # sees all ten
        assert y == [10.0] * n
        for _ in range(5):
            gpu(add_one, n, y)
        y[:] = [100.0] * n                            # host change, then re-upload
        arena.bind(y=y)                               # ordered after the five launches
        for _ in range(7):
            gpu(add_one, n, y)
        arena.sync("y")
        assert y == [107.0] * n
        z = [float(i) for i in range(n)]
        arena.bind(z=z)                               # a new slot while launches are queued
        for _ in range(3):
            gpu(add_one, n, y)
            gpu(add_one, n, z)
        arena.sync()
    assert y == [110.0] * n
    assert z == [float(i) + 3.0 for i in range(n)]


def test_released_buffer_reused_while_launch_queued(device_name):
    """A queued launch reading a buffer that goes back to the pool and is rebound with other
    data must still read the data it was launched with."""
    n = 2048
    a = [float(i) for i in range(n)]
    d = [0.0] * n
    keep = GpuArena().bind(d=d)
    try:
        for _ in range(3):
            first = GpuArena().bind(a=a)
            gpu(add_one, n, d)                    # something in flight, so the copy may wait
            gpu(copy_floats, a, d)
            first.release()                       # a's buffer returns to the pool ...
            b = [-5.0] * n
            second = GpuArena().bind(b=b)         # ... and may be rewritten right away
            gpu(add_one, n, b)
            second.sync()
            second.release()
            assert b == [-4.0] * n
            keep.sync()
            assert d == a
    finally:
        keep.release()


def test_readback_launch_after_queued_resident_launches(device_name):
    n = 1000
    y = [0.0] * n
    out = [-1.0] * n
    with GpuArena() as arena:
        arena.bind(y=y)
        for _ in range(25):
            gpu(add_one, n, y)
        gpu(copy_floats, y, out).join()          # out is not resident: copied back at join
    assert out == [25.0] * n


def test_deadline_flusher_submits_without_join(device_name):
    q = _queue()
    n = 128
    y = [0.0] * n
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(add_one, n, y).join(download=False)
        jobs = [gpu(add_one, n, y) for _ in range(3)]
        deadline = time.monotonic() + 60           # the flusher acts in ms: room for load
        while q.pending and time.monotonic() < deadline:
            time.sleep(0.01)                      # CPU work, no join and no done()
        assert q.pending == 0
        assert all(j._seq <= q.submitted for j in jobs)
        while not jobs[-1].done() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert jobs[-1].done()
        arena.sync()
    assert y == [4.0] * n


def test_done_on_a_pending_job(device_name):
    n = 64
    x = [2.0] * n
    y = [1.0] * n
    jobs = [gpu(saxpy, n, 1.0, x, list(y)) for _ in range(5)]
    last = gpu(saxpy, n, 3.0, x, y)
    deadline = time.monotonic() + 30
    while not last.done() and time.monotonic() < deadline:
        pass
    assert last.done()
    assert y == [1.0] * n                          # nothing downloaded before join
    last.join()
    assert y == [7.0] * n
    for job in jobs:
        job.join()


def test_bounds_failure_in_a_queued_launch_is_reported(device_name):
    from tests.device.test_boundscheck import shift_right

    src = [1.0] * 40
    dst = [0.0] * 40
    y = [0.0] * 40
    with GpuArena() as arena:
        arena.bind(src=src, dst=dst, y=y)
        for _ in range(5):
            gpu(add_one, 40, y)
        gpu(shift_right, 40, src, dst)            # writes dst[40]: out of range
        for _ in range(5):
            gpu(add_one, 40, y)
        with pytest.raises(GpuIndexError, match="index 40"):
            arena.sync()
        assert dst == [0.0] * 40
        out = [0.0] * 40
        gpu(copy_floats, y, out).join()            # the launches around the failure all ran
    assert out == [10.0] * 40


def test_threads_launch_concurrently_without_joins(device_name):
    errors = []
    results = {}

    def resident(k):
        try:
            n = 500 + k
            y = [float(k)] * n
            with GpuArena() as arena:
                arena.bind(y=y)
                jobs = [gpu(add_one, n, y) for _ in range(150)]
                jobs[len(jobs) // 2].join(download=False)
                arena.sync()
            results[k] = y
        except BaseException as exc:  # reported below
            errors.append(exc)

    def plain(k):
        try:
            for r in range(40):
                x = (np.arange(96, dtype=np.float32) + k).tolist()
                y = [float(r)] * 96
                job = gpu(saxpy, 96, 2.0, x, y)
                if r % 2:
                    job.join()
                    np.testing.assert_array_equal(np.array(y, np.float32),
                                                  2 * np.array(x, np.float32) + r)
                else:
                    while not job.done():
                        pass
                    job.join()
                    assert y[0] == 2 * x[0] + r
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=resident, args=(k,)) for k in range(3)]
    threads += [threading.Thread(target=plain, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    for k in range(3):
        assert results[k] == [float(k) + 150.0] * (500 + k)


def test_shutdown_with_pending_launches(device_name):
    n = 4096
    y = [0.0] * n
    kept = [0.0] * n
    arena = GpuArena().bind(y=y)
    jobs = [gpu(add_one, n, y) for _ in range(30)]
    plain_job = gpu(add_one, n, kept)
    old = _queue()
    shutdown()                                    # pending work is submitted, then waited for
    assert old.pending == 0
    with pytest.raises(GpuUseAfterDestroy, match="shutdown"):
        arena.sync()
    with pytest.raises(GpuUseAfterDestroy, match="shutdown"):
        old.dispatch(None, None, 1)
    assert all(j.done() for j in jobs) and plain_job.done()
    for job in jobs:                              # resident results died with the device
        with pytest.raises(GpuUseAfterDestroy, match="shutdown.*resident"):
            job.join()
        assert job.join(download=False) is None
    assert y == [0.0] * n and kept == [0.0] * n
    plain_job.join()                              # saved by shutdown, written back at join
    assert kept == [1.0] * n
    arena.release()
    gpu(add_one, n, y).join()                     # a new device starts
    assert y == [1.0] * n


_SCENARIO = r'''
import json, sys
import numpy as np
from cthreads.gpu import GpuArena, gpu, shutdown
from cthreads.backend import get_queue
from tests.device.kernels import add_one, saxpy, copy_floats
out = {}
n = 777
ones = [1.0] * n
y = [0.0] * n
q = get_queue()
with GpuArena() as arena:
    arena.bind(x=ones, y=y)
    s0 = q.submitted
    jobs = [gpu(saxpy, n, float(k % 5), ones, y) for k in range(200)]
    jobs[-1].join(download=False)
    out["submissions"] = q.submitted - s0
    arena.sync()
out["y"] = y[0] if len(set(y)) == 1 else y
d = [0.0] * n
with GpuArena() as arena:
    arena.bind(y=y)
    for _ in range(20):
        gpu(add_one, n, y)
    gpu(copy_floats, y, d).join()
out["d"] = d[0] if len(set(d)) == 1 else d
out["batching"] = q.batching
out["native"] = q.uses_native_encoder
z = [0.0] * n
arena = GpuArena().bind(z=z)
for _ in range(10):
    gpu(add_one, n, z)
if "--shutdown" in sys.argv:
    shutdown()
print(json.dumps(out))
# exits with launches pending (or after shutdown): must not crash
'''


@pytest.mark.parametrize("batch, native", [("0", "1"), ("1", "1"), ("1", "0"), ("0", "0")],
                         ids=["batch-off", "batch-on", "public-api", "public-api-batch-off"])
@pytest.mark.parametrize("how", ["exit", "shutdown"])
def test_settings_in_subprocess_give_the_same_results(device_name, batch, native, how):
    code = _SCENARIO.replace('"--shutdown" in sys.argv', repr(how == "shutdown"))
    proc = run_python(code, env_extra={"CTHREADS_BATCH": batch,
                                       "CTHREADS_NATIVE_ENCODER": native})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    expect = float(sum(k % 5 for k in range(200)))
    assert out["y"] == expect
    assert out["d"] == expect + 20
    assert out["batching"] == (batch == "1")
    assert out["native"] == (native == "1")
    if out["batching"]:
        assert out["submissions"] < 200
    else:
        assert out["submissions"] == 200



def test_upload_into_a_buffer_a_pending_launch_binds(device_name):
    """Uploads leave the batch pending unless a pending dispatch binds the buffer: a buffer an
    arena released while its launch was still pending, taken by the next upload, must not
    change what that launch reads."""
    n = 1 << 16
    q = _queue()
    busy = np.zeros(1 << 23, np.float32)        # numpy: no conversion time between launches
    src = [float(k) for k in range(n)]
    dst = [0.0] * n
    other = np.full(n, -1.0, np.float32)
    with GpuArena() as keep:
        keep.bind(dst=dst)
        released = GpuArena()
        released.bind(src=src)
        first = gpu(add_one, len(busy), busy)            # keeps the device busy
        job = gpu(copy_floats, src, dst)                  # may wait in the batch
        released.release()                                # src's buffer back to the pool
        job2 = gpu(copy_floats, other, np.zeros(n, np.float32))   # may take that buffer
        job.join(download=False)
        first.join()
        job2.join()
        keep.sync()
    assert (busy == 1.0).all()
    assert dst == src            # the copy read src's values, not the upload that followed
    assert q.pending == 0


@pytest.fixture(params=["gather", "alone"])
def keep_fed(monkeypatch, request):
    """The GPUs' batching rule for heavy launches (at most two submissions in flight) on this
    device, every launch counted as heavy: heavy dispatches gathering in the batch while one
    submission runs (the default), or each submitted alone (``CTHREADS_KEEP_FED=old``)."""
    from cthreads.backend import dispatch
    monkeypatch.setattr(_queue(), "keep_fed", True)
    monkeypatch.setattr(_queue(), "keep_fed_alone", request.param == "alone")
    monkeypatch.setattr(dispatch, "HEAVY_GROUPS", 1)


def test_the_gpu_rule_keeps_every_result_and_scalar(device_name, keep_fed):
    _queued_launches(batched=False)     # on a CPU driver each launch finds room at once
    test_changing_scalars_each_seen(device_name)
    test_changing_n_and_alternating_kernels(device_name)
    test_arena_writes_binds_and_syncs_between_queued_launches(device_name)
    test_readback_launch_after_queued_resident_launches(device_name)


def test_the_gpu_readback_path_reads_every_result(device_name, keep_fed):
    """Readbacks through the GPUs' path (the map requested at once, waited for alone): list
    results, numpy results, reductions, and a readback after queued launches."""
    from cthreads.gpu import Gpu

    @Gpu.func
    def plus(a: float, b: float) -> float:
        return a + b

    x = np.arange(1000, dtype=np.float32)
    y = [1.0] * 1000
    gpu(saxpy, 1000, 2.0, x.tolist(), y).join()
    assert y == (2.0 * x + 1.0).tolist()
    yn = np.ones(1000, np.float32)
    for _ in range(5):
        gpu(saxpy, 1000, 1.0, x, yn).join()
    np.testing.assert_array_equal(yn, 1.0 + 5.0 * x)
    assert plus.reduce(x) == float(x.astype(np.float64).sum())
    test_readback_launch_after_queued_resident_launches(device_name)
