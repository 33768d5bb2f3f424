"""The CThreadsGPUError family: every error the library raises on purpose.

Classes that mirror a builtin also subclass it (``GpuInvalidArgument`` is a
``ValueError``, ``GpuIndexError`` an ``IndexError``, ``GpuArgumentTypeError`` both a
``GpuInvalidArgument`` and a ``TypeError``) so that ordinary ``except`` clauses keep working.
"""

from __future__ import annotations


class CThreadsGPUError(Exception):
    """Base of every error raised by cthreads.gpu."""


class GPUNotAvailable(CThreadsGPUError):
    """The GPU path cannot be used (generic)."""


class VulkanNotBuiltError(GPUNotAvailable):
    """The GPU dependency (wgpu) is missing or cannot be imported."""


class VulkanLoaderNotFound(GPUNotAvailable):
    """No Vulkan loader library (libvulkan) could be loaded."""


class VulkanNoDevice(GPUNotAvailable):
    """A Vulkan loader exists but no Vulkan adapter was found."""


class VulkanInitFailed(GPUNotAvailable):
    """The Vulkan device could not be created or was lost."""


class VulkanOutOfMemory(CThreadsGPUError, MemoryError):
    """The device ran out of memory."""


class GpuInvalidArgument(CThreadsGPUError, ValueError):
    """Bad sizes, arena misuse, dtype mismatch, bad join flags."""


class GpuArgumentTypeError(GpuInvalidArgument, TypeError):
    """An argument of the wrong type (a tuple for a list, a str or a bool for a number): both a
    ``GpuInvalidArgument`` and a ``TypeError``, so either ``except`` catches it."""


class GpuUseAfterDestroy(CThreadsGPUError, RuntimeError):
    """An arena or device object was used after it was released."""


class _Located:
    """The location of a compile error in the user's file: ``filename``, ``lineno``, ``offset``
    (1-based column) and ``text`` (the source line), as ``SyntaxError`` names them; ``None``
    where the error has no line."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 offset: int | None = None, text: str | None = None):
        super().__init__(message)
        self.msg = message
        self.filename = filename
        self.lineno = lineno
        self.offset = offset
        self.text = text

    def __str__(self) -> str:
        return self.msg


class GpuKernelError(_Located, CThreadsGPUError, SyntaxError):
    """A kernel uses something outside the kernel language (raised at decoration)."""


class GpuUnresolvedName(GpuKernelError):
    """A kernel or device function calls a name that is not defined yet. Decoration lets it
    pass (the callee may be a device function defined further down); the first launch,
    ``compile()`` or ``prepare()`` raises it if the name is still missing."""


class GpuKernelTypeError(_Located, CThreadsGPUError, TypeError):
    """A kernel's annotations or types are wrong (raised at decoration)."""


class GpuIndexError(CThreadsGPUError, IndexError):
    """A kernel indexed a list out of range (raised at join)."""


class GpuDeviceError(CThreadsGPUError, RuntimeError):
    """The device reported an error while running submitted work."""


class GpuTimeout(CThreadsGPUError, TimeoutError):
    """``join(timeout=...)`` / ``wait`` gave up before the device finished (still joinable)."""


def as_raised_to_user(exc: BaseException, full_traceback: bool) -> BaseException:
    """``exc`` (a compile error) as decoration raises it: cut to the user's line, without the
    compiler's frames or the internal exception behind it, unless ``full_traceback``
    (``CTHREADS_FULL_TRACEBACK=1``) keeps both."""
    if full_traceback:
        return exc
    exc.__cause__ = None
    exc.__suppress_context__ = True
    return exc.with_traceback(None)


__all__ = [
    "CThreadsGPUError", "GPUNotAvailable", "VulkanNotBuiltError", "VulkanLoaderNotFound",
    "VulkanNoDevice", "VulkanInitFailed", "VulkanOutOfMemory", "GpuInvalidArgument",
    "GpuArgumentTypeError",
    "GpuUseAfterDestroy", "GpuKernelError", "GpuKernelTypeError", "GpuIndexError",
    "GpuDeviceError", "GpuTimeout", "GpuUnresolvedName",
]
