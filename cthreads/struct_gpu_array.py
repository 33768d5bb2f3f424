"""``GpuArray``s of struct dtypes (``@Gpu.struct``: ``zeros(n, dtype=Particle.dtype)``,
``to_device(structured)``); views (``d[i0:i1]``, ``reshape``) count structs.

The device holds the elements' words (float32 or float64: ``cthreads/lang/structs.py``'s
layout, one word per scalar), exactly the bytes of the host array; a ``StructGpuArray`` is a
``GpuArray`` of those words whose ``shape`` and ``dtype`` are the struct array's. A kernel's
``list[Particle]`` binds its word view (``view(word dtype)``, ``runtime/struct_args.py``), with no
copy; ``numpy()`` downloads the words and views them as the structured dtype. Registered with
``gpu_array`` (``gpu_array.STRUCTURED``) when ``cthreads.gpu`` is imported.
"""

from __future__ import annotations

from . import gpu_array
from .errors import GpuInvalidArgument
from .gpu_array import GpuArray
from .runtime.struct_args import word_dtype


def _np():
    return gpu_array._np()


class StructGpuArray(GpuArray):
    """A GpuArray of a structured dtype (module docstring): its slot holds the words."""
    __slots__ = ("_struct_shape",)

    def __init__(self, slot, dtype, shape, base=None):
        super().__init__(slot, dtype, base)
        self._struct_shape = tuple(shape)

    @property
    def shape(self) -> tuple:
        return self._struct_shape

    @property
    def ndim(self) -> int:
        return len(self._struct_shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self._struct_shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self._struct_shape[0]

    def view(self, word) -> GpuArray:
        """The words, as a GpuArray of ``word`` sharing this buffer (what kernels bind)."""
        self._slot.check_live("GpuArray")
        return GpuArray(self._slot.view(self._slot.dims, 0), _np().dtype(word),
                        self if self._base is None else self._base)

    def numpy(self):
        np = _np()
        words = np.empty(self._slot.dims, dtype=self._slot_dtype())
        from .runtime import device_array
        device_array.download(self._slot, words)
        return words.view(self.dtype).reshape(self.shape)

    def _slot_dtype(self):
        return word_dtype(self.dtype, "GpuArray")

    def set(self, host) -> None:
        np = _np()
        if not isinstance(host, np.ndarray) or host.shape != self.shape or \
                host.dtype != self.dtype:
            raise GpuInvalidArgument(
                f"GpuArray.set(): takes a numpy array of shape {self.shape} and dtype "
                f"{self.dtype}, got {getattr(host, 'shape', type(host).__name__)} of dtype "
                f"{getattr(host, 'dtype', None)}; nothing was changed")
        from .runtime import device_array
        device_array.upload(self._slot, _words(host, self._slot_dtype()))

    def fill(self, value) -> None:
        raise GpuInvalidArgument("GpuArray.fill() of a struct array is not supported; use "
                                 "set() of a host array (np.zeros(n, dtype=...) with its fields)")

    def copy(self) -> "StructGpuArray":
        from .runtime import device_array
        return StructGpuArray(device_array.device_copy(self._slot), self.dtype, self.shape)

    def _view(self, shape, start):
        """A view of ``shape`` elements from element ``start`` on (``GpuArray``'s reshape,
        ravel and row slices, counted in structs): the words from ``start * per``."""
        self._slot.check_live("GpuArray view")
        per = self.dtype.itemsize // self._slot_dtype().itemsize
        shape = tuple(shape)
        words = shape[:-1] + (shape[-1] * per,) if shape else (per,)
        base = self if self._base is None else self._base
        return StructGpuArray(self._slot.view(words, start * per), self.dtype, shape, base)

    def __repr__(self) -> str:
        return f"GpuArray(<{self.size:,} {self.dtype}>, shape={self.shape}, device=" \
               f"{self.device!r})"


def _words(host, word):
    np = _np()
    return np.ascontiguousarray(host).view(word).reshape(-1)


def new(shape, dtype, device, where: str, host=None) -> StructGpuArray:
    """A StructGpuArray of ``shape`` (zeros, or ``host``'s bytes)."""
    np = _np()
    dtype = np.dtype(dtype)
    dims = gpu_array._shape(shape, where)
    word = word_dtype(dtype, where)
    per = dtype.itemsize // word.itemsize
    words = dims[:-1] + (dims[-1] * per,)
    data = _words(host, word) if host is not None else np.zeros(int(np.prod(words)), word)
    from .runtime import device_array
    queue = device if hasattr(device, "pool") else gpu_array._queue(device)
    elem = device_array.elem_of(word, where)
    slot = device_array.allocate(queue, elem, words, data if data.size else None, where)
    return StructGpuArray(slot, dtype, dims)


gpu_array.STRUCTURED = new

__all__ = ["StructGpuArray", "new", "word_dtype"]
