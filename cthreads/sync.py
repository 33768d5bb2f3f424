"""``__sync_threads`` and ``Barrier``: workgroup barriers in kernels, a CPU barrier outside.

In a ``@Gpu`` kernel both ``__sync_threads()`` and ``Barrier.arrive_and_wait()`` compile to a
workgroup barrier (control and workgroup memory). Outside kernels ``Barrier(parties)`` is an
ordinary reusable barrier for Python threads. Inside ``GpuKernel.simulate`` both in-kernel
forms wait for the other simulated threads of the workgroup (``cthreads/lang/simulator.py``).
"""

from __future__ import annotations

import sys
import threading

from .lang import simulator


def __sync_threads() -> None:
    """A workgroup barrier inside ``@Gpu`` kernels (and their ``simulate``); an error in plain
    Python."""
    ctx = simulator.current()
    if ctx is not None:
        ctx.barrier(sys._getframe(1))
        return
    raise RuntimeError(
        "__sync_threads() is a workgroup barrier and only works inside a @Gpu kernel launched "
        "with gpu() or run by kernel.simulate(); a plain-Python call runs one thread, with "
        "nothing to wait for")


class _KernelBarrierForm:
    """``Barrier.arrive_and_wait()`` used on the class itself (the in-kernel form)."""

    def __get__(self, obj, owner):
        if obj is None:
            return _class_arrive_and_wait
        return obj._arrive_and_wait


def _class_arrive_and_wait() -> None:
    ctx = simulator.current()
    if ctx is not None:
        ctx.barrier(sys._getframe(1))
        return
    raise RuntimeError(
        "Barrier.arrive_and_wait() on the class is the in-kernel workgroup barrier; it only works "
        "inside a @Gpu kernel (and its simulate()). For Python threads create Barrier(parties) "
        "and call arrive_and_wait() on it")


class Barrier:
    """A reusable barrier for ``parties`` Python threads (``Barrier(parties).arrive_and_wait()``)."""

    arrive_and_wait = _KernelBarrierForm()

    def __init__(self, parties: int):
        if isinstance(parties, bool) or not isinstance(parties, int):
            raise TypeError(f"Barrier(parties): parties must be an int, got {type(parties).__name__}")
        if parties < 1:
            raise ValueError(f"Barrier(parties): parties must be at least 1, got {parties}")
        self._barrier = threading.Barrier(parties)

    @property
    def parties(self) -> int:
        return self._barrier.parties

    def _arrive_and_wait(self, timeout: float | None = None) -> int:
        """Block until ``parties`` threads have arrived; returns this thread's arrival index."""
        return self._barrier.wait(timeout)

    def __repr__(self) -> str:
        return f"<Barrier parties={self.parties} waiting={self._barrier.n_waiting}>"


__all__ = ["Barrier", "__sync_threads"]
