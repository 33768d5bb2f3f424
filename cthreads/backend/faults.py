"""wgpu's raw errors mapped to ours, and a lost device marked as such.

wgpu reports trouble three ways: exceptions from its calls, statuses and messages passed to
callbacks, and log records for what it cannot attach to a call (a device loss, an uncaptured
error). Each ends here: ``device_error`` turns the text into a ``CThreadsGPUError`` subclass and
marks the device context lost when the text says it was; ``LogWatcher`` records the log records
on the current context, where ``DeviceContext.check_alive`` raises them.
"""

from __future__ import annotations

import logging

from ..errors import GpuDeviceError, VulkanInitFailed, VulkanOutOfMemory

#: Phrases wgpu-native uses when the device is gone (a driver-reported loss, or destroy()).
_LOST_PHRASES = ("device is lost", "device was lost", "device lost", "devicelost",
                 "device is invalid")


def is_lost_message(msg: str) -> bool:
    low = msg.lower()
    return any(p in low for p in _LOST_PHRASES)


def is_out_of_memory_message(msg: str) -> bool:
    """wgpu's words for an allocation the device cannot hold ("Not enough memory left" from
    NVIDIA's driver on the H200, out-of-memory errors elsewhere)."""
    low = msg.lower()
    return "out of memory" in low or "outofmemory" in low or "not enough memory" in low


def first_cause(msg: str) -> str:
    """The most telling line of a wgpu error message (its last non-empty one)."""
    lines = [ln.strip() for ln in msg.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no details"


def lost_error(ctx, reason: str) -> VulkanInitFailed:
    """The error for work on ``ctx`` (a DeviceContext) after its device was lost."""
    return VulkanInitFailed(
        f"the Vulkan device {ctx.name!r} was lost ({reason}); the work of this call is lost. "
        "Launch again: the next use of cthreads creates a new device (lists bound in a "
        "GpuArena must be bound again in a new arena). If this keeps happening, update the "
        "driver or check the machine (`python -m cthreads.gpu info`)")


def mark_lost(ctx, reason: str) -> None:
    """Record that ``ctx``'s device is lost (the first telling reason is kept); the next use
    of cthreads then creates a new device."""
    if ctx.lost is None or "DEVICE LOST!" in ctx.lost:
        ctx.lost = reason


def device_error(ctx, exc, doing: str) -> Exception:
    """The CThreadsGPUError for a raw error from wgpu (an exception or a message).

    A loss marks ``ctx`` (a DeviceContext, or None) lost; an out-of-memory error becomes
    VulkanOutOfMemory; anything else GpuDeviceError. ``doing`` says what the library was
    doing ("creating a buffer of 1,024 bytes").
    """
    msg = str(exc)
    name = ctx.name if ctx is not None else "?"
    if is_lost_message(msg):
        reason = first_cause(msg)
        if ctx is not None:
            ctx.lost = ctx.lost or reason
            return lost_error(ctx, f"{reason}; seen while {doing}")
        return VulkanInitFailed(f"the Vulkan device was lost while {doing} ({reason}); "
                                "launch again to start a new device")
    if isinstance(exc, MemoryError) or type(exc).__name__ == "GPUOutOfMemoryError" or \
            is_out_of_memory_message(msg):
        return VulkanOutOfMemory(
            f"the device {name!r} ran out of memory while {doing} ({first_cause(msg)}); "
            "release arenas you no longer need, join finished jobs, or use smaller lists")
    details = "; ".join(ln.strip() for ln in msg.strip().splitlines() if ln.strip())
    return GpuDeviceError(
        f"the device {name!r} reported an error while {doing}: {details[:800]}. This is "
        "probably a cthreads or driver bug; please report it with the kernel's source")


class LogWatcher(logging.Handler):
    """wgpu-py only logs device loss and errors it cannot attach to a call: record them on the
    context ``current()`` returns (None when no device is up)."""

    def __init__(self, current, level=logging.ERROR):
        super().__init__(level=level)
        self._current = current

    def emit(self, record: logging.LogRecord) -> None:
        ctx = self._current()
        if ctx is None:
            return
        try:
            msg = record.getMessage()
        except Exception:  # pragma: no cover - a broken log record must not break us
            return
        if is_lost_message(msg):
            mark_lost(ctx, first_cause(msg))
        elif record.levelno >= logging.ERROR:
            ctx.errors.append(msg.strip())
