"""``func.accumulate(values, axis=None)``: the inclusive scan of a list or array on the device
with a ``@Gpu.func``, as ``np.add.accumulate`` / ``np.cumsum`` (flattened when ``axis`` is None).

The user's side: the operation is checked and its widths picked from ``values`` as for
``reduce`` (``reduce._op_of``); ``cthreads/runtime/scanner.py`` checks the values and runs the
scan. A GpuArray input gives a GpuArray (on the device), any other input a numpy array.
"""

from __future__ import annotations

from .codegen.types import elem as elem_type
from .gpu_array import GpuArray
from .reduce import _op_of
from .runtime import convert
from .runtime.scanner import run_scan


def accumulate_values(func, values, axis=None):
    """``func.accumulate(values, axis)`` (see the module docstring)."""
    op, name = _op_of(func, values)
    result = run_scan(op, values, axis, name)
    if result[0] == "host":
        return result[1]
    slot = result[1]
    return GpuArray(slot, convert._np().dtype(elem_type(slot.elem).array_dtype))


__all__ = ["accumulate_values"]
