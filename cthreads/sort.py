"""``sort(x)``, ``argsort(x)`` and ``sort(keys, values)``: stable sorts along the last axis on
the device, in numpy's order (``np.sort(kind="stable")``: NaNs last, -0.0 and 0.0 equal).

The user's side: the device side, ``cthreads/runtime/sorter.py``, checks the inputs and runs
the radix sort; here its result slots become GpuArrays (for a GpuArray input) or numpy arrays.
"""

from __future__ import annotations

from .gpu_array import GpuArray
from .runtime.capture_library import recordable
from .runtime.sorter import run_sort


def _results(got):
    out = []
    for slot, dtype, device in got:
        arr = GpuArray(slot, dtype)
        out.append(arr if device else arr.numpy())
    return out


@recordable("sort")          # inside capture(): recorded (runtime/capture_library.py)
def sort(x, values=None):
    """A sorted copy of ``x`` along its last axis (stable; numpy's order, NaNs last); with
    ``values`` (the keys' shape), ``(sorted keys, values in the keys' order)``. A GpuArray
    gives GpuArrays (on the device), a list, numpy array or arena-bound list numpy arrays."""
    if values is None:
        return _results(run_sort(x, None, "sort"))[0]
    keys, vals = _results(run_sort(x, values, "pairs"))
    return keys, vals


@recordable("argsort")
def argsort(x):
    """The int64 indexes that sort ``x`` along its last axis, stably (``np.argsort(x,
    kind="stable")``); a GpuArray for a GpuArray input, else a numpy array."""
    return _results(run_sort(x, None, "argsort"))[0]


__all__ = ["sort", "argsort"]
