"""What type checkers see of the ``Gpu`` decorator (``cthreads.gpu.Gpu``, the same object as
``cthreads.kernel.Gpu``): ``@Gpu``, ``@Gpu(...)``, ``@Gpu.func`` and
``@Gpu.struct``. A function's attribute
(``Gpu.func``) is invisible to mypy; this protocol declares it."""

from __future__ import annotations

from typing import Any, Callable, Protocol, overload

from .func import GpuFunc
from .kernel import GpuKernel


class GpuDecorator(Protocol):
    func: type[GpuFunc]
    struct: Callable[[type], type]       # @Gpu.struct (cthreads/lang/structs.py)

    @overload
    def __call__(self, fn: Callable[..., Any], /) -> GpuKernel: ...
    @overload
    def __call__(self, fn: None = None, /, *, log: bool = ..., boundscheck: bool = ...,
                 workgroup: tuple[int, ...] | None = ...
                 ) -> Callable[[Callable[..., Any]], GpuKernel]: ...


__all__ = ["GpuDecorator"]
