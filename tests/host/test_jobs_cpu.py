"""Job (a Python function on a thread) and the CPU Barrier: no device involved."""

from __future__ import annotations

import threading

import pytest

from cthreads import Job
from cthreads.sync import Barrier, __sync_threads


def test_cpu_job():
    job = Job(sum, [1, 2, 3]).start()
    assert job.join() == 6 and job.done() and job.result() == 6
    bad = Job(lambda: 1 / 0).start()
    with pytest.raises(ZeroDivisionError):
        bad.join()
    assert "pending" in repr(Job(sum, []))


def test_cpu_barrier():
    b = Barrier(3)
    assert b.parties == 3
    seen = []

    def party(k):
        seen.append(("before", k))
        b.arrive_and_wait()
        seen.append(("after", k))

    threads = [threading.Thread(target=party, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()                      # no timeout: a hang is pytest-timeout's
    assert [s for s, _ in seen[:3]] == ["before"] * 3 and len(seen) == 6
    with pytest.raises(ValueError):
        Barrier(0)


def test_sync_threads_outside_kernel_raises():
    with pytest.raises(RuntimeError, match="inside a @Gpu kernel"):
        __sync_threads()
    with pytest.raises(RuntimeError):
        Barrier.arrive_and_wait()


class _Queue:
    """A device queue whose completion poll fails with ``error``."""

    def __init__(self, error):
        self.error = error

    def is_done(self, seq):
        raise self.error

    def wait(self, seq, timeout):
        raise self.error


def _gpu_job(error):
    from types import SimpleNamespace

    from cthreads.backend import device
    from cthreads.gpu_job import GpuJob

    rt = SimpleNamespace(kernel=None, generation=device.generation(), queue=_Queue(error))
    plan = SimpleNamespace(readback=None, resident_written=(), owned=())
    return GpuJob(rt, 1, plan)


def test_gpu_job_done_does_not_swallow_an_unexpected_exception():
    job = _gpu_job(KeyError("queue bug"))
    with pytest.raises(KeyError, match="queue bug"):
        job.done()


def test_gpu_job_done_on_a_lost_device_and_join_reports_it():
    from cthreads.errors import GpuDeviceError

    job = _gpu_job(GpuDeviceError("the device was lost"))
    assert job.done()                      # finished: join() does not block, it raises
    with pytest.raises(GpuDeviceError, match="the device was lost"):
        job.join()
