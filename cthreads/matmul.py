"""``matmul(a, b, out=None)`` and ``GpuArray @ GpuArray``: the matrix product on the device
(docs/api.md, "matmul").

The user's side: the operands' shapes are checked as ``np.matmul`` checks them (1-D operands
become a row / a column and that axis is dropped from the result; the batch axes broadcast),
the dtype is numpy's promotion of the two (float32 or float64; integer and bool operands are
multiplied in float64, giving a float64 result, as ``np.matmul(a.astype(float), ...)``), host
operands are uploaded, and the device side (``runtime/matmul_runner.py``) queues the tiled
kernel. A product with a ``GpuArray`` operand gives a ``GpuArray`` on that device; one of host
operands (lists, numpy arrays, arena-bound arrays, read from their device copy) a numpy array.
``out=`` (a numpy array or a ``GpuArray`` of the result's shape and dtype) is written and
returned. Empty products never reach the device: k = 0 gives zeros, m, n or a batch of 0 an
empty array. Arrays split across bindings (past the storage-binding limit) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import GpuArgumentTypeError, GpuInvalidArgument
from .codegen.types import elem as elem_type
from .gpu_array import GpuArray, zeros
from .runtime import capture_library as _capture
from .runtime import convert, device_array, residency, sharing
from .runtime import matmul_runner as runner

_FLOATS = ("float32", "float64")
_SIG = "(n?,k),(k,m?)->(n?,m?)"


@dataclass
class _Arg:
    """One operand: its shape and dtype, and where its data is (a device slot or host data)."""
    shape: tuple
    dtype: str
    slot: Any = None
    host: Any = None


def _np():
    return convert._np()


def _arg(x, index: int) -> _Arg:
    np = _np()
    name = "ab"[index]
    if isinstance(x, GpuArray):
        x._slot.check_live(f"matmul() argument {name!r}")
        if x.dtype.name not in _FLOATS:
            raise GpuArgumentTypeError(
                f"matmul() argument {name!r} is a GpuArray of dtype {x.dtype}; the device "
                "product takes float32 or float64 GpuArrays: convert on the host first "
                f"(to_device({name}.numpy().astype(np.float64)))")
        return _Arg(x.shape, x.dtype.name, slot=x._slot)
    slot = residency.lookup(x)
    if slot is None and sharing.bound_arrays and convert.is_ndarray(x):
        slot = sharing.shared_slot(x, f"matmul() argument {name!r}")
    if slot is not None and slot.pooled is not None:
        dtype = {"float": "float32", "float64": "float64"}.get(slot.elem)
        if dtype is not None and len(slot.dims) >= 1:
            return _Arg(tuple(slot.dims), dtype, slot=slot)
    try:
        host = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise GpuArgumentTypeError(f"matmul() argument {name!r}: {exc}; pass a rectangular "
                                   "list, a numpy array or a GpuArray") from None
    if host.dtype.kind not in "biuf":
        raise GpuArgumentTypeError(
            f"matmul() argument {name!r} has dtype {host.dtype}; the device product takes "
            "float32 or float64 (ints and bools are converted to float64)")
    return _Arg(host.shape, host.dtype.name, host=host)


def _dtype(a: _Arg, b: _Arg) -> str:
    """numpy's promotion of the two, integers and bools computed in float64."""
    np = _np()
    dt = np.result_type(np.dtype(a.dtype), np.dtype(b.dtype))
    return dt.name if dt.name in _FLOATS else "float64"


def _shapes(a: tuple, b: tuple):
    """(batch shape, batch, m, k, n, result shape, a broadcast?, b broadcast?) as np.matmul."""
    np = _np()
    for i, s in enumerate((a, b)):
        if len(s) == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has "
                             f"0, gufunc core with signature {_SIG} requires 1)")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature {_SIG} (size {b2[-2]} is different from "
                         f"{a2[-1]})")
    try:
        batch_shape = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a}->{a2[:-2] + ('newaxis', 'newaxis')} "
                         f"{b}->{b2[:-2] + ('newaxis', 'newaxis')}  and requested shape "
                         f"({a2[-2]},{b2[-1]})") from None
    m, k, n = a2[-2], a2[-1], b2[-1]
    out = batch_shape + ((m,) if len(a) > 1 else ()) + ((n,) if len(b) > 1 else ())
    return batch_shape, m, k, n, out, a2, b2


def _batches(shape) -> int:
    count = 1
    for d in shape:
        count *= d
    return count


def _operand(arg: _Arg, full: tuple, batch_shape: tuple, dtype: str, queue, keep: list,
             name: str):
    """The ``runner.Operand`` of ``arg`` viewed as ``full`` (its 2-D+ shape)."""
    mat = full[-2] * full[-1]
    own = _batches(full[:-2])
    whole = _batches(batch_shape)
    if arg.slot is not None:
        slot = arg.slot
        if len(getattr(slot, "parts", ())) > 1:
            raise GpuInvalidArgument(
                f"matmul() argument {name!r} of shape {arg.shape} is held in several device "
                "buffers (it is past the device's storage-binding limit of "
                f"{queue.pool.binding_bytes():,} bytes); split the product into row blocks "
                "below that limit")
        if slot.queue is not queue:
            raise GpuInvalidArgument(
                f"matmul() argument {name!r} lives on {slot.queue.ctx.label}, but the other "
                f"operand on {queue.ctx.label}; move one of them (to_device(x.numpy(), "
                "device=...))")
        if own == whole or own == 1:
            size = elem_type(slot.elem).size
            return runner.Operand(slot.pooled, arg.dtype, slot.offset // size,
                                  mat if own == whole and whole > 1 else 0, own * mat), slot
        raise GpuInvalidArgument(
            f"matmul() argument {name!r}: a device operand of batch shape {full[:-2]} "
            f"broadcast against {batch_shape} along some axes only is not supported; "
            "reshape it so its batch is all of the result's or a single matrix")
    np = _np()
    host = arg.host.reshape(full)
    if own not in (whole, 1):
        host = np.broadcast_to(host, batch_shape + full[-2:])
        own = whole
    data = np.ascontiguousarray(host, dtype=dtype).reshape(-1)
    _check_binding(queue, data.nbytes, f"matmul() argument {name!r} of shape {arg.shape}")
    pooled = queue.upload_new(data)
    keep.append(pooled)
    return runner.Operand(pooled, dtype, 0, mat if own > 1 else 0, own * mat), None


def _check_binding(queue, nbytes: int, what: str) -> None:
    limit = queue.pool.binding_bytes()
    if nbytes > limit:
        raise GpuInvalidArgument(
            f"{what} takes {nbytes:,} bytes, past the device's storage-binding limit of "
            f"{limit:,} bytes, which one matrix product binds whole; split the product into "
            "row blocks below that limit")


def _check_out(out, shape: tuple, dtype: str):
    np = _np()
    if isinstance(out, GpuArray):
        out._slot.check_live("matmul() argument 'out'")
        have = (out.shape, out.dtype.name)
    elif isinstance(out, np.ndarray):
        have = (out.shape, out.dtype.name)
    else:
        raise GpuArgumentTypeError(f"matmul() argument 'out' must be a numpy array or a "
                                   f"GpuArray, got {convert._type_name(out)}")
    if have[0] != shape:
        raise ValueError(f"matmul: argument 'out' has shape {have[0]}, but the product has "
                         f"shape {shape}; pass an array of shape {shape}")
    if have[1] != dtype:
        raise GpuArgumentTypeError(f"matmul: argument 'out' has dtype {have[1]}, but the "
                                   f"product is {dtype}; pass a {dtype} array")
    if isinstance(out, GpuArray) and len(out._slot.parts) > 1:
        raise GpuInvalidArgument(
            "matmul() argument 'out' is held in several device buffers (past the storage-"
            "binding limit); pass a smaller out, or none")


@_capture.recordable("matmul")        # inside capture(): recorded (runtime/capture_library.py)
def matmul(a, b, out=None):
    """The matrix product of ``a`` and ``b`` as ``np.matmul`` (see the module docstring)."""
    np = _np()
    x, y = _arg(a, 0), _arg(b, 1)
    dtype = _dtype(x, y)
    batch_shape, m, k, n, shape, a2, b2 = _shapes(x.shape, y.shape)
    if out is not None:
        _check_out(out, shape, dtype)
    device = isinstance(a, GpuArray) or isinstance(b, GpuArray)
    ref = a if isinstance(a, GpuArray) else b if isinstance(b, GpuArray) else None
    batch = _batches(batch_shape)
    if batch * m * n == 0 or k == 0:
        return _empty(shape, dtype, device, ref, out)
    s = runner.state()
    runner.check_f64(s, (x.dtype, y.dtype, dtype), "matmul()")
    keep: list = []
    try:
        op_a, slot_a = _operand(x, a2, batch_shape, dtype, s.queue, keep, "a")
        op_b, slot_b = _operand(y, b2, batch_shape, dtype, s.queue, keep, "b")
        target = out if isinstance(out, GpuArray) and not _shares(out, slot_a, slot_b) \
            else None
        if target is None:
            _check_binding(s.queue, batch * m * n * _np().dtype(dtype).itemsize,
                           f"matmul(): the result of shape {shape}")
        res = target if target is not None else _empty_gpu(shape, dtype, s.queue)
        slot_c = res._slot
        op_c = runner.Operand(slot_c.pooled, dtype, slot_c.offset // np.dtype(dtype).itemsize,
                              m * n if batch > 1 else 0, batch * m * n)
        runner.run_product(s, op_a, op_b, op_c, batch, m, n, k)
        for slot in (slot_a, slot_b):      # kernels' bounds checks that wrote the operands
            if slot is not None:
                slot_c.writers |= set(slot.writers)
        if isinstance(out, GpuArray):
            if target is None:             # out overlaps an operand: copied in after
                s.queue.submit_copies([(slot_c.pooled.buffer, 0, out._slot.pooled.buffer,
                                        out._slot.offset, slot_c.nbytes)])
                out._slot.writers |= slot_c.writers
            return out
        if device and out is None:
            return res
        host = res.numpy()
    finally:
        for pooled in keep:                 # an upload into a reused buffer waits its turn
            s.queue.pool.release(pooled)
    if out is not None:
        out[...] = host
        return out
    return host


def _shares(out: GpuArray, *slots) -> bool:
    return any(s is not None and s.pooled is out._slot.pooled for s in slots)


def _empty_gpu(shape: tuple, dtype: str, queue) -> GpuArray:
    np = _np()
    slot = device_array.allocate(queue, "float" if dtype == "float32" else "float64", shape,
                                 where="matmul()")
    return GpuArray(slot, np.dtype(dtype))


def _empty(shape, dtype, device, ref, out):
    """The result of a product with no terms (zeros) or no elements, with no device work."""
    np = _np()
    if out is not None:
        if isinstance(out, GpuArray):
            if out.size:
                out.fill(0.0)
        else:
            out[...] = 0
        return out
    if device:
        return zeros(shape, dtype, ref._slot.queue)
    return np.zeros(shape, dtype)


from . import gpu_array as _gpu_array  # noqa: E402 - registers ``a @ b``
_gpu_array.MATMUL = matmul

__all__ = ["matmul"]
