"""A lean encoder for the per-launch path, calling wgpu-native's C functions directly.

wgpu-py wraps every native call in error-capturing proxies and builds descriptor structs in
Python; for one small dispatch that machinery is a large share of the launch (see
docs/performance.md, "Waits and the direct launch path"). The launch path needs only nine calls
with null descriptors, so this module makes them through wgpu-py's own cffi handle. Errors
wgpu-native reports for these calls reach the device's uncaptured-error callback, which wgpu-py
logs and ``DeviceContext.check_alive`` turns into our exceptions; a failed map or work-done
request is mapped by ``faults.device_error`` (which marks the device lost when wgpu says so), and
a wait for a callback ends with our error once the device is known lost.

``make_encoder`` self-tests the path once per device and returns None when this wgpu build does
not offer it, and the caller then uses wgpu-py's public API. Pinned to wgpu 0.32 (pyproject).
"""

from __future__ import annotations

import time as _time

from ...errors import GpuDeviceError
from ..faults import device_error, lost_error


class NativeEncoder:
    """Encode-and-submit of compute dispatches plus buffer copies, through raw C calls."""

    def __init__(self, ffi, lib, device, queue, ctx=None):
        self._ctx = ctx                  # the DeviceContext errors are reported against
        self._ffi = ffi
        self._lib = lib
        self._device = device._internal
        self._queue = queue._internal
        self._null = ffi.NULL
        self._cb_array = ffi.new("WGPUCommandBuffer[1]")
        self._keep = (device, queue)     # the handles must outlive us
        # How long a wait polls without blocking before it blocks. A blocking poll adds latency
        # even when the work is done, so tiny launches want a spin; but on a CPU driver the
        # spinning thread takes a core from the "GPU". DeviceQueue sets it per device type (see
        # docs/performance.md, "Waits and the direct launch path").
        self.spin_s = 0.002
        self._mapped: dict[int, tuple] = {}    # map request id -> (status, message), by callback
        self._next_id = 0

        @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
        def _on_mapped(status, message, userdata1, userdata2):
            self._mapped[int(ffi.cast("intptr_t", userdata1))] = (int(status),
                                                                  _text(ffi, message))

        self._on_mapped = _on_mapped
        self._map_info = ffi.new("WGPUBufferMapCallbackInfo *")
        self._map_info.mode = lib.WGPUCallbackMode_AllowSpontaneous
        self._map_info.callback = _on_mapped
        self._map_ok = lib.WGPUMapAsyncStatus_Success
        self._map_read = lib.WGPUMapMode_Read

        # Work-done notifications (wgpu-py 0.32 declares this callback without its message
        # argument, which is why its on_submitted_work_done is broken; declared right here).
        self._done: dict[int, tuple] = {}

        @ffi.callback("void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)")
        def _on_done(status, message, userdata1, userdata2):
            self._done[int(ffi.cast("intptr_t", userdata1))] = (int(status),
                                                                _text(ffi, message))

        self._on_done = _on_done
        self._done_info = ffi.new("WGPUQueueWorkDoneCallbackInfo *")
        self._done_info.mode = lib.WGPUCallbackMode_AllowSpontaneous
        self._done_info.callback = _on_done
        self._done_ok = lib.WGPUQueueWorkDoneStatus_Success

    def _copies(self, enc, copies) -> None:
        copy = self._lib.wgpuCommandEncoderCopyBufferToBuffer
        for src, src_off, dst, dst_off, nbytes in copies:
            copy(enc, src._internal, src_off, dst._internal, dst_off, nbytes)

    def submit(self, cb) -> None:
        """Submit (and release) a command buffer ``encode_batch`` made."""
        lib = self._lib
        arr = self._cb_array
        arr[0] = cb
        lib.wgpuQueueSubmit(self._queue, 1, arr)
        lib.wgpuCommandBufferRelease(cb)

    def discard(self, cb) -> None:
        """Release a command buffer ``encode_batch`` made without submitting it."""
        self._lib.wgpuCommandBufferRelease(cb)

    def encode_timed(self, cmds, copies, staged, timestamps):
        """Encode the commands of ``timing.commands`` (a batch with timestamps) then
        ``copies`` in one command buffer (``submit`` submits it)."""
        lib, ffi, null = self._lib, self._ffi, self._null
        enc = lib.wgpuDeviceCreateCommandEncoder(self._device, null)
        query_set = timestamps.query_set._internal
        resolve = timestamps.resolve._internal
        cpass = None
        for cmd in cmds:
            op = cmd[0]
            if op == "dispatch":
                lib.wgpuComputePassEncoderDispatchWorkgroups(cpass, *cmd[1])
            elif op == "pipeline":
                lib.wgpuComputePassEncoderSetPipeline(cpass, cmd[1]._internal)
            elif op == "group":
                lib.wgpuComputePassEncoderSetBindGroup(cpass, 0, cmd[1]._internal, 0, null)
            elif op == "stamp":
                lib.wgpuComputePassEncoderWriteTimestamp(cpass, query_set, cmd[1])
            elif op == "pass":
                desc = null
                if cmd[1] is not None or cmd[2] is not None:
                    writes = ffi.new("WGPUPassTimestampWrites *")
                    writes.querySet = query_set
                    writes.beginningOfPassWriteIndex = _UNDEFINED if cmd[1] is None else cmd[1]
                    writes.endOfPassWriteIndex = _UNDEFINED if cmd[2] is None else cmd[2]
                    desc = ffi.new("WGPUComputePassDescriptor *")
                    desc.timestampWrites = writes
                cpass = lib.wgpuCommandEncoderBeginComputePass(enc, desc)
            elif op == "end":
                lib.wgpuComputePassEncoderEnd(cpass)
                lib.wgpuComputePassEncoderRelease(cpass)
                cpass = None
            elif op == "pre":
                off, buf, nbytes = cmd[1]
                lib.wgpuCommandEncoderCopyBufferToBuffer(enc, staged._internal, off,
                                                         buf._internal, 0, nbytes)
            elif op == "copies":
                self._copies(enc, cmd[1])
            elif op == "resolve":
                lib.wgpuCommandEncoderResolveQuerySet(enc, query_set, cmd[1], cmd[2], resolve,
                                                      cmd[3])
            else:                                   # "copy": one stamp to its job
                lib.wgpuCommandEncoderCopyBufferToBuffer(enc, resolve, cmd[1],
                                                         cmd[2]._internal, cmd[3], 8)
        self._copies(enc, copies)
        cb = lib.wgpuCommandEncoderFinish(enc, null)
        lib.wgpuCommandEncoderRelease(enc)
        return cb

    def encode_batch(self, dispatches, copies, staged=None):
        """Encode ``dispatches`` then ``copies`` in one command buffer (``submit`` submits it).

        ``dispatches`` is ``[(pipeline, bind group, (x, y, z), pre, post), ...]``: one compute
        pass holds them, except that a dispatch whose ``pre`` is ``(offset, buffer, nbytes)`` is
        preceded by a copy of ``nbytes`` from ``staged`` at ``offset`` into ``buffer`` (a launch's
        new scalars), which ends the pass and opens another, and a dispatch with ``post``
        copies (its readback) is followed by them, which ends the pass too. Within a pass a
        pipeline or bind group equal to the previous dispatch's is not set again (a bind group
        stays bound across pipelines of the same layout, as WebGPU specifies); wgpu still places
        a barrier between dispatches that share a written buffer.
        """
        lib, null = self._lib, self._null
        enc = lib.wgpuDeviceCreateCommandEncoder(self._device, null)
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        cpass = None
        last_pipeline = last_group = None
        for pipeline, bind_group, (gx, gy, gz), pre, post in dispatches:
            if pre is not None:
                if cpass is not None:
                    lib.wgpuComputePassEncoderEnd(cpass)
                    lib.wgpuComputePassEncoderRelease(cpass)
                    cpass = None
                lib.wgpuCommandEncoderCopyBufferToBuffer(enc, staged._internal, pre[0],
                                                         pre[1]._internal, 0, pre[2])
            if cpass is None:
                cpass = lib.wgpuCommandEncoderBeginComputePass(enc, null)
                last_pipeline = last_group = None
            if pipeline is not last_pipeline:
                set_pipeline(cpass, pipeline._internal)
                last_pipeline = pipeline
            if bind_group is not last_group:
                set_bind_group(cpass, 0, bind_group._internal, 0, null)
                last_group = bind_group
            dispatch(cpass, gx, gy, gz)
            if post:
                lib.wgpuComputePassEncoderEnd(cpass)
                lib.wgpuComputePassEncoderRelease(cpass)
                cpass = None
                self._copies(enc, post)
        if cpass is not None:
            lib.wgpuComputePassEncoderEnd(cpass)
            lib.wgpuComputePassEncoderRelease(cpass)
        self._copies(enc, copies)
        cb = lib.wgpuCommandEncoderFinish(enc, null)
        lib.wgpuCommandEncoderRelease(enc)
        return cb

    def work_done_fired(self, key: int) -> bool:
        """Whether the work-done request ``key`` already fired (no poll: a dict look-up)."""
        return key in self._done

    def map_request(self, buffer, nbytes: int) -> int:
        """Ask for ``buffer`` (MAP_READ) to be mapped once the GPU is done with it; a key."""
        lib, ffi = self._lib, self._ffi
        self._next_id += 1
        key = self._next_id
        self._map_info.userdata1 = ffi.cast("void *", key)
        lib.wgpuBufferMapAsync(buffer._internal, self._map_read, 0, nbytes, self._map_info[0])
        return key

    def _until(self, table: dict, key: int, block: bool) -> bool:
        """Poll the device until ``key`` appears in ``table`` (a callback's results).

        Non-blocking polls for ``spin_s`` first (a blocking poll adds latency even when the
        work is done), then blocking ones. The poll's own "queue empty" answer is not used:
        on NVIDIA it said empty while 100 queued dispatches were still running.
        """
        lib = self._lib
        if key not in table:
            lib.wgpuDevicePoll(self._device, False, self._null)
            if not block and key not in table:
                return False
        deadline = _time.perf_counter() + self.spin_s
        ctx = self._ctx
        while key not in table:
            if ctx is not None and ctx.lost is not None:    # it may never fire
                raise lost_error(ctx, ctx.lost)
            lib.wgpuDevicePoll(self._device, _time.perf_counter() > deadline, self._null)
        return True

    def map_ready(self, key: int, block: bool) -> bool:
        """Whether the map request ``key`` completed; with ``block`` wait for it."""
        return self._until(self._mapped, key, block)

    def work_done_request(self) -> int:
        """Ask to be told when everything submitted so far has finished; a key."""
        self._next_id += 1
        key = self._next_id
        self._done_info.userdata1 = self._ffi.cast("void *", key)
        self._lib.wgpuQueueOnSubmittedWorkDone(self._queue, self._done_info[0])
        return key

    def work_done_ready(self, key: int, block: bool) -> bool:
        """Whether the work-done request ``key`` fired; with ``block`` wait for it. Several
        threads may wait on one key; ``work_done_finish`` consumes it."""
        return self._until(self._done, key, block)

    def work_done_finish(self, key: int) -> None:
        status, message = self._done.pop(key)
        if status != self._done_ok:
            raise self._failure(status, message, "waiting for submitted work")

    def map_finish(self, key: int) -> None:
        status, message = self._mapped.pop(key)
        if status != self._map_ok:
            raise self._failure(status, message, "reading results back")

    def _failure(self, status: int, message: str, doing: str) -> Exception:
        """Our error for a failed request: wgpu's message mapped (a loss marks the device
        lost), or the loss already known; else a GpuDeviceError naming the status."""
        ctx = self._ctx
        if message:
            err = device_error(ctx, message, f"{doing} (wgpu status {status})")
            if not isinstance(err, GpuDeviceError) or ctx is None or ctx.lost is None:
                return err
        if ctx is not None and ctx.lost is not None:
            return lost_error(ctx, f"{ctx.lost}; seen while {doing}")
        return GpuDeviceError(f"{doing} failed (wgpu status {status}: {message or 'no details'});"
                              " the device may have been lost: call cthreads.gpu.shutdown() "
                              "and launch again")

    def probe(self) -> None:
        """Create and drop a command encoder: on a lost device wgpu reports the loss (to the
        uncaptured-error log, which marks the device lost)."""
        lib = self._lib
        enc = lib.wgpuDeviceCreateCommandEncoder(self._device, self._null)
        if enc != self._null:
            lib.wgpuCommandEncoderRelease(enc)

    def read(self, buffer, nbytes: int, into=None) -> bytes:
        """Map ``buffer`` (MAP_READ, its writer already submitted); a copy of its bytes
        (``into``: see ``copy_mapped``)."""
        key = self.map_request(buffer, nbytes)
        self.map_ready(key, block=True)
        self.map_finish(key)
        return self.copy_mapped(buffer, nbytes, into)

    def copy_mapped(self, buffer, nbytes: int, into=None) -> bytes:
        """A copy of the first ``nbytes`` of ``buffer``, mapped for reading; then unmapped.
        With ``into`` (a writable byte memoryview, at most ``nbytes`` long) the first
        ``len(into)`` bytes are copied straight into it, once, and the rest returned."""
        lib, internal, ffi = self._lib, buffer._internal, self._ffi
        try:
            ptr = lib.wgpuBufferGetConstMappedRange(internal, 0, nbytes)
            if into is None:
                return ffi.buffer(ptr, nbytes)[:]
            head = len(into)
            ffi.memmove(ffi.from_buffer(into, require_writable=True), ptr, head)
            return ffi.buffer(ffi.cast("char *", ptr) + head, nbytes - head)[:]
        finally:
            lib.wgpuBufferUnmap(internal)

    def write(self, buffer, data: bytes) -> None:
        self._lib.wgpuQueueWriteBuffer(self._queue, buffer._internal, 0,
                                       self._ffi.from_buffer(data), len(data))


_UNDEFINED = 0xFFFFFFFF                  # WGPU_QUERY_SET_INDEX_UNDEFINED


def _text(ffi, view) -> str:
    """The text of a WGPUStringView ('' when empty)."""
    try:
        if view.data == ffi.NULL or view.length == 0:
            return ""
        length = view.length if view.length < (1 << 62) else -1   # SIZE_MAX: NUL-terminated
        raw = ffi.string(view.data) if length < 0 else ffi.unpack(view.data, length)
        return raw.decode("utf-8", "replace")
    except Exception:  # pragma: no cover - a message we cannot read is no message
        return ""


def make_encoder(device, queue, ctx=None) -> NativeEncoder | None:
    """The native encoder for ``device`` (errors reported against ``ctx``, a DeviceContext),
    or None where this wgpu build lacks what it needs."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib  # noqa: PLC0415
        needed = ("wgpuDeviceCreateCommandEncoder", "wgpuCommandEncoderBeginComputePass",
                  "wgpuComputePassEncoderSetPipeline", "wgpuComputePassEncoderSetBindGroup",
                  "wgpuComputePassEncoderDispatchWorkgroups", "wgpuComputePassEncoderEnd",
                  "wgpuComputePassEncoderRelease", "wgpuCommandEncoderCopyBufferToBuffer",
                  "wgpuCommandEncoderFinish", "wgpuCommandEncoderRelease", "wgpuQueueSubmit",
                  "wgpuCommandBufferRelease", "wgpuQueueWriteBuffer", "wgpuBufferMapAsync",
                  "wgpuBufferGetConstMappedRange", "wgpuBufferUnmap", "wgpuDevicePoll",
                  "wgpuQueueOnSubmittedWorkDone")
        for name in needed:
            getattr(lib, name)
        return NativeEncoder(ffi, lib, device, queue, ctx)
    except Exception:
        return None
