"""Several devices in one process: ``devices()`` and ``use_device()``.

``devices()`` names the usable Vulkan adapters in the order cthreads numbers them (GPUs before
CPU drivers, stable within a process; ``CTHREADS_DEVICE_COPIES=2`` lists each adapter twice, a
test hook that gives two devices on one adapter). ``with use_device(sel):`` selects one for the
calling thread or asyncio task (a context variable: other threads keep their own choice, a new
thread starts on the default device); launches, arenas created inside, ``prepare``/``compile``,
reductions and the probes then use it. Each device is created on first use.

``worker_device()`` is the device of a numbered Dask worker process (docs/scale.md, "Dask"),
``unpickle_device()`` where a ``GpuArray`` received by this process (pickled by value) lands:
the caller's selection, else that worker device, else the default device.
"""

from __future__ import annotations

import contextlib
import sys

from . import config
from .backend import device as _device

_worker_device: list = []       # [device index or None] once this process has looked


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


def _worker_name(anywhere: bool = False):
    """The name of the Dask worker running the caller's task; with ``anywhere`` (data being
    received, outside a task) also the process's only worker. None when there is none (or,
    with ``anywhere``, several)."""
    distributed = sys.modules.get("distributed")     # imported in every worker process
    if distributed is None:
        return None
    try:
        return distributed.get_worker().name
    except (ValueError, AttributeError):
        pass
    if not anywhere:
        return None
    worker = sys.modules.get("distributed.worker")
    found = list(getattr(getattr(worker, "Worker", None), "_instances", ()))
    return found[0].name if len(found) == 1 else None


def _index_of(name) -> int | None:
    """Worker ``name``'s device: ``k % len(devices())`` for a worker named ``k``, else None (and
    None when ``CTHREADS_ADAPTER`` is set)."""
    if isinstance(name, str) and name.isdigit():
        name = int(name)
    if isinstance(name, int) and not isinstance(name, bool) and \
            not config.current().adapter:
        return name % len(devices())
    return None


def worker_device() -> int | None:
    """The device index for tasks of this process when it is worker ``k`` of a ``distributed``
    cluster (``k % len(devices())``), or None (not a worker, a worker not named by a number,
    or ``CTHREADS_ADAPTER`` set)."""
    if _worker_device:
        return _worker_device[0]
    name = _worker_name()
    if name is None:
        return None                                  # not a worker (a client, say)
    index = _index_of(name)
    _worker_device.append(index)
    return index


def unpickle_device() -> int | None:
    """The device a GpuArray unpickles onto: the caller's ``use_device`` selection, else this
    process's Dask worker device (``worker_device``; outside a task, that of the process's only
    worker), else None (the default device)."""
    index = _device.selection.get()
    if index is not None:
        return index
    if _worker_device:
        return _worker_device[0]
    name = _worker_name(anywhere=True)
    return None if name is None else _index_of(name)


__all__ = ["current_device", "devices", "unpickle_device", "use_device", "worker_device"]
