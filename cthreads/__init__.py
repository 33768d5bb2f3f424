"""cthreads: Python GPU compute on any Vulkan device.

Write a kernel as an annotated Python function, decorate it with ``@Gpu`` and launch it with
``gpu(kernel, *args)`` (both in ``cthreads.gpu``). Importing this package acquires no device.
"""

from __future__ import annotations

__version__ = "0.3.0"

from .job import Job  # noqa: E402


def __getattr__(name):
    # ``from cthreads import gpu`` gives the module without importing it at package import.
    if name in ("gpu", "sync"):
        import importlib  # noqa: PLC0415
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'cthreads' has no attribute {name!r}")


__all__ = ["Job", "__version__", "gpu", "sync"]
