"""Tuple results of device functions: the type, its annotation, its WGSL struct.

A device function annotated ``-> tuple[float, int]`` returns a ``TupleType`` whose members are
kernel types: the scalar names of ``types.ELEM_TYPES``, vectors (``vectypes.VecType``,
which the device sees as their components: ``TupleType.flat``) and structs (their words).
On the device a tuple is a WGSL struct, one per tuple type,
``struct ct_tup_f32_i32 { m0: f32, m1: i32 }``, declared once per shader (``declarations``).
Tuples exist only as a call's result: the caller unpacks them (``a, b = f(x)``) or takes one
member with a literal index (``f(x)[0]``); parameters, locals and lists never hold one
(``types.resolve_annotation`` says what to write instead).
"""

from __future__ import annotations

import ast
import typing
from dataclasses import dataclass

from .types import AnnotationError, ListType, elem, resolve_annotation

#: the objects a tuple annotation starts with (``tuple[...]``, ``typing.Tuple[...]``)
TUPLE_OBJECTS = (tuple, typing.Tuple)


@dataclass(frozen=True)
class TupleType:
    """The result type of a device function returning several values."""
    members: tuple           # member types, in order (annotation names before ``concrete``)
    word: str = "float"      # the float width of struct members' words (``concrete``)

    def __str__(self) -> str:
        return "tuple[" + ", ".join(str(m) for m in self.members) + "]"

    def __len__(self) -> int:
        return len(self.members)

    def concrete(self, widths) -> "TupleType":
        """The same tuple with plain float/int members at the launch's widths."""
        return TupleType(tuple(widths.concrete(m) for m in self.members), widths.float)

    @property
    def has_vectors(self) -> bool:
        return any(not isinstance(m, str) for m in self.members)

    def flat(self) -> "TupleType":
        """The tuple the device returns: a vector member (``vectypes.VecType``) becomes one
        scalar member per component (``tuple[vec3, float]`` -> four floats); nothing below the
        frontend sees a vector."""
        if not self.has_vectors:
            return self
        return TupleType(tuple(t for m in self.members for t in self.member_types(m)),
                         self.word)

    def member_types(self, m) -> tuple:
        """The flat member types of member ``m``: itself, a vector's components, a struct's
        words (``structtypes.StructType.word_types`` at ``word``)."""
        if isinstance(m, str):
            return (m,)
        if hasattr(m, "word_types"):
            return m.word_types(self.word)
        return (m.elem,) * m.n

    def offsets(self) -> tuple:
        """The flat member number at which each member starts (``flat``)."""
        out, k = [], 0
        for m in self.members:
            out.append(k)
            k += len(self.member_types(m))
        return tuple(out)

    @property
    def wgsl(self) -> str:
        """The WGSL struct's name: ``ct_tup_`` and the members' WGSL types."""
        return "ct_tup_" + "_".join(_plain(member_wgsl(m)) for m in self.members)


def is_tuple(ty) -> bool:
    return isinstance(ty, TupleType)


def member_wgsl(ty) -> str:
    """The WGSL type of a member (a scalar type name, or a type that spells itself)."""
    return elem(ty).wgsl if isinstance(ty, str) else ty.wgsl


def wgsl_type(ty) -> str:
    """The WGSL type of a local, parameter or result: a scalar's row, or a tuple's struct."""
    return ty.wgsl if is_tuple(ty) else elem(ty).wgsl


def scalar_types(ty) -> tuple:
    """The element types inside ``ty`` (for the device features a kernel needs)."""
    if is_tuple(ty):
        return tuple(t for m in ty.members for t in scalar_types(m))
    if isinstance(ty, str):
        return (ty,)
    elem = getattr(ty, "elem", None)           # a vector member
    return (elem,) if isinstance(elem, str) else ()


def declaration(ty: TupleType) -> str:
    fields = ", ".join(f"m{k}: {member_wgsl(m)}" for k, m in enumerate(ty.members))
    return f"struct {ty.wgsl} {{ {fields} }}"


def declarations(specs) -> list:
    """The struct declarations of the tuple results of ``specs`` (``functions.FuncSpec``), one
    per type, in the order first met."""
    out, seen = [], set()
    for spec in specs:
        if is_tuple(spec.returns) and spec.returns not in seen:
            seen.add(spec.returns)
            out.append(declaration(spec.returns))
    return out


def _plain(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text).strip("_")


def resolve_result(node: ast.AST, lookup):
    """A device function's result annotation: a ``TupleType`` for ``tuple[...]``, None for
    anything else (the caller resolves it as a scalar). ``AnnotationError`` for tuples that
    cannot be results (a bare ``tuple``, ``tuple[float, ...]``, list or tuple members)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
        for sub in ast.walk(inner):
            ast.copy_location(sub, node)
        return resolve_result(inner, lookup)
    base = node.value if isinstance(node, ast.Subscript) else node
    if _lookup(base, lookup) not in TUPLE_OBJECTS:
        return None
    hint = "write e.g. '-> tuple[float, float]': one scalar, vector or struct type per value"
    if not isinstance(node, ast.Subscript):
        raise AnnotationError(node, "a bare 'tuple' result does not say the members' types",
                              hint)
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
        raise AnnotationError(node, "a tuple result of any length ('...') cannot be compiled: "
                              "the device needs the number of values", hint)
    if not elts:
        raise AnnotationError(node, "an empty tuple result", "annotate '-> None'")
    members = []
    for e in elts:
        ty = resolve_annotation(e, lookup)
        if isinstance(ty, ListType):
            raise AnnotationError(e, "a device function cannot return a list inside a tuple",
                                  "write results into a list parameter and return None")
        members.append(ty)          # a scalar name, a vector (VecType) or a struct (StructType)
    return TupleType(tuple(members))


def _lookup(node, lookup):
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        base = _lookup(node.value, lookup)
        return getattr(base, node.attr, None) if base is not None else None
    return None


__all__ = ["TUPLE_OBJECTS", "TupleType", "declaration", "declarations", "is_tuple",
           "member_wgsl", "resolve_result", "scalar_types", "wgsl_type"]
