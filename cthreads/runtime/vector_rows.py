"""``list[vecN]`` arguments given as Python lists: rows of N numbers (``[[x, y, z], ...]``) or
vector objects (``[vec3(...), ...]``), nested once more for ``list[list[vec3]]``.

``wrap`` checks the list once (rectangular, N components per element, one kind of element) and
returns a ``VecRows``: the argument the launch passes in its place (``vector_args.flat_args``),
seen by the runtime as the flat list of components the kernel addresses (``len`` and the shape
are the flat view's, as for an ``(n, 3)`` array's reshape). Its ``ArgKind`` (``ROWS``, a row of
``args._BY_TYPE``) packs the components and writes the results back *in place* at the join:
into the same row lists (as ``list[list[float]]`` rows are), or into the components of the
same vector objects.
"""

from __future__ import annotations

import itertools

from ..codegen.types import elem as elem_type
from ..errors import GpuArgumentTypeError, GpuInvalidArgument
from ..lang.vectors import _Vec
from . import args as _args, nested


class VecRows:
    """A Python list passed for a ``list[vecN]`` parameter (module docstring)."""
    __slots__ = ("value", "leaves", "vec", "dims", "rows")

    def __init__(self, value: list, leaves: list, vec: int, dims: tuple, rows: bool):
        self.value = value          # the caller's list
        self.leaves = leaves        # its elements, row-major: row lists or vector objects
        self.vec = vec
        self.dims = dims            # the flat view's shape: (n * N,) or (h, w * N)
        self.rows = rows            # rows of numbers (else vector objects)

    def __len__(self) -> int:
        return self.dims[0]

    def components(self) -> list:
        if self.rows:
            return list(itertools.chain.from_iterable(self.leaves))
        return list(itertools.chain.from_iterable(v._c for v in self.leaves))


def wrap(kernel: str, p, value: list) -> VecRows:
    """``value`` checked as a ``list[vecN]`` (``p``: the parameter) of ``p.ndim`` levels."""
    where = f"{kernel}() parameter {p.name!r} ({p.kind})"
    n = p.vec
    ints = elem_type(p.elem).kind != "f"
    name = f"{'ivec' if ints else 'vec'}{n}"
    level, d = value, 0
    while d < p.ndim and isinstance(level, list) and level:
        level, d = level[0], d + 1
    if isinstance(level, _Vec):
        dims = (len(value),) if p.ndim == 1 else nested.shape(value, p.ndim, where)
        leaves = nested.flatten(value, p.ndim)
        want = type(level)
        for k, v in enumerate(leaves):
            if type(v) is not want or v._N != n:
                raise GpuArgumentTypeError(
                    f"{where}: element {k} (row-major) is {type(v).__name__}, but element 0 is "
                    f"{want.__name__}; it takes {name} objects (or rows of {n} numbers), all "
                    "of one kind")
        if (want._KIND == "i") != ints:
            raise GpuArgumentTypeError(f"{where} holds {want.__name__} objects; pass {name} "
                                       f"objects (or rows of {n} numbers)")
        rows = False
    else:
        dims = nested.shape(value, p.ndim + 1, where)
        if dims[-1] != n:
            raise GpuInvalidArgument(f"{where} takes rows of {n} components, got rows of "
                                     f"{dims[-1]}; pass [[x, y, z], ...] rows of {n} numbers or "
                                     f"{n}-component vector objects")
        dims = dims[:-1]
        leaves = nested.flatten(value, p.ndim)
        rows = True
    flat = dims[:-1] + (dims[-1] * n,)
    return VecRows(value, leaves, n, flat, rows)


class Rows(_args.ArgKind):
    """The handler of ``VecRows`` arguments (packed as their components, written back into
    the caller's rows or vector objects)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        return None, value.dims

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        return None

    def dims(self, value) -> tuple:
        return value.dims

    def noun(self, value, dims) -> str:
        return "list of vectors"

    def pack(self, value, elem, where, writable=True, ndim=1):
        shape = (len(value.leaves), value.vec)
        try:
            return _args.LIST.pack(value.components(), elem, where, writable)
        except GpuInvalidArgument as exc:
            raise type(exc)(nested.element_where(str(exc), where, shape)) from None

    def pack_any(self, value, where):
        raise GpuInvalidArgument(f"{where}: a list of vectors is passed to a launch, not bound "
                                 "in an arena; bind a numpy array of shape (n, 3) instead")

    def writeback(self, target, view, elem):
        flat = [None] * nested.count(target.dims)
        _args.LIST.writeback(flat, view, elem)
        n = target.vec
        if target.rows:
            for i, row in enumerate(target.leaves):
                row[:] = flat[i * n:(i + 1) * n]
            return
        for i, v in enumerate(target.leaves):
            if isinstance(v._c, list):
                v._c[:] = flat[i * n:(i + 1) * n]
            else:                       # a vector viewing other storage: through its items
                for k in range(n):
                    v[k] = flat[i * n + k]

    def elements(self, target) -> int:
        return nested.count(target.dims)


ROWS = Rows()
_args.register_kind(VecRows, ROWS)

__all__ = ["ROWS", "VecRows", "wrap"]
