"""Atomics on int fields of struct list elements: ``atomic_add(p[i], "count", 1)``.

The spelling is plain Python's: ``p[i]`` is the element (a ``lang.structs.StructRef`` in
plain runs, which takes ``p[i]["count"]`` as its field), ``"count"`` the field's name, as
``atomic_add(h[i], k, 1)`` names component ``k`` of a vector element. ``atomic_add(p[i].count,
1)`` would pass a number, not a place: a located error with this spelling.

On the device a struct list is a flat list of words; a list used atomically anywhere in the
kernel is declared ``array<atomic<i32>>`` (``atomic<i64>`` in float64 layouts, where the
device has 64-bit atomics) and every other access to it goes through ``atomicLoad`` /
``atomicStore`` and a bitcast to the float word (``lists.py``: ``struct_atomic_word``).
"""

from __future__ import annotations

import ast

from ..errors import GpuKernelTypeError
from . import ir
from .structtypes import StructType, concrete_kind
from .types import is_float


def struct_atomic_word(ref) -> str | None:
    """The int type ('int' / 'int64') of the words of a struct list used atomically, else
    None."""
    if getattr(ref, "struct", None) is None or not ref.atomic:
        return None
    return "int64" if ref.elem == "float64" else "int"


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def struct_atomic(tr, op: str, node: ast.Call, text: str, nargs: int):
    """The ``ir.Atomic`` of ``atomic_op(p[i], "field", value...)`` on a struct list element;
    None when the first argument is not rooted in a struct list."""
    if not node.args:
        return None
    first = node.args[0]
    root = _root(first)
    lst = tr.scope.lists.get(root.id) if isinstance(root, ast.Name) else None
    if lst is None or getattr(lst, "struct", None) is None:
        return None
    if isinstance(first, ast.Attribute) and not isinstance(
            tr._struct_resolve(lst.struct, _ops(tr, first, lst))[0], StructType):
        base, field = ast.unparse(first.value), first.attr
        tr.src.error(node, f"{text}() takes the element, the field's name and the value: "
                     f"'{ast.unparse(first)}' is a value, not a place",
                     f"write {text}({base}, \"{field}\", ...)", cls=GpuKernelTypeError)
    tr.nargs(node, text, (nargs,))
    ops = _ops(tr, first, lst)
    kind, offset = tr._struct_resolve(lst.struct, ops)
    if not isinstance(kind, StructType):
        tr.src.error(first, f"'{ast.unparse(first)}' is a field, not a {lst.struct} element",
                     f"name the element and the field: {text}(p[i], \"field\", ...)",
                     cls=GpuKernelTypeError)
    at, want = _int_field(tr, first, kind, node.args[1], text)
    if want == "int64":
        tr.uses.add("int64_atomic")
    tr.uses.add("atomic")
    parts = _parts(first, lst)
    indexes = [tr.index_expr(part, lst, d) for d, part in enumerate(parts)]
    args = []
    for a in node.args[2:]:
        e = tr.not_vector(tr.expr(a), a)
        if is_float(e.ty):
            tr.src.error(a, f"{text}() on the int field '{node.args[1].value}' needs an int "
                         "value, got a float", "convert with int(...)", cls=GpuKernelTypeError)
        args.append(tr.conv(e, want))
    loc = tr.src.loc(node)
    checks = [tr.new_check(first, lst, d) for d in range(lst.ndim)]
    last, more = indexes[-1], indexes[:-1]
    scaled = ir.Binary(last.ty, loc, "mul", last, ir.Const(last.ty, loc, lst.vec))
    at += offset
    index = ir.Binary(last.ty, loc, "add", scaled, ir.Const(last.ty, loc, at)) if at else scaled
    idx, extra = (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))
    return ir.Atomic(want, loc, op, lst, idx, tuple(args), checks[0], extra, tuple(checks[1:]))


def _int_field(tr, first, kind: StructType, name, text: str) -> tuple:
    """(word offset, int type) of the int field of ``kind`` that the literal ``name`` names;
    located errors for anything else."""
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        tr.src.error(name, f"{text}() on a {kind} element takes the field's name as a string",
                     f"write {text}({ast.unparse(first)}, \"field\", ...); its int fields are "
                     f"{_int_fields(kind)}", cls=GpuKernelTypeError)
    found = kind.lookup(name.value)
    if found is None:
        tr.src.error(name, f"{kind} has no field '{name.value}'",
                     f"its fields are {', '.join(n for n, _ in kind.fields)}",
                     cls=GpuKernelTypeError)
    word = tr.struct_word()
    fkind = concrete_kind(found[0], word)
    want = struct_word_int(word)
    if fkind != want:
        tr.src.error(name, f"{text}() on field '{name.value}' of a {kind}, a {fkind}, is not "
                     "supported (devices have atomics on the int fields of struct words only)",
                     "keep the counter in an int field (or in a list[int])" +
                     (f": its int fields are {_int_fields(kind)}" if _int_fields(kind) !=
                      "none" else ""), cls=GpuKernelTypeError)
    return found[1], want


def struct_word_int(word: str) -> str:
    return "int64" if word == "float64" else "int"


def _int_fields(kind: StructType) -> str:
    names = [n for n, k in kind.fields if k == "int"]
    return ", ".join(names) if names else "none"


def _parts(first, lst) -> list:
    """The index nodes of the element ``first`` names (``p[i]``, ``p[i, j]``, ``p[i][j]``)."""
    chain, base = [], first
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        chain.insert(0, base)
        base = base.value
    parts = []
    for sub in chain:
        if not isinstance(sub, ast.Subscript) or len(parts) >= lst.ndim:
            break
        parts.extend(sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice])
    return parts


def _ops(tr, first, lst) -> list:
    """The field selections after the element's indexes (``p[i].inner`` -> [.inner])."""
    chain, base = [], first
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        chain.insert(0, base)
        base = base.value
    count, k = 0, 0
    while k < len(chain) and isinstance(chain[k], ast.Subscript) and count < lst.ndim:
        sl = chain[k].slice
        count += len(sl.elts) if isinstance(sl, ast.Tuple) else 1
        k += 1
    if count != lst.ndim:
        want = ", ".join("ijk"[:lst.ndim])
        tr.src.error(first, f"'{ast.unparse(first)}' needs {lst.ndim} index"
                     f"{'es' if lst.ndim > 1 else ''} of '{lst.pyname}', a list of "
                     f"{lst.struct}", f"write {lst.pyname}[{want}]", cls=GpuKernelTypeError)
    return chain[k:]


__all__ = ["struct_atomic", "struct_atomic_word"]
