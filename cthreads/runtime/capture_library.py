"""Library calls inside ``capture()`` (runtime/capture.py records the kernels' launches).

A library function decorated ``@recordable(name)`` (``matmul``) runs inside ``capture()`` as
it runs outside, except that its dispatches reach ``record_dispatch`` instead of the queue
(``backend/capturing.py``): each is kept with its pipeline, bind group, workgroups and
uniform bytes, and replayed with the bytes copied into the call's own uniform buffer first.
The buffers it binds are live ``GpuArray``s' or arena lists' (the graph checks them at replay
as it checks a launch's lists) or the call's scratch, which the graph pins in the pool
(``BufferPool.pin``: the call's own release of it waits until the graph is gone). A call that
reads results back, uploads host data or copies on the device is refused with
``GpuInvalidArgument``, and a call that raises leaves the recording as it was.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

from ..backend import capturing
from ..backend import replay as _replay
from ..errors import GpuInvalidArgument
from . import device_array, sharing
from .capture import ListUse, current

__all__ = ["library_call", "recordable"]


class _LibraryCall:
    """One recorded library call: its dispatches ``(pipeline, bind group, (x, y, z),
    (uniform buffer, bytes) or None)`` and the arrays they bind."""

    __slots__ = ("index", "rt", "name", "steps", "uses", "pinned")

    def __init__(self, index: int, name: str):
        self.index = index
        self.rt = None
        self.name = name
        self.steps: list = []
        self.uses: list = []
        self.pinned: list = []      # its scratch buffers, pinned in the pool for the graph

    def unpin(self, queue) -> None:
        """The scratch goes back to its owner's release (the call or the graph is dropped)."""
        pinned, self.pinned = self.pinned, []
        for pooled in pinned:
            queue.pool.unpin(pooled)


def _slot_of(pooled):
    """The live GpuArray slot or arena slot whose buffer ``pooled`` is, or None (scratch
    memory of the call)."""
    for s in list(device_array._live):
        if s.base is None and not s.dead and (s.pooled is pooled or pooled in s.parts):
            return s
    for s in list(sharing.resident.values()):
        if getattr(s, "pooled", None) is pooled:
            return s
    return None


@contextmanager
def library_call(name: str):
    """Inside ``capture()``: the dispatches of library call ``name`` are recorded, kept only
    if the call returns (one that raises leaves the recording as it was)."""
    if capturing.recorder() is not None:     # a library call made by another: one record
        yield
        return
    rec = current()
    call = _LibraryCall(len(rec.launches), name)
    seen: set = set()

    def record_dispatch(queue, pipeline, bind_group, groups, uniform, copies, buffers):
        if queue is not rec.queue:
            raise GpuInvalidArgument(
                f"{name}() inside capture(): it runs on {queue.ctx.label}, but the graph "
                f"belongs to {rec.ctx.label}; a graph belongs to one device")
        if copies:
            raise GpuInvalidArgument(f"{name}() inside capture(): this call reads results "
                                     "back to the host; make it outside the capture")
        for pooled in buffers:
            slot = _slot_of(pooled)
            if slot is None:           # the call's scratch: kept for the graph's replays
                if id(pooled) not in seen:
                    seen.add(id(pooled))
                    queue.pool.pin(pooled)
                    call.pinned.append(pooled)
                continue
            if id(slot) not in seen:
                seen.add(id(slot))
                call.uses.append(ListUse(slot, f"{name}() argument", True))
        call.steps.append((pipeline, bind_group, _replay.fold(queue, groups), uniform))
        return queue.completion.submitted + 1

    capturing.set_recorder(record_dispatch)
    try:
        yield
    except BaseException:
        call.unpin(rec.queue)
        raise
    finally:
        capturing.set_recorder(None)
    if call.steps:
        rec.launches.append(call)


def recordable(name: str):
    """Decorator of a library function whose dispatches ``capture()`` may record."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if current() is None:
                return fn(*args, **kwargs)
            with library_call(name):
                return fn(*args, **kwargs)
        return call
    return wrap
