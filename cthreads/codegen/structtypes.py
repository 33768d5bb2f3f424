"""The compiler's struct types: ``StructType`` of a ``@Gpu.struct`` class (``struct_of``).

Structs exist only in the frontend (``codegen/structs.py``): a ``list[Particle]`` is a flat
list of words (``ListType(..., vec=words, struct=StructType)``), each field access one or a few
word accesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang.structs import is_struct, leaf_words
from .vectypes import VecType, vector_of


@dataclass(frozen=True)
class StructType:
    """A struct's compiler type: its name, its fields ``(name, kind)`` ('float' | 'int' |
    'bool' | ``VecType`` | ``StructType``) and the words of an element."""
    name: str
    fields: tuple
    words: int
    cls: type = field(compare=False, hash=False, repr=False, default=None)

    def __str__(self) -> str:
        return self.name

    def lookup(self, name: str):
        """(kind, word offset) of field ``name``, or None."""
        offset = 0
        for fname, kind in self.fields:
            if fname == name:
                return kind, offset
            offset += _words(kind)
        return None

    def concrete(self, widths) -> "StructType":
        return self                 # its words follow the launch's float width at each use

    def word_types(self, word: str) -> tuple:
        """The compiler type of each word of an element in a layout of ``word``s."""
        out = []
        for _, kind in self.fields:
            kind = concrete_kind(kind, word)
            if isinstance(kind, StructType):
                out.extend(kind.word_types(word))
            elif isinstance(kind, VecType):
                out.extend([kind.elem] * kind.n)
            else:
                out.append(kind)
        return tuple(out)

    def dtype_for(self, width: str):
        return self.cls.dtype_for("float64" if width == "float64" else "float32")


def _words(kind) -> int:
    if isinstance(kind, VecType):
        return kind.n
    if isinstance(kind, StructType):
        return kind.words
    return 1


def concrete_kind(kind, word: str):
    """A field kind's type where the words are ``word`` ('float' / 'float64'): int fields are
    int64 in float64 layouts."""
    int_ty = "int64" if word == "float64" else "int"
    if kind == "float":
        return word
    if kind == "int":
        return int_ty
    if isinstance(kind, VecType):
        return VecType(kind.n, int_ty if kind.is_int else word)
    return kind


_TYPES: dict = {}


def struct_of(obj) -> StructType | None:
    """The ``StructType`` of a ``@Gpu.struct`` class, or None."""
    if not is_struct(obj):
        return None
    hit = _TYPES.get(obj)
    if hit is None:
        fields = []
        for f in obj._ct_fields:
            kind = f.kind if isinstance(f.kind, str) else vector_of(f.kind) or struct_of(f.kind)
            fields.append((f.name, kind))
        hit = _TYPES[obj] = StructType(obj.__name__, tuple(fields), len(leaf_words(obj)), obj)
    return hit


#: word <-> field conversions: ``ir.Call.fn`` -> (float32 WGSL, float64 WGSL); the float64
#: form applies when the call's type or its argument's is float64 (``word_call_text``)
WORD_CALLS = {
    "s_word_int": ("bitcast<i32>({0})", "bitcast<i64>({0})"),
    "s_word_bool": ("((bitcast<u32>({0}) & 0xffu) != 0u)", "((bitcast<i64>({0}) & 255li) != 0li)"),
    "s_int_word": ("bitcast<f32>({0})", "bitcast<f64>({0})"),
    "s_word_uint": ("bitcast<u32>({0})", "u32(bitcast<i64>({0}) & 4294967295li)"),
    "s_uint_word": ("bitcast<f32>({0})", "bitcast<f64>(i64({0}))"),
    "s_bool_word": ("bitcast<f32>(select(0u, 1u, {0}))", "bitcast<f64>(select(0li, 1li, {0}))"),
}


def word_call_text(e: ir.Call, args: list) -> str:
    wide = "float64" in (e.ty, e.args[0].ty)
    return WORD_CALLS[e.fn][wide].format(*args)


__all__ = ["StructType", "WORD_CALLS", "concrete_kind", "struct_of", "word_call_text"]
