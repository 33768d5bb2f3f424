"""Vectors in kernels: ``vec2..vec4`` / ``ivec2..ivec4`` values translated into their components.

A mixin of ``exprs.ExprMixin`` (and so of ``frontend.Translator``). A vector expression
translates to a ``VecValue``: its concrete ``VecType`` and one scalar ``ir.Expr`` per
component; nothing below the frontend sees a vector. A vector local ``v`` is one scalar local
per component (``ct_v<ident>_x`` ...); a ``list[vec3]`` is a flat list of scalars bound to the
caller's packed ``(n, 3)`` array (no copy, no padding: 12 bytes per float32 element), whose
element ``p[i]`` reads components ``p[3i] p[3i+1] p[3i+2]``; ``len(p)`` and the last
``p.shape[d]`` count elements; the bounds check of the element index is the check of its
flat index (``3i+k < 3n`` exactly when ``i < n``), reported as the element index.

The operations follow the Python classes of ``cthreads.lang.vectors`` (so plain-Python runs
agree): ``+ -`` between vectors of one kind and size, ``*`` by a scalar on either side or
component-wise, ``/`` by a scalar (float vectors), unary ``- +``; comparisons are refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import GpuKernelTypeError
from . import ir
from .types import assignable, is_float
from .matrices import MatMixin, element_target
from .mattypes import MatType
from .matrix_calls import is_matrix
from .structs import StructValue
from .structtypes import StructType
from .vector_calls import VecCallMixin, VecValue
from .vector_index import VecIndexMixin
from .vectypes import COMPONENTS, VecType


_COMPARE_HINT = ("vectors are not compared as a whole: compare components (a.x < b.x), or "
                 "lengths (length(a - b) < eps)")


class VecMixin(MatMixin, VecIndexMixin, VecCallMixin):
    # -- names and locals -------------------------------------------------------------------
    def vec_type_of(self, name: str) -> VecType | None:
        ty = self.types.get(name)
        return ty if isinstance(ty, VecType) else None

    def vec_idents(self, name: str, ty: VecType) -> tuple:
        ident = self.scope.scalar[name].ident
        return tuple(f"ct_v{ident}_{ty.component(k)}" for k in range(ty.n))

    def vec_var(self, name: str, node) -> VecValue:
        ty = self.vec_type_of(name)
        loc = self.src.loc(node)
        return VecValue(ty, loc, tuple(ir.Var(ty.elem, loc, i)
                                        for i in self.vec_idents(name, ty)))

    def vec_assign(self, target: ast.Name, value, node) -> list:
        """``v = <vector>``: one assignment per component (the local's type fixed by its
        annotation or by its first vector value)."""
        name = target.id
        declared = self.scope.fixed.get(name)
        old = self.types.get(name)
        want = declared if declared is not None else old
        if want is not None and not isinstance(want, VecType):
            self.src.error(node, f"cannot assign a {value.ty} to '{name}', a {want}",
                           "use a new name for the vector", cls=GpuKernelTypeError)
        if want is None:
            want = value.ty
            self.types[name] = want
            self.widened.add(name)
        self.vec_check(value, want, node, f"'{name}'")
        self._no_alias(name, node)
        loc = self.src.loc(node)
        comps = [self.conv(c, want.elem) for c in value.comps]
        idents = self.vec_idents(name, want)
        out, comps = self.ordered(comps, loc, idents)    # v = vec3(v.y, v.x, v.z)
        return out + [ir.Assign(loc, ident, c) for ident, c in zip(idents, comps)]

    def _no_alias(self, name: str, node) -> None:
        """``q = r`` / ``q = p[i]`` makes ``q`` name the same object in Python, so a later
        ``q.x = ...`` would change ``r`` (or the array) too, where the device changes a copy:
        refused when the body assigns a component of ``q``."""
        rhs = getattr(node, "value", None)
        if isinstance(node, ast.AugAssign) or not isinstance(rhs, (ast.Name, ast.Subscript,
                                                                    ast.IfExp)):
            return
        if name in _component_targets(self.src.tree):
            text = ast.unparse(rhs)
            kind = "matrix" if isinstance(self.vec_type_of(name), MatType) else "vector"
            self.src.error(node, f"'{name} = {text}' makes '{name}' the same {kind} as "
                           f"'{text}' in Python, and a component of '{name}' is assigned "
                           "below (in Python that would change both)",
                           f"copy it: {name} = {self.vec_type_of(name) or 'vec3'}({text})",
                           cls=GpuKernelTypeError)

    def vec_check(self, value, want: VecType, node, what: str) -> None:
        if not isinstance(value, VecValue) or value.ty.n != want.n or \
                value.ty.mat != want.mat or value.ty.is_int != want.is_int or \
                not assignable(value.ty.elem, want.elem):
            got = value.ty if isinstance(value, VecValue) else f"{value.ty} value"
            self.src.error(getattr(node, "value", node), f"cannot store a {got} into {what}, a "
                           f"{want}", f"build a {want} ({want}(...))", cls=GpuKernelTypeError)

    def vec_is_scalar_target(self, name: str) -> bool:
        return self.vec_type_of(name) is not None or isinstance(self.scope.fixed.get(name),
                                                                  VecType)

    # -- list elements ----------------------------------------------------------------------
    def vec_list_len(self, lst: ir.ListRef, dim: int, ty: str, loc) -> ir.Expr:
        """The length of ``lst`` along ``dim``, in elements (a vector list's last dimension
        holds ``vec`` components per element; a shared array's is a constant)."""
        if lst.shared_size is not None:
            return ir.Const(ty, loc, lst.shared_size // max(lst.vec, 1))
        length = ir.Len(ty, loc, lst, dim)
        if lst.vec and dim == lst.ndim - 1:
            return ir.Binary(ty, loc, "floordiv", length, ir.Const(ty, loc, lst.vec))
        return length

    def _vec_parts(self, node):
        """(vector list, index AST nodes) of a subscript chain on a vector list, else None."""
        slices, base = [], node
        while isinstance(base, ast.Subscript):
            slices.insert(0, base.slice)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in self.scope.lists):
            return None
        lst = self.scope.lists[base.id]
        if not lst.vec:
            return None
        parts = []
        for sl in slices:
            parts.extend(sl.elts if isinstance(sl, ast.Tuple) else [sl])
        return lst, parts

    def vec_element(self, node, what: str):
        """(list, flat-index function k -> ir.Expr, checks, component or None) of
        ``p[i]`` / ``p[i, j]`` (component None) or ``p[i][k]`` / ``p[i].y`` (a literal k)."""
        found = self._vec_parts(node.value if isinstance(node, ast.Attribute) else node)
        if found is None:
            return None
        lst, parts = found
        comp = None
        if isinstance(node, ast.Attribute):
            comp = self.vec_component_index(node, VecType(lst.vec, lst.elem))
            if len(parts) != lst.ndim:
                self._vec_index_error(node, lst, parts)
        elif len(parts) == lst.ndim + 1:            # a literal or a run-time k (vector_index)
            what = f"{lst.pyname}[{', '.join(ast.unparse(p) for p in parts[:-1])}]"
            comp = self.vec_index(parts[-1], VecType(lst.vec, lst.elem), what)
            parts = parts[:-1]
        elif len(parts) != lst.ndim:
            self._vec_index_error(node, lst, parts)
        indexes = [self.index_expr(part, lst, d) for d, part in enumerate(parts)]
        last = indexes[-1]
        for sub in ir.walk_expr(last):
            if isinstance(sub, (ir.FuncCall, ir.Atomic)):
                self.src.error(parts[-1], "the index of a vector element calls a function",
                               "assign the index to a local first (j = ...; p[j])",
                               cls=GpuKernelTypeError)
        checks = [self.new_check(node, lst, d) for d in range(lst.ndim)]
        loc = self.src.loc(node)

        def flat(k) -> ir.Expr:         # k: an int, or a run-time ir.ComponentIndex
            scaled = ir.Binary(last.ty, loc, "mul", last, ir.Const(last.ty, loc, lst.vec))
            if isinstance(k, ir.Expr):
                return ir.Binary(last.ty, loc, "add", scaled, self.conv(k, last.ty))
            return ir.Binary(last.ty, loc, "add", scaled, ir.Const(last.ty, loc, k)) if k \
                else scaled
        return lst, indexes[:-1], flat, checks, comp, what

    def _vec_index_error(self, node, lst, parts):
        name = lst.pyname
        want = ", ".join("ijk"[:lst.ndim])
        self.src.error(node, f"'{ast.unparse(node)}' has {len(parts)} indexes; '{name}' is a "
                       f"list of {lst.ndim} dimension{'s' if lst.ndim > 1 else ''} of "
                       f"{VecType(lst.vec, lst.elem)}", f"write {name}[{want}] for an element, "
                       f"{name}[{want}].x for a component", cls=GpuKernelTypeError)

    def _vec_load(self, lst, more, flat, checks, k, loc) -> ir.Expr:
        # the element index is the last dimension's (numpy's (..., n, 3) layout): the other
        # dimensions' indexes come first, as in an N-D Load
        if lst.ndim == 1:
            return ir.Load(lst.elem, loc, lst, flat(k), checks[0])
        return ir.Load(lst.elem, loc, lst, more[0], checks[0], tuple(more[1:]) + (flat(k),),
                       tuple(checks[1:]))

    def vec_subscript(self, node):
        """A subscript that reads a vector element or component, or None."""
        if self.mat_list_of(node) is not None:           # list[mat33]: codegen/matrices.py
            return self.mat_list_subscript(node)
        field = self.struct_read(node)          # p[i].pos[0] of a list[Particle] (structs.py)
        if field is not None:
            return field
        found = self.vec_element(node, "indexed")
        if found is not None:
            lst, more, flat, checks, comp, _ = found
            loc = self.src.loc(node)
            if comp is not None:
                return self._vec_load(lst, more, flat, checks, comp, loc)
            ty = VecType(lst.vec, lst.elem)
            return VecValue(ty, loc, tuple(self._vec_load(lst, more, flat, checks, k, loc)
                                           for k in range(ty.n)))
        if self._vec_parts(node) is not None or self._rooted_in_list(node):
            return None
        value = self.vec_probe(node.value)
        if value is None:
            return None
        if is_matrix(value):
            return self.mat_index(value, node)
        k = self.vec_index(node.slice, value.ty, ast.unparse(node.value))
        if isinstance(k, int):
            return value.comps[k]
        return self.vec_select(value.comps, k, self.src.loc(node))

    def _rooted_in_list(self, node) -> bool:
        base = node
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        return isinstance(base, ast.Name) and base.id in self.scope.lists

    def vec_probe(self, node):
        """``node`` translated when it is a vector expression, else None (and nothing of the
        translation kept: checks, hidden locals and calls are undone)."""
        mark = self.vec_mark()
        if isinstance(node, ast.Name) and node.id in self.scope.lists:
            return None
        value = self.expr(node)         # its errors are the expression's own
        if isinstance(value, VecValue):
            return value
        self.vec_undo(mark)
        return None

    def vec_literal_index(self, node, ty: VecType) -> int:
        k = node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            k = -node.operand.value
        if k is None:
            self.src.error(node, f"a {ty} component index must be a literal (0 .. {ty.n - 1})",
                           f"write v[0] or v.x; for a computed index, select with if/else",
                           cls=GpuKernelTypeError)
        if not -ty.n <= k < ty.n:
            self.src.error(node, f"component index {k} is out of range for a {ty} (0 .. "
                           f"{ty.n - 1})", f"use {', '.join(COMPONENTS[:ty.n])} or 0 .. "
                           f"{ty.n - 1}", cls=GpuKernelTypeError)
        return k % ty.n

    def vec_component_index(self, node: ast.Attribute, ty: VecType) -> int:
        k = COMPONENTS.find(node.attr) if len(node.attr) == 1 else -1
        if not 0 <= k < ty.n:
            self.src.error(node, f"a {ty} has no component '{node.attr}'",
                           f"use {', '.join('.' + c for c in COMPONENTS[:ty.n])}",
                           cls=GpuKernelTypeError)
        return k

    def vec_attribute(self, node: ast.Attribute):
        """``v.x`` of a vector expression (a local, an element, a call), or None."""
        if self.mat_list_of(node.value) is not None:    # p[i][r].x: codegen/matrices.py
            return self.mat_list_attribute(node)
        field = self.struct_read(node)          # p[i].mass of a list[Particle] (structs.py)
        if field is not None:
            return field
        found = self.vec_element(node, "indexed")
        if found is not None:
            lst, more, flat, checks, comp, _ = found
            return self._vec_load(lst, more, flat, checks, comp, self.src.loc(node))
        if self._rooted_in_list(node.value) and self._vec_parts(node.value) is None:
            return None
        if self.scope.resolve(node.value) is not None:
            return None
        value = self.vec_probe(node.value)
        if value is None:
            return None
        if is_matrix(value):
            self.mat_no_attribute(node)
        return value.comps[self.vec_component_index(node, value.ty)]

    # -- operations ---------------------------------------------------------------------------
    def vec_binary(self, op: str, left, right, node):
        """``left op right`` where one side is a ``VecValue``."""
        if op == "matmul" or is_matrix(left) or is_matrix(right):    # codegen/matrices.py
            return self.mat_binary(op, left, right, node)
        loc = self.src.loc(node)
        lv, rv = isinstance(left, VecValue), isinstance(right, VecValue)
        symbol = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}.get(op, op)
        if lv and rv:
            if op not in ("add", "sub", "mul") or left.ty.n != right.ty.n or \
                    left.ty.is_int != right.ty.is_int:
                hint = ("'*' is component-wise; '/' takes a scalar divisor" if op == "truediv"
                        else f"'{symbol}' takes two vectors of one size and kind")
                self.src.error(node, f"unsupported operand types for {symbol}: {left.ty} and "
                               f"{right.ty}", hint, cls=GpuKernelTypeError)
            return self._vec_of(loc, [self.binary(op, a, b, node)
                                      for a, b in zip(left.comps, right.comps)])
        vec, scalar = (left, right) if lv else (right, left)
        self.real_scalar(scalar, node, vec.ty)
        scalar = self.once(scalar, node)           # Python evaluates it once
        if op not in ("mul", "truediv") or (op == "truediv" and vec.ty.is_int):
            hint = (f"write {vec.ty}(s) for a vector of equal components" if op in ("add", "sub")
                    else "vectors take + - between vectors, * and / by scalars")
            if op == "truediv":
                hint = f"convert to vec{vec.ty.n}(...) first: '/' of an int vector gives floats"
            self.src.error(node, f"unsupported operand types for {symbol}: "
                           f"{left.ty} and {right.ty}", hint, cls=GpuKernelTypeError)
        if vec.ty.is_int and is_float(scalar.ty):
            self.src.error(node, f"{vec.ty} {symbol} a float is not an int vector",
                           f"use vec{vec.ty.n}(...) of the components", cls=GpuKernelTypeError)
        if lv:
            comps = [self.binary(op, c, scalar, node) for c in vec.comps]
        else:
            comps = [self.binary(op, scalar, c, node) for c in vec.comps]
        return self._vec_of(loc, comps)

    def _vec_of(self, loc, comps) -> VecValue:
        ty = comps[0].ty
        for c in comps[1:]:
            if c.ty != ty:
                from .types import promote
                ty = promote(ty, c.ty)
        comps = tuple(self.conv(c, ty) for c in comps)
        return VecValue(VecType(len(comps), ty), loc, comps)

    def vec_unary(self, node, value: VecValue):
        loc = self.src.loc(node)
        if isinstance(node.op, ast.USub):
            return VecValue(value.ty, loc, tuple(ir.Unary(c.ty, loc, "neg", c)
                                                 for c in value.comps))
        if isinstance(node.op, ast.UAdd):
            return value
        self.src.error(node, f"this operator does not apply to a {value.ty}",
                       "vectors take unary - and +", cls=GpuKernelTypeError)

    def vec_compare(self, node):
        self.mat_compare(node)
        self.src.error(node, "vectors cannot be compared with == != < <= > >=", _COMPARE_HINT,
                       cls=GpuKernelTypeError)

    def not_vector(self, e, node=None):
        """``e`` when it is a scalar; a located error for a vector where a scalar belongs."""
        if isinstance(e, StructValue):
            self.src.error(node if node is not None else e.loc, f"a {e.ty} is used where a "
                           "number belongs (structs have no arithmetic)", "name one of its "
                           f"fields ({', '.join(n for n, _ in e.ty.fields)})",
                           cls=GpuKernelTypeError)
        if isinstance(e, VecValue):
            where = node if node is not None else e.loc
            hint = "take an entry (m[0, 1]) or determinant(m)" if is_matrix(e) else \
                "take a component (v.x) or a function of it (length(v))"
            self.src.error(where, f"a {e.ty} is used where a scalar belongs", hint,
                           cls=GpuKernelTypeError)
        return e

    def vec_argument(self, node, ty: VecType, what: str) -> list:
        """The components of a vector argument for a ``ty`` parameter, converted."""
        value = self.expr(node)
        self.vec_check(value, ty, node, what)
        return [self.conv(c, ty.elem) for c in value.comps]

    # -- translation state ------------------------------------------------------------------
    def vec_mark(self) -> tuple:
        return (len(self.checks), len(self.hidden), len(self.calls), len(self.pending))

    def vec_undo(self, mark: tuple) -> None:
        """Forget what a translation since ``mark`` added (it is translated again)."""
        del self.checks[mark[0]:], self.hidden[mark[1]:], self.calls[mark[2]:]
        del self.pending[mark[3]:]

    def lazy_expr(self, node):
        """``node`` translated where Python may not evaluate it (``and``/``or`` operands,
        ``x if c else y`` branches, a while test): no statement may be hoisted out of it."""
        self.lazy += 1
        try:
            return self.expr(node)
        finally:
            self.lazy -= 1

    # -- vector results of device functions ----------------------------------------------------
    def vec_result_call(self, ty: VecType, req, args, node, statement: bool):
        """A call of a device function returning ``ty``: the call is hoisted before the
        statement (``self.pending``), its result registers copied into hidden locals."""
        loc = self.src.loc(node)
        call = ir.FuncCall("none", loc, req.ident, tuple(args))
        if statement:
            return call
        if self.lazy:
            self.src.error(node, f"a call of {req.func.name}() (a {ty} result) inside 'and', "
                           "'or', 'x if c else y' or a while test",
                           f"assign the result to a local first (r = {req.func.name}(...)), "
                           "before the condition", cls=GpuKernelTypeError)
        self.pending.append(ir.ExprStmt(loc, call))
        comps = []
        for register in result_registers(req.ident, ty):
            tmp = self.hidden_local(ty.elem)
            self.pending.append(ir.Assign(loc, tmp, ir.Var(ty.elem, loc, register)))
            comps.append(ir.Var(ty.elem, loc, tmp))
        return VecValue(ty, loc, tuple(comps))

    def vec_return(self, value, node) -> list:
        """``return v`` in a device function of a vector result: the components into the
        result registers, then a plain return."""
        ty, registers = self.returns.ty, self.returns.registers
        self.vec_check(value, ty, node, f"the result of {self.src.name}()")
        loc = self.src.loc(node)
        out = [ir.Assign(loc, r, self.conv(c, ty.elem)) for r, c in zip(registers,
                                                                       value.comps)]
        return out + [ir.Return(loc)]

    # -- stores -----------------------------------------------------------------------------
    def vec_store(self, target, value, node, aug_op=None):
        """An assignment to a vector element ``p[i]``, a component ``p[i].y`` / ``p[i][1]``
        / ``v.x`` / ``v[1]`` (``aug_op``: of ``op=``), as statements; None for other
        targets."""
        if self.mat_list_of(target) is not None or self.mat_local_target(target):
            return self.mat_store(target, value, node, aug_op)     # codegen/matrices.py
        field = self.struct_store(target, value, node, aug_op)     # p[i].vel (structs.py)
        if field is not None:
            return field
        found = self.vec_element(target, "written")
        if found is not None:
            return self._store_element(found, value, node, aug_op)
        base = target.value
        if not (isinstance(base, ast.Name) and self.vec_type_of(base.id) is not None):
            if isinstance(target, ast.Attribute) and isinstance(base, ast.Name) and \
                    base.id in self.scope.scalar:
                self.src.error(target, f"'{base.id}' is not a vector, so '.{target.attr}' "
                               "cannot be assigned", "assign to vector components (v.x = ...) "
                               "or list elements", cls=GpuKernelTypeError)
            return None
        ty = self.vec_type_of(base.id)
        if self.scope.scalar[base.id].param:
            self.src.error(target, f"'{ast.unparse(target)}' assigns a component of the "
                           f"parameter '{base.id}', which in Python is the caller's vector "
                           "(it would change there too)",
                           f"copy it first: {base.id}2 = {ty}({base.id})",
                           cls=GpuKernelTypeError)
        k = self.vec_component_index(target, ty) if isinstance(target, ast.Attribute) else \
            self.vec_index(target.slice, ty, base.id)
        loc = self.src.loc(node)
        value = self.not_vector(value, getattr(node, "value", node))
        if not isinstance(k, int):                  # a run-time index: vector_index.py
            return self.vec_runtime_store(self.vec_idents(base.id, ty), ty, k, value, node,
                                          aug_op)
        ident = self.vec_idents(base.id, ty)[k]
        if aug_op is not None:
            value = self.binary(aug_op, ir.Var(ty.elem, loc, ident), value, node)
        self._component_check(value, ty, node)
        return [ir.Assign(loc, ident, self.conv(value, ty.elem))]

    def _component_check(self, value, ty: VecType, node):
        if not assignable(value.ty, ty.elem):
            self.src.error(getattr(node, "value", node), f"cannot store a {value.ty} value into "
                           f"a component of a {ty}", f"convert explicitly, e.g. {ty.elem}(...)",
                           cls=GpuKernelTypeError)

    def _store_element(self, found, value, node, aug_op):
        lst, more, flat, checks, comp, _ = found
        loc = self.src.loc(node)
        ty = VecType(lst.vec, lst.elem)
        ks = range(ty.n) if comp is None else (comp,)
        if comp is None:
            if aug_op is not None:
                old = VecValue(ty, loc, tuple(self._vec_load(lst, more, flat, checks, k, loc)
                                              for k in ks))
                self.vec_binary(aug_op, old, value, node)     # the operation's own checks
            else:
                self.vec_check(value, ty, node, f"an element of '{lst.pyname}'")
        else:
            value = self.not_vector(value, getattr(node, "value", node))
        out = []
        if isinstance(value, VecValue):        # p[i] = vec3(p[i].y, p[i].x, p[i].z)
            targets = [element_target(lst, more, flat(k)) for k in ks]
            out, comps = self.ordered(list(value.comps), loc, (), lst, targets)
            value = VecValue(value.ty, value.loc, tuple(comps))
        for k in ks:
            rhs = value.comps[k] if isinstance(value, VecValue) else value
            index = flat(k)
            idx, extra = (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))
            if aug_op is not None:
                old = self._vec_load(lst, more, flat, checks, k, loc)
                result = self.binary(aug_op, old, rhs, node)
                self._component_check(result, ty, node)
                out.append(ir.Store(loc, lst, idx, result.right, checks[0], result.op,
                                    result.left.ty, extra, tuple(checks[1:])))
            else:
                self._component_check(rhs, ty, node)
                out.append(ir.Store(loc, lst, idx, self.conv(rhs, lst.elem), checks[0],
                                    more=extra, more_checks=tuple(checks[1:])))
        return out
@dataclass(frozen=True)
class VecReturn:
    """The result of a device function returning a vector: its type and the private WGSL
    variables (``result_registers``) its returns write and its callers read."""
    ty: VecType
    registers: tuple

    def __str__(self) -> str:
        return str(self.ty)



def result_registers(ident: str, ty: VecType) -> tuple:
    """The private variables holding the result of specialisation ``ident``."""
    return tuple(f"ct_ret_{ident}_{ty.component(k)}" for k in range(ty.n))


def _component_targets(tree) -> frozenset:
    """The names whose component the body assigns (``q.x = ...``, ``q[1] += ...``)."""
    names = set()
    for n in ast.walk(tree):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] \
            if isinstance(n, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.value, ast.Name):
                names.add(t.value.id)
    return frozenset(names)


def vector_locals(scope, tr) -> tuple:
    """The component locals (``ir.Local``) of the vector locals of a translated body."""
    out = []
    for name in scope.scalar:
        ty = tr.vec_type_of(name)
        if ty is not None:
            param = scope.scalar[name].param
            out.extend(ir.Local(f"{name}.{ty.component(k)}", ident, ty.elem, param)
                       for k, ident in enumerate(tr.vec_idents(name, ty)))
    return tuple(out)


def kernel_params(scope, tr) -> tuple:
    """(the kernel's ``(name, type)`` parameters, their WGSL identifiers): a vector parameter
    ``g`` is one scalar parameter per component, named ``g.x`` ... (``layout.py`` gives them
    one ``ProgramParam`` each, the runtime unpacks the caller's vector: runtime/vector_args.py)."""
    params, idents = [], []
    for name, ty, _ in scope.params:
        if isinstance(ty, StructType):          # one uniform field per word ('q#3')
            words = ty.word_types(scope.widths.float)
            params.extend((f"{name}#{k}", t) for k, t in enumerate(words))
            idents.extend(tr.struct_idents(name, ty))
            continue
        if isinstance(ty, VecType):
            for k, ident in enumerate(tr.vec_idents(name, ty)):
                params.append((f"{name}.{ty.component(k)}", ty.elem))
                idents.append(ident)
        else:
            params.append((name, ty))
            idents.append(scope.scalar[name].ident if name in scope.scalar else
                          scope.lists[name].ident)
    return tuple(params), tuple(idents)


def vector_params(scope, tr, params) -> tuple:
    """A device function's scalar parameters ``(ident, type)`` from ``(name, ident, type)``:
    a vector parameter is one parameter per component."""
    out = []
    for name, ident, ty in params:
        if isinstance(ty, VecType):
            out.extend((i, ty.elem) for i in tr.vec_idents(name, ty))
        else:
            out.append((ident, ty))
    return tuple(out)
