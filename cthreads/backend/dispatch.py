"""Uploads, dispatches and readbacks on the device queue: deferred batching and submission.

Launches are *deferred*: a dispatch joins a pending batch, and a flush encodes every pending
dispatch into one command buffer (one compute pass) and submits it once (separate submissions
leave a GPU idle between them, and on CPU drivers each submission's CPU cost dominates tiny
launches: docs/performance.md, "Deferred submission"). ``dispatch`` returns the
number of the submission that will contain the launch, and the batch is flushed

* at once when nothing is in flight (a lone launch, or one after a join, is submitted right
  away, so single-launch latency does not change), or when the batch holds ``BATCH_CAP``
  dispatches, or, checked every ``IDLE_POLL_EVERY`` pending dispatches with one non-blocking
  poll, when the device has finished everything submitted; on GPUs a heavy dispatch
  (``HEAVY_GROUPS``) also at once while at most one submission is in flight (``_keep_fed``);
* before anything that must see the pending work: a queue write (uploads, ``write``: a queued
  write lands before the *next* submission, so a pending dispatch would see the new bytes), a
  map (``read_into``), waits and ``is_done`` for a number not yet submitted, ``idle()`` and
  closing the queue; a launch's readback copies ride in the batch right after its dispatch
  (ending the compute pass);
* by a daemon flusher thread (one per queue, started with the first batch) when a batch is
  still pending ``FLUSH_DEADLINE_S`` after it opened, so launched work never waits for a join
  that does not come (``flusher.py``).

On CPU drivers (lavapipe) a submission made while earlier work still runs blocks inside the
driver until that work ends, holding wgpu-native's queue locks (so an upload from another
thread blocks too): there the flusher, waits and ``is_done`` submit a pending batch only once
the device is idle, and the flusher and waits make their submission outside the queue's lock
(``_flush(handoff=True)``; ``_wgpu_lock`` keeps later queue writes, submissions, maps and
work-done requests after it). So ``gpu()`` returns at once while jobs run, and an asyncio
loop that launches never stalls.

A launch's scalars live in its kernel's one uniform buffer. When they change while a pending
dispatch still reads that buffer, the new bytes are not written at once: they are staged, and
the batch copies them into the uniform buffer right before the dispatch that uses them (which
ends the compute pass and opens another, still in the one command buffer); all staged bytes
of a batch reach the device in one queue write at the flush. So loops with changing scalars
batch too.

Until they are submitted the batch keeps Python references to its pipelines and bind groups
(which keep their buffers alive); pooled buffers are never destroyed (see ``buffers.py``).
Shutdown, interpreter exit and forks close the queue (``flusher.py``). Every wgpu call here,
the flusher's included, is made under the queue's lock (two threads polling wgpu-native at
once deadlocked: its callbacks need the GIL), except a handed-off submission, which no poll
overlaps. ``CTHREADS_BATCH=0`` turns batching off: every dispatch is submitted at once, in a
command buffer of its own, as before.

Completion tracking and waits are in ``waits.py``.

Dispatches larger than ``max-compute-workgroups-per-dimension`` workgroups are folded into two
dimensions; the shader recovers the flat workgroup index (see ``codegen/program.py``).
"""

from __future__ import annotations

import threading
import time

from .. import config
from ..errors import CThreadsGPUError, GpuInvalidArgument, GpuUseAfterDestroy, VulkanOutOfMemory
from .buffers import BufferPool, PooledBuffer
from .device import DeviceContext
from .faults import device_error, lost_error
from .native.encoder import make_encoder
from .flusher import FLUSH_DEADLINE_S, FlusherMixin, _queues
from .waits import CPU_SPIN_S, GPU_SPIN_S, CompletionMixin

__all__ = ["BATCH_CAP", "FLUSH_DEADLINE_S", "IDLE_POLL_EVERY", "DeviceQueue",
           "batching_enabled", "fold_groups"]


#: Deferred submission: most dispatches in one submission; a non-blocking poll for an idle
#: device every this many pending dispatches (without it the device waits for the first
#: batch). How long a batch may stay pending is ``flusher.FLUSH_DEADLINE_S``. The values were
#: chosen by measurement (docs/performance.md, "Deferred submission").
BATCH_CAP = 64
#: GPUs: a dispatch of at least this many workgroups keeps the device fed (``_keep_fed``);
#: smaller ones, which a GPU finishes in microseconds, batch by the idle rule, else each would
#: be a submission of its own (2,000 queued n=64 launches: ~105 us each alone, ~30 batched)
HEAVY_GROUPS = 1024
IDLE_POLL_EVERY = 16

#: Queued writes from this size on are submitted at once; at most this many bytes of them may
#: be in flight (each holds a staging copy of its data until the device has run it).
SUBMIT_WRITES_FROM = 4 << 20
WRITE_STAGING_LIMIT = 128 << 20


def batching_enabled() -> bool:
    """False when ``CTHREADS_BATCH=0`` asks for one submission per launch."""
    return config.current().batch


def fold_groups(groups, max_per_dim: int) -> tuple[int, int, int]:
    """(x, y, 1) workgroup counts covering ``groups`` flat workgroups; a tuple (x, y, z),
    each within the limit, is the grid itself."""
    if isinstance(groups, tuple):
        return groups
    if groups <= max_per_dim:
        return (max(groups, 1), 1, 1)
    gy = -(-groups // max_per_dim)
    gx = -(-groups // gy)
    if gy > max_per_dim:
        raise GpuInvalidArgument(
            f"a dispatch of {groups:,} workgroups exceeds the device's "
            f"{max_per_dim:,} x {max_per_dim:,} grid; use a smaller n")
    return (gx, gy, 1)


class DeviceQueue(FlusherMixin, CompletionMixin):
    """Submission, completion tracking and buffer transfers for one device."""

    def __init__(self, ctx: DeviceContext):
        self.ctx = ctx
        self.pool = BufferPool(ctx)
        self._device = ctx.device
        self._queue = ctx.queue
        self._lock = threading.RLock()
        self.submitted = 0
        self.completed = 0
        #: workgroups per dispatch axis, at most
        self.max_groups = ctx.limit("max-compute-workgroups-per-dimension")
        self._poll = self._native_poll()
        self._last_uniform: dict = {}     # uniform buffer -> bytes last written to it
        self._writes_in_flight: list = []     # (submission, bytes) of large queued writes
        self._fence_req = None            # (submission it covers, work-done request key)
        self._native = make_encoder(self._device, self._queue, ctx) \
            if config.current().native_encoder else None
        self._next_probe = 0.0            # when an unanswered wait next probes for a loss
        if self._native is not None:
            self._native.spin_s = CPU_SPIN_S if ctx.is_cpu else GPU_SPIN_S
        #: False with CTHREADS_BATCH=0: every dispatch is submitted at once
        self.batching = batching_enabled()
        self._pending: list = []          # (pipeline, bind group, (x, y, z), pre, post copies)
        self._pending_uniforms: set = set()   # uniform buffers those dispatches read
        self._pending_buffers: set = set()    # PooledBuffers those dispatches bind
        self._staged: list = []           # new uniform bytes the batch copies in before use
        self._staged_size = 0
        self._staging = None              # PooledBuffer the staged bytes are written into
        self._opened_at = 0.0             # when the pending batch got its first dispatch
        self._closed = False
        self._wake = threading.Event()    # set while a batch is open (the flusher watches it)
        self._flusher: threading.Thread | None = None
        # A submission handed off to be made outside the lock (see ``_flush``) holds this
        # lock until wgpu-native returns; ``_submitting`` says one is in flight.
        self._wgpu_lock = threading.Lock()
        self._submitting = False
        #: on CPU drivers a submission made while earlier work runs blocks inside the driver
        #: (holding wgpu-native's queue locks, so uploads block too) until that work ends:
        #: the flusher, waits and done() submit a pending batch only once the device is idle
        self._submit_when_idle = ctx.is_cpu
        #: GPUs: keep the device fed. A heavy launch (HEAVY_GROUPS) is submitted at once while
        #: at most one earlier submission is in flight (so the next work is always queued
        #: behind the running one) and batched only while two are; a flush first asks to be
        #: told when the work before it ends, which says when only one is left (queued 64M
        #: saxpys had run at 0.72x torch's rate: docs/performance.md, "Queued launches on
        #: GPUs"). Light launches batch by the idle rule on every device.
        self._keep_fed = not ctx.is_cpu
        _queues.add(self)

    def _check_usable(self) -> None:
        self.ctx.check_alive()
        if self._closed:
            raise GpuUseAfterDestroy(
                "the device queue was closed by cthreads.gpu.shutdown(); launch again to start "
                "a new device")

    # -- bind groups -------------------------------------------------------------------------

    def bind_group(self, layout, entries) -> object:
        """A bind group from ``[(binding, wgpu buffer, size in bytes), ...]``."""
        with self._lock:
            try:
                return self._device.create_bind_group(layout=layout, entries=[
                    {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": size}}
                    for b, buf, size in entries])
            except Exception as exc:
                raise device_error(self.ctx, exc, "creating a bind group") from None

    def forget_uniform(self, buffer) -> None:
        """A kernel's uniform buffer is going away: forget the bytes last written to it."""
        self._last_uniform.pop(buffer, None)

    # -- transfers ---------------------------------------------------------------------------

    def upload_new(self, data) -> PooledBuffer:
        """A pooled storage buffer holding ``data`` (written at creation when it is new)."""
        pooled = self.pool.acquire(memoryview(data).nbytes, init=data)
        if not pooled.filled:
            self.upload(pooled, data)
        return pooled

    def upload(self, pooled: PooledBuffer, data) -> None:
        """Queue a copy of ``data`` (a buffer-protocol object) into ``pooled``.

        A queued write lands before the next submission: when a pending dispatch binds
        ``pooled`` (an arena re-bind, a buffer an arena released), the batch is submitted
        first. Other uploads leave the batch pending; on a CPU driver a submission made while
        earlier work runs blocks until that work ends, and ``gpu()`` must return at once.
        A queued write keeps a staging copy of the data until a submission carries it and the
        device has run it: writes from ``SUBMIT_WRITES_FROM`` bytes on are submitted at once,
        and more than ``WRITE_STAGING_LIMIT`` bytes of them in flight are waited for (without
        that, re-binding large arenas grew by one copy per bind until the next launch).
        """
        nbytes = memoryview(data).nbytes
        if nbytes:
            with self._lock:
                if self._pending and pooled in self._pending_buffers:
                    self._flush()
                self.pool.check_staging(nbytes, f"uploading a list of {nbytes:,} bytes")
                self._settle()
                try:
                    self._queue.write_buffer(pooled.buffer, 0, data)
                except Exception as exc:
                    raise device_error(self.ctx, exc, f"uploading {nbytes:,} bytes") from None
                if nbytes >= SUBMIT_WRITES_FROM:
                    self._submit_writes(nbytes)

    def _submit_writes(self, nbytes: int) -> None:
        """Submit the queued writes now (lock held), so their staging memory goes back. A
        pending batch goes with them: it was promised the next submission number, which a
        submission of its own would take (the batch's joins then returned before it ran)."""
        if self._pending:
            self._flush()              # the writes land before the batch, which does not bind
        else:                          # the buffers they write (``upload`` checked)
            self._settle()
            self._queue.submit([])
            self.submitted += 1
        self._writes_in_flight = [(s, n) for s, n in self._writes_in_flight
                                  if s > self.completed] + [(self.submitted, nbytes)]
        if sum(n for _, n in self._writes_in_flight) > WRITE_STAGING_LIMIT:
            self.wait(self.submitted)

    def write(self, buffer, data: bytes) -> None:
        """Queue a small write (ordered after every launch made so far)."""
        with self._lock:
            if self._pending:
                self._flush()
            self._write(buffer, data)

    def _settle(self) -> None:
        """Wait for a handed-off submission to be made (lock held): queue writes, submissions,
        maps and work-done requests must come after it."""
        if self._submitting:
            with self._wgpu_lock:
                pass

    def _write(self, buffer, data: bytes) -> None:
        self._settle()
        if self._native is not None:
            self._native.write(buffer, data)
        else:
            self._queue.write_buffer(buffer, 0, data)

    def submit_copies(self, copies) -> int:
        """Submit copies ``[(src, src_offset, dst, dst_offset, nbytes), ...]`` after every
        pending dispatch (in the same command buffer); returns the submission's number."""
        with self._lock:
            self._check_usable()
            self._flush(copies)
            return self.submitted

    def dispatch(self, pipeline, bind_group, groups: int, uniform=None, copies=(),
                 buffers=(), more: bool = False) -> int:
        """Queue one compute dispatch (``copies``, readback copies, go right after it); returns
        the number of the submission that holds it (see the module docstring for when that
        submission is made). ``buffers`` are the PooledBuffers the bind group binds: an upload
        into one of them while the dispatch is pending submits the batch first.

        ``uniform`` is ``(buffer, bytes)``: written at once, or, when a pending dispatch still
        reads the old bytes, copied in by the batch right before this dispatch; so each launch
        sees its own scalars even when the previous launch has not run yet.

        ``more``: a dispatch that needs this one's results follows at once (the passes of a
        reduction), so an idle device does not get this one submitted alone.
        """
        folded = fold_groups(groups, self.max_groups)
        with self._lock:
            self._check_usable()
            pre = None
            if uniform is not None:
                buf, data = uniform
                if self._last_uniform.get(buf) != data:
                    if buf in self._pending_uniforms or self._submitting:
                        # pending dispatches read the old bytes: the batch copies the new ones
                        # in right before this dispatch
                        pre = (self._staged_size, buf, len(data))
                        self._staged.append(data)
                        self._staged_size += len(data)
                    else:
                        self._write(buf, data)
                    self._last_uniform[buf] = data
            pending = self._pending
            pending.append((pipeline, bind_group, folded, pre, tuple(copies)))
            count = len(pending)
            # A launch with readback copies joins the batch too while the device is busy:
            # on lavapipe a submission made while earlier work runs blocks until that work
            # ends, and gpu() must return at once (an asyncio loop calls it)
            if (not self.batching or count >= BATCH_CAP
                    or (not more and (self._room() if self._keep_fed and
                                      folded[0] * folded[1] * folded[2] >= HEAVY_GROUPS else
                                      self._idle(count % IDLE_POLL_EVERY == 0)))):
                self._flush()
                return self.submitted
            if uniform is not None:
                self._pending_uniforms.add(uniform[0])
            self._pending_buffers.update(buffers)
            if count == 1:
                self._opened_at = time.perf_counter()
                if not self._wake.is_set():
                    if self._flusher is None:
                        self._start_flusher()
                    self._wake.set()
            return self.submitted + 1

    def _flush(self, copies=(), handoff: bool = False):
        """Submit the pending dispatches, then ``copies``, as one command buffer (lock held).

        The submission is counted even when it fails, so the numbers handed out stay true.
        With ``handoff`` the command buffer is encoded here but submitted by the returned
        function, which the caller runs after releasing the lock (a submission may block on
        lavapipe while earlier work runs; the lock must stay free for launches meanwhile);
        the ``_wgpu_lock`` held until then keeps every later wgpu queue call after it.
        """
        batch = self._pending
        if not batch and not copies:
            return None
        self._pending = []
        self._pending_uniforms.clear()
        self._pending_buffers.clear()
        staged, self._staged, self._staged_size = self._staged, [], 0
        if self._closed:               # shut down: dropped, never submitted to a dead device
            return None
        self._settle()
        if (self._keep_fed and self._native is not None and self._fence_req is None
                and self.submitted > self.completed):
            # told when the work before this submission ends (see _keep_fed)
            self._fence_req = (self.submitted, self._native.work_done_request())
        try:
            src = None
            if staged:
                blob = b"".join(staged)
                if self._staging is None or self._staging.capacity < len(blob):
                    self._staging = self.pool.acquire(len(blob), "storage")
                src = self._staging.buffer
                self._write(src, blob)         # lands before this submission
            if self._native is not None:
                cb = self._native.encode_batch(batch, copies, src)
                if self.ctx.lost is not None:   # seen while encoding: never submit it
                    self._native.discard(cb)
                    raise lost_error(self.ctx, f"{self.ctx.lost}; seen while submitting work")
                if handoff:
                    self._wgpu_lock.acquire()
                    self._submitting = True
                    return lambda: self._submit_handed_off(cb)
                self._native.submit(cb)
            else:
                self._submit_public(batch, copies, src)
        except MemoryError as exc:
            raise VulkanOutOfMemory(f"the device ran out of memory submitting work ({exc})") \
                from None
        except CThreadsGPUError:
            raise
        except Exception as exc:
            raise device_error(self.ctx, exc, "submitting work") from None
        finally:
            self.submitted += 1
        return None

    def _submit_handed_off(self, cb) -> None:
        """Make a submission ``_flush(handoff=True)`` encoded (queue lock free)."""
        try:
            self._native.submit(cb)
        finally:
            self._submitting = False
            self._wgpu_lock.release()

    def _submit_public(self, batch, copies, staged) -> None:
        """``_flush`` through wgpu-py's public API (CTHREADS_NATIVE_ENCODER=0); the same
        commands as ``NativeEncoder.encode_batch``."""
        encoder = self._device.create_command_encoder()
        cpass = None
        last_pipeline = last_group = None
        for pipeline, bind_group, (gx, gy, gz), pre, post in batch:
            if pre is not None:
                if cpass is not None:
                    cpass.end()
                    cpass = None
                encoder.copy_buffer_to_buffer(staged, pre[0], pre[1], 0, pre[2])
            if cpass is None:
                cpass = encoder.begin_compute_pass()
                last_pipeline = last_group = None
            if pipeline is not last_pipeline:
                cpass.set_pipeline(pipeline)
                last_pipeline = pipeline
            if bind_group is not last_group:
                cpass.set_bind_group(0, bind_group)
                last_group = bind_group
            cpass.dispatch_workgroups(gx, gy, gz)
            if post:
                cpass.end()
                cpass = None
                for src, src_off, dst, dst_off, nbytes in post:
                    encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
        if cpass is not None:
            cpass.end()
        for src, src_off, dst, dst_off, nbytes in copies:
            encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
        finished = encoder.finish()
        if self.ctx.lost is not None:     # a submission to a lost device aborts the process
            raise lost_error(self.ctx, f"{self.ctx.lost}; seen while submitting work")
        self._queue.submit([finished])

    def flushed(self, seq: int) -> bool:
        """Whether submission ``seq`` was made (never submits anything; for tests)."""
        return seq <= self.submitted

    def pending(self) -> int:
        """How many dispatches wait in the batch (for tests and diagnostics)."""
        return len(self._pending)

    def read_into(self, staging: PooledBuffer, nbytes: int, seq: int) -> bytes:
        """A copy of the first ``nbytes`` of a staging buffer that submission ``seq`` wrote.

        Waits for ``seq`` first (in slices, the lock free between them: see ``wait``), so the
        map itself is quick and the mapped range is only copied, never converted, under the
        lock. GPUs ask for the map at once instead and wait for it alone (``_read_when_mapped``).
        """
        if self._keep_fed and self._native is not None and not self._closed:
            return self._read_when_mapped(staging, nbytes, seq)
        self.wait(seq)
        with self._lock:
            if seq > self.submitted:
                self._flush()
            self._settle()
            if self._native is not None:
                result = self._native.read(staging.buffer, nbytes)
            else:
                buf = staging.buffer
                try:
                    buf.map_sync("READ", 0, nbytes)
                except Exception as exc:
                    raise device_error(self.ctx, exc, "reading results back") from None
                try:
                    result = bytes(buf.read_mapped(0, nbytes, copy=False))
                finally:
                    buf.unmap()
        self._mark(seq)
        return result

    def idle(self) -> None:
        """Submit the pending batch and wait for every submission (before freeing resources)."""
        with self._lock:
            self._flush()
        self.wait(self.submitted)
