"""Tuple results in kernel bodies: ``return a, b``, ``a, b = f(x)`` and ``f(x)[k]``.

A mixin of ``frontend.Translator``. A call of a device function with a tuple result
(``tuple_types.TupleType``) is a value only where it is unpacked or indexed: unpacking keeps
the result in a hidden local of the struct type and assigns each member to its target as an
assignment of one value would (declared types, inference, list stores and their bounds checks,
left to right as Python does); ``f(x)[k]`` with a literal ``k`` reads one member. Anywhere else
the call is a located error that says how to unpack it.
"""

from __future__ import annotations

import ast

from ..errors import GpuKernelTypeError
from . import ir
from .functions import DeviceFunction
from .structs import StructValue
from .structtypes import StructType
from .tuple_types import TupleType, is_tuple
from .types import MISSING, assignable


def _names(n: int) -> str:
    return ", ".join("abcdefgh"[k] if k < 8 else f"v{k}" for k in range(n))


class TupleMixin:
    def tuple_function(self, node):
        """The device function ``node`` calls when it returns a tuple, else None."""
        if not isinstance(node, ast.Call):
            return None
        obj = self.scope.resolve(node.func)
        if isinstance(obj, MISSING) and isinstance(node.func, ast.Name):
            self.unknown_call(node, obj, node.func.id)   # not defined yet: the kernel waits
        if isinstance(obj, DeviceFunction) and is_tuple(obj.signature.returns):
            return obj
        return None

    def tuple_error(self, func, node):
        """A tuple-returning call used as one value."""
        ty = func.signature.returns
        self.src.error(node, f"device function {func.name} returns {len(ty)} values ({ty}), "
                       "so its call is not a single value",
                       f"unpack it: '{_names(len(ty))} = {func.name}(...)', or take one "
                       f"value: {func.name}(...)[0]", cls=GpuKernelTypeError)

    # -- a, b = f(x) -----------------------------------------------------------------------
    def unpack_call(self, target: ast.Tuple, node) -> list | None:
        """The statements of ``a, b = f(x)`` for a device function ``f`` with a tuple result;
        None when the value is not such a call."""
        value = node.value
        func = self.tuple_function(value)
        if func is None:
            self._scalar_unpack(target, value)
            return None
        call = self.device_call(func, value, tuple_ok=True)
        ty = self.tuple_type(func)
        if len(target.elts) != len(ty):
            self.src.error(node, f"{len(target.elts)} names are unpacked from "
                           f"{func.name}(), which returns {len(ty)} values ({ty})",
                           f"unpack {len(ty)} names: '{_names(len(ty))} = {func.name}(...)'",
                           cls=GpuKernelTypeError)
        for t in target.elts:
            if isinstance(t, ast.Starred):
                self.src.error(t, "starred targets are not supported when unpacking a tuple "
                               "result", f"name each of the {len(ty)} values",
                               cls=GpuKernelTypeError)
        return self._assign_members(call, ty, target.elts, node)

    def tuple_type(self, func) -> TupleType:
        """The tuple result of ``func`` at this compilation's widths, as annotated (vector
        members whole; the call's IR type is its ``flat`` form)."""
        return self.scope.widths.concrete(func.signature.returns)

    def tuple_member(self, ty: TupleType, whole: ir.Expr, k: int, loc):
        """Member ``k`` of the tuple value ``whole`` (of type ``ty.flat()``): a scalar
        expression, or a vector of its components (``vectors.VecValue``)."""
        at, flat = ty.offsets()[k], whole.ty
        member = ty.members[k]
        if isinstance(member, str):
            return ir.TupleMember(flat.members[at], loc, whole, at)
        if isinstance(member, StructType):          # its words (structs.StructValue)
            types = ty.member_types(member)
            return StructValue(member, loc, tuple(ir.TupleMember(t, loc, whole, at + c)
                                                  for c, t in enumerate(types)))
        from .vector_calls import VecValue  # noqa: PLC0415
        return VecValue(member, loc, tuple(ir.TupleMember(member.elem, loc, whole, at + c)
                                           for c in range(member.n)))

    def _assign_members(self, call: ir.Expr, ty: TupleType, targets, node) -> list:
        loc = self.src.loc(node)
        tmp = self.hidden_local(call.ty)
        out = [ir.Assign(loc, tmp, call)]
        whole = ir.Var(call.ty, loc, tmp)
        for k, t in enumerate(targets):
            stmt = self.assign_to(t, self.tuple_member(ty, whole, k, loc), node)
            out.extend(stmt if isinstance(stmt, list) else [stmt])   # a vector: per component
        return out

    def _scalar_unpack(self, target, value):
        """``a, b = g(x)`` where ``g`` returns one value: an error that says so."""
        if not isinstance(value, ast.Call):
            return
        obj = self.scope.resolve(value.func)
        if isinstance(obj, DeviceFunction):
            returns = obj.signature.returns
            what = "None" if returns is None else f"one {returns} value"
            self.src.error(value, f"device function {obj.name} returns {what}, which cannot "
                           f"be unpacked into {len(target.elts)} names",
                           f"annotate {obj.name} '-> tuple[...]' with a type per value and "
                           f"'return {_names(len(target.elts))}'", cls=GpuKernelTypeError)

    # -- f(x)[k] ---------------------------------------------------------------------------
    def tuple_subscript(self, node: ast.Subscript):
        """``f(x)[k]`` (a literal ``k``, negative counting from the end) as one member; None
        when ``node`` does not index a tuple result."""
        func = self.tuple_function(node.value)
        if func is None:
            return None
        ty = self.tuple_type(func)
        k = _literal_index(node.slice)
        if k is None:
            self.src.error(node.slice, f"a tuple result is indexed with a literal: the "
                           f"members of {ty} can have different types",
                           f"write {func.name}(...)[0] ... [{len(ty) - 1}], or unpack it: "
                           f"'{_names(len(ty))} = {func.name}(...)'", cls=GpuKernelTypeError)
        if not -len(ty) <= k < len(ty):
            self.src.error(node.slice, f"tuple index {k} is out of range: {func.name}() "
                           f"returns {len(ty)} values ({ty})",
                           f"index from 0 to {len(ty) - 1}", cls=GpuKernelTypeError)
        k %= len(ty)
        call = self.device_call(func, node.value, tuple_ok=True)
        loc = self.src.loc(node)
        if isinstance(ty.members[k], str):
            return self.tuple_member(ty, call, k, loc)
        if self.lazy:                   # a vector member reads the result once per component
            self.src.error(node, f"a vector of {func.name}()'s tuple result inside 'and', "
                           "'or', 'x if c else y' or a while test",
                           f"unpack the result first ('{_names(len(ty))} = "
                           f"{func.name}(...)'), before the condition", cls=GpuKernelTypeError)
        tmp = self.hidden_local(call.ty)        # the call once, before the statement
        self.pending.append(ir.Assign(loc, tmp, call))
        return self.tuple_member(ty, ir.Var(call.ty, loc, tmp), k, loc)

    # -- return a, b -----------------------------------------------------------------------
    def tuple_return(self, node):
        """``return a, b`` (or ``return g(x)`` of a tuple result) in a device function whose
        result is ``self.returns``, a TupleType."""
        ty: TupleType = self.returns
        name = self.src.name
        v = node.value
        loc = self.src.loc(node)
        if isinstance(v, ast.Tuple):
            for e in v.elts:
                if isinstance(e, ast.Starred):
                    self.src.error(e, "starred values are not supported in a return",
                                   f"return the {len(ty)} values one by one",
                                   cls=GpuKernelTypeError)
            if len(v.elts) != len(ty):
                self.src.error(v, f"device function {name} returns {len(ty)} values ({ty}), "
                               f"but this return gives {len(v.elts)}",
                               f"return {len(ty)} values ('return {_names(len(ty))}'), or "
                               "change the result annotation", cls=GpuKernelTypeError)
            members = []
            for k, (e, want) in enumerate(zip(v.elts, ty.members)):
                value = self.expr(e)
                if not isinstance(want, str) or hasattr(value, "comps") or \
                        isinstance(value, StructValue):     # a vector or a struct
                    members.extend(self._vector_member(value, want, e, k, ty))
                    continue
                if not assignable(value.ty, want):
                    self.src.error(e, f"value {k + 1} of the return of {name} is a "
                                   f"{value.ty}, but {name} returns {ty}",
                                   f"convert explicitly, e.g. {want}(...), or change member "
                                   f"{k + 1} of the result annotation", cls=GpuKernelTypeError)
                members.append(self.conv(value, want))
            return ir.ReturnValue(loc, ir.MakeTuple(ty.flat(), loc, tuple(members)))
        func = self.tuple_function(v)
        if func is None:
            self.expr(v)            # its own errors first
            self.src.error(v, f"device function {name} returns {len(ty)} values ({ty}), but "
                           "this return gives one", f"return {len(ty)} values: "
                           f"'return {_names(len(ty))}'", cls=GpuKernelTypeError)
        call = self.device_call(func, v, tuple_ok=True)
        given = self.tuple_type(func)
        if given == ty:
            return ir.ReturnValue(loc, call)
        if len(given) != len(ty) or [_shape(m) for m in given.members] != \
                [_shape(m) for m in ty.members]:
            self.src.error(v, f"device function {name} returns {len(ty)} values ({ty}), but "
                           f"{func.name}() gives {len(given)} ({given})",
                           f"unpack it and return {len(ty)} values", cls=GpuKernelTypeError)
        tmp = self.hidden_local(call.ty)
        whole = ir.Var(call.ty, loc, tmp)
        members = []
        flat = ty.flat()
        for k, (have, want) in enumerate(zip(call.ty.members, flat.members)):
            if not assignable(have, want):
                self.src.error(v, f"value {k + 1} of {func.name}() is a {have}, but {name} "
                               f"returns {ty}", "unpack it and convert explicitly",
                               cls=GpuKernelTypeError)
            members.append(self.conv(ir.TupleMember(have, loc, whole, k), want))
        return [ir.Assign(loc, tmp, call),
                ir.ReturnValue(loc, ir.MakeTuple(flat, loc, tuple(members)))]

    def _struct_member(self, value, want, node, k: int, ty: TupleType) -> list:
        """The words of value ``k`` of a return whose member ``want`` or value is a struct
        (a located error when the types differ)."""
        what = f"value {k + 1} of the result of {self.src.name}() ({ty})"
        words = self.struct_words_of(value, want, node, what)
        return [self._word_of(w, t, node) for w, t in zip(words, ty.member_types(want))]

    def _vector_member(self, value, want, node, k: int, ty: TupleType) -> list:
        """The components of value ``k`` of a return whose member ``want`` or value is a
        vector, converted (a located error when one is a vector and the other not)."""
        if isinstance(want, StructType) or isinstance(value, StructValue):
            return self._struct_member(value, want, node, k, ty)
        name = self.src.name
        if isinstance(want, str):
            self.src.error(node, f"value {k + 1} of the return of {name} is a {value.ty}, but "
                           f"{name} returns {ty}", f"return a {want} (a component, or "
                           f"length(v)), or change member {k + 1} of the result annotation",
                           cls=GpuKernelTypeError)
        self.vec_check(value, want, node, f"value {k + 1} of the result of {name}() ({ty})")
        return [self.conv(c, want.elem) for c in value.comps]

    def scalar_tuple_return(self, node):
        """``return a, b`` in a device function with one (scalar) result: an error."""
        v = node.value
        types = [self.expr(e).ty for e in v.elts if not isinstance(e, ast.Starred)]
        self.src.error(v, f"device function {self.src.name} returns a {self.returns}, not "
                       f"{len(v.elts)} values", f"annotate '-> tuple[{', '.join(types)}]' to "
                       "return several values", cls=GpuKernelTypeError)


def _shape(member):
    """What must agree between a returned tuple's member and the result's: a vector's length,
    a struct's type; scalars convert."""
    return member if isinstance(member, StructType) else getattr(member, "n", 0)


def _literal_index(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


__all__ = ["TupleMixin"]
