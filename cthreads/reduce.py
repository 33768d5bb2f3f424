"""``func.reduce(values, init=None)``: reduce a list or array on the device with a ``@Gpu.func``.

The user's side: ``reduce_values`` checks that ``func`` is a device function of the form a
reduction needs and picks the widths its plain float or int take from ``values``, then hands
the operation's WGSL to the device side, ``cthreads/runtime/reducer.py`` (which checks the
values, submits the passes and reads the result back).
"""

from __future__ import annotations

from .runtime import convert, residency
from .runtime.args import DeviceArrayBase
from .runtime.device_array import DeviceSlot
from .runtime.reducer import array_kind, run_reduction


def reduce_values(func, values, init=None, axis=None, keepdims=False):
    """``func.reduce(values, init)``: the reduction of ``values`` by ``func`` on the device, as
    a Python scalar (see the module docstring); with ``axis`` (or ``keepdims``) along axes
    (``runtime/axis_reducer.py``)."""
    op, name = _op_of(func, values)
    if axis is None and not keepdims:
        return run_reduction(op, values, init, name)
    from .runtime.axis_reducer import run_axis_reduction  # noqa: PLC0415
    if axis is None:
        axis = tuple(range(len(getattr(values, "shape", None) or args_dims(values))))
    out = run_axis_reduction(op, values, axis, init, name, bool(keepdims))
    if not isinstance(values, DeviceArrayBase):
        return out
    from .gpu_array import GpuArray, to_device  # noqa: PLC0415
    if isinstance(out, DeviceSlot):
        return GpuArray(out, values.dtype)
    return to_device(convert._np().reshape(out, convert._np().shape(out) or (1,)))


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
