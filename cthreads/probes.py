"""Probes and lifecycle: ``available``, ``device_name``, ``init``, ``shutdown``."""

from __future__ import annotations

import threading

from .runtime import residency
from .backend import device as _device
from .backend import pipeline

#: ``available()`` gives up (and answers False) if creating the device takes longer than this.
AVAILABLE_TIMEOUT_S = 60.0

_available: dict = {}       # selection (None: the default device) -> the cached answer
_available_lock = threading.Lock()


def init() -> None:
    """Create the Vulkan device now (the caller's ``use_device`` selection, else the default;
    raises the mapped CThreadsGPUError on failure)."""
    _device.get_context()


def device_name() -> str:
    """The name of the Vulkan adapter in use (the caller's selection; creates the device if
    needed)."""
    return _device.get_context().name


def available() -> bool:
    """True when a Vulkan device (the caller's selection, else the default) is usable. Never
    raises, never hangs; the answer is cached until a device is lost (then the next call
    tries to start a new device)."""
    sel = _device.selection.get()
    answer = _available.get(sel)
    if answer is not None and not _device.is_lost():
        return answer
    with _available_lock:
        if _available.get(sel) is None or _device.is_lost():
            outcome = []

            def probe():
                token = _device.selection.set(sel)     # a new thread starts without it
                try:
                    _device.get_context()
                    outcome.append(True)
                except BaseException:
                    outcome.append(False)
                finally:
                    _device.selection.reset(token)

            t = threading.Thread(target=probe, daemon=True, name="cthreads-available")
            t.start()
            t.join(AVAILABLE_TIMEOUT_S)
            if _device.is_lost():
                _available.clear()
            _available[sel] = bool(outcome and outcome[0])
    return _available[sel]


def shutdown() -> None:
    """Release every device, cache and arena; the next use starts afresh."""
    with residency.launch_lock:
        _device.shutdown()
        pipeline.clear_cache()
    _available.clear()


def _forget_after_fork() -> None:
    global _available_lock
    _available_lock = threading.Lock()
    _available.clear()


_device.on_fork_child(_forget_after_fork)

__all__ = ["available", "device_name", "init", "shutdown"]
