"""The timer every implementation uses (kept apart so it imports no GPU library)."""

from __future__ import annotations

import gc
import statistics
import time


def timed(fn) -> float:
    """Seconds ``fn()`` takes, with the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def median_ms(fn, reps: int) -> float:
    """Median of ``reps`` timed calls of ``fn`` (each timed alone), in ms."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def alternating_ms(fns: dict, reps: int) -> dict:
    """Median ms of each of ``fns`` (name -> callable) over ``reps`` rounds, the functions
    timed one after another in an order that rotates every round (so that a change of the
    machine's load falls on all of them alike)."""
    times = {k: [] for k in fns}
    names = list(fns)
    for r in range(reps):
        for k in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}
