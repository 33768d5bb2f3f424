"""``list[vec3]`` arguments: the caller's ``(n, 3)`` (or ``(h, w, 3)``) array bound as the flat
list of components the compiler addresses (``codegen/vectors.py``), without a copy.

A C-contiguous numpy array's flat view (``reshape``) shares its memory, so the launch reads and
writes the caller's array in place (numpy's packed layout: 12 bytes per float32 vec3, nothing
padded); a ``GpuArray`` gives its reshaped view; a Python list of rows or vector objects is
passed as ``vector_rows.VecRows`` (packed, written back into the same rows or objects). Other
trailing shapes, non-contiguous arrays and other objects are refused with a
``GpuInvalidArgument`` naming the expected shape.
"""

from __future__ import annotations

from ..errors import GpuInvalidArgument
from . import struct_rows, vector_rows
from .struct_args import flat_struct, struct_words


def _trailing(p) -> tuple:
    """The trailing shape of an element: (3,) for a vec3, (3, 3) for a mat33."""
    return (p.mat, p.mat) if getattr(p, "mat", 0) else (p.vec,)


def _expected(p) -> str:
    lead = ("n",) if p.ndim == 1 else ("h", "w") if p.ndim == 2 else ("d", "h", "w")
    return "(" + ", ".join(lead + tuple(str(t) for t in _trailing(p))) + ")"


def flat_args(program, args: tuple) -> tuple:
    """``args`` with the value of each ``list[vecN]`` parameter as its flat view."""
    out = None
    for k, p in enumerate(program.params):
        if not (p.vec and p.is_list) or k >= len(args):
            continue
        if out is None:
            out = list(args)
        if getattr(p, "struct", None) is not None and isinstance(args[k], list) and args[k]:
            out[k] = struct_rows.wrap(program.name, p, args[k])   # struct objects
            continue
        out[k] = flat_struct(program.name, p, args[k]) if getattr(p, "struct", None) \
            is not None else _flat(program.name, p, args[k])
    return args if out is None else tuple(out)


def _flat(kernel: str, p, value):
    where = f"{kernel}() parameter {p.name!r} ({p.kind})"
    if isinstance(value, list) and value and not p.mat:   # rows of numbers / vectors
        return vector_rows.wrap(kernel, p, value)
    shape = getattr(value, "shape", None)
    if shape is None or not hasattr(value, "reshape"):
        raise GpuInvalidArgument(f"{where} takes a numpy array or GpuArray of shape "
                                 f"{_expected(p)}, got {type(value).__name__}; pass "
                                 f"np.asarray(...) of shape {_expected(p)}")
    shape, trail = tuple(shape), _trailing(p)
    if len(shape) != p.ndim + len(trail) or shape[p.ndim:] != trail:
        what = (f"the last two dimensions hold the {p.mat}x{p.mat} entries" if len(trail) == 2
                else f"the last dimension holds the {p.vec} components")
        raise GpuInvalidArgument(f"{where} takes an array of shape {_expected(p)}, got shape "
                                 f"{shape}; {what}")
    flags = getattr(value, "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        raise GpuInvalidArgument(f"{where} takes a C-contiguous array (the kernel reads the "
                                 "components in place); this one is a strided view: pass "
                                 "np.ascontiguousarray(...) of it, and copy the results back")
    flat = shape[:p.ndim - 1] + (shape[p.ndim - 1] * p.vec,)
    return value.reshape(flat)


def vector_scalars(program, args: tuple) -> tuple:
    """``args`` (one per Python parameter) with each ``vec3`` parameter's value unpacked into
    its components, one per ``ProgramParam``; a wrong count is left to the caller's check."""
    if len(args) != len(program.python_names):
        return args
    out, k = [], 0
    for value in args:
        p = program.params[k]
        if p.component == 0:
            out.extend(struct_words(program.name, p, value) if p.struct is not None else
                       _components(program.name, p, value))
            k += p.vec
        else:
            out.append(value)
            k += 1
    return tuple(out)


def _components(kernel: str, p, value) -> list:
    if p.kind.startswith("mat"):          # a mat33 (or a (3, 3) array, nested lists): entries
        value = _entries(value)
    try:
        comps = list(value) if not isinstance(value, (str, bytes, dict)) else None
    except TypeError:
        comps = None
    if comps is None or len(comps) != p.vec:
        raise GpuInvalidArgument(f"{kernel}() parameter {p.name!r} ({p.kind}) takes a {p.kind} "
                                 f"(or {p.vec} numbers), got {type(value).__name__}")
    return comps


def _entries(value):
    """A matrix argument's entries, row by row (None when it is not a square table)."""
    try:
        rows = [list(row) for row in value]
    except TypeError:
        return None
    if any(len(row) != len(rows) for row in rows):
        return None
    return [x for row in rows for x in row]
