"""Which threads are inside v3's ``capture()``, and the guard that keeps other device work
out of a capture.

While a thread captures, every queue operation of that thread other than a recorded launch
(an upload, a download, a device copy, a dispatch of a library call that is not recorded)
raises ``GpuInvalidArgument`` instead of running out of order with the recorded launches, which
run only at replay (``DeviceQueue`` calls ``check``). Waits and joins of jobs launched before the capture are
allowed: they change nothing on the device.
"""

from __future__ import annotations

import threading

from ..errors import GpuInvalidArgument

__all__ = ["active", "capturing", "check", "record", "recorder", "set_capturing",
           "set_recorder"]

_local = threading.local()
#: captures open in any thread (the queue's guard looks no further while it is 0)
active = 0
_count_lock = threading.Lock()


def capturing() -> bool:
    """Whether the calling thread is inside ``capture()``."""
    return bool(active) and getattr(_local, "on", False)


def set_capturing(on: bool) -> None:
    """The calling thread enters (``on``) or leaves a capture."""
    global active
    with _count_lock:
        was = getattr(_local, "on", False)
        if on and not was:
            active += 1
        elif was and not on:
            active -= 1
        _local.on = on


def check(what: str) -> None:
    """Raise when the calling thread captures: ``what`` (an upload, a download, a wait, a
    dispatch of a library call) would run now, before the recorded launches it follows."""
    if active and getattr(_local, "on", False):
        raise GpuInvalidArgument(
            f"inside capture(), {what} would run on the device now, out of order with the "
            "recorded launches (which run only at replay()); capture() records gpu() launches "
            "of @Gpu kernels on GpuArrays and arena lists. Make transfers, joins, numpy(), "
            "sync(), new arrays with data and library calls before or after the capture")


def set_recorder(fn) -> None:
    """``fn(queue, pipeline, bind group, groups, uniform, copies, buffers)`` records the
    dispatches of the calling thread (a library call that can be captured), or None."""
    _local.record = fn


def recorder():
    """The calling thread's recorder (``set_recorder``), or None."""
    return getattr(_local, "record", None)


def record(queue, pipeline, bind_group, groups, uniform, copies, buffers) -> int:
    """A dispatch made inside ``capture()``: recorded by the thread's recorder, else refused."""
    fn = getattr(_local, "record", None)
    if fn is None:
        check("this library call")
    return fn(queue, pipeline, bind_group, groups, uniform, copies, buffers)
