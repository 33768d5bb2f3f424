"""List access in kernels: elements of 1-D and N-D lists, shapes, atomics, device-function calls.

A mixin of ``exprs.ExprMixin`` (and so of ``frontend.Translator``): the expressions that name a
list of the caller (reads ``a[i]`` / ``a[i, j]`` / ``a[i][j]``, ``a.shape[d]``, the list and
index of an atomic, the lists passed to a device function) and their bounds checks.
"""

from __future__ import annotations

import ast

from ..errors import GpuKernelTypeError
from . import ir
from .types import ListType, assignable, is_float
from .struct_atomics import struct_atomic
from .structtypes import StructType
from .vectypes import VecType
from .rngtypes import RngType


class AccessMixin:
    def list_of(self, node, what="indexed") -> ir.ListRef:
        if isinstance(node, ast.Name) and node.id in self.scope.lists:
            return self.scope.lists[node.id]
        text = ast.unparse(node)
        self.src.error(node, f"'{text}' is not a list parameter or shared array, so it cannot be "
                       f"{what}", "index list parameters (x[i]) or arrays declared with "
                       "shared(size)", cls=GpuKernelTypeError)

    def visit_Subscript(self, node):
        member = self.tuple_subscript(node)         # f(x)[k] of a tuple result (tuple_calls)
        if member is not None:
            return member
        shape = self.shape_of(node)
        if shape is not None:
            return shape
        vector = self.vec_subscript(node)
        if vector is not None:
            return vector
        lst, indexes, checks = self.element(node, "indexed")
        return ir.Load(lst.elem, self.src.loc(node), lst, indexes[0], checks[0],
                       tuple(indexes[1:]), tuple(checks[1:]))

    def element(self, node: ast.Subscript, what: str, extra=None, checks: bool = True) -> tuple:
        """(list, index per dimension, bounds check per dimension) of ``lst[i, j]`` or
        ``lst[i][j]`` (``extra``: the index expression of an atomic, already split off;
        ``checks=False``: the caller makes the checks, after translating its arguments)."""
        slices = []
        base = node
        while isinstance(base, ast.Subscript):
            slices.insert(0, base.slice)
            base = base.value
        if extra is not None:
            base, slices = node, [extra]
        lst = self.list_of(base, what)
        parts = []
        for sl in slices:
            parts.extend(sl.elts if isinstance(sl, ast.Tuple) else [sl])
        if len(parts) != lst.ndim:
            text = ast.unparse(node)
            name = lst.pyname
            if len(parts) < lst.ndim:
                self.src.error(node, f"'{text}' indexes {len(parts)} of the {lst.ndim} "
                               f"dimensions of '{name}'; a row or plane of a list is not a "
                               "value in kernels",
                               f"index every dimension: {name}[" +
                               ", ".join("ijk"[:lst.ndim]) + "]", cls=GpuKernelTypeError)
            self.src.error(node, f"'{text}' has {len(parts)} indexes, but '{name}' has "
                           f"{lst.ndim} dimension{'s' if lst.ndim > 1 else ''}",
                           f"index it as {name}[" + ", ".join("ijk"[:lst.ndim]) + "]",
                           cls=GpuKernelTypeError)
        indexes = [self.index_expr(part, lst, d) for d, part in enumerate(parts)]
        if not checks:
            return lst, indexes, None
        return lst, indexes, [self.new_check(node, lst, d) for d in range(lst.ndim)]

    def shape_of(self, node: ast.Subscript):
        """``lst.shape[d]`` (a literal ``d``) as a value, or None for other subscripts."""
        v = node.value
        if not (isinstance(v, ast.Attribute) and v.attr == "shape" and
                isinstance(v.value, ast.Name) and v.value.id in self.scope.lists):
            return None
        lst = self.scope.lists[v.value.id]
        d = node.slice
        if isinstance(d, ast.UnaryOp) and isinstance(d.op, ast.USub) and \
                isinstance(d.operand, ast.Constant) and type(d.operand.value) is int:
            dim = -d.operand.value                     # a.shape[-1]: counted from the end
        else:
            dim = d.value if isinstance(d, ast.Constant) and type(d.value) is int else None
        if dim is not None and dim < 0:
            dim += lst.ndim
        if dim is None or not 0 <= dim < lst.ndim:
            self.src.error(d, f"'{lst.pyname}.shape[...]' takes a literal dimension from 0 to "
                           f"{lst.ndim - 1}", f"write {lst.pyname}.shape[0]",
                           cls=GpuKernelTypeError)
        loc = self.src.loc(node)
        return self.vec_list_len(lst, dim, self.plain_int, loc)

    def index_expr(self, node, lst: ir.ListRef, dim: int = 0) -> ir.Expr:
        if isinstance(node, ast.Slice):
            self.src.error(node, "slices are not supported in kernels",
                           "index one element at a time: x[i]")
        e = self.expr(node)
        if is_float(e.ty):
            self.src.error(node, "list index must be an int, got a float expression",
                           "convert with int(...)", cls=GpuKernelTypeError)
        if e.ty in ("complex", "complex128"):
            self.src.error(node, "list index must be an int, got a complex expression",
                           "index with an int, e.g. int(z.real)", cls=GpuKernelTypeError)
        if e.ty == "bool":
            e = self.conv(e, "int")
        if isinstance(e, ir.Const) and e.value < 0:     # x[-1] counts from the end
            if lst.shared_size is not None:
                return ir.Const("int", e.loc, lst.shared_size // max(lst.vec, 1) + e.value)
            return ir.Binary(e.ty, e.loc, "add", self.vec_list_len(lst, dim, e.ty, e.loc), e)
        return e

    def device_call(self, func, node, statement: bool = False,
                    tuple_ok: bool = False) -> ir.FuncCall:
        """A call of a device function: arguments checked against its signature (scalars
        converted as assignments convert, lists passed by name with their element type);
        ``tuple_ok``: the caller unpacks or indexes a tuple result (``tuple_calls.py``)."""
        sig = func.signature
        loc = self.src.loc(node)
        if not (statement or tuple_ok or isinstance(sig.returns, (str, VecType, StructType)) or
                sig.returns is None):
            self.tuple_error(func, node)
        if sig.returns is None and not statement:
            self.src.error(node, f"device function {func.name} returns None, so its call "
                           "cannot be used as a value",
                           f"call it on its own line, or annotate {func.name}'s result type "
                           "and return a value", cls=GpuKernelTypeError)
        if len(node.args) != len(sig.params):
            names = ", ".join(n for n, _ in sig.params)
            self.src.error(node, f"{func.name}() takes {len(sig.params)} argument(s) "
                           f"({names}), got {len(node.args)}",
                           f"call it as {func.describe()}", cls=GpuKernelTypeError)
        args, lists, rngs = [], [], []
        widths = self.scope.widths
        for k, ((pname, ty), arg) in enumerate(zip(sig.params, node.args)):
            ty = ty.with_elem(widths.concrete(ty.elem)) if isinstance(ty, (ListType, VecType)) \
                else widths.concrete(ty)
            if isinstance(ty, ListType):
                if not (isinstance(arg, ast.Name) and arg.id in self.scope.lists):
                    self.src.error(arg, f"argument {k + 1} of {func.name}() ('{pname}: {ty}') "
                                   "must be a list: a list parameter or shared array of the "
                                   "caller, passed by name", f"pass a list, e.g. "
                                   f"{func.name}(..., xs, ...)", cls=GpuKernelTypeError)
                ref = self.scope.lists[arg.id]
                if ref.elem != ty.elem or ref.ndim != ty.ndim or ref.vec != ty.vec or \
                        ref.struct != ty.struct:
                    self.src.error(arg, f"argument {k + 1} of {func.name}() ('{pname}: {ty}') "
                                   f"cannot take '{arg.id}', a "
                                   f"{ListType(ref.elem, ref.ndim, ref.vec, ref.mat, ref.struct)}",
                                   f"pass a {ty}, or change the annotation of "
                                   f"'{pname}'", cls=GpuKernelTypeError)
                lists.append(ref)
                continue
            if isinstance(ty, RngType):             # a Random, by reference (rng.py)
                args.extend(self.rng_argument(func, k, pname, arg, rngs))
                continue
            args.extend(self._value_argument(func, k, pname, ty, arg))
        req = self.functions.request(func, tuple(lists))
        if not any(r is req for r, _, _ in self.calls):
            self.calls.append((req, node, self.src))
        if isinstance(sig.returns, StructType):     # by value (struct_locals.py)
            return self.struct_result_call(sig.returns, req, args, node, statement)
        if isinstance(sig.returns, VecType):
            call = self.vec_result_call(sig.returns.concrete(widths), req, args, node,
                                        statement)
        else:
            returns = widths.concrete(sig.returns) if sig.returns is not None else "none"
            if hasattr(returns, "flat"):    # a tuple: vector members as their components
                returns = returns.flat()
            call = ir.FuncCall(returns, loc, req.ident, tuple(args))
        return self.rng_after_call(req, rngs, call, statement, node)

    def _value_argument(self, func, k: int, pname: str, ty, arg) -> list:
        """The WGSL arguments of a scalar or vector parameter ``pname: ty`` (a vector: one per
        component), checked and converted as an assignment converts."""
        if isinstance(arg, ast.Name) and arg.id in self.scope.lists:
            self.src.error(arg, f"argument {k + 1} of {func.name}() ('{pname}: {ty}') "
                           f"takes a {ty}, not the list '{arg.id}'",
                           f"pass an element ({arg.id}[i]) or annotate '{pname}' as a "
                           "list", cls=GpuKernelTypeError)
        if isinstance(ty, StructType):              # one argument per word
            return self.struct_argument(arg, ty, f"argument {k + 1} of {func.name}() "
                                        f"('{pname}: {ty}')")
        if isinstance(ty, VecType):                 # one argument per component
            return self.vec_argument(arg, ty, f"argument {k + 1} of {func.name}() "
                                     f"('{pname}: {ty}')")
        value = self.not_vector(self.expr(arg), arg)
        if not assignable(value.ty, ty):
            self.src.error(arg, f"argument {k + 1} of {func.name}() ('{pname}: {ty}') "
                           f"cannot take a {value.ty} value",
                           f"convert explicitly, e.g. {ty}(...)", cls=GpuKernelTypeError)
        return [self.conv(value, ty)]

    def atomic_call(self, op, node, text):
        want = 4 if op == "compare_exchange" else 3
        field = struct_atomic(self, op, node, text, want)   # atomic_add(p[i], "n", 1)
        if field is not None:
            return field
        vector = self.vec_atomic(op, node, text, want)   # atomic_add(h[i], k, 1): vector_index
        if vector is not None:
            return vector
        self.nargs(node, text, (want,))
        lst = self.list_of(node.args[0], "used atomically")
        if lst.vec:
            self.src.error(node, f"{text}() on a list of vectors takes an element and a "
                           "component", f"write {text}({lst.pyname}[i], k, ...) for component "
                           f"k of element i (0 for .x)", cls=GpuKernelTypeError)
        if lst.elem not in ("int", "uint32", "int64", "float") or (lst.elem == "float"
                                                                   and op != "add"):
            self.src.error(node, f"{text}() on a list[{lst.elem}] is not supported",
                           _atomic_hint(lst, text), cls=GpuKernelTypeError)
        if lst.elem == "float" and lst.shared_size is not None:
            self.src.error(node, f"{text}() on a shared list[float] is not supported (devices "
                           "offer float atomics on storage lists only)",
                           "accumulate into a shared list[int] of scaled values, or tree-reduce "
                           "the shared array with barriers and atomic_add the result into a "
                           "list[float] parameter", cls=GpuKernelTypeError)
        if lst.elem == "float":
            self.uses.add("float_atomic")
        if lst.elem == "int64":
            self.uses.add("int64_atomic")
        self.uses.add("atomic")
        _, indexes, _ = self.element(node.args[0], "used atomically", node.args[1], False)
        args = []
        for a in node.args[2:]:
            e = self.expr(a)
            if lst.elem != "float" and is_float(e.ty):
                self.src.error(a, f"{text}() on list[{lst.elem}] '{lst.pyname}' needs an int "
                               "value, got a float", "convert with int(...)",
                               cls=GpuKernelTypeError)
            args.append(self.conv(e, lst.elem))
        checks = [self.new_check(node, lst, d) for d in range(lst.ndim)]
        return ir.Atomic(lst.elem, self.src.loc(node), op, lst, indexes[0], tuple(args),
                         checks[0], tuple(indexes[1:]), tuple(checks[1:]))


def _atomic_hint(lst: ir.ListRef, text: str) -> str:
    """The way out for ``text``() on a list whose element type has no atomics."""
    name = lst.pyname
    if lst.elem in ("complex", "complex128"):
        return (f"complex numbers have no atomics: keep the real and imaginary parts of '{name}' "
                "in two list[float] and atomic_add each part")
    if lst.elem == "float64":
        return (f"devices have no float64 atomics: pass a float32 array for '{name}' (e.g. "
                "np.zeros(n, np.float32)) and annotate it list[float32] if the other floats "
                "are float64; or accumulate scaled values in a list[int] or list[int64]")
    if lst.elem == "float":
        return (f"float atomics offer atomic_add only: for {text}() keep the values in a "
                "list[int] (scaled to whole numbers) or list[uint32]")
    return ("atomics work on list[int] (int32, or int64 where the device has 64-bit atomics), "
            "list[int64], list[uint32] (all operations) and list[float] as float32 "
            f"(atomic_add only): keep '{name}' in an int list (e.g. 1 for True)")
