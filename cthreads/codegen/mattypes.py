"""The compiler's matrix types: ``MatType(size, elem)`` for ``mat22 mat33 mat44`` (square, of
the launch's float; once concrete, ``elem`` is 'float' or 'float64').

A matrix is a vector of ``size * size`` entries to everything that moves values around
(locals, kernel parameters, device-function parameters and results, list elements:
``codegen/vectors.py`` on a ``VecType``); ``codegen/matrices.py`` gives it its own operations
and indexing. Entries are row-major: entry ``(r, c)`` is component ``r * size + c``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.matrices import MATRIX_TYPES
from .vectypes import VecType


@dataclass(frozen=True)
class MatType(VecType):
    size: int = 3            # rows = columns

    @property
    def mat(self) -> int:
        return self.size

    @property
    def name(self) -> str:
        return f"mat{self.size}{self.size}"

    def __str__(self) -> str:
        return self.name

    def component(self, k: int) -> str:
        return str(k)

    def concrete(self, widths) -> "MatType":
        return mat_type(self.size, widths.concrete(self.elem))

    def with_elem(self, elem: str) -> "MatType":
        return mat_type(self.size, elem)

    def row_type(self) -> VecType:
        return VecType(self.size, self.elem)


def mat_type(size: int, elem: str = "float") -> MatType:
    return MatType(size * size, elem, size)


#: the Python classes (cthreads.lang.matrices) -> their annotation type
ANNOTATION_MATRICES = {cls: mat_type(cls._N) for cls in MATRIX_TYPES.values()}


def matrix_of(obj) -> MatType | None:
    """The matrix type a resolved annotation object names, or None."""
    try:
        return ANNOTATION_MATRICES.get(obj)
    except TypeError:
        return None
