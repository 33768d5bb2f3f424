"""A batch: dispatches recorded for one command buffer, and the uniform bytes they stage.

A ``Batch`` is a plain record. ``DeviceQueue`` keeps one open batch and decides when it is
submitted (the rules are the table ``FLUSH_RULES`` in ``flush_rules.py``); the batch itself never
submits, polls or locks anything, so a batch recorded on purpose (v3's ``capture()``, whose
``replay()`` submits it) is another owner of the same record, not another kind of batch.

Each recorded dispatch is ``(pipeline, bind group, (x, y, z), pre, post)``:

* ``pre``: ``(offset, uniform buffer, nbytes)`` when the dispatch's scalars were staged (a
  dispatch already in the batch reads that uniform buffer's old bytes): the command buffer
  copies ``nbytes`` from ``offset`` of the staged bytes into the uniform buffer right before
  the dispatch;
* ``post``: readback copies ``(src, src offset, dst, dst offset, nbytes)`` right after it.

``stamps`` (empty unless a timed job is in the batch) are the timestamps to write around
dispatches: ``(dispatch index, is_end, query index, destination buffer, destination offset)``
(``timing.py``).

The batch also remembers which uniform buffers and pooled buffers its dispatches read: a queue
write into one of them while the batch is open must wait for the batch (a queued write lands
before the *next* submission).
"""

from __future__ import annotations

import time

__all__ = ["Batch"]


class Batch:
    """Dispatches in recording order, the uniform bytes they stage and the buffers they bind."""

    __slots__ = ("dispatches", "uniforms", "buffers", "staged", "staged_size", "opened_at",
                 "stamps")

    def __init__(self):
        self.dispatches: list = []      # (pipeline, bind group, (x, y, z), pre, post copies)
        self.uniforms: set = set()      # uniform buffers those dispatches read
        self.buffers: set = set()       # PooledBuffers those dispatches bind
        self.staged: list = []          # uniform bytes copied in before the dispatch using them
        self.staged_size = 0
        self.opened_at = 0.0            # perf_counter() when the first dispatch was recorded
        self.stamps: list = []          # timestamps of timed jobs (timing.py)

    def __len__(self) -> int:
        return len(self.dispatches)

    def reads(self, uniform_buffer) -> bool:
        """Whether a recorded dispatch reads ``uniform_buffer``."""
        return uniform_buffer in self.uniforms

    def binds(self, pooled) -> bool:
        """Whether a recorded dispatch binds the PooledBuffer ``pooled``."""
        return pooled in self.buffers

    def stage(self, uniform_buffer, data: bytes) -> tuple:
        """Stage ``data`` for ``uniform_buffer``; the ``pre`` of the dispatch that reads it."""
        pre = (self.staged_size, uniform_buffer, len(data))
        self.staged.append(data)
        self.staged_size += len(data)
        return pre

    def record(self, dispatch: tuple) -> int:
        """Append ``dispatch`` (see the module docstring); the number of dispatches now."""
        dispatches = self.dispatches
        dispatches.append(dispatch)
        return len(dispatches)

    def keep_open(self, uniform_buffer=None, buffers=()) -> None:
        """The dispatch just recorded stays pending: remember the uniform buffer and the
        PooledBuffers it reads (and, for the first dispatch, when the batch opened). A batch
        submitted right after ``record`` never needs them."""
        if uniform_buffer is not None:
            self.uniforms.add(uniform_buffer)
        if buffers:
            self.buffers.update(buffers)
        if len(self.dispatches) == 1:
            self.opened_at = time.perf_counter()

    def take(self) -> tuple[list, list]:
        """(dispatches, staged bytes) recorded so far; the batch is empty afterwards."""
        taken = self.dispatches, self.staged
        self.dispatches, self.staged, self.staged_size = [], [], 0
        if self.stamps:
            self.stamps = []
        self.uniforms.clear()
        self.buffers.clear()
        return taken
