"""Matrices in kernels: ``mat22 mat33 mat44`` values translated into their entries.

A mixin of ``vectors.VecMixin`` (and so of ``frontend.Translator``). A matrix expression is a
``MatValue`` (``matrix_calls.py``): a ``VecValue`` whose type is a ``MatType`` (its entries row
by row), so locals, kernel parameters, device-function parameters and results and the hoisting
of calls are the vectors' (``vectors.py``); a ``list[mat33]`` is a flat list of 9 floats per
element over the caller's packed ``(n, 3, 3)`` array (``ListRef.vec`` 9, ``ListRef.mat`` 3),
whose element ``p[i]`` reads ``p[9i] .. p[9i+8]``. This module gives matrices their own
operators (``+ -`` of one size, ``*`` ``/`` by scalars, ``@`` with vectors and matrices),
indexing (``m[r, c]`` an entry, ``m[r]`` a row, literal indexes) and stores; the Python classes
of ``cthreads.lang.matrices`` define the same operations, so plain-Python runs agree.

Assignments whose value reads what they overwrite (``m = m @ r``, ``p[i] = transpose(p[i])``,
``v = vec3(v.y, v.x, v.z)``) go through hidden locals: every entry is computed before any is
stored, as Python builds the new object first.
"""

from __future__ import annotations

import ast
from dataclasses import fields

from ..errors import GpuKernelTypeError
from ..lang import matrix_formulas as formulas
from . import ir
from .matrix_calls import IROps, MatCallMixin, MatValue, is_matrix
from .mattypes import MatType, mat_type
from .vector_calls import VecValue
from .vectypes import VecType

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "matmul": "@"}
_COMPARE_HINT = ("matrices are not compared as a whole: compare entries (a[0, 0] < b[0, 0]) "
                 "or a measure of them (determinant(a - b), abs of entries) against a tolerance")


class MatMixin(MatCallMixin):
    # -- operators ----------------------------------------------------------------------------
    def mat_binary(self, op: str, left, right, node):
        """``left op right`` where one side is a matrix, or ``@``."""
        loc = self.src.loc(node)
        lm, rm = is_matrix(left), is_matrix(right)
        lv, rv = isinstance(left, VecValue), isinstance(right, VecValue)
        symbol = _SYMBOL.get(op, op)

        def refuse(hint):
            lt = left.ty if lv else f"{left.ty} value"
            rt = right.ty if rv else f"{right.ty} value"
            self.src.error(node, f"unsupported operand types for {symbol}: {lt} and {rt}", hint,
                           cls=GpuKernelTypeError)
        if op == "matmul":
            if not (lm or rm):
                refuse("'@' takes a matrix and a vector or two matrices (mat22/mat33/mat44); "
                       "for scalars write '*'; for a dot product of vectors, dot(a, b)")
            if lm and rm:
                if left.ty.size != right.ty.size:
                    refuse("'@' takes matrices of one size")
                n = left.ty.size
                a, b = self.mat_materialize(left), self.mat_materialize(right)
                return self.mat_of(n, loc, formulas.matmul(a.comps, b.comps, n,
                                                           IROps(self, node)))
            m, v = (left, right) if lm else (right, left)
            n = m.ty.size
            if not isinstance(v, VecValue) or v.ty.n != n or v.ty.is_int:
                refuse(f"a {m.ty} takes '@' with a {m.ty} or a vec{n}")
            m, v = self.mat_materialize(m), self.mat_materialize(v)
            comps = formulas.mat_vec(m.comps, v.comps, n, IROps(self, node)) if lm else \
                formulas.vec_mat(v.comps, m.comps, n, IROps(self, node))
            return self._vec_of(loc, comps)
        if lm and rm:
            if op not in ("add", "sub") or left.ty.size != right.ty.size:
                refuse("matrices take + - between matrices of one size, * and / by scalars, "
                       "and @ for the matrix product" if op in ("mul", "truediv") or
                       left.ty.size == right.ty.size else "'+' and '-' take matrices of one size")
            return self.mat_of(left.ty.size, loc, [self.binary(op, a, b, node)
                                                   for a, b in zip(left.comps, right.comps)])
        if lv and rv:
            refuse("'@' multiplies a matrix and a vector; + - * / do not mix them")
        m, s = (left, right) if lm else (right, left)
        self.real_scalar(s, node, m.ty)
        if op == "mul" or (op == "truediv" and lm):
            comps = [self.binary(op, c, s, node) if lm else self.binary(op, s, c, node)
                     for c in m.comps]
            return self.mat_of(m.ty.size, loc, comps)
        refuse(f"write {m.ty}(s) for s on the diagonal" if op in ("add", "sub") else
               "matrices take + - between matrices, * and / by scalars, @ for products")

    def mat_materialize(self, value):
        """``value`` with each entry that is not a local or a constant computed once into a
        hidden local before the statement (the formulas read every entry several times), when
        Python evaluates it for sure; else unchanged."""
        if self.lazy or all(isinstance(c, (ir.Var, ir.Const)) for c in value.comps):
            return value
        return type(value)(value.ty, value.loc, tuple(self.mat_keep(c) for c in value.comps))

    def mat_keep(self, e):
        """``e`` computed once into a hidden local before the statement (where Python
        evaluates it for sure, and it is not already a local or a constant)."""
        if self.lazy or isinstance(e, (ir.Var, ir.Const)):
            return e
        tmp = self.hidden_local(e.ty)
        self.pending.append(ir.Assign(e.loc, tmp, e))
        return ir.Var(e.ty, e.loc, tmp)

    def mat_compare(self, node):
        """A located error for a comparison with a matrix operand (``vec_compare``)."""
        for e in [node.left] + list(node.comparators):
            mark = self.vec_mark()
            value = self.expr(e)
            self.vec_undo(mark)
            if is_matrix(value):
                self.src.error(node, "matrices cannot be compared with == != < <= > >=",
                               _COMPARE_HINT, cls=GpuKernelTypeError)

    # -- indexing ---------------------------------------------------------------------------
    def _mat_indexes(self, nodes, ty: MatType) -> tuple:
        """(type of the result, the entries' component numbers) of ``m[...]`` with ``nodes``
        the indexes after the matrix: none (the matrix), one (a row) or two (an entry)."""
        n = ty.size
        if len(nodes) > 2:
            self.src.error(nodes[2], f"a {ty} takes m[r, c] (an entry) or m[r] (a row)",
                           "write m[r, c]", cls=GpuKernelTypeError)
        ks = [self._mat_literal(k, ty, what) for k, what in zip(nodes, ("row", "column"))]
        if not ks:
            return ty, tuple(range(n * n))
        if len(ks) == 1:
            return VecType(n, ty.elem), tuple(ks[0] * n + c for c in range(n))
        return ty.elem, (ks[0] * n + ks[1],)

    def _mat_literal(self, node, ty: MatType, what: str) -> int:
        k = node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
            k = -node.operand.value
        n = ty.size
        if k is None:
            self.src.error(node, f"a {ty} {what} index must be a literal (0 .. {n - 1})",
                           "write m[1, 2]; for a computed index, select with if/else",
                           cls=GpuKernelTypeError)
        if not -n <= k < n:
            self.src.error(node, f"{what} index {k} is out of range for a {ty} (0 .. {n - 1})",
                           f"use 0 .. {n - 1}", cls=GpuKernelTypeError)
        return k % n

    @staticmethod
    def _slice_nodes(node) -> list:
        return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]

    def _picked(self, ty, comps, loc):
        if isinstance(ty, MatType):
            return MatValue(ty, loc, tuple(comps))
        if isinstance(ty, VecType):
            return VecValue(ty, loc, tuple(comps))
        return comps[0]

    def mat_index(self, value, node):
        """``m[r, c]`` / ``m[r]`` of a matrix expression."""
        ty, ks = self._mat_indexes(self._slice_nodes(node), value.ty)
        return self._picked(ty, [value.comps[k] for k in ks], self.src.loc(node))

    def mat_no_attribute(self, node):
        self.src.error(node, f"a matrix has no attribute '.{node.attr}'",
                       "write m[r, c] for an entry, m[r] for a row (m[r].x for its first "
                       "entry)", cls=GpuKernelTypeError)

    # -- list[mat33] elements -----------------------------------------------------------------
    def mat_list_of(self, node):
        """(list, index nodes) of a subscript chain on a list of matrices, else None."""
        if not isinstance(node, ast.Subscript):
            return None
        found = self._vec_parts(node)
        if found is None or not found[0].mat:
            return None
        return found

    def _mat_element(self, node):
        """(list, leading indexes, flat k -> index, checks, result type, component numbers)
        of ``p[i]`` / ``p[i][r]`` / ``p[i][r, c]`` on a list of matrices."""
        lst, parts = self.mat_list_of(node)
        ty = mat_type(lst.mat, lst.elem)
        if len(parts) < lst.ndim:
            self.src.error(node, f"'{ast.unparse(node)}' has {len(parts)} indexes; "
                           f"'{lst.pyname}' is a list of {lst.ndim} dimensions of {ty}",
                           f"write {lst.pyname}[{', '.join('ijk'[:lst.ndim])}] for an element",
                           cls=GpuKernelTypeError)
        picked, ks = self._mat_indexes(parts[lst.ndim:], ty)
        indexes = [self.index_expr(part, lst, d) for d, part in enumerate(parts[:lst.ndim])]
        last = indexes[-1]
        for sub in ir.walk_expr(last):
            if isinstance(sub, (ir.FuncCall, ir.Atomic)):
                self.src.error(parts[lst.ndim - 1], "the index of a matrix element calls a "
                               "function", "assign the index to a local first (j = ...; p[j])",
                               cls=GpuKernelTypeError)
        checks = [self.new_check(node, lst, d) for d in range(lst.ndim)]
        loc = self.src.loc(node)

        def flat(k: int) -> ir.Expr:
            scaled = ir.Binary(last.ty, loc, "mul", last, ir.Const(last.ty, loc, lst.vec))
            return ir.Binary(last.ty, loc, "add", scaled, ir.Const(last.ty, loc, k)) if k \
                else scaled
        return lst, indexes[:-1], flat, checks, picked, ks

    def mat_list_subscript(self, node):
        lst, more, flat, checks, picked, ks = self._mat_element(node)
        loc = self.src.loc(node)
        return self._picked(picked, [self._vec_load(lst, more, flat, checks, k, loc)
                                     for k in ks], loc)

    def mat_list_attribute(self, node):
        """``p[i][r].x`` (a component of a row), or a located error (``p[i].x``)."""
        lst, more, flat, checks, picked, ks = self._mat_element(node.value)
        if not isinstance(picked, VecType) or isinstance(picked, MatType):
            self.mat_no_attribute(node)
        k = self.vec_component_index(node, picked)
        return self._vec_load(lst, more, flat, checks, ks[k], self.src.loc(node))

    # -- stores -----------------------------------------------------------------------------
    def mat_local_target(self, target) -> bool:
        """``target`` assigns into a matrix local (``m[r, c]``, ``m[r]``, ``m[r][c]``,
        ``m.x``)."""
        base = target.value
        while isinstance(base, ast.Subscript):
            base = base.value
        return isinstance(base, ast.Name) and isinstance(self.vec_type_of(base.id), MatType)

    def mat_store(self, target, value, node, aug_op):
        """An assignment to ``p[i]`` / ``p[i][r]`` / ``p[i][r, c]`` of a list of matrices or
        ``m[r, c]`` / ``m[r]`` of a matrix local (``aug_op``: of ``op=``), as statements."""
        loc = self.src.loc(node)
        if isinstance(target, ast.Attribute):
            self.mat_no_attribute(target)
        if self.mat_list_of(target) is not None:
            lst, more, flat, checks, picked, ks = self._mat_element(target)
            old = [self._vec_load(lst, more, flat, checks, k, loc) for k in ks]
        else:
            if isinstance(target.value, ast.Subscript):
                self.src.error(target, f"'{ast.unparse(target)}' assigns into a row, which "
                               "in Python is a new vector (the matrix would not change)",
                               "write m[r, c] = ... for an entry", cls=GpuKernelTypeError)
            name = target.value.id
            ty = self.vec_type_of(name)
            if self.scope.scalar[name].param:
                self.src.error(target, f"'{ast.unparse(target)}' assigns an entry of the "
                               f"parameter '{name}', which in Python is the caller's matrix "
                               "(it would change there too)",
                               f"copy it first: {name}2 = {ty}({name})", cls=GpuKernelTypeError)
            picked, ks = self._mat_indexes(self._slice_nodes(target), ty)
            idents = self.vec_idents(name, ty)
            old = [ir.Var(ty.elem, loc, idents[k]) for k in ks]
            lst = None
        elem = lst.elem if lst is not None else ty.elem
        current = self._picked(picked, old, loc)
        if aug_op is not None:
            value = self.binary(aug_op, current, value, node)
        if isinstance(picked, VecType):
            self.vec_check(value, picked.with_elem(elem), node, "the target")
            comps = list(value.comps)
        else:
            comps = [self.not_vector(value, getattr(node, "value", node))]
            self._component_check(comps[0], VecType(2, elem), node)
        comps = [self.conv(c, elem) for c in comps]
        if lst is None:
            out, comps = self.ordered(comps, loc, tuple(idents[k] for k in ks))
            return out + [ir.Assign(loc, idents[k], c) for k, c in zip(ks, comps)]
        targets = [element_target(lst, more, flat(k)) for k in ks]
        out, comps = self.ordered(comps, loc, (), lst, targets)
        for (idx, extra), c in zip(targets, comps):
            out.append(ir.Store(loc, lst, idx, c, checks[0], more=extra,
                                more_checks=tuple(checks[1:])))
        return out

    def ordered(self, comps, loc, idents=(), lst=None, targets=()) -> tuple:
        """(statements, comps) to store ``comps`` one after the other into the locals
        ``idents`` or the elements of ``lst`` at ``targets`` ((index, more) per component):
        when a component reads a local or an element stored before it (an element of ``lst``
        at another index may be one), each is computed into a hidden local first (so no store
        changes what a later component reads). ``p[i] = a * x[i] + p[i]`` needs none."""
        def hazard(x, j):
            if isinstance(x, ir.Var):
                return x.ident in idents[:j]
            if lst is None or not isinstance(x, ir.Load) or x.lst.ident != lst.ident:
                return False
            return not any(_same(x.index, idx) and _same(x.more, more)
                           for idx, more in targets[j:])
        if len(comps) < 2 or not any(hazard(x, j) for j, c in enumerate(comps)
                                     for x in ir.walk_expr(c)):
            return [], comps
        out, temps = [], []
        for c in comps:
            if isinstance(c, ir.Const):
                temps.append(c)
                continue
            tmp = self.hidden_local(c.ty)
            out.append(ir.Assign(loc, tmp, c))
            temps.append(ir.Var(c.ty, loc, tmp))
        return out, temps


def element_target(lst, more, index) -> tuple:
    """(index, more) of an ``ir.Store`` of flat component ``index`` of an element of ``lst``
    (``more``: the element's leading indexes of an N-D list)."""
    return (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))


def _same(a, b) -> bool:
    """The IR expressions (or tuples of them) ``a`` and ``b`` compute the same value: equal
    but for their source locations and bounds-check ids."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(_same(x, y) for x, y in zip(a, b))
    if not isinstance(a, ir.Expr) or type(a) is not type(b):
        return a == b
    return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a)
               if f.name not in ("loc", "check", "more_checks"))
