"""``list[Particle]`` arguments: the caller's structured array bound as the flat list of words
the compiler addresses (``codegen/structs.py``), without a copy.

The array must have the struct's dtype at float32 or float64 width (``Particle.dtype`` /
``Particle.dtype_for(np.float64)``) and be C-contiguous; its ``view`` as float32 / float64
words shares its memory, so the launch reads and writes the caller's array in place (the
float64 view makes the launch a float64 one, as a float64 array does). A ``GpuArray`` of the
dtype gives its word view. Anything else is a ``GpuInvalidArgument`` naming the dtype.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import GpuInvalidArgument

#: (id of a structured numpy array, word) -> its word view: the same view object at each
#: launch, so that an array bound in a GpuArena (as its view: ``bound_view``) is found
#: resident (``sharing.lookup`` goes by identity); weak, so nothing is kept alive by it
_VIEWS: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def flat_struct(kernel: str, p, value):
    """The word view of ``value`` for ``list[Struct]`` parameter ``p``."""
    s = p.struct
    where = f"{kernel}() parameter {p.name!r} ({p.kind})"
    dtype = getattr(value, "dtype", None)
    narrow, wide = s.cls.dtype, s.cls.dtype_for(np.float64)
    hint = (f"np.zeros(n, dtype={s.name}.dtype) (or {s.name}.dtype_for(np.float64)): the "
            f"dtype {narrow}")
    if dtype is None or not hasattr(value, "view") or dtype.names is None:
        raise GpuInvalidArgument(f"{where} takes a numpy structured array (or GpuArray) of "
                                 f"{s.name}'s dtype, got {type(value).__name__}"
                                 f"{f' of dtype {dtype}' if dtype is not None else ''}; "
                                 f"make one with {hint}")
    if dtype != narrow and dtype != wide:
        raise GpuInvalidArgument(f"{where} takes an array of dtype {narrow} ({s.name}.dtype) "
                                 f"or {wide} ({s.name}.dtype_for(np.float64)), got dtype "
                                 f"{dtype}; make one with {hint}")
    if len(value.shape) != p.ndim:
        raise GpuInvalidArgument(f"{where} takes a {p.ndim}-D array of {s.name}s, got shape "
                                 f"{tuple(value.shape)}")
    flags = getattr(value, "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        raise GpuInvalidArgument(f"{where} takes a C-contiguous array (the kernel reads the "
                                 "fields in place); this one is a strided view: pass "
                                 "np.ascontiguousarray(...) of it, and copy the results back")
    word = np.float64 if dtype == wide else np.float32
    return word_view(value, word)


def word_view(value, word):
    """``value.view(word)``; for a numpy array the same view object while it lives."""
    if not isinstance(value, np.ndarray):
        return value.view(word)                 # a GpuArray's word view
    key = (id(value), np.dtype(word).char)
    hit = _VIEWS.get(key)
    if hit is not None and hit.ctypes.data == value.ctypes.data and \
            hit.nbytes == value.nbytes and hit.shape[:-1] == value.shape[:-1]:
        return hit           # a view of these very bytes (the same array, or one over them)
    view = value.view(word)
    _VIEWS[key] = view
    return view


def bound_view(value):
    """What ``GpuArena.bind`` binds for ``value``: a structured (``@Gpu.struct``) array's
    word view, which launches pass for it; any other value itself."""
    dtype = getattr(value, "dtype", None)
    if not isinstance(value, np.ndarray) or dtype.names is None or \
            not value.flags["C_CONTIGUOUS"]:
        return value
    return word_view(value, word_dtype(dtype, "GpuArena.bind()"))


def word_dtype(dtype, where: str):
    """The word dtype (float32 / float64) a structured ``dtype`` of the ``@Gpu.struct`` layout
    is held in (one 4- or 8-byte word per scalar, a bool's byte at the start of its word)."""
    sizes = set()

    def leaves(dt):
        for name in dt.names:
            base = dt.fields[name][0].base
            if base.names:
                leaves(base)
            else:
                sizes.add(base.itemsize)
    leaves(dtype)
    word = 8 if 8 in sizes else 4
    if dtype.itemsize % word or not sizes <= {1, 4, word}:
        raise GpuInvalidArgument(f"{where}: the structured dtype {dtype} is not a @Gpu.struct "
                                 "layout (one 4- or 8-byte word per scalar); make the array with "
                                 "dtype=Particle.dtype (or Particle.dtype_for(np.float64))")
    return np.dtype(np.float64 if word == 8 else np.float32)


def struct_words(kernel: str, p, value) -> list:
    """The words of a struct parameter's argument (a ``@Gpu.struct`` object, or an element of
    a struct array in plain Python), in the layout's order: one uniform field each."""
    from ..lang.structs import StructRef, leaf_words
    cls = p.struct.cls
    if not (type(value) is cls or (isinstance(value, StructRef) and value._ct_cls is cls)):
        raise GpuInvalidArgument(f"{kernel}() parameter {p.name!r} ({p.kind}) takes a "
                                 f"{p.kind} object ({p.kind}(...)), got {type(value).__name__}")
    out = []
    for path, _ in leaf_words(cls):
        v = value
        for part in path:
            v = v[part] if isinstance(part, int) else getattr(v, part)
        out.append(v)
    return out
