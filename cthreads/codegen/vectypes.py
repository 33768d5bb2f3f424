"""The compiler's vector types: ``VecType(n, elem)`` for ``vec2..vec4`` (elem 'float', the
launch's float) and ``ivec2..ivec4`` (elem 'int'); once concrete, ``elem`` is a row name of
``types.ELEM_TYPES`` ('float', 'float64', 'int', 'int64').

Vectors exist only in the frontend (``codegen/vectors.py``): every vector value is translated
into its scalar components, so the IR, the passes and the emitter see scalars only, and a
``list[vec3]`` is bound as a flat list of scalars (3 per element, numpy's packed layout).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.vectors import VECTOR_TYPES

COMPONENTS = "xyzw"


@dataclass(frozen=True)
class VecType:
    n: int               # components: 2, 3 or 4
    elem: str            # 'float' / 'int' (plain, following the widths) or a concrete row name

    @property
    def is_int(self) -> bool:
        return "int" in self.elem

    @property
    def name(self) -> str:
        return f"{'i' if self.is_int else ''}vec{self.n}"

    def __str__(self) -> str:
        return self.name

    def concrete(self, widths) -> "VecType":
        return VecType(self.n, widths.concrete(self.elem))

    def with_elem(self, elem: str) -> "VecType":
        return VecType(self.n, elem)

    #: the rows (= columns) of a matrix type (codegen/mattypes.py), 0 for a vector
    mat = 0

    def component(self, k: int) -> str:
        """The name of component ``k`` in identifiers and parameter names ('x'; a matrix: '4')."""
        return COMPONENTS[k]


#: the Python classes (cthreads.lang.vectors) -> their annotation type
ANNOTATION_VECTORS = {cls: VecType(cls._N, "int" if cls._KIND == "i" else "float")
                      for cls in VECTOR_TYPES.values()}


def vector_of(obj) -> VecType | None:
    """The vector type a resolved annotation object names, or None."""
    try:
        return ANNOTATION_VECTORS.get(obj)
    except TypeError:            # unhashable objects name no vector
        return None
