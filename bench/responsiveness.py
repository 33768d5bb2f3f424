"""The "W8" workload for cthreads: does the asyncio event loop keep running during GPU work?

A ticker task sleeps 1 ms at a time and records the gap between its wake-ups while
``asyncio.gather`` runs ``jobs`` coroutines; each calls ``gpu()`` from the loop (a Mandelbrot
launch whose result, a Python list of ints, is downloaded and written back) and then waits for
it in one of four ways, each in its own ``asyncio.run``:

* ``await``: ``await job`` (cthreads' own way);
* ``await_np``: the same with a numpy ``int32`` array for the result instead of a list (no
  Python objects converted in ``gpu()`` nor created at the writeback);
* ``thread``: ``await asyncio.to_thread(job.join)``, a plain worker thread per join;
* ``blocking``: ``job.join()`` called in the coroutine, the baseline that shows what blocking
  the loop looks like (no other coroutine, the ticker included, runs while a job is joined).

Figures per way: the worst gap between ticks, the share of gaps within ``on_time_ms``, the
worst gap that began after the last ``gpu()`` call had returned (the loop while the jobs are
awaited), the slowest ``gpu()`` call and the sum of all of them, and the gather's wall time.
``gather`` starts its coroutines one after another in one step of the loop, so every ``gpu()``
call (the list's conversion included) runs before the ticker can wake: ``worst_ms`` includes
their sum. Every job's result is checked against numpy.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np

from cthreads.gpu import gpu
from examples.samples import mandelbrot

from reference import check_mandelbrot_sized

WAYS = ("await", "await_np", "thread", "blocking")


async def _scenario(way: str, jobs: int, size: tuple) -> tuple[list, list, list, float]:
    """(results, [(tick start, gap)], [(gpu() start, seconds)], gather's seconds)."""
    width, height, iters = size
    n = width * height
    gaps: list = []
    calls: list = []
    stop = asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append((last, now - last))
            last = now

    async def one():
        counts = np.zeros(n, np.int32) if way == "await_np" else [0] * n
        t0 = time.perf_counter()
        job = gpu(mandelbrot, n, width, height, iters, counts)
        calls.append((t0, time.perf_counter() - t0))
        if way in ("await", "await_np"):
            await job
        elif way == "thread":
            await asyncio.to_thread(job.join)
        else:
            job.join()
        return counts

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)                  # the ticker runs alone first: its own rhythm
    gaps.clear()
    t0 = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(jobs)))
    total = time.perf_counter() - t0
    stop.set()
    await tick
    return results, gaps, calls, total


def w8(p: dict) -> dict:
    jobs, size, on_time = p["jobs"], tuple(p["mandel"]), p["on_time_ms"] / 1e3
    width, height, iters = size
    n = width * height
    warm = [0] * n
    gpu(mandelbrot, n, width, height, iters, warm).join()    # compiled outside the measurement
    err = check_mandelbrot_sized(warm, width, height, iters)
    if err:
        return {"error": f"warm-up: {err}"}
    m: dict = {}
    for way in WAYS:
        results, gaps, calls, total = asyncio.run(_scenario(way, jobs, size))
        for counts in results:
            err = check_mandelbrot_sized(counts, width, height, iters)
            if err:
                return {"error": f"{way}: {err}"}
        launched = max(t + d for t, d in calls)
        m[f"{way}_worst_ms"] = max(g for _, g in gaps) * 1e3
        m[f"{way}_on_time_pct"] = 100.0 * sum(g <= on_time for _, g in gaps) / len(gaps)
        if way != "blocking":       # there, the loop never runs between launch and join
            # the gaps that began after the last gpu() call returned: the loop during the waits
            m[f"{way}_worst_waits_ms"] = max((g for t, g in gaps if t >= launched),
                                             default=0.0) * 1e3
        m[f"{way}_gpu_max_ms"] = max(d for _, d in calls) * 1e3
        m[f"{way}_gpu_sum_ms"] = sum(d for _, d in calls) * 1e3
        m[f"{way}_total_ms"] = total * 1e3
        m[f"{way}_ticks"] = float(len(gaps))
    return {"error": None, "metrics": m}


WORKLOADS = {"W8": w8}
