"""The error family (cthreads/errors.py): one base class, builtin mirrors, all public."""

from __future__ import annotations

import inspect

import pytest

import cthreads.errors as errors
import cthreads.gpu as cg

CLASSES = {name: cls for name, cls in vars(errors).items()
           if inspect.isclass(cls) and issubclass(cls, BaseException)}

#: the builtin each class also is, so that ordinary ``except`` clauses catch it
MIRRORS = {"GpuInvalidArgument": ValueError, "GpuArgumentTypeError": TypeError,
           "GpuIndexError": IndexError, "VulkanOutOfMemory": MemoryError,
           "GpuTimeout": TimeoutError, "GpuUseAfterDestroy": RuntimeError,
           "GpuDeviceError": RuntimeError, "GpuKernelError": SyntaxError,
           "GpuKernelTypeError": TypeError}


def test_error_family():
    for cls in (cg.VulkanNotBuiltError, cg.VulkanLoaderNotFound, cg.VulkanNoDevice,
                cg.VulkanInitFailed, cg.VulkanOutOfMemory, cg.GpuInvalidArgument,
                cg.GpuUseAfterDestroy, cg.GPUNotAvailable):
        assert issubclass(cls, cg.CThreadsGPUError)
    assert issubclass(cg.GpuInvalidArgument, ValueError)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_error_is_ours_and_public(name):
    cls = CLASSES[name]
    assert issubclass(cls, errors.CThreadsGPUError)
    assert name in errors.__all__ and getattr(cg, name) is cls
    if name in MIRRORS:
        assert issubclass(cls, MIRRORS[name])


def test_argument_type_errors_are_both():
    assert issubclass(errors.GpuArgumentTypeError, errors.GpuInvalidArgument)
    with pytest.raises(ValueError):
        raise errors.GpuArgumentTypeError("x")


def test_kernel_errors_carry_their_location():
    exc = errors.GpuKernelError("line 3: no while loops", "k.py", 3, 5, "while x:")
    assert str(exc) == "line 3: no while loops"
    assert (exc.filename, exc.lineno, exc.offset, exc.text) == ("k.py", 3, 5, "while x:")
