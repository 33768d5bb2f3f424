"""Run-time component indexes of vectors (``v[k]``, ``p[i][k]`` with ``k`` an int expression) and
atomics on the components of int vector list elements (``atomic_add(h[i], k, 1)``).

A mixin of ``vectors.VecMixin``. A literal ``k`` picks its component at compile time
(``vectors.vec_literal_index``); any other int ``k`` becomes an ``ir.ComponentIndex``, which
counts a negative ``k`` from the end as Python does and, under bounds checks, notes an index
outside ``-n .. n-1`` as a failed check (``GpuIndexError`` names the vector, the file and the
line; the plain-Python run raises ``IndexError`` there too). A vector local's component is then
picked with selects (``x`` when ``k`` is out of range without checks), and assigned with one
select per component; a list element's is the flat index ``n*i + k`` of the list.
"""

from __future__ import annotations

import ast

from ..errors import GpuKernelTypeError
from . import ir
from .program import BoundsCheck
from .types import is_float


def literal_index(node):
    """The int of a literal index (``2``, ``-1``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


class VecIndexMixin:
    def vec_index(self, node, ty, what: str):
        """Component ``node`` of a ``ty`` (``what`` names the vector in messages): an int for
        a literal, else an ``ir.ComponentIndex`` (checked when bounds checks are on)."""
        if literal_index(node) is not None:
            return self.vec_literal_index(node, ty)
        e = self.not_vector(self.expr(node), node)
        if is_float(e.ty) or e.ty in ("complex", "complex128", "bool"):
            self.src.error(node, f"a {ty} component index must be an int, got a {e.ty} "
                           "expression", "convert with int(...)", cls=GpuKernelTypeError)
        for sub in ir.walk_expr(e):
            if isinstance(sub, (ir.FuncCall, ir.Atomic)):
                self.src.error(node, "a run-time component index calls a function",
                               "assign the index to a local first (k = ...; v[k])",
                               cls=GpuKernelTypeError)
        loc = self.src.loc(node)
        return ir.ComponentIndex("int", loc, e, ty.n,
                                 self.component_check(node, what, ty.n))

    def component_check(self, node, what: str, n: int):
        """A bounds check of a run-time component index (None without checks)."""
        if not self.scope.boundscheck:
            return None
        cid = self.check_base + len(self.checks)
        loc = self.src.loc(node)
        inside = self.returns != "kernel"            # frontend.KERNEL: in a device function
        self.checks.append(BoundsCheck(cid, loc.lineno, self.src.source_of(loc.lineno), what,
                                       self.src.filename if inside else "",
                                       self.src.name if inside else "", component=n))
        return cid

    def vec_select(self, comps, k: ir.Expr, loc) -> ir.Expr:
        """Component ``k`` (an ``ir.ComponentIndex`` or a local holding one) of ``comps``."""
        out = comps[0]
        for c in range(1, len(comps)):
            test = ir.Compare("bool", loc, ("==",), (k, ir.Const("int", loc, c)),
                              ("int",))
            out = ir.IfExp(out.ty, loc, test, comps[c], out)
        return out

    def vec_runtime_store(self, idents, ty, k: ir.Expr, value, node, aug_op) -> list:
        """``v[k] = value`` / ``v[k] op= value`` on a vector local whose components are
        ``idents``: the index and the value once, then one select per component."""
        loc = self.src.loc(node)
        tk = self.hidden_local("int")
        out = [ir.Assign(loc, tk, k)]
        k = ir.Var("int", loc, tk)
        comps = [ir.Var(ty.elem, loc, i) for i in idents]
        if aug_op is not None:
            value = self.binary(aug_op, self.vec_select(comps, k, loc), value, node)
        self._component_check(value, ty, node)
        tv = self.hidden_local(ty.elem)
        out.append(ir.Assign(loc, tv, self.conv(value, ty.elem)))
        for c, (ident, old) in enumerate(zip(idents, comps)):
            test = ir.Compare("bool", loc, ("==",), (k, ir.Const("int", loc, c)), ("int",))
            out.append(ir.Assign(loc, ident, ir.IfExp(ty.elem, loc, test,
                                                      ir.Var(ty.elem, loc, tv), old)))
        return out

    def vec_atomic(self, op, node, text, nargs: int):
        """``atomic_op(h[i], k, value)``: an atomic on component ``k`` of element ``h[i]`` of an
        int vector list; None when the first argument is not a vector list's element."""
        if not node.args:
            return None
        first = node.args[0]
        if isinstance(first, ast.Attribute) and self._vec_parts(first.value) is not None:
            comp = first.attr
            self.src.error(node, f"{text}() takes the list, the index and the value: "
                           f"'{ast.unparse(first)}' is a value, not a place",
                           f"name the element and the component: {text}("
                           f"{ast.unparse(first.value)}, {'xyzw'.find(comp)}, ...)",
                           cls=GpuKernelTypeError)
        if not isinstance(first, ast.Subscript) or self._vec_parts(first) is None:
            return None
        self.nargs(node, text, (nargs,))
        found = self.vec_element(first, "used atomically")
        lst, more, flat, checks, comp, _ = found
        from .vectypes import VecType  # noqa: PLC0415
        ty = VecType(lst.vec, lst.elem)
        if comp is not None:
            self.src.error(first, f"'{ast.unparse(first)}' is one component, not a vector",
                           f"name the element and the component: {text}("
                           f"{ast.unparse(first.value)}, k, ...)", cls=GpuKernelTypeError)
        if not ty.is_int or lst.elem not in ("int", "uint32", "int64"):
            self.src.error(node, f"{text}() on a component of a {ty} is not supported "
                           "(devices have atomics on int components only)",
                           f"keep the counters in a list[ivec{ty.n}] or a list[int]",
                           cls=GpuKernelTypeError)
        k = self.vec_index(node.args[1], ty, ast.unparse(first))
        if lst.elem == "int64":
            self.uses.add("int64_atomic")
        self.uses.add("atomic")
        args = []
        for a in node.args[2:]:
            e = self.not_vector(self.expr(a), a)
            if is_float(e.ty):
                self.src.error(a, f"{text}() on a {ty} component needs an int value, got a "
                               "float", "convert with int(...)", cls=GpuKernelTypeError)
            args.append(self.conv(e, lst.elem))
        index = flat(k)
        idx, extra = (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))
        return ir.Atomic(lst.elem, self.src.loc(node), op, lst, idx, tuple(args), checks[0],
                         extra, tuple(checks[1:]))


__all__ = ["VecIndexMixin", "literal_index"]
