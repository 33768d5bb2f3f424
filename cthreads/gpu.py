"""The public GPU API of cthreads (re-exports only; see docs/ and the README).

``python -m cthreads.gpu info`` prints what cthreads can see: versions, adapters, the chosen
device, its limits and features.
"""

from __future__ import annotations

from typing import cast

from .arena import GpuArena
from .capture import GpuGraph, capture
from .lang.arrays import Array1D, Array2D, Array3D
from .errors import (
    CThreadsGPUError, GpuArgumentTypeError, GpuDeviceError, GpuIndexError, GpuInvalidArgument,
    GpuKernelError, GpuKernelTypeError, GPUNotAvailable, GpuTimeout, GpuUnresolvedName,
    GpuUseAfterDestroy,
    VulkanInitFailed,
    VulkanLoaderNotFound, VulkanNoDevice, VulkanNotBuiltError, VulkanOutOfMemory,
)
from .devices import current_device, devices, use_device
from .gpu_array import GpuArray, empty, empty_like, full, to_device, zeros, zeros_like
from . import struct_gpu_array as _struct_gpu_array  # noqa: F401 - GpuArrays of struct dtypes
from .gpu_job import GpuJob
from .matmul import matmul
from .gpu_typing import GpuDecorator
from .lang.indexes import BlockDim, BlockIdx, GlobalIdx, GridDim, ThreadIdx
from .lang.intrinsics import (atomic_add, atomic_compare_exchange, atomic_exchange, atomic_max, atomic_min, atomic_sub, shared)
from .func import GpuFunc
from .sort import argsort, sort
from .kernel import Gpu as _gpu_decorator, GpuKernel
from .launch import compile, gpu, prepare  # noqa: A004
from .notices import GpuNDLaunchWarning
from .probes import available, device_name, init, shutdown
from .lang.widths import float32, float64, int32, int64, uint32
from .lang.random import Random
from .lang.vectors import (abs, ceil, clamp, cos, cross, distance, dot, exp,  # noqa: A004
                           floor, ivec2, ivec3, ivec4, length, length_sq, log, max, min,
                           normalize, sin, sqrt, vec2, vec3, vec4)
from .lang.matrices import determinant, inverse, mat22, mat33, mat44, outer, transpose

#: the same object as cthreads.kernel.Gpu, typed so that checkers see @Gpu(...) and @Gpu.func
Gpu = cast(GpuDecorator, _gpu_decorator)

__all__ = [
    "Gpu", "GpuKernel", "GpuFunc", "gpu", "prepare", "compile", "GpuJob", "GpuArena",
    "capture", "GpuGraph",     # v3 section 5: record launches once, replay them (capture.py)
    "GlobalIdx", "ThreadIdx", "BlockIdx", "BlockDim", "GridDim",
    "available", "device_name", "init", "shutdown", "devices", "use_device", "current_device",
    "shared", "atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_exchange",
    "atomic_compare_exchange", "float32", "float64", "int32", "int64", "uint32",
    "Array1D", "Array2D", "Array3D",
    # vectors (the component-wise abs/min/max/floor/... are imported by name, not by *)
    "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "dot", "cross", "length", "length_sq",
    "normalize", "distance", "clamp",
    # matrices
    "mat22", "mat33", "mat44", "transpose", "determinant", "inverse", "outer",
    "sort", "argsort",     # stable radix sorts on the device (sort.py)
    "Random",     # counter-based random numbers (Philox-4x32-10, lang/random.py)
    "GpuArray", "to_device", "empty", "zeros", "full", "empty_like", "zeros_like",
    "matmul",
    "CThreadsGPUError", "VulkanNotBuiltError", "VulkanLoaderNotFound", "VulkanNoDevice",
    "VulkanInitFailed", "VulkanOutOfMemory", "GpuInvalidArgument", "GpuUseAfterDestroy",
    "GPUNotAvailable", "GpuKernelError", "GpuKernelTypeError", "GpuIndexError", "GpuDeviceError",
    "GpuArgumentTypeError", "GpuTimeout", "GpuUnresolvedName", "GpuNDLaunchWarning",
]

if __name__ == "__main__":
    from .diagnostics import main

    raise SystemExit(main())
