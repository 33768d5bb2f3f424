"""Matrix constructors and functions in kernels: ``mat22/mat33/mat44(...)``, ``transpose``,
``determinant``, ``inverse``, ``outer``, on the entries of matrix values (``VecValue``s of a
``MatType``: ``MatValue``). The formulas are ``cthreads.lang.matrix_formulas``', which the
Python classes evaluate too, so the plain-Python run and the device compute alike.

A mixin of ``matrices.MatMixin``.
"""

from __future__ import annotations

from ..errors import GpuKernelTypeError
from ..lang import matrices as pymat
from ..lang import matrix_formulas as formulas
from . import ir
from .mattypes import MatType, mat_type
from .vector_calls import VecValue
from .vectypes import VecType

_CONSTRUCTORS = {cls: cls._N for cls in pymat.MATRIX_TYPES.values()}
_FUNCTIONS = {pymat.transpose: "transpose", pymat.determinant: "determinant",
              pymat.inverse: "inverse", pymat.outer: "outer"}


class MatValue(VecValue):
    """A matrix expression: its ``MatType`` and the IR of each entry, row by row."""


def is_matrix(value) -> bool:
    return isinstance(value, VecValue) and isinstance(value.ty, MatType)


def _lookup(table: dict, obj):
    try:
        return table.get(obj)
    except TypeError:
        return None


class IROps:
    """``matrix_formulas``' arithmetic on IR expressions, through the translator's operators
    (conversions, float64 helpers and all)."""
    def __init__(self, tr, node):
        self.tr, self.node = tr, node

    def add(self, a, b):
        return self.tr.binary("add", a, b, self.node)

    def sub(self, a, b):
        return self.tr.binary("sub", a, b, self.node)

    def mul(self, a, b):
        return self.tr.binary("mul", a, b, self.node)

    def neg(self, a):
        return ir.Unary(a.ty, a.loc, "neg", a)

    def keep(self, a):
        return self.tr.mat_keep(a)


class MatCallMixin:
    def mat_of(self, size: int, loc, comps) -> MatValue:
        """A matrix of ``comps`` (converted to their common float type)."""
        v = self._vec_of(loc, list(comps))
        elem = v.ty.elem if v.ty.elem in ("float", "float64") else self.plain_float
        return MatValue(mat_type(size, elem), loc, tuple(self.conv(c, elem) for c in v.comps))

    def mat_call(self, obj, node):
        """A call of a matrix constructor or function, or None."""
        size = _lookup(_CONSTRUCTORS, obj)
        if size is not None:
            return self._mat_construct(size, node)
        name = _lookup(_FUNCTIONS, obj)
        if name is None:
            return None
        args = [self.expr(a) for a in node.args]
        loc = self.src.loc(node)
        if name == "outer":
            if len(args) != 2 or not all(isinstance(a, VecValue) and not is_matrix(a) and
                                         not a.ty.is_int for a in args) or \
                    args[0].ty.n != args[1].ty.n:
                self.src.error(node, "outer() takes two float vectors of one size",
                               "write outer(u, v) with u and v both vec3 (or both vec2 ...)",
                               cls=GpuKernelTypeError)
            u, v = self.mat_materialize(args[0]), self.mat_materialize(args[1])
            return self.mat_of(u.ty.n, loc, [self.binary("mul", a, b, node)
                                             for a in u.comps for b in v.comps])
        if len(args) != 1 or not is_matrix(args[0]):
            got = args[0].ty if len(args) == 1 else f"{len(args)} arguments"
            self.src.error(node, f"{name}() takes one matrix (mat22, mat33 or mat44), not {got}",
                           f"write {name}(m) with m a matrix", cls=GpuKernelTypeError)
        m = args[0]
        n = m.ty.size
        if name != "transpose":
            m = self.mat_materialize(m)          # the formulas read each entry several times
        if name == "transpose":
            return MatValue(m.ty, loc, tuple(formulas.transpose(m.comps, n)))
        ops = IROps(self, node)
        if name == "determinant":
            return formulas.determinant(list(m.comps), n, ops)
        adj, det = formulas.adjugate_det(list(m.comps), n, ops)
        # a singular matrix: 1/0.0 is inf (IEEE, as the float '/' on the device), so the
        # entries are inf/-inf/nan, as the Python class computes (lang/matrices.py)
        s = self.mat_keep(self.binary("truediv", ir.Const(m.ty.elem, loc, 1.0), det, node))
        return MatValue(m.ty, loc, tuple(self.binary("mul", a, s, node) for a in adj))

    def _mat_construct(self, size: int, node):
        ty = mat_type(size).concrete(self.scope.widths)
        loc = self.src.loc(node)
        args = [self.expr(a) for a in node.args]
        if len(args) == 1 and is_matrix(args[0]):
            m = args[0]
            if m.ty.size != size:
                self.src.error(node, f"{ty}() cannot take a {m.ty}", f"pass a {ty}",
                               cls=GpuKernelTypeError)
            return MatValue(ty, loc, tuple(self.conv(c, ty.elem) for c in m.comps))
        if len(args) == size and all(isinstance(a, VecValue) for a in args):
            comps = []
            for a, arg in zip(args, node.args):
                if is_matrix(a) or a.ty.n != size or a.ty.is_int:
                    self.src.error(arg, f"a row of a {ty} is a vec{size}, not a {a.ty}",
                                   f"write {ty}(r0, ..., r{size - 1}) with vec{size} rows",
                                   cls=GpuKernelTypeError)
                comps.extend(a.comps)
            return MatValue(ty, loc, tuple(self.conv(c, ty.elem) for c in comps))
        for a, arg in zip(args, node.args):
            self.real_scalar(self.not_vector(a, arg), arg, ty)
        if len(args) == 1:
            zero = ir.Const(ty.elem, loc, 0.0)
            d = self.conv(args[0], ty.elem)
            return MatValue(ty, loc, tuple(d if r == c else zero for r in range(size)
                                           for c in range(size)))
        if len(args) != size * size:
            self.src.error(node, f"{ty}() takes {size} rows (vec{size}), one number (the "
                           f"diagonal) or {size * size} numbers, got {len(args)} arguments",
                           f"write {ty}(r0, ..., r{size - 1}) or {ty}(s)",
                           cls=GpuKernelTypeError)
        return MatValue(ty, loc, tuple(self.conv(a, ty.elem) for a in args))

    def mat_refuse_arguments(self, name: str, args, node) -> None:
        """The vector functions (dot, length, sqrt, min ...) do not take matrices."""
        for a in args:
            if is_matrix(a):
                self.src.error(node, f"{name}() does not take a {a.ty}",
                               "apply it to rows (m[0]) or entries (m[0, 1]); matrices take "
                               "transpose, determinant, inverse and @", cls=GpuKernelTypeError)


def row_type(ty: MatType) -> VecType:
    return VecType(ty.size, ty.elem)
