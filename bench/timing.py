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
