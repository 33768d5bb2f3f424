"""The device side of v3's ``capture()`` / ``GpuGraph.replay()``: a graph's own buffers and
bind groups, and its submission.

A recorded launch is turned, once, into a dispatch of ``batch.py``'s form (pipeline, bind
group, workgroups, no ``pre``, no ``post``): its scalars live in the graph's own uniform buffer
(one aligned slot per distinct set of uniform bytes) and its bounds-check status in the
graph's own status buffer (one aligned slot per recorded launch), so the graph's dispatches
never copy anything between them and a replay encodes them all in one compute pass of one
command buffer (wgpu places the barriers a pass needs between dispatches that share a
written buffer, as it does for the queue's batches), submitted once. A recorded library call
(``matmul``) keeps its own uniform buffers: its recorded bytes are copied in before each of
its dispatches, as the queue's batches stage changed scalars. ``times=k`` repeats the
list of dispatches k times in that command buffer (``MAX_DISPATCHES`` per submission).
WebGPU command buffers run once, so a replay encodes again; the encoding is a loop of three
native calls per dispatch.

The guard that keeps other device work out of a capture is ``capturing.py``.
"""

from __future__ import annotations

from .grids import fold_groups

__all__ = ["GraphBuffers", "MAX_DISPATCHES", "submit"]

#: most dispatches in one submission of a replay (a longer one is split in several)
MAX_DISPATCHES = 1 << 16


class GraphBuffers:
    """A graph's uniform and status buffers on ``queue``: ``uniforms`` is the list of distinct
    uniform byte strings (each bound at ``uniform_offset(k)``), ``statuses`` the number of
    status slots (each ``status_stride`` bytes apart, ``status_nbytes`` bound)."""

    def __init__(self, queue, uniforms: list, statuses: int, status_nbytes: int):
        self.queue = queue
        limits = queue.ctx.limits
        self.uniform_align = int(limits.get("min-uniform-buffer-offset-alignment", 256))
        align = queue.pool.offset_alignment()
        self.status_nbytes = status_nbytes
        self.status_stride = -(-status_nbytes // align) * align
        self.uniform = None
        self.status = None
        self.statuses = statuses
        pool = queue.pool
        longest = max((len(u) for u in uniforms), default=0)
        self.uniform_stride = max(1, -(-longest // self.uniform_align)) * self.uniform_align
        try:
            if uniforms:
                stride = self.uniform_stride
                blob = bytearray(stride * len(uniforms))
                for k, data in enumerate(uniforms):
                    blob[k * stride:k * stride + len(data)] = data
                self.uniform = pool.acquire(len(blob), "uniform")
                queue.write(self.uniform.buffer, bytes(blob))
            if statuses:
                self.status = pool.acquire(self.status_stride * statuses)
                self.reset_status()
        except BaseException:
            self.release()
            raise

    def uniform_offset(self, k: int) -> int:
        return k * self.uniform_stride

    def status_offset(self, j: int) -> int:
        return j * self.status_stride

    @property
    def status_size(self) -> int:
        """The bytes of every status slot together (what a readback copies)."""
        return self.status_stride * self.statuses

    def reset_status(self) -> None:
        """Zero every status slot (after a failure was reported)."""
        if self.status is not None:
            self.queue.write(self.status.buffer, bytes(self.status_stride * self.statuses))

    def bind_group(self, layout, uniform_index: int, uniform_size: int, entries,
                   status_binding, status_slot: int | None):
        """The bind group of one recorded dispatch: the graph's uniform slot at binding 0,
        ``entries`` ``(binding, PooledBuffer, nbytes, offset)`` as recorded, and, for a kernel
        with a status binding, the graph's status slot ``status_slot`` there."""
        rows = [(0, self.uniform.buffer, uniform_size, self.uniform_offset(uniform_index))]
        for binding, pooled, nbytes, offset in entries:
            if binding == status_binding and status_slot is not None:
                rows.append((binding, self.status.buffer, self.status_nbytes,
                             self.status_offset(status_slot)))
            else:
                rows.append((binding, pooled.buffer, nbytes, offset))
        return self.queue.bind_group(layout, rows)

    def groups(self, groups) -> tuple:
        """A recorded launch's workgroups, folded as the queue folds them."""
        return fold_groups(groups, self.queue.max_groups)

    def release(self) -> None:
        """The buffers go back to the pool (the graph is collected)."""
        pool = self.queue.pool
        for name in ("uniform", "status"):
            pooled = getattr(self, name)
            setattr(self, name, None)
            if pooled is not None:
                try:
                    pool.release(pooled)
                except Exception:  # the device is gone: simply dropped
                    pass


def fold(queue, groups) -> tuple:
    """``groups`` workgroups folded as ``queue`` folds them."""
    return fold_groups(groups, queue.max_groups)


def submit(queue, dispatches: list, times: int, copies=(), staged=(), stamp=None) -> tuple:
    """Submit ``dispatches`` (``batch.py``'s form, without ``pre`` or ``post``) ``times`` times
    over, after the queue's pending batch, in as few submissions as ``MAX_DISPATCHES``
    allows, then ``copies`` (the status readback) in the last; the ``pre`` copies of library
    calls read ``staged`` (a list of bytes, written before each submission). ``stamp``: a
    timed replay's staging buffer (``timing.JobTiming``): timestamps before the first dispatch
    and after the last.

    Returns (the number of the last submission, ``made``): on CPU drivers, where a submission
    made while earlier work runs blocks in the driver, the last one is made by ``made()``,
    which the caller runs once its own locks are free (as the queue's waits do); else None."""
    per = max(1, MAX_DISPATCHES // max(len(dispatches), 1))
    left = times
    with queue.lock:
        queue._check_usable()
        pending = queue.flush("replay", handoff=True)   # launches made before run first
    if pending is not None:
        pending()
    first = True
    while True:
        k = min(per, left)
        left -= k
        work = dispatches * k if k > 1 else dispatches
        with queue.lock:
            queue._check_usable()
            stamps = []
            if stamp is not None:
                if first:
                    queue.timestamps.record(stamps, 0, (stamp, True, False))
                if not left:
                    queue.timestamps.record(stamps, len(work) - 1, (stamp, False, True))
            first = False
            made = queue.submit_recorded(work, list(staged), () if left else copies,
                                         handoff=queue.submit_when_idle, stamps=stamps)
            seq = queue.completion.submitted
        if not left:
            return seq, made
        if made is not None:
            made()
