"""Everything that talks to wgpu lives in this package (wgpu-py's API moves between releases).

``device`` numbers the Vulkan adapters and owns the devices (one per selection); ``faults``
maps wgpu's raw errors to ours and marks a lost device; ``forking`` makes a forked child forget the parent's device;
``buffers`` pools device buffers; ``pipeline`` compiles WGSL into cached compute pipelines;
``dispatch`` is the device queue: it submits work and reads results back, made of a ``batch``
(the open batch), a completion tracker (``waits``) and a deadline ``flusher``, with the flush
rules as one table; ``native.encoder`` (direct wgpu-native calls) and ``public_encoder``
(wgpu-py's API) encode a batch; ``native/`` holds every use of wgpu-py's or cffi's internals.
Nothing here knows about Python ASTs.

May import: ``cthreads.errors``, ``cthreads.config`` and its own modules; never
``cthreads.codegen``, ``cthreads.runtime`` or the package root's user objects.
"""

from __future__ import annotations

import threading

from . import device as device
from .device import get_context, on_shutdown
from .forking import on_fork_child

_queue_lock = threading.Lock()


def get_queue():
    """The ``DeviceQueue`` of the caller's device (created with the device on first use)."""
    ctx = get_context()
    q = ctx.dq
    if q is not None:
        return q
    with _queue_lock:
        if ctx.dq is None:
            from .dispatch import DeviceQueue  # noqa: PLC0415
            ctx.dq = DeviceQueue(ctx)
        return ctx.dq


def _drop_queue(ctx) -> None:
    q = None if ctx is None else ctx.dq
    if q is not None:
        if ctx.lost is None:   # a lost device may never report work done
            try:
                q.idle()
            except Exception:
                pass
        q.pool.clear()


on_shutdown(_drop_queue)


def _forget_queue_after_fork() -> None:
    global _queue_lock
    _queue_lock = threading.Lock()


on_fork_child(_forget_queue_after_fork)
