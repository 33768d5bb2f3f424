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


def alternating_ms(fns: dict, reps: int, warm: int = 0) -> dict:
    """Median ms of each of ``fns`` (name -> callable) over ``reps`` rounds, the functions
    timed one after another in an order that rotates every round (so that a change of the
    machine's load falls on all of them alike).

    ``warm``: untimed calls of each function right before its timed one. A rotation keeps
    the cyclic order, so each function always follows the same other one: on a GPU shared by
    torch's CUDA context and our Vulkan device, the first call after the other's work pays the
    switch (0.16-0.17 ms on the H200, ``bench/probe_switch.py``), which is no part of either
    library's cost per call in a loop; the library rows of PEERS pass ``warm=1``."""
    times = {k: [] for k in fns}
    names = list(fns)
    for r in range(reps):
        for k in names[r % len(names):] + names[:r % len(names)]:
            for _ in range(warm):
                fns[k]()
            t0 = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}
