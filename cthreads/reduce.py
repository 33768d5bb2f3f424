"""``func.reduce(values, init=None)``: reduce a list or array on the device with a ``@Gpu.func``.

The user's side: ``reduce_values`` checks that ``func`` is a device function of the form a
reduction needs and picks the widths its plain float or int take from ``values``, then hands
the operation's WGSL to the device side, ``cthreads/runtime/reducer.py`` (which checks the
values, submits the passes and reads the result back).
"""

from __future__ import annotations

import functools

from .backend import get_queue
from .codegen.types import elem as elem_type
from .runtime import convert, device_array, residency
from .runtime.args import DeviceArrayBase
from .runtime.device_array import DeviceSlot
from .runtime.reducer import array_kind, run_reduction


def reduce_values(func, values, init=None, axis=None, keepdims=False, to_device=False):
    """``func.reduce(values, init)``: the reduction of ``values`` by ``func`` on the device, as
    a Python scalar (see the module docstring); with ``axis`` (or ``keepdims``) along axes
    (``runtime/axis_reducer.py``). ``to_device``: the result as a GpuArray on the device (a
    0-d one for a whole-array reduction), never waited for."""
    op, name = _op_of(func, values)
    if to_device not in (True, False):
        raise TypeError(f"{name}.reduce() argument 'to_device' must be True or False, got "
                        f"{to_device!r}")
    if axis is None and not keepdims:
        if not to_device:
            return run_reduction(op, values, init, name)
        from .gpu_array import GpuArray  # noqa: PLC0415
        out = run_reduction(op, values, init, name, device=True)
        return GpuArray(out, _dtype(op.ty))
    from .runtime.axis_reducer import run_axis_reduction  # noqa: PLC0415
    if axis is None:
        axis = tuple(range(len(getattr(values, "shape", None) or args_dims(values))))
    out = run_axis_reduction(op, values, axis, init, name, bool(keepdims))
    if not isinstance(values, DeviceArrayBase):
        return _on_device(out) if to_device else out
    from .gpu_array import GpuArray, to_device  # noqa: PLC0415
    if isinstance(out, DeviceSlot):
        return GpuArray(out, values.dtype)
    return to_device(convert._np().reshape(out, convert._np().shape(out) or (1,)))


@functools.lru_cache(maxsize=None)
def _dtype(ty: str):
    """The numpy dtype of a GpuArray of ``ty`` elements."""
    return convert._np().dtype(elem_type(ty).array_dtype)


def _on_device(out):
    """A numpy result of an axis reduction as a GpuArray of its shape (``to_device``)."""
    from .gpu_array import GpuArray  # noqa: PLC0415
    np = convert._np()
    host = np.asarray(out)
    elem = device_array.elem_of(host.dtype, "reduce()")
    data = np.ascontiguousarray(host, dtype=elem_type(elem).host_dtype).reshape(-1)
    slot = device_array.allocate(get_queue(), elem, host.shape, data if data.size else None)
    return GpuArray(slot, host.dtype)


def args_dims(values) -> tuple:
    from .runtime import args  # noqa: PLC0415
    return args.dims(values)


def _op_of(func, values):
    """(OpSource, name) of a ``@Gpu.func``; TypeError when it is not one, or not a binary
    operation of one scalar type. An operation on plain float (int, complex) values reduces a
    float64 (int64, complex128) array, or an arena list of them, in float64 (int64,
    complex128)."""
    reduce_op = getattr(func, "reduce_op", None)
    if reduce_op is None:
        what = getattr(func, "__name__", type(func).__name__)
        raise TypeError(f"reduce: {what} is not a @Gpu.func; decorate a function of two "
                        "parameters of one scalar type returning that type with @Gpu.func")
    widths = ("float", "int")
    params = getattr(getattr(func, "signature", None), "params", ())
    plain = params[0][1] if params and params[0][1] in ("float", "int", "complex") else None
    if plain is not None:
        slot = values._slot if isinstance(values, DeviceArrayBase) else \
            residency.lookup(values)
        row = slot.elem if slot is not None else (
            array_kind(values) if convert.is_ndarray(values) else None)
        if (plain, row) in (("float", "float64"), ("complex", "complex128")):
            widths = ("float64", "int")
        elif plain == "int" and row == "int64":
            widths = ("float", "int64")
    op = reduce_op(widths)
    return op, getattr(func, "__name__", op.fn)


__all__ = ["reduce_values"]
