"""Kernel types: annotations -> device types, promotion and unification of scalar types.

Scalar types are the strings ``'bool' < 'int' < 'float'`` (the order is Python's numeric
tower, used for promotion). A list type is ``ListType(elem)``.
"""

from __future__ import annotations

import ast
import builtins
import typing
from dataclasses import dataclass

@dataclass(frozen=True)
class ElemType:
    """One element type of kernel values, lists and parameters: every spelling of it.

    The compiler reads the WGSL columns; the runtime packs arguments and reads results with the
    host columns. A new element type (float64, int64, uint32) is a new row of ``ELEM_TYPES``.
    """
    name: str            # the annotation's spelling: 'int' in 'list[int]'
    python: type         # the Python type of its values
    rank: int            # promotion order (Python's numeric tower: bool < int < float)
    wgsl: str            # WGSL type of a value (locals, expressions)
    storage: str         # WGSL element type in a storage buffer or shared array
    uniform: str         # WGSL field type in the uniform struct (scalar parameters)
    code: str            # struct / array.array code of one element or field on the host
    host_dtype: str      # numpy dtype of the device representation (what a buffer holds)
    array_dtype: str     # numpy dtype a caller's array must have to be taken as it is
    zero: str            # WGSL literal zero of ``wgsl``
    storage_zero: str    # WGSL literal zero of ``storage``
    suffix: str          # WGSL literal suffix ('' for bool: true/false)
    load: str = "{0}"    # a storage element ``{0}`` read as a value
    store: str = "{0}"   # a value ``{0}`` written as a storage element
    from_uniform: str = "{0}"    # a uniform field ``{0}`` read as a value
    size: int = 4        # bytes per element in buffers and per uniform field
    feature: str | None = None   # the device feature a kernel using it needs (None: core)


ELEM_TYPES = {
    "bool": ElemType("bool", bool, 0, "bool", "u32", "u32", "I", "uint32", "bool", "false",
                     "0u", "", load="({0} != 0u)", store="select(0u, 1u, {0})",
                     from_uniform="{0} != 0u"),
    "int": ElemType("int", int, 1, "i32", "i32", "i32", "i", "int32", "int32", "0i", "0i", "i"),
    "float": ElemType("float", float, 2, "f32", "f32", "f32", "f", "float32", "float32",
                      "0.0f", "0.0f", "f"),
}
#: how many times a local's inferred type can widen: unknown -> bool -> int -> float
LATTICE_HEIGHT = len(ELEM_TYPES)


def elem(name: str) -> ElemType:
    """The row of an element type by its annotation spelling ('int', 'float', 'bool')."""
    return ELEM_TYPES[name]


@dataclass(frozen=True)
class ListType:
    elem: str

    def __str__(self) -> str:
        return f"list[{self.elem}]"


def join(a: str | None, b: str) -> str:
    """Least common scalar type (``int`` and ``float`` join to ``float``)."""
    if a is None:
        return b
    return a if ELEM_TYPES[a].rank >= ELEM_TYPES[b].rank else b


def arith(a: str, b: str) -> str:
    """Result type of ``+ - *`` etc.: bools count as ints."""
    return "float" if "float" in (a, b) else "int"


_SCALAR_OBJECTS = {row.python: row.name for row in ELEM_TYPES.values()}
_LIST_OBJECTS = (list, typing.List)


class AnnotationError(Exception):
    """Raised with a node and a message; the caller turns it into a located TypeError."""

    def __init__(self, node, message, hint=None):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint


def resolve_annotation(node: ast.AST, lookup) -> str | ListType:
    """Turn an annotation expression into a type; ``lookup(name)`` returns the global object.

    Accepts ``int float bool``, ``list[T]``, ``typing.List[T]`` and string annotations of the
    same (as ``from __future__ import annotations`` produces).
    """
    hint = "annotate with int, float, bool, list[int], list[float] or list[bool]"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise AnnotationError(node, f"cannot read the annotation {node.value!r}", hint)
        ast.copy_location(inner, node)
        for sub in ast.walk(inner):
            ast.copy_location(sub, node)
        return resolve_annotation(inner, lookup)
    obj = _resolve_object(node, lookup)
    if obj is not None and not isinstance(obj, _Missing):
        if isinstance(obj, type) and obj in _SCALAR_OBJECTS:
            return _SCALAR_OBJECTS[obj]
        if obj in _LIST_OBJECTS:
            raise AnnotationError(node, "a bare 'list' annotation does not say the element type",
                                  "write list[int], list[float] or list[bool]")
    if isinstance(node, ast.Subscript):
        base = _resolve_object(node.value, lookup)
        if base in _LIST_OBJECTS:
            inner = resolve_annotation(node.slice, lookup)
            if isinstance(inner, ListType):
                raise AnnotationError(node, "nested lists are not supported in kernels",
                                      "pass a flat list and compute the index (i * width + j)")
            return ListType(inner)
    text = ast.unparse(node) if not isinstance(node, ast.Constant) else repr(node.value)
    raise AnnotationError(node, f"unsupported annotation '{text}'", hint)


class _Missing:
    pass


def _resolve_object(node, lookup):
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve_object(node.value, lookup)
        if base is None or isinstance(base, _Missing):
            return base
        return getattr(base, node.attr, _Missing())
    return None


def builtin_lookup(globals_: dict, closure: dict):
    """A name -> object lookup over closure cells, the module's globals and builtins."""
    def lookup(name):
        if name in closure:
            return closure[name]
        if name in globals_:
            return globals_[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _Missing()
    return lookup


MISSING = _Missing
