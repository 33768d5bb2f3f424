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
