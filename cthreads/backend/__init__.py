"""Everything that talks to wgpu lives in this package (wgpu-py's API moves between releases).

``device`` picks the Vulkan adapter and owns the one device; ``faults`` maps wgpu's raw errors
to ours and marks a lost device; ``forking`` makes a forked child forget the parent's device;
``buffers`` pools device buffers; ``pipeline`` compiles WGSL into cached compute pipelines;
``dispatch`` submits work, tracks completion and reads results back (``fastpath`` makes its
per-launch calls directly). Nothing here knows about Python ASTs.
"""

from __future__ import annotations

import threading

from . import device as device
from .device import get_context, on_shutdown
from .forking import on_fork_child

_queue_lock = threading.Lock()
_queue = None


def get_queue():
    """The ``DeviceQueue`` of the current device (created with the device on first use)."""
    global _queue
    q = _queue
    ctx = get_context()
    if q is not None and q.ctx is ctx:
        return q
    with _queue_lock:
        if _queue is None or _queue.ctx is not ctx:
            from .dispatch import DeviceQueue  # noqa: PLC0415
            _queue = DeviceQueue(ctx)
        return _queue


def _drop_queue(ctx) -> None:
    global _queue
    q = _queue
    if q is not None:
        if ctx is None or ctx.lost is None:   # a lost device may never report work done
            try:
                q.idle()
            except Exception:
                pass
        q.pool.clear()
    _queue = None


on_shutdown(_drop_queue)


def _forget_queue_after_fork() -> None:
    global _queue, _queue_lock
    _queue_lock = threading.Lock()
    _queue = None


on_fork_child(_forget_queue_after_fork)
