"""``list[Particle]`` arguments: the caller's structured array bound as the flat list of words
the compiler addresses (``codegen/structs.py``), without a copy.

The array must have the struct's dtype at float32 or float64 width (``Particle.dtype`` /
``Particle.dtype_for(np.float64)``) and be C-contiguous; its ``view`` as float32 / float64
words shares its memory, so the launch reads and writes the caller's array in place (the
float64 view makes the launch a float64 one, as a float64 array does). A ``GpuArray`` of the
dtype gives its word view. Anything else is a ``GpuInvalidArgument`` naming the dtype.
"""

from __future__ import annotations

import numpy as np

from ..errors import GpuInvalidArgument


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
    return value.view(word)
