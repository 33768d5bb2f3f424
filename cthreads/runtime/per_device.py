"""One state object per device for the library's calls (reductions, scans, sorts, products).

``PerDevice(factory)`` keeps what ``factory()`` makes on the caller's device (``use_device``)
on first need: its pipelines, layouts and scratch buffers. An object made for an earlier device
of that index (after ``shutdown()``, or a lost device) is replaced, and every object is
forgotten at shutdown and in a forked child (``backend.on_fork_child``). The objects record the
``ctx`` and ``generation`` they were made for.
"""

from __future__ import annotations

import threading

from ..backend import device as _device


class PerDevice:
    def __init__(self, factory):
        self._factory = factory
        self._lock = threading.Lock()
        self.states: dict = {}          # device index -> the factory's object
        _device.on_shutdown(lambda ctx: self.states.clear())
        _device.on_fork_child(lambda: self.states.clear())

    def now(self):
        """The object of the caller's device, made on first need."""
        ctx = _device.get_context()
        s = self.states.get(ctx.index)
        if s is not None and s.generation == ctx.generation and s.ctx is ctx:
            return s
        with self._lock:
            s = self.states.get(ctx.index)
            if s is None or s.generation != ctx.generation or s.ctx is not ctx:
                s = self.states[ctx.index] = self._factory()
            return s
