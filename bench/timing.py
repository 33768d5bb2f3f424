"""The timer every implementation uses (kept apart so it imports no GPU library)."""

from __future__ import annotations

import gc
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
