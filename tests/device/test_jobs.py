"""GpuJob: join/download, done, wait, await, ordering, threads, resource use; Job and Barrier."""

from __future__ import annotations

import asyncio
import gc
import resource
import threading
import time

import numpy as np
import pytest

from cthreads import Job
from cthreads.gpu import GpuArena, GpuInvalidArgument, GpuJob, gpu
from tests.device.kernels import add_one, saxpy


def test_job_basics(device_name):
    y = [1.0] * 100
    job = gpu(saxpy, 100, 2.0, [1.0] * 100, y)
    assert isinstance(job, GpuJob) and isinstance(job, Job)
    assert job.start() is job
    assert job.result() is None
    assert y == [3.0] * 100
    assert job.done() and "done" in repr(job)
    assert job.join() is None                              # a second join is harmless
    with pytest.raises(GpuInvalidArgument, match="mid-run"):
        job.sync_state()
    with pytest.raises(GpuInvalidArgument, match="download"):
        job.join(download="yes")


def test_done_turns_true_before_join(device_name):
    y = [0.0] * 1000
    job = gpu(add_one, 1000, y)
    deadline = time.monotonic() + 30
    while not job.done() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert job.done()
    assert y == [0.0] * 1000                                 # nothing downloaded yet
    job.join()
    assert y == [1.0] * 1000


def test_join_without_download_leaves_lists(device_name):
    y = [5.0] * 10
    job = gpu(add_one, 10, y)
    job.wait()
    job.join(download=False)
    assert y == [5.0] * 10


def test_jobs_joined_out_of_order(device_name):
    ys = [[float(k)] * 300 for k in range(5)]
    jobs = [gpu(saxpy, 300, 1.0, [1.0] * 300, y) for y in ys]
    for job in reversed(jobs):
        job.join()
    for k, y in enumerate(ys):
        assert y == [k + 1.0] * 300


def test_launches_run_in_submission_order(device_name):
    y = [0.0] * 256
    with GpuArena() as arena:
        arena.bind(y=y)
        jobs = [gpu(add_one, 256, y) for _ in range(50)]
        jobs[-1].join(download=False)
        arena.sync()
    assert y == [50.0] * 256


async def test_await_several_jobs(device_name):
    ys = [[0.0] * 64 for _ in range(4)]
    jobs = [gpu(saxpy, 64, float(k), [1.0] * 64, y) for k, y in enumerate(ys)]
    ticks = 0

    async def ticker():
        nonlocal ticks
        while not all(j.done() for j in jobs):
            ticks += 1
            await asyncio.sleep(0)

    await asyncio.gather(ticker(), *jobs)
    assert [y[0] for y in ys] == [0.0, 1.0, 2.0, 3.0]


def test_threads_launch_and_join_safely(device_name):
    errors = []

    def worker(k):
        try:
            for r in range(100):
                x = np.arange(128, dtype=np.float32) + k
                y = [float(r)] * 128
                gpu(saxpy, 128, 2.0, x.tolist(), y).join()
                np.testing.assert_array_equal(np.array(y, np.float32), 2 * x + r)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_many_launches_keep_rss_flat(device_name):
    from cthreads.backend import get_queue

    x = [1.0] * 64
    y = [0.0] * 64

    def burst(count):
        for _ in range(count):
            gpu(saxpy, 64, 1.0, x, y).join()

    burst(1000)
    gc.collect()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    allocs0 = get_queue().pool.allocations
    burst(10_000)
    gc.collect()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert y == [11_000.0] * 64
    assert get_queue().pool.allocations == allocs0           # buffers come from the pool
    assert rss1 - rss0 < 30_000, (rss0, rss1)                # KiB


def test_device_errors_logged_by_wgpu_become_our_exceptions(device_name):
    """wgpu-py only logs device loss and errors it cannot attach to a call: they surface at
    the next launch or join as CThreadsGPUErrors, and shutdown() recovers."""
    import logging

    from cthreads.backend import device as dev
    from cthreads.gpu import GpuDeviceError, VulkanInitFailed, shutdown

    y = [0.0] * 4
    job = gpu(add_one, 4, y)
    logging.getLogger("wgpu").error("Uncaptured WGPU error: simulated validation failure")
    with pytest.raises(GpuDeviceError, match="simulated validation failure"):
        job.join()
    ctx = dev.get_context()
    ctx.lost = "The WGPU device was lost (simulated)"
    with pytest.raises(VulkanInitFailed, match="Launch again"):
        ctx.check_alive()
    y2 = [0.0] * 4
    gpu(add_one, 4, y2).join()                   # a lost device is replaced at the next use
    assert y2 == [1.0] * 4 and dev.get_context() is not ctx
    shutdown()
    y3 = [0.0] * 4
    gpu(add_one, 4, y3).join()
    assert y3 == [1.0] * 4
