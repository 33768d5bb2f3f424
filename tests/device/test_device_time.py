"""``GpuJob.device_time`` (v3 section 3, "Timing"): timed launches (``gpu(..., timed=True)``,
``@Gpu(timed=True)``) measure their time on the device with timestamp queries.

The honest bound that cannot depend on machine speed: a job's device time is > 0 and at most
the host-measured time from ``gpu()`` to the end of ``join()`` (the device ran it inside that
window). Results are checked against numpy too, so timing never changes what a kernel computes.
"""

from __future__ import annotations

import json
import pickle
import time

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu, to_device, zeros
from tests.conftest import run_python
from tests.device.kernels import saxpy

REPS = 20000                       # under lavapipe's 65,535-iteration loop cap


@Gpu
def spin(n: int, reps: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = float(i % 7)
    for k in range(reps):
        acc = acc * 0.999 + 0.5
    out[i] = acc


@Gpu(timed=True)
def spin_timed(n: int, reps: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = float(i % 7)
    for k in range(reps):
        acc = acc * 0.999 + 0.5
    out[i] = acc


def spin_reference(n: int, reps: int) -> np.ndarray:
    acc = (np.arange(n) % 7).astype(np.float32)
    for _ in range(reps):
        acc = acc * np.float32(0.999) + np.float32(0.5)
    return acc


def _check_spin(out, n, reps):
    np.testing.assert_allclose(np.asarray(out)[:n], spin_reference(n, reps), rtol=1e-4)


def _queue():
    from cthreads.backend.device import get_context
    from cthreads.runtime import residency  # noqa: F401 - the queue lives on the context's runtime

    job = gpu(saxpy, 1, 1.0, [1.0], [1.0])
    job.join()
    return job._rt.queue


def test_long_kernel_time_is_positive_and_within_the_host_window(device_name):
    n = 4096
    out = np.zeros(n, np.float32)
    gpu(spin, n, 10, out).join()                     # compiled before the window
    t0 = time.perf_counter()
    job = gpu(spin, n, REPS, out, timed=True)
    job.join()
    wall = time.perf_counter() - t0
    t = job.device_time
    assert isinstance(t, float)
    assert 0.0 < t <= wall
    _check_spin(out, n, REPS)


def test_untimed_jobs_have_none_and_compute_the_same(device_name):
    n = 1024
    a = np.zeros(n, np.float32)
    b = np.zeros(n, np.float32)
    job = gpu(spin, n, 100, a)
    job.join()
    assert job.device_time is None
    timed = gpu(spin, n, 100, b, timed=True)
    timed.join()
    assert timed.device_time is not None
    np.testing.assert_array_equal(a, b)
    _check_spin(a, n, 100)


def test_reading_twice_gives_the_same_value_and_is_cached(device_name):
    out = np.zeros(256, np.float32)
    job = gpu(spin, 256, 1000, out, timed=True)
    job.join()
    first = job.device_time
    assert first is not None and first > 0
    assert job.device_time == first
    assert job._timing.staging is None              # read once; its buffer went back
    job.join()                                       # joining again changes nothing
    assert job.device_time == first


def test_batched_jobs_each_get_their_own_time(device_name):
    """Several timed launches without a join between them share command buffers (and, with
    timestamps inside passes, one compute pass); each gets its own time. They write the
    same list, so they run one after the other: their times add up to at most the window."""
    n = 2048
    out = np.zeros(n, np.float32)
    gpu(spin, n, 10, out).join()
    with GpuArena() as arena:
        arena.bind(out=out)
        t0 = time.perf_counter()
        jobs = [gpu(spin, n, 2000 * (k + 1), out, timed=True) for k in range(6)]
        for job in jobs:
            job.join(download=False)
        wall = time.perf_counter() - t0
        arena.sync()
    times = [job.device_time for job in jobs]
    assert all(t is not None and t > 0 for t in times), times
    assert sum(times) <= wall
    _check_spin(out, n, 2000 * 6)


def test_timed_and_untimed_jobs_mixed_in_one_batch(device_name):
    n = 512
    outs = [np.zeros(n, np.float32) for _ in range(5)]
    jobs = [gpu(spin, n, 500, outs[k], timed=k % 2 == 1) for k in range(5)]
    for job in jobs:
        job.join()
    for k, job in enumerate(jobs):
        if k % 2:
            assert job.device_time > 0
        else:
            assert job.device_time is None
        _check_spin(outs[k], n, 500)


def test_pass_level_timestamps_where_the_device_has_none_inside_passes(device_name):
    """Without timestamp-query-inside-passes a timed job gets compute passes of its own whose
    begin and end write the timestamps; the results and the window bound are the same."""
    q = _queue()
    q.job_timing()                                    # the ring exists
    ts = q.timestamps
    saved = ts.inside_passes
    ts.inside_passes = False
    try:
        n = 1024
        out = np.zeros(n, np.float32)
        plain = np.zeros(n, np.float32)
        t0 = time.perf_counter()
        jobs = [gpu(spin, n, 1000, out, timed=True), gpu(spin, n, 1000, plain),
                gpu(spin, n, 3000, out, timed=True)]
        for job in jobs:
            job.join()
        wall = time.perf_counter() - t0
    finally:
        ts.inside_passes = saved
    assert jobs[1].device_time is None
    assert 0 < jobs[0].device_time and 0 < jobs[2].device_time
    assert jobs[0].device_time + jobs[2].device_time <= wall
    _check_spin(out, n, 3000)
    _check_spin(plain, n, 1000)


def test_a_job_not_yet_finished_reads_none_without_waiting(device_name, monkeypatch):
    out = np.zeros(256, np.float32)
    job = gpu(spin, 256, 1000, out, timed=True)
    queue = job._rt.queue
    real = queue.is_done
    monkeypatch.setattr(queue, "is_done", lambda seq: False)
    assert job.device_time is None                   # "running": None, no wait, no error
    monkeypatch.setattr(queue, "is_done", real)
    job.join()
    assert job.device_time > 0
    _check_spin(out, 256, 1000)


def test_read_right_after_launch_is_none_or_the_final_value(device_name):
    out = np.zeros(1024, np.float32)
    job = gpu(spin, 1024, REPS, out, timed=True)
    early = job.device_time                          # None unless the job already finished
    job.join()
    assert early is None or early == job.device_time
    assert job.device_time > 0


def test_several_dispatches_one_time_from_first_begin_to_last_end(device_name):
    """A launch split over several dispatches (lists past the binding limit: one dispatch
    per part) gets one time, from its first dispatch's start to its last one's end."""
    n = 4096
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    with config.override(binding_bytes=4096):
        t0 = time.perf_counter()
        job = gpu(saxpy, n, 2.0, x, y, timed=True)
        job.join()
        wall = time.perf_counter() - t0
    assert len(job._rt.kernel.__name__) and job.device_time is not None
    assert 0 < job.device_time <= wall
    np.testing.assert_array_equal(y, 2.0 * np.arange(n, dtype=np.float32) + 1.0)


def test_split_dispatches_really_are_several(device_name):
    """The launch above is indeed several dispatches (so the test means what it says)."""
    n = 4096
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    q = _queue()
    recorded = []
    real = q.dispatch

    def spy(*a, **k):
        recorded.append(k.get("stamp"))
        return real(*a, **k)

    q.dispatch = spy
    try:
        with config.override(binding_bytes=4096):
            gpu(saxpy, n, 2.0, x, y, timed=True).join()
    finally:
        del q.dispatch
    assert len(recorded) > 1
    assert recorded[0][1] and not recorded[0][2]             # begin before the first
    assert recorded[-1][2] and not recorded[-1][1]           # end after the last
    assert all(not s[1] and not s[2] for s in recorded[1:-1])


def test_gpuarray_and_arena_launches(device_name):
    n = 2048
    d = zeros(n, dtype=np.float32)
    job = gpu(spin, n, 800, d, timed=True)
    job.join()
    assert job.device_time > 0
    _check_spin(d.numpy(), n, 800)
    out = np.zeros(n, np.float32)
    with GpuArena() as arena:
        arena.bind(out=out)
        job = gpu(spin, n, 800, out, timed=True)
        job.join(download=False)
        assert job.device_time > 0
        again = gpu(spin, n, 900, out, timed=True)   # the relaunch (memo) path
        again.join(download=False)
        assert again.device_time > 0
        arena.sync()
    _check_spin(out, n, 900)


def test_decorator_option_and_per_launch_override(device_name):
    n = 512
    out = np.zeros(n, np.float32)
    job = gpu(spin_timed, n, 500, out)
    job.join()
    assert job.device_time > 0
    off = gpu(spin_timed, n, 500, out, timed=False)
    off.join()
    assert off.device_time is None
    _check_spin(out, n, 500)
    clone = pickle.loads(pickle.dumps(spin_timed))
    assert clone.timed is True


def test_timed_must_be_a_bool(device_name):
    out = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="timed="):
        gpu(spin, 4, 1, out, timed="yes")
    assert not out.any()


def test_device_without_timestamp_queries_gives_none(device_name):
    out = np.zeros(256, np.float32)
    with config.override(hide_features=("timestamp-query",)):
        job = gpu(spin, 256, 300, out, timed=True)
        job.join()
    assert job.device_time is None
    _check_spin(out, 256, 300)


def test_many_timed_launches_wrap_the_query_ring(device_name):
    """More timed launches than the ring holds queries: indexes wrap, every job keeps its time."""
    from cthreads.backend import timing

    d = to_device(np.zeros(64, np.float32))
    x = to_device(np.ones(64, np.float32))
    jobs = [gpu(saxpy, 64, 1.0, x, d, timed=True) for _ in range(timing.RING // 2 + 40)]
    for job in jobs:
        job.join()
    assert all(job.device_time is not None and job.device_time >= 0 for job in jobs)
    np.testing.assert_array_equal(d.numpy(), np.full(64, len(jobs), np.float32))


_PUBLIC = '''
import json, time
import numpy as np
from cthreads.gpu import gpu
from tests.device.test_device_time import spin, spin_reference
n = 1024
res = {}
for inside in (True, False):           # timestamps inside the pass; passes of their own
    out = np.zeros(n, np.float32)
    if not inside:
        jobs[0]._rt.queue.timestamps.inside_passes = False
    t0 = time.perf_counter()
    jobs = [gpu(spin, n, 1500 * (k + 1), out, timed=k != 1) for k in range(3)]
    for j in jobs:
        j.join()
    wall = time.perf_counter() - t0
    ok = bool(np.allclose(out, spin_reference(n, 4500), rtol=1e-4))
    res[str(inside)] = {"times": [j.device_time for j in jobs], "wall": wall, "ok": ok}
res["native"] = jobs[0]._rt.queue.uses_native_encoder
print(json.dumps(res))
'''


def test_public_encoder_path(device_name):
    proc = run_python(_PUBLIC, env_extra={"CTHREADS_NATIVE_ENCODER": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["native"] is False
    for out in (res["True"], res["False"]):
        assert out["ok"]
        first, untimed, last = out["times"]
        assert untimed is None
        assert first > 0 and last > 0
        assert first + last <= out["wall"]


def test_a_job_dropped_unread_gives_its_buffer_back(device_name):
    import gc

    out = np.zeros(64, np.float32)
    job = gpu(spin, 64, 10, out, timed=True)
    job.join()
    staging = job._timing.staging
    pool = job._rt.queue.pool
    del job
    gc.collect()
    assert any(b is staging for b in pool._free.get(("staging", staging.capacity), []))


def test_after_shutdown_an_unread_time_is_none(device_name):
    from cthreads.gpu import shutdown

    out = np.zeros(64, np.float32)
    job = gpu(spin, 64, 10, out, timed=True)
    job.join()
    shutdown()
    assert job.device_time is None
    again = gpu(spin, 64, 10, out, timed=True)     # a new device: timing works again
    again.join()
    assert again.device_time > 0
    _check_spin(out, 64, 10)


def test_read_from_several_threads_at_once(device_name):
    import threading

    out = np.zeros(512, np.float32)
    job = gpu(spin, 512, 2000, out, timed=True)
    job.wait()
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(job.device_time)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8 and len(set(seen)) == 1 and seen[0] > 0
    job.join()
    _check_spin(out, 512, 2000)


def test_hidden_by_the_environment_gives_none(device_name):
    code = ("import numpy as np\nfrom cthreads.gpu import gpu\n"
            "from tests.device.test_device_time import spin, spin_reference\n"
            "out = np.zeros(64, np.float32)\nj = gpu(spin, 64, 50, out, timed=True)\nj.join()\n"
            "assert np.allclose(out, spin_reference(64, 50), rtol=1e-4)\nprint(j.device_time)\n")
    proc = run_python(code, env_extra={"CTHREADS_HIDE_FEATURES": "timestamp-query"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "None"
