"""``GpuArray``: an array whose data lives on one device (docs/api.md, "Device arrays").

A launch binds its buffer, with no copy and no download at join; ``numpy()`` downloads, after
the submitted and pending work that writes it (the device queue runs in program order);
``set()`` and ``fill()`` upload, after the pending work that binds it. The device side (its
``DeviceSlot``, the transfers, the shutdown hook) is ``runtime/device_array.py``; the argument
handler is ``runtime/args.py``'s ``Device``.

Views (``reshape``, ``ravel``, row slices ``d[i0:i1]`` and ``d[i]``) share the buffer: a view
is a slot with a byte offset and a shape on its base's buffer and its writer set, and keeps its
base alive. Kernels and f.reduce bind a view from its offset when the device allows that offset
(a multiple of min-storage-buffer-offset-alignment, ``DeviceSlot.check_offset``), else refuse it
naming ``copy()``. An array past the device's storage-binding limit is split across several
buffers (its slot's ``parts``, ``runtime/parts.py``); kernels address them
(``codegen/split.py``), and its views start at its first element. Out of scope for now: strided
views (refused naming ``copy()``-based alternatives), complex and vector dtypes.
"""

from __future__ import annotations

import operator
from typing import Any

from .backend import get_queue
from .devices import unpickle_device, use_device
from .errors import GpuArgumentTypeError, GpuInvalidArgument
from .runtime import convert, device_array
from .runtime.args import DeviceArrayBase
from .codegen.types import elem as elem_type

#: arrays of at most this many elements show their values in ``repr``
REPR_VALUES = 1000
#: ``struct_gpu_array.new``: GpuArrays of struct dtypes (registered by that module)
STRUCTURED = None
#: ``matmul.matmul``: ``a @ b`` (registered by that module)
MATMUL: Any = None


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

    __slots__ = ("_slot", "dtype", "_base", "__weakref__")

    def __init__(self, slot, dtype, base=None):
        self._slot = slot
        self.dtype = dtype
        self._base = base         # a view: the GpuArray whose buffer it shares (kept alive)

    # -- views -------------------------------------------------------------------------------

    def _view(self, shape: tuple, start: int) -> "GpuArray":
        self._slot.check_live("GpuArray view")
        base = self if self._base is None else self._base
        return GpuArray(self._slot.view(shape, start), self.dtype, base)

    def reshape(self, *shape) -> "GpuArray":
        """A view of the same elements in C order with ``shape`` (one -1 is inferred)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        where = f"GpuArray.reshape{shape!r}"
        try:
            dims = [operator.index(d) for d in shape]
        except TypeError:
            raise GpuArgumentTypeError(f"{where}: the shape must be ints, e.g. "
                                       "d.reshape(rows, -1)") from None
        if not dims or dims.count(-1) > 1 or any(d < -1 for d in dims):
            raise GpuInvalidArgument(f"{where}: give one or more dimensions >= 0, at most one "
                                     "of them -1 (inferred)")
        known = 1
        for d in dims:
            if d != -1:
                known *= d
        if -1 in dims:
            if known == 0 or self.size % known:
                raise GpuInvalidArgument(
                    f"{where}: cannot reshape an array of {self.size} elements (shape "
                    f"{self.shape}) into {tuple(shape)}; the sizes must match")
            dims[dims.index(-1)] = self.size // known
        elif known != self.size:
            raise GpuInvalidArgument(
                f"{where}: cannot reshape an array of {self.size} elements (shape "
                f"{self.shape}) into {tuple(shape)}; the sizes must match")
        return self._view(tuple(dims), 0)

    def ravel(self) -> "GpuArray":
        """A 1-D view of every element in C order."""
        return self._view((self.size,), 0)

    @property
    def T(self):
        """Refused: a transpose needs a strided view (GpuInvalidArgument naming the ways)."""
        raise _strided("d.T", "d.numpy().T.copy()")

    def transpose(self, *axes):
        """Refused, as ``T`` is."""
        raise _strided("d.transpose()", "d.numpy().transpose().copy()")

    def __getitem__(self, key) -> "GpuArray":
        """``d[i0:i1]`` (whole rows, step 1), ``d[i]`` (one row of an N-D array), ``d[...]``
        and those followed by whole axes (``d[i0:i1, :]``, ``d[i, j0:j1]``): views."""
        if isinstance(key, tuple):
            if not key:
                key = Ellipsis
            elif len(key) == 1:
                key = key[0]
            elif len(key) == self.ndim and all(_is_int(k) for k in key):
                text, last = _key_text(key), operator.index(key[-1]) % max(self.shape[-1], 1)
                one = _key_text(key[:-1] + (slice(last, last + 1),))
                raise GpuInvalidArgument(
                    f"GpuArray[{text}]: one element is not a view; use d.numpy()[{text}] (a "
                    f"download) or d[{one}] (a 1-element view)")
            elif _is_int(key[0]) and self.ndim > 1:      # d[i, ...] is d[i][...]
                return self[key[0]][key[1:]]
            elif isinstance(key[0], slice) and (key[1:] == (Ellipsis,) or (
                    len(key) <= self.ndim and all(
                        isinstance(k, slice) and k.indices(d) == (0, d, 1)
                        for k, d in zip(key[1:], self.shape[1:])))):
                key = key[0]                      # d[i0:i1, :] and d[i0:i1, ...] are d[i0:i1]
        if key is Ellipsis:
            return self._view(self.shape, 0)
        rows = self.shape[0]
        inner = 1
        for d in self.shape[1:]:
            inner *= d
        if isinstance(key, slice):
            start, stop, step = key.indices(rows)
            if step != 1:
                raise GpuInvalidArgument(
                    f"GpuArray[{_key_text(key)}]: a step other than 1 needs a strided view; "
                    f"strided views are not supported yet: use d.numpy()[{_key_text(key)}] "
                    "(a host copy; to_device() it again) or a kernel")
            n = max(stop - start, 0)
            return self._view((n,) + self.shape[1:], start * inner)
        if isinstance(key, tuple) or key is None:
            text = _key_text(key)
            raise GpuInvalidArgument(
                f"GpuArray[{text}] of shape {self.shape}: only whole rows along the first axis "
                f"are views (d[i0:i1], d[i]); this one needs strides, which views do not "
                f"support yet: use to_device(d.numpy()[{text}]) (through the host), or a "
                "kernel that copies the elements into a new array")
        if not _is_int(key):
            what = type(key).__name__
            raise GpuInvalidArgument(
                f"GpuArray[<{what}>] of shape {self.shape}: indexing with a {what} (an index "
                "array or a mask) gathers elements into a copy, which GpuArray does not do; "
                "use to_device(d.numpy()[index]) (through the host), or a kernel that copies "
                "the elements into a new array")
        i = operator.index(key)
        if self.ndim == 1:
            raise GpuInvalidArgument(
                f"GpuArray[{i}]: one element of a 1-D array is not a view; use d.numpy()[{i}] "
                f"(a download) or d[{i}:{i + 1}] (a 1-element view)")
        if not -rows <= i < rows:
            raise IndexError(f"GpuArray[{i}]: index out of range for axis 0 of size {rows}")
        i %= rows
        return self._view(self.shape[1:], i * inner)

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
        if not self._slot.dims:
            raise TypeError("len() of a 0-d GpuArray")
        return self._slot.dims[0]

    # -- one value (a 0-d array, such as f.reduce(x, to_device=True) gives) ------------------

    def item(self):
        """The one element of a 0-d or one-element array as a Python scalar (a download,
        after the work that writes it); ValueError for more elements, as numpy's."""
        if self.size != 1:
            raise ValueError(f"GpuArray.item(): the array has {self.size:,} elements (shape "
                             f"{self.shape}); only an array of one element converts to a "
                             "Python scalar")
        return self.numpy().item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    # -- products (cthreads/matmul.py) -------------------------------------------------------

    def __matmul__(self, other):
        return MATMUL(self, other)

    def __rmatmul__(self, other):
        return MATMUL(other, self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.matmul`` (and ``ndarray @ GpuArray``) runs on the device; every other ufunc
        on host copies, as numpy did before through ``__array__``."""
        np = _np()
        if ufunc is np.matmul and method == "__call__" and set(kwargs) <= {"out"}:
            out = kwargs.get("out")
            if isinstance(out, tuple):
                out = out[0] if len(out) == 1 else out
            return MATMUL(*inputs, out=out)
        if any(isinstance(o, GpuArray) for o in kwargs.get("out", ()) or ()):
            return NotImplemented
        hosts = [x.numpy() if isinstance(x, GpuArray) else x for x in inputs]
        return getattr(ufunc, method)(*hosts, **kwargs)

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


def _is_int(key) -> bool:
    """An integer index (bools are masks to numpy, not indexes)."""
    if key is True or key is False or key.__class__.__name__ == "bool_":
        return False
    try:
        operator.index(key)
    except TypeError:
        return False
    return True


def _strided(what: str, fix: str) -> GpuInvalidArgument:
    return GpuInvalidArgument(
        f"{what}: a transposed GpuArray needs a strided view, which views do not support yet; "
        f"use to_device({fix}) (through the host), or a kernel that writes the transpose into "
        "a new array")


def _key_text(key) -> str:
    """``key`` as it was written inside the brackets (messages)."""
    def one(k):
        if isinstance(k, slice):
            parts = ["" if v is None else str(v) for v in (k.start, k.stop)]
            text = ":".join(parts)
            return text + (f":{k.step}" if k.step is not None else "")
        return "..." if k is Ellipsis else repr(k)
    return ", ".join(one(k) for k in key) if isinstance(key, tuple) else one(key)


def _rebuild(host) -> GpuArray:
    """Unpickling: the data onto the current device (in a Dask worker, its device:
    ``devices.unpickle_device``)."""
    return to_device(host, device=unpickle_device())


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
    if host.dtype.names and STRUCTURED is not None:        # a @Gpu.struct array
        return STRUCTURED(host.shape, host.dtype, device, where, host)
    return _new(host.shape, host.dtype, device, where,
                lambda count, elem: _device_bytes(host, elem))


def empty(shape, dtype=None, device=None) -> GpuArray:
    """An array of ``shape`` whose contents are undefined until written."""
    np = _np()
    if dtype is not None and np.dtype(dtype).names and STRUCTURED is not None:
        return STRUCTURED(shape, dtype, device, "empty()")
    return _new(shape, np.float32 if dtype is None else dtype, device, "empty()")


def zeros(shape, dtype=None, device=None) -> GpuArray:
    np = _np()
    if dtype is not None and np.dtype(dtype).names and STRUCTURED is not None:
        return STRUCTURED(shape, dtype, device, "zeros()")
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
