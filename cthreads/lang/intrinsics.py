"""Device intrinsics with a plain-Python meaning: ``shared`` arrays and ``atomic_*`` operations.

In a ``@Gpu`` kernel the compiler turns these into workgroup arrays and WGSL atomics; called as
plain Python they act on ordinary lists so that a kernel runs unchanged outside the device.
Inside ``GpuKernel.simulate`` (``cthreads/lang/simulator.py``) ``shared()`` gives every thread of a
workgroup the same array, zeros of the declared element type, a fresh one per workgroup. The
atomics hold a lock, so they are atomic with respect to any other Python thread too.
"""

from __future__ import annotations

import sys
import threading

from . import simulator

_lock = threading.Lock()


def shared(size: int) -> list:
    """Workgroup shared array of ``size`` elements (element type from the annotation)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"shared(size): size must be a positive int, got {size!r}")
    ctx = simulator.current()
    if ctx is not None:
        return ctx.shared(size, sys._getframe(1))
    return [0] * size


def atomic_add(lst, index, value):
    with _lock:
        old = lst[index]
        lst[index] = old + value
    return old


def atomic_sub(lst, index, value):
    with _lock:
        old = lst[index]
        lst[index] = old - value
    return old


def atomic_min(lst, index, value):
    with _lock:
        old = lst[index]
        lst[index] = min(old, value)
    return old


def atomic_max(lst, index, value):
    with _lock:
        old = lst[index]
        lst[index] = max(old, value)
    return old


def atomic_exchange(lst, index, value):
    with _lock:
        old = lst[index]
        lst[index] = value
    return old


def atomic_compare_exchange(lst, index, expected, value):
    """Store ``value`` if the element equals ``expected``; return the old element."""
    with _lock:
        old = lst[index]
        if old == expected:
            lst[index] = value
    return old


__all__ = ["shared", "atomic_add", "atomic_sub", "atomic_min", "atomic_max",
           "atomic_exchange", "atomic_compare_exchange"]
