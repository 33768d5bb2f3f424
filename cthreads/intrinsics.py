"""Device intrinsics with a plain-Python meaning: ``shared`` arrays and ``atomic_*`` operations.

In a ``@Gpu`` kernel the compiler turns these into workgroup arrays and WGSL atomics; called as
plain Python they act on ordinary lists so that a kernel runs unchanged outside the device.
"""

from __future__ import annotations


def shared(size: int) -> list:
    """Workgroup shared array of ``size`` elements (element type from the annotation)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"shared(size): size must be a positive int, got {size!r}")
    return [0] * size


def atomic_add(lst, index, value):
    old = lst[index]
    lst[index] = old + value
    return old


def atomic_sub(lst, index, value):
    old = lst[index]
    lst[index] = old - value
    return old


def atomic_min(lst, index, value):
    old = lst[index]
    lst[index] = min(old, value)
    return old


def atomic_max(lst, index, value):
    old = lst[index]
    lst[index] = max(old, value)
    return old


def atomic_exchange(lst, index, value):
    old = lst[index]
    lst[index] = value
    return old


def atomic_compare_exchange(lst, index, expected, value):
    """Store ``value`` if the element equals ``expected``; return the old element."""
    old = lst[index]
    if old == expected:
        lst[index] = value
    return old


__all__ = ["shared", "atomic_add", "atomic_sub", "atomic_min", "atomic_max",
           "atomic_exchange", "atomic_compare_exchange"]
