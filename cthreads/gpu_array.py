"""``GpuArray``: an array whose data lives on one device (docs/api.md, "Device arrays").

A launch binds its buffer, with no copy and no download at join; ``numpy()`` downloads, after
the submitted and pending work that writes it (the device queue runs in program order);
``set()`` and ``fill()`` upload, after the pending work that binds it. The device side (its
``DeviceSlot``, the transfers, the shutdown hook) is ``runtime/device_array.py``; the argument
handler is ``runtime/args.py``'s ``Device``.

An array past the device's storage-binding limit is split across several buffers (its slot's
``parts``, ``runtime/parts.py``); kernels address them (``codegen/split.py``). Out of scope for
now: views (reshape, ravel, slices), complex and vector dtypes.
"""

from __future__ import annotations

import operator

from .backend import get_queue
from .devices import use_device
from .errors import GpuArgumentTypeError, GpuInvalidArgument
from .runtime import convert, device_array
from .runtime.args import DeviceArrayBase
from .codegen.types import elem as elem_type

#: arrays of at most this many elements show their values in ``repr``
REPR_VALUES = 1000


def _np():
    return convert._np()


def _shape(shape, where: str) -> tuple:
    """``shape`` (an int or a sequence of ints >= 0) as a tuple of ints, checked."""
    try:
        dims = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
            tuple(operator.index(d) for d in shape)
    except TypeError:
        raise GpuArgumentTypeError(f"{where}: shape {shape!r} is not an int or a tuple of "
                                   "ints; pass e.g. 1000 or (rows, cols)") from None
    if not dims or any(d < 0 for d in dims):
        raise GpuInvalidArgument(f"{where}: shape {shape!r} needs one or more dimensions, each "
                                 ">= 0 (0-D arrays are not supported: use shape (1,))")
    return dims


def _queue(device):
    """The queue of ``device`` (an index, part of a name, or None: the caller's device)."""
    if device is None:
        return get_queue()
    with use_device(device):
        return get_queue()


def _device_bytes(host, elem: str):
    """The device bytes of numpy array ``host`` (bools widen to the device's u32)."""
    np = _np()
    return np.ascontiguousarray(host, dtype=elem_type(elem).host_dtype).reshape(-1)


class GpuArray(DeviceArrayBase):
    """Device memory of a shape and dtype; made by ``to_device``, ``empty``, ``zeros``,
    ``full``, ``empty_like``, ``zeros_like`` or ``copy()``."""

    __slots__ = ("_slot", "dtype", "__weakref__")

    def __init__(self, slot, dtype):
        self._slot = slot
        self.dtype = dtype

    # -- attributes --------------------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        return self._slot.dims

    @property
    def ndim(self) -> int:
        return len(self._slot.dims)

    @property
    def size(self) -> int:
        return self._slot.count

    @property
    def nbytes(self) -> int:
        return self._slot.count * self.dtype.itemsize

    @property
    def device(self) -> str:
        """The device it lives on, as ``GpuArena.device`` names it."""
        return self._slot.queue.ctx.label

    def __len__(self) -> int:
        return self._slot.dims[0]

    # -- transfers ---------------------------------------------------------------------------

    def numpy(self):
        """A host copy (a new numpy array), after the work that writes this array."""
        out = _np().empty(self.shape, dtype=self.dtype)
        device_array.download(self._slot, out)
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def set(self, host) -> None:
        """Upload numpy array ``host`` of the same shape and dtype (else GpuInvalidArgument,
        nothing changed)."""
        np = _np()
        where = "GpuArray.set()"
        self._slot.check_live(where)
        if not isinstance(host, np.ndarray):
            raise GpuInvalidArgument(
                f"{where} takes a numpy array of shape {self.shape} and dtype {self.dtype}, "
                f"got {convert._type_name(host)}; pass np.asarray(values, dtype=np."
                f"{self.dtype.name})")
        if host.shape != self.shape or host.dtype != self.dtype:
            raise GpuInvalidArgument(
                f"{where}: the host array has shape {host.shape} and dtype {host.dtype}, but "
                f"this GpuArray has shape {self.shape} and dtype {self.dtype}; nothing was "
                f"changed. Pass an array of that shape and dtype (host.reshape(...).astype(np."
                f"{self.dtype.name})), or make a new one with to_device(host)")
        device_array.upload(self._slot, _device_bytes(host, self._slot.elem))

    def fill(self, value) -> None:
        """Set every element to ``value`` (checked as the dtype's scalar)."""
        self._slot.check_live("GpuArray.fill()")
        v = convert.check_scalar(value, self._slot.elem, "GpuArray.fill() argument 'value'")
        np = _np()
        data = np.full(self.size, v, dtype=elem_type(self._slot.elem).host_dtype)
        device_array.upload(self._slot, data)

    def copy(self) -> "GpuArray":
        """A new GpuArray on the same device holding a device copy (no download)."""
        return GpuArray(device_array.device_copy(self._slot), self.dtype)

    # -- lifetime, pickling, repr ------------------------------------------------------------

    def __del__(self):
        try:
            self._slot.release()
        except Exception:
            pass

    def __reduce__(self):
        return (_rebuild, (self.numpy(),))

    def __repr__(self) -> str:
        slot = self._slot
        if slot.dead or slot.generation != device_array._device.generation():
            return (f"<GpuArray shape={self.shape} dtype={self.dtype}: its device is gone "
                    "(shutdown)>")
        np = _np()
        tail = f"dtype={self.dtype}, shape={self.shape}, device={self.device!r}"
        if self.size > REPR_VALUES or self.size == 0:
            return f"GpuArray(<{self.size:,} elements>, {tail})"
        text = np.array2string(self.numpy(), separator=", ", prefix="GpuArray(")
        return f"GpuArray({text}, {tail})"


def _rebuild(host) -> GpuArray:
    """Unpickling: the data onto the current device."""
    return to_device(host)


def _new(shape, dtype, device, where: str, data_of=None) -> GpuArray:
    np = _np()
    dims = _shape(shape, where)
    elem = device_array.elem_of(dtype, where)
    queue = device if hasattr(device, "pool") else _queue(device)
    count = 1
    for d in dims:
        count *= d
    data = None if data_of is None or count == 0 else data_of(count, elem)
    slot = device_array.allocate(queue, elem, dims, data, where)
    return GpuArray(slot, np.dtype(elem_type(elem).array_dtype))


def to_device(a, device=None) -> GpuArray:
    """A GpuArray holding a copy of ``a`` (a numpy array, a list, or a GpuArray)."""
    np = _np()
    where = "to_device()"
    if isinstance(a, GpuArray):
        if device is None or _queue(device) is a._slot.queue:
            return a.copy()
        a = a.numpy()
    host = a if isinstance(a, np.ndarray) else np.asarray(a)
    return _new(host.shape, host.dtype, device, where,
                lambda count, elem: _device_bytes(host, elem))


def empty(shape, dtype=None, device=None) -> GpuArray:
    """An array of ``shape`` whose contents are undefined until written."""
    np = _np()
    return _new(shape, np.float32 if dtype is None else dtype, device, "empty()")


def zeros(shape, dtype=None, device=None) -> GpuArray:
    np = _np()
    return _new(shape, np.float32 if dtype is None else dtype, device, "zeros()",
                lambda count, elem: np.zeros(count, dtype=elem_type(elem).host_dtype))


def full(shape, value, dtype=None, device=None) -> GpuArray:
    np = _np()
    dtype = np.float32 if dtype is None else dtype
    elem = device_array.elem_of(dtype, "full()")
    v = convert.check_scalar(value, elem, "full() argument 'value'")
    return _new(shape, dtype, device, "full()",
                lambda count, elem: np.full(count, v, dtype=elem_type(elem).host_dtype))


def _like(a, where: str):
    np = _np()
    if isinstance(a, GpuArray):
        a._slot.check_live(where)
        return a.shape, a.dtype, a._slot.queue
    if isinstance(a, np.ndarray):
        return a.shape, a.dtype, None
    raise GpuArgumentTypeError(f"{where} takes a numpy array or a GpuArray, got "
                               f"{convert._type_name(a)}")


def empty_like(a, dtype=None) -> GpuArray:
    shape, dt, queue = _like(a, "empty_like()")
    return empty(shape, dt if dtype is None else dtype, queue)


def zeros_like(a, dtype=None) -> GpuArray:
    shape, dt, queue = _like(a, "zeros_like()")
    return zeros(shape, dt if dtype is None else dtype, queue)


__all__ = ["GpuArray", "empty", "empty_like", "full", "to_device", "zeros", "zeros_like"]
