"""Probes and lifecycle: ``available``, ``device_name``, ``init``, ``shutdown``."""

from __future__ import annotations

import threading

from . import residency
from .backend import device as _device
from .backend import pipeline

#: ``available()`` gives up (and answers False) if creating the device takes longer than this.
AVAILABLE_TIMEOUT_S = 60.0

_available: bool | None = None
_available_lock = threading.Lock()


def init() -> None:
    """Create the Vulkan device now (raises the mapped CThreadsGPUError on failure)."""
    _device.get_context()


def device_name() -> str:
    """The name of the Vulkan adapter in use (creates the device if needed)."""
    return _device.get_context().name


def available() -> bool:
    """True when a Vulkan device is usable. Never raises, never hangs; the answer is cached
    until the device is lost (then the next call tries to start a new device)."""
    global _available
    if _available is not None and not _device.is_lost():
        return _available
    with _available_lock:
        if _available is None or _device.is_lost():
            outcome = []

            def probe():
                try:
                    _device.get_context()
                    outcome.append(True)
                except BaseException:
                    outcome.append(False)

            t = threading.Thread(target=probe, daemon=True, name="cthreads-available")
            t.start()
            t.join(AVAILABLE_TIMEOUT_S)
            _available = bool(outcome and outcome[0])
    return _available


def shutdown() -> None:
    """Release the device, every cache and every arena; the next use starts afresh."""
    global _available
    with residency.launch_lock:
        _device.shutdown()
        pipeline.clear_cache()
    _available = None


def _forget_after_fork() -> None:
    global _available, _available_lock
    _available_lock = threading.Lock()
    _available = None


_device.on_fork_child(_forget_after_fork)

__all__ = ["available", "device_name", "init", "shutdown"]
