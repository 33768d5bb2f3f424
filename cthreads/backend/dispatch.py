"""Uploads, dispatches and readbacks on the device queue: deferred batching and submission.

Launches are *deferred*: a dispatch joins the open batch, and a flush encodes every dispatch of
the batch into one command buffer (one compute pass) and submits it once (separate submissions
leave a GPU idle between them, and on CPU drivers each submission's CPU cost dominates tiny
launches: docs/performance.md, "Deferred submission"). ``dispatch`` returns the number of the
submission that will contain the launch; when that submission is made is the table
``FLUSH_RULES`` below. A launch's readback copies ride in the batch right after its dispatch
(ending the compute pass).

``DeviceQueue`` is made of parts that each own their state:

* ``batch`` (``batch.py``): the open batch: its dispatches, the uniform bytes they stage and
  the buffers they bind;
* ``completion`` (``waits.py``): the submissions made and finished, the work-done requests,
  a submission handed off to be made outside the lock, and the waits;
* ``flusher`` (``flusher.py``): the thread that submits a batch at its deadline.

The queue itself owns the lock, the encoder, the bytes last written to each uniform buffer,
the large writes in flight, and the policy (``batching``, ``keep_fed``, ``submit_when_idle``).

On CPU drivers (lavapipe) a submission made while earlier work still runs blocks inside the
driver until that work ends, holding wgpu-native's queue locks (so an upload from another
thread blocks too): there the flusher, waits and ``is_done`` submit a pending batch only once
the device is idle, and the flusher and waits make their submission outside the queue's lock
(``flush(handoff=True)``; ``Completion.settle`` keeps later queue writes, submissions, maps and
work-done requests after it). So ``gpu()`` returns at once while jobs run, and an asyncio loop
that launches never stalls.

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
once deadlock: its callbacks need the GIL), except a handed-off submission, which no poll
overlaps.

Two encoders write the same commands: ``NativeEncoder`` (``native/encoder.py``, direct
wgpu-native calls, the default) and ``public_encoder.py`` (wgpu-py's public API), used when the
native path's self-test fails on a wgpu build and with ``CTHREADS_NATIVE_ENCODER=0``, to tell
an encoder fault from a driver's. A lone dispatch is encoded once more while its join waits
(``spare.py``), so the next identical launch submits without encoding.

Dispatches larger than ``max-compute-workgroups-per-dimension`` workgroups are folded into two
dimensions; the shader recovers the flat workgroup index (see ``codegen/program.py``).
"""

from __future__ import annotations

import threading
import time

from .. import config
from ..errors import CThreadsGPUError, GpuInvalidArgument, GpuUseAfterDestroy, VulkanOutOfMemory
from .batch import Batch
from .bind_groups import create_bind_group
from .buffers import BufferPool, PooledBuffer
from .device import DeviceContext
from .faults import device_error, lost_error
from .flush_rules import FLUSH_RULES
from .flusher import FLUSH_DEADLINE_S, Flusher, _queues
from .native.encoder import make_encoder
from .public_encoder import submit_public, submit_public_timed
from . import capturing, timing
from .grids import fold_groups
from .spare import Spare
from . import uploads
from .uploads import UploadRing, byte_view
from .waits import CPU_SPIN_S, GPU_SPIN_S, Completion

__all__ = ["BATCH_CAP", "FLUSH_DEADLINE_S", "FLUSH_RULES", "IDLE_POLL_EVERY", "DeviceQueue",
           "batching_enabled", "fold_groups"]


#: Most dispatches in one submission; a non-blocking poll for an idle device every this many
#: pending dispatches (without it the device waits for the first batch). How long a batch may
#: stay pending is ``flusher.FLUSH_DEADLINE_S``. The values were chosen by measurement
#: (docs/performance.md, "Deferred submission").
BATCH_CAP = 64
IDLE_POLL_EVERY = 16
#: GPUs: a dispatch of at least this many workgroups keeps the device fed (``keep_fed``);
#: smaller ones, which a GPU finishes in microseconds, batch by the idle rule, else each would
#: be a submission of its own (docs/performance.md, "Deferred submission" and "Queued
#: launches on GPUs")
HEAVY_GROUPS = 1024
#: GPUs: heavy dispatches gather in the open batch until it holds ``DeviceQueue.gather`` of
#: them (from KEEP_FED_BATCH to KEEP_FED_MOST: ``_gathered``), then go as soon as at most one
#: submission is in flight; a batch's first dispatch goes at once when the device is known
#: to be idle (no poll). A submission costs the host 40-120 us on the H200
#: while the device is busy (encoding, the submit, the polls that decide it), so one per
#: dispatch made queues of 17-68 us kernels host-bound (docs/performance.md, "Queued launches
#: on GPUs"); CTHREADS_KEEP_FED=old submits each heavy dispatch alone as before.
KEEP_FED_BATCH = 8
KEEP_FED_MOST = 16

#: Queued writes from this size on are submitted at once; at most this many bytes of them may
#: be in flight (each holds a staging copy of its data until the device has run it).
SUBMIT_WRITES_FROM = 4 << 20
WRITE_STAGING_LIMIT = 128 << 20

#: When the open batch is submitted: ``flush_rules.FLUSH_RULES``, one row per rule.


def batching_enabled() -> bool:
    """False when ``CTHREADS_BATCH=0`` asks for one submission per launch."""
    return config.current().batch


class DeviceQueue:
    """Submission, completion tracking and buffer transfers for one device (see the module
    docstring for its parts)."""

    def __init__(self, ctx: DeviceContext):
        self.ctx = ctx
        self.pool = BufferPool(ctx)
        self._device = ctx.device
        self._queue = ctx.queue
        self.lock = threading.RLock()
        #: workgroups per dispatch axis, at most
        self.max_groups = ctx.limit("max-compute-workgroups-per-dimension")
        self._last_uniform: dict = {}     # uniform buffer -> bytes last written to it
        self._writes_in_flight: list = []     # (submission, bytes) of large queued writes
        self._ring = UploadRing(self)         # uploads of STAGED_FROM bytes or more
        self._native = make_encoder(self._device, self._queue, ctx) \
            if config.current().native_encoder else None
        if self._native is not None:
            self._native.spin_s = CPU_SPIN_S if ctx.is_cpu else GPU_SPIN_S
        # the last lone dispatch encoded again while a join waits (spare.py), or None
        self._spare = Spare(self._native if config.current().launch_path != "old" else None,
                            self.lock, self.pool)
        self._staging = None              # PooledBuffer the staged uniform bytes go through
        self.timestamps = None            # timing.Timestamps, made at the first timed launch
        self.closed = False
        self.batch = Batch()
        self.completion = Completion(ctx, self.lock, self._native, self._device)
        self.flusher = Flusher(self)
        #: False with CTHREADS_BATCH=0: every dispatch is submitted at once
        self.batching = batching_enabled()
        #: on CPU drivers a submission made while earlier work runs blocks inside the driver
        #: (holding wgpu-native's queue locks, so uploads block too) until that work ends:
        #: the flusher, waits and done() submit a pending batch only once the device is idle
        self.submit_when_idle = ctx.is_cpu
        #: GPUs: keep the device fed. A heavy launch (HEAVY_GROUPS) is submitted at once while
        #: at most one earlier submission is in flight, and batched only while two are; a
        #: flush first asks to be told when the work before it ends, which says when only one
        #: is left (docs/performance.md, "Queued launches on GPUs"). Light launches batch by
        #: the idle rule on every device.
        self.keep_fed = not ctx.is_cpu
        #: CTHREADS_KEEP_FED=old: a heavy dispatch is submitted alone while at most one
        #: submission is in flight (else it gathers with others: ``gather``)
        self.keep_fed_alone = config.current().keep_fed == "old"
        #: how many heavy dispatches gather before they go (``_gathered`` adapts it)
        self.gather = KEEP_FED_BATCH
        _queues.add(self)

    # -- read-only views (diagnostics and tests) --------------------------------------------

    @property
    def submitted(self) -> int:
        """How many submissions were made (numbered from 1)."""
        return self.completion.submitted

    @property
    def completed(self) -> int:
        """The last submission known to have finished (with every earlier one)."""
        return self.completion.completed

    @property
    def pending(self) -> int:
        """How many dispatches wait in the open batch."""
        return len(self.batch)

    @property
    def uses_native_encoder(self) -> bool:
        """Whether dispatches are encoded by ``NativeEncoder`` (else wgpu-py's public API)."""
        return self._native is not None

    def _check_usable(self) -> None:
        self.ctx.check_alive()
        if self.closed:
            raise GpuUseAfterDestroy(
                "the device queue was closed by cthreads.gpu.shutdown(); launch again to start "
                "a new device")

    # -- bind groups -------------------------------------------------------------------------

    def bind_group(self, layout, entries) -> object:
        """A bind group from ``[(binding, wgpu buffer, size in bytes[, byte offset]), ...]``
        (an offset, a GpuArray view's, is a multiple of the device's
        min-storage-buffer-offset-alignment: ``BufferPool.offset_alignment``)."""
        with self.lock:
            return create_bind_group(self.ctx, layout, entries)

    def forget_uniform(self, buffer) -> None:
        """A kernel's uniform buffer is going away: forget the bytes last written to it."""
        self._last_uniform.pop(buffer, None)

    # -- transfers ---------------------------------------------------------------------------

    def upload_new(self, data) -> PooledBuffer:
        """A pooled storage buffer holding ``data`` (written at creation when it is new and
        small; large data goes through ``upload``'s staging ring, which is faster)."""
        capturing.check("an upload of host data into a new device buffer")   # v3's capture()
        nbytes = memoryview(data).nbytes
        if nbytes >= uploads.STAGED_FROM:
            pooled = self.pool.acquire(nbytes)
            try:
                self.upload(pooled, data)
            except BaseException:
                self.pool.release(pooled)
                raise
            return pooled
        pooled = self.pool.acquire(nbytes, init=data)
        if not pooled.filled:
            self.upload(pooled, data)
        return pooled

    def upload(self, pooled: PooledBuffer, data, offset: int = 0) -> None:
        """Queue a copy of ``data`` (a buffer-protocol object) into ``pooled`` from byte
        ``offset`` (a multiple of 4).

        A queued write lands before the next submission: when a pending dispatch binds
        ``pooled`` (an arena re-bind, a buffer an arena released), the batch is submitted
        first. Other uploads leave the batch pending; on a CPU driver a submission made while
        earlier work runs blocks until that work ends, and ``gpu()`` must return at once.
        A queued write keeps a staging copy of the data until a submission carries it and the
        device has run it: writes from ``SUBMIT_WRITES_FROM`` bytes on are submitted at once,
        and more than ``WRITE_STAGING_LIMIT`` bytes of them in flight are waited for (without
        that, re-binding large arenas grew by one copy per bind until the next launch).
        From ``STAGED_FROM`` bytes on (contiguous data) the copy goes through the staging
        ring instead (``uploads.py``), submitted after the pending dispatches.
        """
        capturing.check("an upload of host data")
        nbytes = memoryview(data).nbytes
        view = byte_view(data) if nbytes >= uploads.STAGED_FROM else None
        if view is not None:          # large: through the staging ring (uploads.py)
            self._ring.upload(pooled, view, offset)
            return
        if nbytes:
            with self.lock:
                if self.batch.binds(pooled):
                    self.flush("upload")
                self.pool.check_staging(nbytes, f"uploading a list of {nbytes:,} bytes")
                self.completion.settle()
                try:
                    self._queue.write_buffer(pooled.buffer, offset, data)
                except Exception as exc:
                    raise device_error(self.ctx, exc, f"uploading {nbytes:,} bytes") from None
                if nbytes >= SUBMIT_WRITES_FROM:
                    self._submit_writes(nbytes)

    def _submit_writes(self, nbytes: int) -> None:
        """Submit the queued writes now (lock held), so their staging memory goes back. A
        pending batch goes with them: it was promised the next submission number, which a
        submission of its own would take (the batch's joins then returned before it ran)."""
        done = self.completion
        if self.batch:
            self.flush("large_write")  # the writes land before the batch, which does not bind
        else:                          # the buffers they write (``upload`` checked)
            done.settle()
            self._queue.submit([])
            done.note_submission()
        self._writes_in_flight = [(s, n) for s, n in self._writes_in_flight
                                  if s > done.completed] + [(done.submitted, nbytes)]
        if sum(n for _, n in self._writes_in_flight) > WRITE_STAGING_LIMIT:
            self.wait(done.submitted)

    def write(self, buffer, data: bytes) -> None:
        """Queue a small write (ordered after every launch made so far)."""
        with self.lock:
            if self.batch:
                self.flush("write")
            self._write(buffer, data)

    def _write(self, buffer, data: bytes) -> None:
        self.completion.settle()
        if self._native is not None:
            self._native.write(buffer, data)
        else:
            self._queue.write_buffer(buffer, 0, data)

    def submit_copies(self, copies) -> int:
        """Submit copies ``[(src, src_offset, dst, dst_offset, nbytes), ...]`` after every
        pending dispatch (in the same command buffer); returns the submission's number."""
        capturing.check("a device copy or download")
        with self.lock:
            self._check_usable()
            self.flush("readback", copies)
            return self.completion.submitted

    # -- timed jobs ---------------------------------------------------------------------------

    def job_timing(self) -> timing.JobTiming | None:
        """The timestamps' destination for one timed job, or None on a device without
        ``timestamp-query`` (``timing.job_timing``)."""
        return timing.job_timing(self)

    # -- dispatches --------------------------------------------------------------------------

    def dispatch(self, pipeline, bind_group, groups: int, uniform=None, copies=(),
                 buffers=(), more: bool = False, stamp=None) -> int:
        """Queue one compute dispatch (``copies``, readback copies, go right after it); returns
        the number of the submission that holds it (``FLUSH_RULES`` says when that submission
        is made). ``buffers`` are the PooledBuffers the bind group binds: an upload into one
        of them while the dispatch is pending submits the batch first.

        ``uniform`` is ``(buffer, bytes)``: written at once, or, when a pending dispatch still
        reads the old bytes, copied in by the batch right before this dispatch; so each launch
        sees its own scalars even when the previous launch has not run yet.

        ``more``: a dispatch that needs this one's results follows at once (the passes of a
        reduction), so an idle device does not get this one submitted alone.

        ``stamp``: a timed job's ``(staging buffer, before, after)``: timestamps are written
        before and/or after this dispatch (``timing.py``; ``job_timing`` made the buffer).
        """
        if capturing.active and capturing.capturing():    # recorded or refused (capturing.py)
            return capturing.record(self, pipeline, bind_group, groups, uniform, copies, buffers)
        folded = (groups, 1, 1) if groups.__class__ is int and 0 < groups <= self.max_groups \
            else fold_groups(groups, self.max_groups)
        with self.lock:
            self._check_usable()
            batch = self.batch
            pre = None
            buf = None
            if uniform is not None:
                buf, data = uniform
                if self._last_uniform.get(buf) != data:
                    if batch.reads(buf) or self.completion.handing_off:
                        # pending dispatches read the old bytes: the batch copies the new ones
                        # in right before this dispatch
                        pre = batch.stage(buf, data)
                    else:
                        self._write(buf, data)
                    self._last_uniform[buf] = data
            count = batch.record((pipeline, bind_group, folded, pre, tuple(copies)))
            if stamp is not None:
                self.timestamps.record(batch.stamps, count - 1, stamp)
            # A launch with readback copies joins the batch too while the device is busy:
            # on lavapipe a submission made while earlier work runs blocks until that work
            # ends, and gpu() must return at once (an asyncio loop calls it)
            rule = self._submit_now(count, folded, more)
            if rule is not None:
                self.flush(rule)
                return self.completion.submitted
            batch.keep_open(buf, buffers)
            if count == 1:
                self.flusher.batch_opened()
            return self.completion.submitted + 1

    def _submit_now(self, count: int, folded, more: bool) -> str | None:
        """The row of ``FLUSH_RULES`` that submits the batch at this dispatch, or None (lock
        held; the batch holds ``count`` dispatches, the last ``folded`` workgroups)."""
        if not self.batching:
            return "unbatched"
        if count >= BATCH_CAP:
            return "count"
        if more:
            return None
        if self.keep_fed and folded[0] * folded[1] * folded[2] >= HEAVY_GROUPS:
            done = self.completion
            if self.keep_fed_alone:
                return "keep_fed" if done.room() else None
            if count == 1:                 # at once when the device is known to be idle
                return "keep_fed" if done.idle(False) else None
            if count >= self.gather:       # queued behind the running submission
                return "keep_fed" if self._gathered() else None
            return None
        return "idle" if self.completion.idle(count % IDLE_POLL_EVERY == 0) else None

    def _gathered(self) -> bool:
        """Whether a full gathered batch goes now: at most one submission in flight (one
        poll). The count to gather adapts: doubled (to KEEP_FED_MOST) when the device had run
        dry, so a host slower than the device makes fewer, larger submissions; halved (to
        KEEP_FED_BATCH) while work was still queued (lock held)."""
        done = self.completion
        if done.submitted > done.completed and not done.handing_off:
            done.poll_fence()
        left = done.submitted - done.completed
        if left > 1:
            return False
        self.gather = min(2 * self.gather, KEEP_FED_MOST) if left == 0 else \
            max(self.gather // 2, KEEP_FED_BATCH)
        return True

    # -- submission --------------------------------------------------------------------------

    def flush(self, rule: str, copies=(), handoff: bool = False):
        """Submit the open batch, then ``copies``, as one command buffer (lock held); ``rule``
        is the row of ``FLUSH_RULES`` that asked. With ``handoff`` the submission is made by
        the returned function, which the caller runs after releasing the lock (see
        ``submit_recorded``); else None is returned."""
        batch = self.batch
        if not batch and not copies:
            return None
        stamps = batch.stamps
        dispatches, staged = batch.take()
        if self.closed:                # shut down: dropped, never submitted to a dead device
            return None
        return self.submit_recorded(dispatches, staged, copies, handoff, stamps)

    def submit_recorded(self, dispatches, staged, copies=(), handoff: bool = False,
                        stamps=()):
        """Submit recorded ``dispatches`` (``batch.py``'s form) whose ``pre`` copies read
        ``staged`` (a list of bytes), then ``copies``, as one command buffer (lock held).

        The submission is counted even when it fails, so the numbers handed out stay true.
        With ``handoff`` the command buffer is encoded here but submitted by the returned
        function, which the caller runs after releasing the lock (a submission may block on
        lavapipe while earlier work runs; the lock must stay free for launches meanwhile);
        ``Completion.settle`` keeps every later wgpu queue call after it.
        ``stamps``: timed jobs' timestamps (``Batch.stamps``), encoded by ``timing.commands``.
        """
        done = self.completion
        done.settle()
        if self.keep_fed:
            done.fence_before_submit()     # told when the work before this one ends
        try:
            src = None
            if staged:
                blob = b"".join(staged)
                if self._staging is None or self._staging.capacity < len(blob):
                    self._staging = self.pool.acquire(len(blob), "staged")
                src = self._staging.buffer
                self._write(src, blob)         # lands before this submission
            native = self._native
            cmds = timing.commands(dispatches, stamps, self.timestamps.inside_passes,
                                   self.timestamps) if stamps else None
            if native is not None:
                cb = self._spare.take(dispatches, copies, src, stamps)
                if cb is None:
                    cb = native.encode_batch(dispatches, copies, src) if cmds is None else \
                        native.encode_timed(cmds, copies, src, self.timestamps)
                if self.ctx.lost is not None:   # seen while encoding: never submit it
                    native.discard(cb)
                    raise lost_error(self.ctx, f"{self.ctx.lost}; seen while submitting work")
                self._spare.submitted(dispatches, copies, src, stamps)
                if handoff:
                    return done.hand_off(native.submit, cb)
                native.submit(cb)
            elif cmds is not None:
                submit_public_timed(self.ctx, cmds, copies, src, self.timestamps)
            else:
                submit_public(self.ctx, dispatches, copies, src)
        except MemoryError as exc:
            raise VulkanOutOfMemory(f"the device ran out of memory submitting work ({exc})") \
                from None
        except CThreadsGPUError:
            raise
        except Exception as exc:
            raise device_error(self.ctx, exc, "submitting work") from None
        finally:
            done.note_submission()
        return None

    # -- completion and readback -------------------------------------------------------------

    def is_done(self, seq: int) -> bool:
        """Whether submission ``seq`` finished (never blocks; submits it if still pending)."""
        done = self.completion
        if seq <= done.completed:
            return True
        with self.lock:
            if self.closed:
                return True
            done.check_lost(self.closed)
            if seq > done.submitted:
                if self.submit_when_idle and not done.idle(True):
                    return False
                self.flush("join")
            return done.is_done(seq)

    def wait(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until submission ``seq`` (and all before it) finished, submitting it first if
        it is still pending; False if ``timeout`` seconds passed first.

        Waits in slices: non-blocking polls for the spin time, then polls between sleeps of
        at most ``waits.WAIT_SLICE_S``. Each poll is made under the queue's lock (with several
        threads polling wgpu-native at once its callbacks, which need the GIL, deadlock),
        but the lock is free between polls, so other threads launch meanwhile; and the
        sleeps let Python run signal handlers (Ctrl-C raises ``KeyboardInterrupt`` here).
        A closed queue (shutdown, interpreter exit) ends the wait.
        """
        done = self.completion
        if seq <= done.completed:
            return True
        start = time.perf_counter()
        deadline = None if timeout is None else start + max(timeout, 0.0)
        submit = None
        with self.lock:
            if self.closed:
                return True
            earlier = done.submitted if seq > done.submitted else 0
        if earlier > done.completed and self.submit_when_idle:
            # the earlier work first (see submit_when_idle), then the pending batch
            if not self.wait(earlier, None if deadline is None else deadline - start):
                return False
        try:
            with self.lock:
                if self.closed:
                    return True
                if seq > done.submitted:
                    submit = self.flush("join", handoff=True)
                    seq = min(seq, done.submitted)
        finally:                       # even on Ctrl-C: a handed-off submission is made
            if submit is not None:
                submit()
        poll = lambda: done.poll_done(seq, start, self._is_closed)  # noqa: E731
        if self._spare.wanted() and not poll():
            self._spare.encode_for(self)        # while the device works (spare.py)
        if not done.poll_in_slices(poll, start, deadline):
            return False
        self.ctx.check_alive()
        return True

    def _is_closed(self) -> bool:
        return self.closed

    def read_into(self, staging: PooledBuffer, nbytes: int, seq: int, into=None) -> bytes:
        """A copy of the first ``nbytes`` of a staging buffer that submission ``seq`` wrote;
        with ``into`` (a writable byte memoryview) its first ``len(into)`` bytes go straight
        there (one copy, no intermediate bytes object) and only the rest is returned.

        Waits for ``seq`` first (in slices, the lock free between them: see ``wait``), so the
        map itself is quick and the mapped range is only copied, never converted, under the
        lock. GPUs ask for the map at once instead and wait for it alone
        (``Completion.read_when_mapped``).
        """
        done = self.completion
        if self.keep_fed and self._native is not None and not self.closed:
            with self.lock:
                if seq > done.submitted:
                    self.flush("readback")
                done.settle()
                key = self._native.map_request(staging.buffer, nbytes)
            return done.read_when_mapped(staging, nbytes, seq, key, into)
        self.wait(seq)
        with self.lock:
            if seq > done.submitted:
                self.flush("readback")
            done.settle()
            if self._native is not None:
                result = self._native.read(staging.buffer, nbytes, into)
            else:
                buf = staging.buffer
                try:
                    buf.map_sync("READ", 0, nbytes)
                except Exception as exc:
                    raise device_error(self.ctx, exc, "reading results back") from None
                try:
                    mapped = buf.read_mapped(0, nbytes, copy=False)
                    head = 0 if into is None else len(into)
                    if head:
                        into[:] = mapped[:head]
                    result = bytes(mapped[head:])
                finally:
                    buf.unmap()
        done.mark(seq)
        return result

    def idle(self) -> None:
        """Submit the pending batch and wait for every submission (before freeing resources)."""
        with self.lock:
            self.flush("drain")
        self.wait(self.completion.submitted)

    # -- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Submit the pending batch and stop submitting: later launches raise, the flusher
        ends (idempotent; shutdown and interpreter exit call it while the device lives)."""
        with self.lock:
            if self.closed:
                return
            try:
                self.flush("close")
            except Exception:
                pass
            self._spare.drop()
            self.closed = True
            self.flusher.stop()
            self._ring.forget()

    def forget_after_fork(self) -> None:
        """In a forked child: this queue belongs to the parent's device; it is closed without
        a flush (nothing may be submitted to that device) and gets fresh locks."""
        self.lock = threading.RLock()
        self.completion.after_fork(self.lock)
        self.closed = True
        self._ring = UploadRing(self)
        self.batch = Batch()
        self._spare.forget(self.lock)
