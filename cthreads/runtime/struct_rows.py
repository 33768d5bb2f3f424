"""``list[Particle]`` arguments given as Python lists of struct objects (``[Particle(...),
...]``, nested once more for ``list[list[Particle]]``), written back into the same objects.

``wrap`` checks the list once (rectangular, every element an object of the parameter's struct
class): a ``StructRows``, which the launch passes in the list's place and the runtime sees as
the words of a structured array of the objects (``Rows``, a row of ``args._BY_TYPE``), in the
launch's float width (a Python list says nothing of one, as a list of floats says nothing:
float32's ``Particle.dtype`` unless another argument makes the launch a float64 one). At the
join the words come back into that array and each object's fields are set from its record,
in place: a vector field's own vector object keeps its identity, and so does a nested
struct's object.
"""

from __future__ import annotations

import numpy as np

from ..errors import GpuArgumentTypeError, GpuInvalidArgument
from ..lang.structs import StructList, StructRef, leaf_words
from ..lang.vectors import _Vec
from . import args as _args, nested


class StructRows:
    """A Python list passed for a ``list[Struct]`` parameter (module docstring)."""
    __slots__ = ("value", "leaves", "cls", "dims", "arrays")

    def __init__(self, value: list, leaves: list, cls, dims: tuple):
        self.value = value          # the caller's list
        self.leaves = leaves        # its objects, row-major
        self.cls = cls
        self.dims = dims            # the struct array's shape
        self.arrays = {}            # word dtype name -> the records of that layout

    def __len__(self) -> int:
        return self.dims[0]

    def records(self, elem: str, where: str):
        """The objects as a structured array of the layout of ``elem`` words (made once)."""
        wide = elem == "float64"
        hit = self.arrays.get(wide)
        if hit is None:
            hit = np.zeros(len(self.leaves), self.cls.dtype_for(np.float64 if wide else
                                                                np.float32))
            rows = StructList(hit, self.cls)
            for k, obj in enumerate(self.leaves):
                try:
                    rows[k] = obj
                except (TypeError, OverflowError) as exc:
                    raise GpuInvalidArgument(f"{where}: element {k} (row-major) does not fit "
                                             f"{self.cls.__name__}'s layout: {exc}") from None
            hit = self.arrays[wide] = hit.reshape(self.dims)
        return hit

    def words(self, elem: str, where: str = "a list of structs"):
        return self.records(elem, where).view(np.float64 if elem == "float64" else np.float32)

    @property
    def shape(self) -> tuple:
        """The words' shape (the struct's words along the last axis)."""
        per = len(leaf_words(self.cls))
        return self.dims[:-1] + (self.dims[-1] * per,)


def wrap(kernel: str, p, value: list) -> StructRows:
    """``value`` checked as a ``list[Struct]`` of ``p.ndim`` levels."""
    cls = p.struct.cls
    where = f"{kernel}() parameter {p.name!r} ({p.kind})"
    dims = (len(value),) if p.ndim == 1 else nested.shape(value, p.ndim, where)
    leaves = nested.flatten(value, p.ndim)
    for k, obj in enumerate(leaves):
        if type(obj) is not cls and not (isinstance(obj, StructRef) and obj._ct_cls is cls):
            raise GpuArgumentTypeError(
                f"{where}: element {k} (row-major) is {type(obj).__name__}; a Python list for "
                f"it holds {cls.__name__} objects (or pass a numpy array of dtype "
                f"{cls.__name__}.dtype)")
    rows = StructRows(value, leaves, cls, dims)
    rows.records("float", where)            # every object fits the layout, before a launch
    return rows


def _assign(obj, rec: StructRef) -> None:
    """Set ``obj``'s fields from the record ``rec``, keeping vector and struct objects."""
    for f in rec._ct_fields:
        new = getattr(rec, f.name)
        cur = getattr(obj, f.name)
        if isinstance(new, StructRef) and not isinstance(cur, StructRef):
            _assign(cur, new)
        elif isinstance(new, _Vec) and isinstance(cur, _Vec) and isinstance(cur._c, list):
            cur._c[:] = list(new)
        else:
            setattr(obj, f.name, new.copy() if isinstance(new, StructRef) else
                    type(new)(new) if isinstance(new, _Vec) else new)


class Rows(_args.ArgKind):
    """The handler of ``StructRows`` arguments: their words, in the launch's float width
    (as a plain ``list[float]``'s follows the other arguments)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        return None, value.shape

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        _args.ARRAY.check_container(value.words(elem, where), elem, where, writable, ndim)

    def dims(self, value) -> tuple:
        return value.shape

    def noun(self, value, dims) -> str:
        return f"list of {value.cls.__name__} objects"

    def pack(self, value, elem, where, writable=True, ndim=1):
        return _args.ARRAY.pack(value.words(elem, where), elem, where, writable, ndim)

    def pack_any(self, value, where):
        raise GpuInvalidArgument(f"{where}: a list of struct objects is passed to a launch, not "
                                 "bound in an arena; bind a numpy array of the struct's dtype")

    def writeback(self, target, view, elem):
        words = target.words(elem)
        _args.ARRAY.writeback(words, view, elem)
        records = target.records(elem, "").reshape(-1)
        for k, obj in enumerate(target.leaves):
            cls = obj._ct_cls if isinstance(obj, StructRef) else type(obj)
            _assign(obj, StructRef(cls, records[k]))

    def elements(self, target) -> int:
        return nested.count(target.shape)


ROWS = Rows()
_args.register_kind(StructRows, ROWS)

__all__ = ["ROWS", "StructRows", "wrap"]
