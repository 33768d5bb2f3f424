"""Uploads, dispatches, readbacks and completion tracking on the device queue.

Every launch is one command buffer submitted at once (so ``gpu()`` really returns submitted
work): a compute pass, then, for lists that will be read back, copies into staging buffers.
Submissions are numbered; the queue runs them in order, so one finished submission means every
earlier one finished too. Completion is learned from wgpu-native's work-done notification
(non-blocking for ``done()``, blocking for ``wait()``) or by mapping a job's staging buffers;
never from the poll's "queue empty" answer, which NVIDIA's driver gave too early.

Dispatches larger than ``max-compute-workgroups-per-dimension`` workgroups are folded into two
dimensions; the shader recovers the flat workgroup index (see ``codegen/program.py``).
"""

from __future__ import annotations

import os
import threading

from ..errors import GpuInvalidArgument, VulkanOutOfMemory
from .buffers import BufferPool, PooledBuffer
from .device import DeviceContext
from .fastpath import make_encoder


#: How long waits poll without blocking before they block, on CPU drivers and on GPUs.
CPU_SPIN_S = 0.0001
GPU_SPIN_S = 0.002


def fold_groups(groups: int, max_per_dim: int) -> tuple[int, int, int]:
    """(x, y, 1) workgroup counts covering ``groups`` flat workgroups."""
    if groups <= max_per_dim:
        return (max(groups, 1), 1, 1)
    gy = -(-groups // max_per_dim)
    gx = -(-groups // gy)
    if gy > max_per_dim:
        raise GpuInvalidArgument(
            f"a dispatch of {groups:,} workgroups exceeds the device's "
            f"{max_per_dim:,} x {max_per_dim:,} grid; use a smaller n")
    return (gx, gy, 1)


class DeviceQueue:
    """Submission, completion tracking and buffer transfers for one device."""

    def __init__(self, ctx: DeviceContext):
        self.ctx = ctx
        self.pool = BufferPool(ctx)
        self._device = ctx.device
        self._queue = ctx.queue
        self._lock = threading.RLock()
        self.submitted = 0
        self.completed = 0
        self._max_groups = ctx.limit("max-compute-workgroups-per-dimension")
        self._poll = self._native_poll()
        self._last_uniform: dict = {}     # uniform buffer -> bytes last written to it
        self._fence_req = None            # (submission it covers, work-done request key)
        self._native = None if os.environ.get("CTHREADS_NATIVE_ENCODER", "1") == "0" else \
            make_encoder(self._device, self._queue)
        if self._native is not None:
            self._native.spin_s = CPU_SPIN_S if ctx.is_cpu else GPU_SPIN_S

    def _native_poll(self):
        """A function poll(wait) -> bool(queue empty), using wgpu-native's device poll."""
        try:
            from wgpu.backends.wgpu_native._api import ffi, libf  # noqa: PLC0415
            internal = self._device._internal
            return lambda wait: bool(libf.wgpuDevicePoll(internal, bool(wait), ffi.NULL))
        except Exception:  # pragma: no cover - other wgpu builds: wait for everything
            device = self._device

            def poll(wait):
                device._poll_wait()
                return True
            return poll

    # -- bind groups -------------------------------------------------------------------------

    def bind_group(self, layout, entries) -> object:
        """A bind group from ``[(binding, wgpu buffer, size in bytes), ...]``."""
        return self._device.create_bind_group(layout=layout, entries=[
            {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": size}}
            for b, buf, size in entries])

    # -- transfers ---------------------------------------------------------------------------

    def upload_new(self, data) -> PooledBuffer:
        """A pooled storage buffer holding ``data`` (written at creation when it is new)."""
        pooled = self.pool.acquire(memoryview(data).nbytes, init=data)
        if not pooled.filled:
            self.upload(pooled, data)
        return pooled

    def upload(self, pooled: PooledBuffer, data) -> None:
        """Queue a copy of ``data`` (a buffer-protocol object) into ``pooled``."""
        if memoryview(data).nbytes:
            self._queue.write_buffer(pooled.buffer, 0, data)

    def write(self, buffer, data: bytes) -> None:
        """Queue a small write (ordered before the next submission)."""
        with self._lock:
            if self._native is not None:
                self._native.write(buffer, data)
            else:
                self._queue.write_buffer(buffer, 0, data)

    def submit_copies(self, copies) -> int:
        """Submit copies ``[(src, src_offset, dst, dst_offset, nbytes), ...]``; returns its number."""
        if self._native is not None:
            with self._lock:
                self.ctx.check_alive()
                self._native.submit(None, None, None, copies)
                self.submitted += 1
                return self.submitted
        encoder = self._device.create_command_encoder()
        for src, src_off, dst, dst_off, nbytes in copies:
            encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
        return self._submit(encoder)

    def dispatch(self, pipeline, bind_group, groups: int, uniform=None, copies=()) -> int:
        """Encode and submit one compute dispatch (plus readback copies); returns its number.

        ``uniform`` is ``(buffer, bytes)``: written just before the submission, so each launch
        sees its own scalars even when the previous launch has not run yet.
        """
        folded = fold_groups(groups, self._max_groups)
        native = self._native
        if native is not None:
            with self._lock:
                self.ctx.check_alive()
                if uniform is not None and self._last_uniform.get(uniform[0]) != uniform[1]:
                    native.write(uniform[0], uniform[1])
                    self._last_uniform[uniform[0]] = uniform[1]
                native.submit(pipeline, bind_group, folded, copies)
                self.submitted += 1
                return self.submitted
        gx, gy, gz = folded
        encoder = self._device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, bind_group)
        cpass.dispatch_workgroups(gx, gy, gz)
        cpass.end()
        for src, src_off, dst, dst_off, nbytes in copies:
            encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
        with self._lock:
            if uniform is not None and self._last_uniform.get(uniform[0]) != uniform[1]:
                self._queue.write_buffer(uniform[0], 0, uniform[1])
                self._last_uniform[uniform[0]] = uniform[1]
            return self._submit(encoder)

    def _submit(self, encoder) -> int:
        with self._lock:
            self.ctx.check_alive()
            try:
                self._queue.submit([encoder.finish()])
            except MemoryError as exc:
                raise VulkanOutOfMemory(f"the device ran out of memory submitting work ({exc})") \
                    from None
            self.submitted += 1
            return self.submitted

    # -- completion --------------------------------------------------------------------------

    # Completion is learned from wgpu-native's work-done notification, requested natively
    # (one outstanding at a time, covering everything submitted when it was requested).
    # wgpu-native's poll result ("queue empty") is not trusted: on NVIDIA it answered empty
    # right after 100 heavy dispatches were queued.

    def _fence(self):
        """The outstanding (submission covered, request key), requested if there is none."""
        with self._lock:
            if self._fence_req is None:
                self._fence_req = (self.submitted, self._native.work_done_request())
            return self._fence_req

    def _fence_done(self, fence) -> None:
        """Record a fired notification (once, whichever thread saw it)."""
        with self._lock:
            if self._fence_req is fence:
                self._fence_req = None
                self._native.work_done_finish(fence[1])
                self._mark(fence[0])

    def is_done(self, seq: int) -> bool:
        """Whether submission ``seq`` finished (never blocks)."""
        if seq <= self.completed:
            return True
        if self._native is None:
            with self._lock:
                snapshot = self.submitted
                if self._poll(False):
                    self._mark(snapshot)
            return seq <= self.completed
        with self._lock:
            fence = self._fence()
            if self._native.work_done_ready(fence[1], block=False):
                self._fence_done(fence)
                if seq > self.completed:
                    self._fence()              # the next one, for later submissions
            return seq <= self.completed

    def wait(self, seq: int) -> None:
        """Block until submission ``seq`` (and all before it) finished.

        Polls under the queue's lock: with several threads polling wgpu-native at once (its
        callbacks need the GIL) the thread test deadlocked, so wgpu calls stay serialised.
        """
        if seq <= self.completed:
            return
        with self._lock:
            if self._native is None:
                snapshot = self.submitted
                self._poll(True)
                self._mark(snapshot)
            else:
                while seq > self.completed:
                    fence = self._fence()
                    self._native.work_done_ready(fence[1], block=True)
                    self._fence_done(fence)
        self.ctx.check_alive()

    def _mark(self, seq: int) -> None:
        with self._lock:
            if seq > self.completed:
                self.completed = seq

    def read_into(self, staging: PooledBuffer, nbytes: int, seq: int, convert) -> object:
        """Map a staging buffer and hand a read-only view of its bytes to ``convert``."""
        if self._native is not None:
            with self._lock:
                result = self._native.read(staging.buffer, nbytes, convert)
            self._mark(seq)
            return result
        buf = staging.buffer
        buf.map_sync("READ", 0, nbytes)
        try:
            view = buf.read_mapped(0, nbytes, copy=False)
            result = convert(view)
            del view
        finally:
            buf.unmap()
        self._mark(seq)
        return result

    def idle(self) -> None:
        """Wait for every submission (used before freeing resources)."""
        self.wait(self.submitted)
