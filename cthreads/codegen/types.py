"""Kernel types: annotations -> device types, promotion and unification of scalar types.

Scalar types are the strings ``'bool' < 'int' < 'float'`` (the order is Python's numeric
tower, used for promotion). A list type is ``ListType(elem)``.
"""

from __future__ import annotations

import ast
import builtins
import typing
from dataclasses import dataclass

SCALARS = ("bool", "int", "float")
_RANK = {"bool": 0, "int": 1, "float": 2}

WGSL_SCALAR = {"int": "i32", "float": "f32", "bool": "bool"}
WGSL_STORAGE = {"int": "i32", "float": "f32", "bool": "u32"}   # element type in buffers


@dataclass(frozen=True)
class ListType:
    elem: str

    def __str__(self) -> str:
        return f"list[{self.elem}]"


def is_list(ty) -> bool:
    return isinstance(ty, ListType)


def join(a: str | None, b: str) -> str:
    """Least common scalar type (``int`` and ``float`` join to ``float``)."""
    if a is None:
        return b
    return a if _RANK[a] >= _RANK[b] else b


def arith(a: str, b: str) -> str:
    """Result type of ``+ - *`` etc.: bools count as ints."""
    return "float" if "float" in (a, b) else "int"


def describe(ty) -> str:
    return str(ty)


_SCALAR_OBJECTS = {int: "int", float: "float", bool: "bool"}
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
