"""Vector constructors and functions in kernels: ``vec3(...)``, ``dot cross length length_sq
normalize distance clamp`` and the component-wise ``abs min max floor ceil sqrt exp log sin cos``
(also ``abs``, ``math.floor``, ``math.ceil`` of a vector), on the components of ``VecValue``s
(``codegen/vectors.py``). Given scalars, the component-wise ones keep their builtin / math
meaning (the caller's scalar path translates them).

A mixin of ``vectors.VecMixin``.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass

from ..errors import GpuKernelTypeError
from ..lang import vectors as pyvec
from . import ir
from .builtins import MINMAX
from .source import SourceLoc
from .types import elem, is_float
from .vectypes import COMPONENTS, VecType


@dataclass(frozen=True)
class VecValue:
    """A vector expression: its type (concrete) and the IR of each component."""
    ty: VecType
    loc: SourceLoc
    comps: tuple


_COMPONENT_WISE = {pyvec.sqrt: "sqrt", pyvec.exp: "exp", pyvec.log: "log", pyvec.sin: "sin",
                   pyvec.cos: "cos", pyvec.floor: "floor", pyvec.ceil: "ceil",
                   pyvec.abs: "abs", builtins.abs: "abs", math.floor: "floor",
                   math.ceil: "ceil"}
_FOLDS = {pyvec.min: "min", pyvec.max: "max"}
_GEOMETRY = {pyvec.dot: "dot", pyvec.cross: "cross", pyvec.length: "length",
             pyvec.length_sq: "length_sq", pyvec.normalize: "normalize",
             pyvec.distance: "distance", pyvec.clamp: "clamp"}
_CONSTRUCTORS = {cls: VecType(cls._N, "int" if cls._KIND == "i" else "float")
                 for cls in pyvec.VECTOR_TYPES.values()}

def _lookup(table: dict, obj):
    try:
        return table.get(obj)
    except TypeError:
        return None


class VecCallMixin:
    # -- calls ------------------------------------------------------------------------------
    def once(self, e, node):
        """``e`` where its value is used more than once (a scalar spread over the components,
        a vector whose components a function reads twice): a constant or local as it is, else
        a hidden local assigned before the statement, so that Python's single evaluation is
        kept (a device function's call, a draw, a load, a division: once, not per component).
        Inside operands Python may not evaluate (``lazy_expr``) nothing is hoisted: a pure
        expression is repeated, a call is a located error."""
        if isinstance(e, (ir.Const, ir.Var)):
            return e
        if self.lazy:
            if any(isinstance(x, (ir.FuncCall, ir.Atomic)) for x in ir.walk_expr(e)):
                self.src.error(node, "a call whose value a vector uses more than once, inside "
                               "'and', 'or', 'x if c else y' or a while test",
                               "assign the call's result to a local first, before the "
                               "condition", cls=GpuKernelTypeError)
            return e
        loc = self.src.loc(node)
        tmp = self.hidden_local(e.ty)
        self.pending.append(ir.Assign(loc, tmp, e))
        return ir.Var(e.ty, loc, tmp)

    def vec_once(self, v, node):
        """``v`` with every component evaluated once (see ``once``)."""
        return VecValue(v.ty, v.loc, tuple(self.once(c, node) for c in v.comps))

    def vec_call(self, obj, node):
        """A call of a vector constructor or function (or of abs/math.floor/... on a vector),
        or None."""
        matrix = self.mat_call(obj, node)                 # codegen/matrix_calls.py
        if matrix is not None:
            return matrix
        ctor = _lookup(_CONSTRUCTORS, obj)
        if ctor is not None:
            return self._construct(ctor, node)
        name = _lookup(_COMPONENT_WISE, obj) or _lookup(_FOLDS, obj) or \
            _lookup(_GEOMETRY, obj)
        if name is None:
            return None
        mark = self.vec_mark()
        args = [self.expr(a) for a in node.args]
        self.mat_refuse_arguments(name, args, node)
        if not any(isinstance(a, VecValue) for a in args):
            if obj in (builtins.abs, math.floor, math.ceil) or name in _FOLDS.values() or \
                    name in ("sqrt", "exp", "log", "sin", "cos", "floor", "ceil", "abs"):
                self.vec_undo(mark)
                return None          # the scalar meaning: the builtin / math function's path
            if name == "clamp":
                return self._clamp_scalar(args, node)
            self.src.error(node, f"{name}() takes vectors", "pass vec2/vec3/vec4 values",
                           cls=GpuKernelTypeError)
        loc = self.src.loc(node)
        if name in _GEOMETRY.values():
            return self._geometry(name, args, node, loc)
        if name in _FOLDS.values():
            return self._fold(name, args, node, loc)
        if len(args) != 1:
            self.src.error(node, f"{name}() takes one vector", None, cls=GpuKernelTypeError)
        v = args[0]
        if v.ty.is_int and name not in ("abs", "floor", "ceil"):
            self.src.error(node, f"{name}() of an {v.ty}", f"convert to vec{v.ty.n}(...) "
                           "first", cls=GpuKernelTypeError)
        if v.ty.is_int:
            if name == "abs":
                return VecValue(v.ty, loc, tuple(ir.Call(c.ty, loc, "abs", (c,))
                                                 for c in v.comps))
            v = self._to_float(v, loc)          # floor/ceil of ints: floats, as in Python
        return VecValue(v.ty, loc, tuple(ir.Call(c.ty, loc, name, (c,)) for c in v.comps))

    def _to_float(self, v: VecValue, loc) -> VecValue:
        ty = self.plain_float if v.ty.elem != "int64" else "float64"
        return VecValue(VecType(v.ty.n, ty), loc, tuple(self.conv(c, ty) for c in v.comps))

    def _construct(self, ty: VecType, node):
        ty = ty.concrete(self.scope.widths)
        args = [self.expr(a) for a in node.args]
        if len(args) == 1 and isinstance(args[0], VecValue):         # a copy / conversion
            v = args[0]
            if v.ty.n != ty.n or (ty.is_int and not v.ty.is_int):
                self.src.error(node, f"{ty}() cannot take a {v.ty}",
                               f"convert the components: {ty}(int(v.x), ...)" if ty.is_int
                               else f"pass a vec{ty.n}", cls=GpuKernelTypeError)
            return VecValue(ty, self.src.loc(node), tuple(self.conv(c, ty.elem)
                                                          for c in v.comps))
        args = [self.real_scalar(self.not_vector(a, n), n, ty) for a, n in zip(args, node.args)]
        if len(args) == 1:
            args = [self.once(args[0], node)] * ty.n
        if len(args) != ty.n:
            self.src.error(node, f"{ty}() takes 1 or {ty.n} numbers, got {len(args)}",
                           f"write {ty}({', '.join(COMPONENTS[:ty.n])}) or {ty}(s)",
                           cls=GpuKernelTypeError)
        for a, arg in zip(args, node.args if len(node.args) > 1 else node.args * ty.n):
            if ty.is_int and is_float(a.ty):
                self.src.error(arg, f"{ty} holds ints, not a float", f"convert with int(...), "
                               f"or use vec{ty.n}", cls=GpuKernelTypeError)
        return VecValue(ty, self.src.loc(node), tuple(self.conv(a, ty.elem) for a in args))

    def real_scalar(self, e, node, ty: VecType):
        """``e`` when it is a real number (bool, int or float); a located error else."""
        if elem(e.ty).kind not in "biuf":
            self.src.error(node, f"a {ty} holds real numbers, not a {e.ty} value",
                           "take its .real / .imag, or keep complex values in complex locals",
                           cls=GpuKernelTypeError)
        return e

    def _pair(self, name, args, node):
        if len(args) != 2 or not all(isinstance(a, VecValue) for a in args) or \
                args[0].ty.n != args[1].ty.n or args[0].ty.is_int != args[1].ty.is_int:
            self.src.error(node, f"{name}() takes two vectors of one type",
                           f"write {name}(a, b) with a and b both vec3 (or both vec2 ...)",
                           cls=GpuKernelTypeError)
        return args

    def _dot(self, a, b, node):
        total = None
        for x, y in zip(a.comps, b.comps):
            term = self.binary("mul", x, y, node)
            total = term if total is None else self.binary("add", total, term, node)
        return total

    def _length(self, v, node, loc):
        v = self.vec_once(v, node)
        sq = self._dot(v, v, node)
        ty = sq.ty if is_float(sq.ty) else self.int_float(sq.ty)
        return ir.Call(ty, loc, "sqrt", (self.conv(sq, ty),))

    def _geometry(self, name, args, node, loc):
        if name == "clamp":
            return self._clamp(args, node, loc)
        if name in ("dot", "cross", "distance"):
            a, b = self._pair(name, args, node)
            if name == "dot":
                return self._dot(a, b, node)
            if name == "distance":
                return self._length(self.vec_binary("sub", a, b, node), node, loc)
            if a.ty.n != 3:
                self.src.error(node, f"cross() takes 3-vectors, not {a.ty}", None,
                               cls=GpuKernelTypeError)
            (ax, ay, az), (bx, by, bz) = self.vec_once(a, node).comps, \
                self.vec_once(b, node).comps

            def term(p, q, r, s):
                return self.binary("sub", self.binary("mul", p, q, node),
                                   self.binary("mul", r, s, node), node)
            return self._vec_of(loc, [term(ay, bz, az, by), term(az, bx, ax, bz),
                                      term(ax, by, ay, bx)])
        if len(args) != 1 or not isinstance(args[0], VecValue):
            self.src.error(node, f"{name}() takes one vector", None, cls=GpuKernelTypeError)
        v = args[0]
        if name == "length_sq":
            v = self.vec_once(v, node)
            return self._dot(v, v, node)
        if name == "length":
            return self._length(v, node, loc)
        if v.ty.is_int:
            self.src.error(node, f"normalize() takes float vectors, not {v.ty}", None,
                           cls=GpuKernelTypeError)
        v = self.vec_once(v, node)
        n = self.once(self._length(v, node, loc), node)
        return self._vec_of(loc, [self.binary("truediv", c, n, node) for c in v.comps])

    def _fold(self, name, args, node, loc):
        if len(args) < 2 or not all(isinstance(a, VecValue) and a.ty.n == args[0].ty.n and
                                    a.ty.is_int == args[0].ty.is_int for a in args):
            self.src.error(node, f"{name}() of vectors takes two or more vectors of one type",
                           "write vec3(s) for a scalar", cls=GpuKernelTypeError)
        result = args[0]
        for other in args[1:]:
            comps = []
            for a, b in zip(result.comps, other.comps):
                ty = self.arith_type((a, b))
                comps.append(ir.Call(ty, loc, MINMAX[(name, ty)], (self.conv(a, ty),
                                                                   self.conv(b, ty))))
            result = self._vec_of(loc, comps)
        return result

    def _clamp(self, args, node, loc):
        if len(args) != 3 or not isinstance(args[0], VecValue):
            self.src.error(node, "clamp() takes (v, lo, hi)", None, cls=GpuKernelTypeError)
        v = args[0]
        bounds = [b if isinstance(b, VecValue) else
                  VecValue(v.ty, b.loc, (self.once(b, node),) * v.ty.n)
                  for b in args[1:]]
        return self._fold("min", [self._fold("max", [v, bounds[0]], node, loc), bounds[1]],
                          node, loc)

    def _clamp_scalar(self, args, node, loc=None):
        loc = self.src.loc(node)
        if len(args) != 3:
            self.src.error(node, "clamp() takes (v, lo, hi)", None, cls=GpuKernelTypeError)
        ty = self.arith_type(args)
        lo = ir.Call(ty, loc, MINMAX[("max", ty)], (self.conv(args[0], ty),
                                                    self.conv(args[1], ty)))
        return ir.Call(ty, loc, MINMAX[("min", ty)], (lo, self.conv(args[2], ty)))

