"""Several devices in one process: ``devices()`` and ``use_device()``.

``devices()`` names the usable Vulkan adapters in the order cthreads numbers them (GPUs before
CPU drivers, stable within a process; ``CTHREADS_DEVICE_COPIES=2`` lists each adapter twice, a
test hook that gives two devices on one adapter). ``with use_device(sel):`` selects one for the
calling thread or asyncio task (a context variable: other threads keep their own choice, a new
thread starts on the default device); launches, arenas created inside, ``prepare``/``compile``,
reductions and the probes then use it. Each device is created on first use.
"""

from __future__ import annotations

import contextlib

from .backend import device as _device


def devices() -> list[str]:
    """The names of the usable Vulkan adapters, indexed as ``use_device`` takes them."""
    return [_device.AdapterInfo.of(a).name for a in _device.device_list()]


@contextlib.contextmanager
def use_device(sel):
    """Run the block on device ``sel``: an index into ``devices()``, a case-insensitive part of
    a name (the first device that matches), or None (the default device). Yields the index
    (None for the default). ``GpuInvalidArgument`` for an index or name that matches no
    device."""
    index = _device.resolve(sel)
    token = _device.selection.set(index)
    try:
        yield index
    finally:
        _device.selection.reset(token)


def current_device() -> int:
    """The index in ``devices()`` of the device the caller's launches use (creates it)."""
    return _device.get_context().index


__all__ = ["current_device", "devices", "use_device"]
