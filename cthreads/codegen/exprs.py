"""Expressions: Python AST expression nodes -> typed IR, one ``visit_<Node>`` method per node.

A mixin of ``frontend.Translator``; it relies on ``self.src`` (errors), ``self.scope`` (the
kernel's names, and Python objects by identity) and the pass state (``uses``, checks).
"""

from __future__ import annotations

import ast
import inspect
import math
import struct

from ..errors import GpuKernelError, GpuKernelTypeError, GpuUnresolvedName
from ..lang import indexes
from .. import sync
from . import ir, unsupported
from .builtins import MATH, MINMAX, PY_BUILTINS, index_builtin_name
from .access import AccessMixin
from .complexes import ComplexMixin, is_complex
from .structs import StructMixin, StructValue
from .structtypes import struct_of
from .vectors import VecMixin, VecValue
from .rng import RngMixin
from .functions import DeviceFunction
from .int_literals import _fold_int, _int_literal_value
from .types import (ANNOTATION_NAMES, INT_RANGE, MISSING, elem, is_float, promote,
                    wrap as _wrap)

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
          ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "bitand",
          ast.BitOr: "bitor", ast.BitXor: "bitxor", ast.LShift: "lshift", ast.RShift: "rshift",
          ast.MatMult: "matmul"}          # '@': matrices and vectors only (matrices.py)
BINOP_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                "mod": "%", "pow": "**", "bitand": "&", "bitor": "|", "bitxor": "^",
                "lshift": "<<", "rshift": ">>"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
INT_MIN, INT_MAX = -2**31, 2**31 - 1
F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7f7fffff))[0]

class ExprMixin(ComplexMixin, AccessMixin, StructMixin, VecMixin, RngMixin):
    # -- dispatch --------------------------------------------------------------------------
    def expr(self, node: ast.AST) -> ir.Expr:
        if type(node).__name__ not in self._visitors:
            what, hint = unsupported.EXPRESSIONS.get(
                type(node).__name__, (f"construct '{type(node).__name__}'", None))
            self.src.error(node, f"{what} are not supported in kernels"
                           if what.endswith("s") else f"{what} is not supported in kernels",
                           hint)
        return self.visit(node)

    # -- helpers ---------------------------------------------------------------------------
    def conv(self, e: ir.Expr, ty: str) -> ir.Expr:
        """Convert ``e`` to ``ty`` (promotion, truthiness for 'bool', truncation for ints).
        A literal is converted here, and must fit its new int type."""
        if isinstance(e, VecValue):
            self.not_vector(e)
        if e.ty == ty:
            return e
        if isinstance(e, ir.Const):
            row = elem(ty)
            if row.kind == "c":
                return ir.Const(ty, e.loc, complex(e.value))
            if row.kind == "f":
                value = float(e.value)
                if ty == "float" and math.isfinite(value) and abs(value) > F32_MAX:
                    self.width_error(e.loc, f"the float {value!r} is beyond float32's range",
                                     "float32 values stay below about 3.4e38: compute in "
                                     "float64 (write float64(...) or use float64 values)",
                                     "float")
                    value = 0.0
                return ir.Const(ty, e.loc, value)
            if row.kind in "iu" and elem(e.ty).kind in "biu":
                lo, hi = INT_RANGE[ty]
                if not lo <= int(e.value) <= hi:
                    self.width_error(e.loc, f"the integer {e.value} does not fit in "
                                     f"{row.spelling} ({lo} .. {hi})", "use a value in range, "
                                     "or compute in a wider type (int64(...))", ty)
                    return ir.Const(ty, e.loc, 0)
                return ir.Const(ty, e.loc, int(e.value))
            if ty == "bool":
                v = e.value
                return ir.Const("bool", e.loc, bool(v) if v == v else True)
        return ir.Cast(ty, e.loc, e)

    def width_error(self, loc, message: str, hint: str, ty: str) -> None:
        """A literal that does not fit the type ``ty`` it meets: a located error, marked
        ``width_dependent`` when ``ty`` is the launch's plain float or int (the kernel may be
        valid where they are 64-bit: ``compile_kernel`` checks). In a lenient compilation
        (``Progress.lenient``) the error is noted for the launches at these widths, and the
        caller goes on with a placeholder value."""
        plain = ty in (self.plain_float, self.plain_int)
        if plain and self.progress.lenient:
            kind = "floats are float32" if ty == "float" else "ints are int32"
            wide = "float64" if ty == "float" else "int64"
            try:
                self.src.error(loc, f"{message}, and this launch's plain {kind}",
                               f"pass {wide} arrays for the plain "
                               f"list[{'float' if ty == 'float' else 'int'}] parameters (the "
                               f"kernel then computes in {wide}), or write {wide}(...) around "
                               "the value")
            except GpuKernelError as exc:
                self.deferred.append(exc)
            return
        try:
            self.src.error(loc, message, hint)
        except GpuKernelError as exc:
            exc.width_dependent = plain
            raise

    # -- types of operations -----------------------------------------------------------------
    @property
    def plain_int(self) -> str:
        return self.scope.widths.int

    @property
    def plain_float(self) -> str:
        return self.scope.widths.float

    def unify(self, values) -> str:
        """The common type of ``values`` (ir.Expr): numpy's promotion among typed values;
        literals (Python scalars) take the type of the typed values they meet, except that a
        float literal among ints gives the launch's float."""
        typed = [v.ty for v in values if not isinstance(v, ir.Const)]
        consts = [v.ty for v in values if isinstance(v, ir.Const)]
        if not typed:
            ty = consts[0]
            for t in consts[1:]:
                ty = promote(ty, t)
            return ty
        ty = typed[0]
        for t in typed[1:]:
            ty = promote(ty, t)
        if any(is_complex(t) for t in consts) and not is_complex(ty):
            return "complex128" if ty == "float64" else self.plain_complex    # x + 1j
        if is_complex(ty):
            return ty
        if any(is_float(t) for t in consts) and not is_float(ty):
            return self.plain_float
        if ty == "bool" and any(t != "bool" for t in consts):
            return self.plain_int
        return ty

    def int_float(self, ty: str) -> str:
        """The float of ``/`` and math on ints of type ``ty``: float64 for int64 and uint32
        (as numpy gives; float32 cannot hold them), else the launch's float."""
        return "float64" if ty in ("int64", "uint32") else self.plain_float

    def arith_type(self, values) -> str:
        """``unify`` with bools counted as ints (the type of ``+ - * // % **``)."""
        ty = self.unify(values)
        return self.plain_int if ty == "bool" else ty

    def truthy(self, e: ir.Expr) -> ir.Expr:
        return self.conv(e, "bool")

    def const(self, value, node) -> ir.Const:
        loc = self.src.loc(node)
        if isinstance(value, bool):
            return ir.Const("bool", loc, value)
        if isinstance(value, int):
            ty = self.plain_int
            lo, hi = INT_RANGE[ty]
            if not lo <= value <= hi:
                if not -2**63 <= value < 2**63:
                    self.src.error(node, f"the integer {value} does not fit in 64 bits",
                                   "kernel ints are at most 64-bit: use a value in -2**63 .. "
                                   "2**63-1, or a float")
                ty = "int64"            # a Python int beyond 32 bits: an int64 value
            return ir.Const(ty, loc, value)
        if isinstance(value, float):
            ty = self.plain_float
            if ty == "float" and math.isfinite(value) and abs(value) > F32_MAX:
                ty = "float64"          # a Python float beyond float32: a float64 value
            return ir.Const(ty, loc, value)
        self.src.error(node, f"{type(value).__name__} values are not supported in kernels",
                       "kernels compute with int, float and bool values")

    def object_value(self, obj, node, text: str) -> ir.Expr:
        """A global object used as a value: only int/float/bool constants qualify."""
        if type(obj) in (int, float, bool):
            return self.const(obj, node)
        if isinstance(obj, MISSING):
            self.src.error(node, f"name '{text}' is not defined",
                           "define it as a local (v: int = ...), a parameter, or a module-level "
                           "int/float/bool constant")
        if isinstance(obj, indexes.IndexBuiltin):
            self.src.error(node, f"'{text}' needs a component", f"write {text}.x")
        self.src.error(node, f"'{text}' is a {type(obj).__name__} object, which kernels cannot "
                       f"use as a value",
                       "kernels read module-level int, float and bool constants; pass other "
                       "data as parameters")


    # -- leaves ----------------------------------------------------------------------------
    def visit_Constant(self, node):
        if isinstance(node.value, complex):
            return self.complex_const(node.value, node)
        if node.value is None or isinstance(node.value, (str, bytes, complex)) \
                or node.value is Ellipsis:
            self.src.error(node, f"the constant {node.value!r} is not supported in kernels",
                           "kernels compute with int, float and bool values")
        return self.const(node.value, node)

    def visit_Name(self, node):
        name = node.id
        if name in self.scope.lists:
            self.src.error(node, f"list '{name}' cannot be used as a value",
                           f"index it ({name}[i]) or take len({name})", cls=GpuKernelTypeError)
        if self.vec_type_of(name) is not None:
            return self.vec_var(name, node)
        if self.rng_type_of(name) is not None:
            self.rng_as_value(node)
        if self.struct_local(name) is not None:     # a struct local (structs.py)
            return self.struct_read(node)
        if name in self.scope.scalar:
            local = self.scope.scalar[name]
            return ir.Var(self.local_type(name), self.src.loc(node), local.ident)
        return self.object_value(self.scope.resolve(node), node, name)

    def visit_Attribute(self, node):
        value = self.complex_attribute(node)       # z.real, z.imag
        if value is not None:
            return value
        component = self.vec_attribute(node)
        if component is not None:
            return component
        base = self.scope.resolve(node.value)
        if base is None:
            self.src.error(node, f"attribute access '{ast.unparse(node)}' is not supported on "
                           f"kernel values", "kernels have no attributes except "
                           "GlobalIdx.x-style index builtins and module constants")
        bname = index_builtin_name(base)
        if bname is not None:
            if node.attr not in ("x", "y", "z"):
                self.src.error(node, f"{bname} has no component '{node.attr}'",
                               f"use {bname}.x, {bname}.y or {bname}.z")
            self.uses.add(bname)
            loc = self.src.loc(node)
            return ir.Special(self.plain_int, loc, bname, node.attr)
        obj = self.scope.resolve(node)
        return self.object_value(obj, node, ast.unparse(node))


    # -- operators -------------------------------------------------------------------------
    def visit_BinOp(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            self.src.error(node, "the '@' operator is not supported in kernels",
                           "write the sum of products with a loop")
        left, right = self.expr(node.left), self.expr(node.right)
        return self.binary(op, left, right, node)

    def binary(self, op, left, right, node) -> ir.Expr:
        for side in (left, right):
            if isinstance(side, StructValue):       # structs have no arithmetic
                self.not_vector(side, node)
        if isinstance(left, VecValue) or isinstance(right, VecValue) or op == "matmul":
            return self.vec_binary(op, left, right, node)
        loc = self.src.loc(node)
        lt, rt = left.ty, right.ty
        if op in ("truediv", "floordiv", "mod") and isinstance(right, ir.Const) \
                and right.value == 0:
            where = node.right if isinstance(node, ast.BinOp) else getattr(node, "value", node)
            self.src.error(where, f"division by a constant zero ('{BINOP_SYMBOL[op]} 0')",
                           "Python raises ZeroDivisionError here; divide by a non-zero value")
        if is_complex(lt) or is_complex(rt):
            return self.complex_binary(op, left, right, node)
        folded = self.fold_overflow(op, left, right, node)
        if folded is not None:
            return folded
        if op in ("add", "sub", "mul", "floordiv", "mod"):
            ty = self.arith_type((left, right))
            return ir.Binary(ty, loc, op, self.conv(left, ty), self.conv(right, ty))
        if op == "truediv":
            ty = self.arith_type((left, right))
            ty = ty if is_float(ty) else self.int_float(ty)
            return ir.Binary(ty, loc, op, self.conv(left, ty), self.conv(right, ty))
        if op == "pow":
            ty = self.arith_type((left, right))
            if not is_float(ty) and isinstance(right, ir.Const) and right.value < 0:
                ty = self.plain_float
            return ir.Binary(ty, loc, op, self.conv(left, ty), self.conv(right, ty))
        if is_float(lt) or is_float(rt):
            self.src.error(node, f"unsupported operand type for '{BINOP_SYMBOL[op]}': float",
                           "bitwise operators work on int and bool values; convert with int()",
                           cls=GpuKernelTypeError)
        if op in ("bitand", "bitor", "bitxor") and lt == rt == "bool":
            return ir.Binary("bool", loc, op, left, right)
        ty = self.arith_type((left, right))
        return ir.Binary(ty, loc, op, self.conv(left, ty), self.conv(right, ty))

    def fold_overflow(self, op, left, right, node) -> ir.Const | None:
        """An operation on two int literals whose Python value does not fit the type the
        device would compute it in: the value, as a literal of it would be (``2**40`` is the
        int64 1099511627776, not a wrapped int32). ``a >> b`` of literals is Python's value
        too (a count of 32 or more included, which the device would take modulo the width).
        None when the value fits (computed on the device as before), when Python would raise
        (a zero divisor, a negative count: the device's rules apply) or the operands are not
        int literals. Each operator is computed alone, at a bounded cost: a power or shift
        beyond 64 bits is not computed, it is beyond 64 bits."""
        if not (isinstance(left, ir.Const) and isinstance(right, ir.Const)) or \
                elem(left.ty).kind not in "biu" or elem(right.ty).kind not in "biu":
            return None
        value = _fold_int(op, int(left.value), int(right.value))
        if value is None:
            return None
        ty = self.arith_type((left, right))
        lo, hi = INT_RANGE[ty]
        if lo <= value <= hi:
            if op == "rshift":
                return ir.Const(ty, self.src.loc(node), value)
            return None
        return self.const(value, node)

    def visit_UnaryOp(self, node):
        operand = node.operand
        if isinstance(node.op, ast.USub) and isinstance(operand, ast.Constant) and \
                type(operand.value) is int and operand.value in (2**31, 2**63):
            return self.const(-operand.value, node)   # -2**31, -2**63: the literal alone is
                                                      # too large for its type
        if isinstance(node.op, ast.USub) and _int_literal_value(operand) == 2**63:
            return self.const(-2**63, node)           # -2**63, -(1 << 63)
        e = self.expr(operand)
        if isinstance(e, VecValue):
            return self.vec_unary(node, e)
        loc = self.src.loc(node)
        if isinstance(node.op, ast.Not):
            return ir.Unary("bool", loc, "not", self.truthy(e))
        ty = self.plain_int if e.ty == "bool" else e.ty
        if isinstance(node.op, ast.UAdd):
            return self.conv(e, ty)
        if is_complex(ty):
            if isinstance(node.op, ast.Invert):
                self.src.error(node, "unsupported operand type for '~': complex",
                               "'~' works on int values", cls=GpuKernelTypeError)
            return self.complex_neg(e, node)
        if isinstance(node.op, ast.Invert):
            if is_float(e.ty):
                self.src.error(node, "unsupported operand type for '~': float",
                               "'~' works on int values", cls=GpuKernelTypeError)
            e = self.conv(e, ty)
            if isinstance(e, ir.Const):
                return ir.Const(ty, loc, _wrap(~e.value, ty))
            return ir.Unary(ty, loc, "invert", e)
        e = self.conv(e, ty)
        if isinstance(e, ir.Const):
            value = -e.value
            if not is_float(ty):
                if e.ty == "int64" and -2**63 <= value < 2**63:
                    return self.const(value, node)    # -(2**40), -(2**31): Python's value
                value = _wrap(value, ty)
            return ir.Const(ty, loc, value)
        return ir.Unary(ty, loc, "neg", e)

    def visit_Compare(self, node):
        for op in node.ops:
            if type(op) not in CMPOPS:
                self.src.error(node, f"the '{type(op).__name__}' comparison "
                               f"('is', 'in', ...) is not supported in kernels",
                               "compare numbers with == != < <= > >=")
        operands = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        if any(isinstance(e, VecValue) for e in operands):
            self.vec_compare(node)
        fast = self.abs_compare(node, operands, [CMPOPS[type(op)] for op in node.ops])
        if fast is not None:                        # abs(z) <= 2.0: no square root
            return fast
        if any(is_complex(e.ty) for e in operands):
            return self.complex_compare(node, operands, [CMPOPS[type(op)] for op in node.ops])
        ops, types = [], []
        for k, op in enumerate(node.ops):
            sym = CMPOPS[type(op)]
            pair = (operands[k], operands[k + 1])
            if pair[0].ty == pair[1].ty == "bool" and sym in ("==", "!="):
                ty = "bool"
            else:
                ty = self.arith_type(pair)
            ops.append(sym)
            types.append(ty)
        for k, e in enumerate(operands):
            operands[k] = self.compare_literal(e, types[max(k - 1, 0):k + 1])
        return ir.Compare("bool", self.src.loc(node), tuple(ops), tuple(operands), tuple(types))

    def compare_literal(self, e: ir.Expr, types) -> ir.Expr:
        """A literal compared with typed values: checked to fit their type (as in arithmetic:
        a located error, not a driver's rejection of ``u32(4000000000li)`` or
        ``f32(1e300lf)``) and written in it."""
        if not isinstance(e, ir.Const) or elem(e.ty).kind == "b":
            return e
        for ty in types:
            if elem(ty).kind in "iu" and elem(e.ty).kind in "iu" or ty == "float":
                self.conv(e, ty)                  # a located error when it does not fit
        if len(set(types)) == 1 and types[0] != e.ty and \
                (types[0] not in ("int", "float", "bool") or e.ty not in ("int", "bool")):
            return self.conv(e, types[0])
        return e

    def visit_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.expr(node.values[0])] + [self.lazy_expr(v) for v in node.values[1:]]
        ty = self.unify(values)
        result = self.conv(values[0], ty)
        for v in values[1:]:
            result = ir.BoolOp(ty, self.src.loc(node), op, result, self.conv(v, ty))
        return result

    def visit_IfExp(self, node):
        test = self.truthy(self.expr(node.test))
        body, orelse = self.lazy_expr(node.body), self.lazy_expr(node.orelse)
        if isinstance(body, StructValue) or isinstance(orelse, StructValue):
            return self.struct_choice(test, body, orelse, node)        # structs.py
        ty = self.unify((body, orelse))
        return ir.IfExp(ty, self.src.loc(node), test, self.conv(body, ty), self.conv(orelse, ty))

    # -- calls -----------------------------------------------------------------------------
    def visit_Call(self, node):
        draw = self.rng_call(node)                  # Random(seed, i), rng.random() (rng.py)
        if draw is not None:
            return draw
        if node.keywords and struct_of(self.scope.resolve(node.func)) is not None:
            return self.struct_call(self.scope.resolve(node.func), node)    # Particle(pos=...)
        if node.keywords:
            self.src.error(node.keywords[0], "keyword arguments are not supported in kernel "
                           "calls", "pass the arguments by position")
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.src.error(a, "*unpacking is not supported in kernels",
                               "pass arguments one by one")
        method = self.complex_method(node)          # z.conjugate()
        if method is not None:
            return method
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in self.scope.lists:
            self.src.error(node.func, f"list methods such as '.{node.func.attr}()' are not "
                           f"supported in kernels", "lists have a fixed length on the device; "
                           "write elements by index")
        obj = self.scope.resolve(node.func)
        text = ast.unparse(node.func)
        if obj is sync.Barrier:
            self.src.error(node, "Barrier(...) cannot be created inside a kernel",
                           "use Barrier.arrive_and_wait() (or __sync_threads()) for a workgroup "
                           "barrier", cls=GpuKernelTypeError)
        if isinstance(obj, DeviceFunction):
            return self.device_call(obj, node)
        vector = self.vec_call(obj, node) or self.struct_call(obj, node)
        if vector is not None:
            return vector
        callee = self.scope.callee(obj)
        if callee is None:
            self.unknown_call(node, obj, text)
        return CALLEE_KINDS[callee.kind](self, callee.name, node, text)


    def barrier_value(self, name, node, text):
        self.src.error(node, f"{text}() is a statement, not a value",
                       f"write '{text}()' on its own line")

    def shared_value(self, name, node, text):
        self.src.error(node, "shared(size) declares workgroup memory and must be the value of "
                       "an annotated declaration at the top of the kernel body",
                       "write 'tile: list[float] = shared(64)' before any other statement "
                       "that uses it, outside loops and branches")

    def unknown_call(self, node, obj, text):
        if isinstance(obj, MISSING) and isinstance(node.func, ast.Name):
            self.src.error(node.func, f"name '{text}' is not defined",
                           f"define '{text}' (a @Gpu.func device function, defined before the "
                           "first launch) or call one of int float bool abs min max len "
                           "round, math functions and atomic_*", cls=GpuUnresolvedName)
        if inspect.isfunction(obj):
            self.src.error(node.func, f"'{text}' is a plain Python function, which kernels "
                           "cannot call", f"decorate it with @Gpu.func (def "
                           f"{obj.__name__}(...) with annotated parameters and result) to call "
                           "it from kernels", cls=GpuKernelError)
        if type(obj).__name__ == "GpuKernel":
            self.src.error(node.func, f"'{text}' is a @Gpu kernel; kernels cannot call "
                           "kernels", "move the shared code into a @Gpu.func device "
                           "function and call that from both")
        if obj is None:
            self.src.error(node.func, f"'{text}' is not a function kernels can call",
                           "call int float bool abs min max len round, math functions, "
                           "atomic_* or the barrier forms")
        if isinstance(obj, MISSING):
            self.src.error(node.func, f"name '{text}' is not defined",
                           "kernels can call int float bool abs min max len round, math "
                           "functions, atomic_* and the barrier forms")
        precise = unsupported.call_hint(obj, text, MATH)
        if precise is not None:
            self.src.error(node.func, *precise)
        self.src.error(node.func, f"call to unsupported function '{text}' in a kernel",
                       unsupported.CALLABLE)

    def nargs(self, node, text, allowed):
        n = len(node.args)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            self.src.error(node, f"{text}() takes {want} argument(s) in a kernel, got {n}",
                           None, cls=GpuKernelTypeError)

    def py_call(self, name, node, text):
        row = PY_BUILTINS[name]
        if row.nargs:
            self.nargs(node, name, row.nargs)
        return PY_RULES[row.rule](self, name, row, node)

    def py_range(self, name, row, node):
        self.src.error(node, "range(...) can only be used as 'for k in range(...)'",
                       "write a for loop")

    def py_len(self, name, row, node):
        lst = self.list_of(node.args[0], "measured with len()")
        return self.vec_list_len(lst, 0, self.plain_int, self.src.loc(node))

    def py_minmax(self, name, row, node):
        if len(node.args) < 2:
            self.src.error(node, f"{name}() needs at least 2 arguments in a kernel",
                           f"write {name}(a, b, ...); iterate over lists with a loop",
                           cls=GpuKernelTypeError)
        args = [self.expr(a) for a in node.args]
        self.refuse_complex(node, name, args)
        ty = self.arith_type(args)
        loc = self.src.loc(node)
        result = self.conv(args[0], ty)
        for a in args[1:]:
            result = ir.Call(ty, loc, MINMAX[(name, ty)], (result, self.conv(a, ty)))
        return result

    def py_convert(self, name, row, node):
        result = row.result
        if result in ("int", "float"):              # int() and float(): the launch's widths
            result = self.scope.widths.concrete(result)
        elif result != "bool":                      # float32() ... uint32()
            result = ANNOTATION_NAMES[result]
        value = self.expr(node.args[0])
        if result != "bool":
            self.refuse_complex(node, "convert", (value,), name)
        if isinstance(value, ir.Const) and elem(result).kind in "iu" and \
                elem(value.ty).kind in "iu" and result != "int64":
            value = ir.Const(value.ty, value.loc, _wrap(int(value.value), result))
        value = self.conv(value, result)
        if name in ANNOTATION_NAMES and name not in ("int", "float", "bool") and \
                isinstance(value, ir.Const):
            # int32(1) is a typed value, not a Python scalar: uint32 - int32(1) is int64
            return ir.Cast(result, value.loc, value)
        return value

    def py_abs(self, name, row, node):
        arg = self.expr(node.args[0])
        if is_complex(arg.ty):
            return self.complex_abs(arg, node)
        ty = self.plain_int if arg.ty == "bool" else arg.ty
        return ir.Call(ty, self.src.loc(node), "abs", (self.conv(arg, ty),))

    def py_round(self, name, row, node):
        # round(x): Python rounds half to even and returns an int
        arg = self.expr(node.args[0])
        self.refuse_complex(node, "round", (arg,))
        if not is_float(arg.ty):
            return self.conv(arg, self.plain_int if arg.ty == "bool" else arg.ty)
        return ir.Call(self.plain_int, self.src.loc(node), "round", (arg,))

    def math_call(self, name, node, text):
        spec = MATH[name]
        self.nargs(node, text, spec.nargs)
        args = [self.expr(a) for a in node.args]
        loc = self.src.loc(node)
        self.refuse_complex(node, name, args, text)
        if spec.int_identity and not is_float(args[0].ty):
            return self.conv(args[0], self.plain_int if args[0].ty == "bool" else args[0].ty)
        ty = self.unify(args)
        ty = ty if is_float(ty) else self.int_float(ty)
        args = tuple(self.conv(a, ty) for a in args)
        if name == "log" and len(args) == 2:
            # log(x, b) is log(x) / log(b) with the language's division (correctly rounded, and
            # the division-by-zero rule for a base of 1: a plain WGSL '/' gave 0.0 on lavapipe)
            # ("log_base" is the log of the base: a literal one is kept from WGSL's constant
            # evaluation, which refuses a base <= 0)
            x, base = ir.Call(ty, loc, "log", args[:1]), ir.Call(ty, loc, "log_base", args[1:])
            return ir.Binary(ty, loc, "truediv", x, base)
        result = {"float": ty, "int": self.plain_int}.get(spec.result, spec.result)
        return ir.Call(result, loc, name, args)

#: PyFn.rule -> the ExprMixin method that types the call
PY_RULES = {"range": ExprMixin.py_range, "len": ExprMixin.py_len, "minmax": ExprMixin.py_minmax,
            "convert": ExprMixin.py_convert, "abs": ExprMixin.py_abs,
            "round": ExprMixin.py_round}

#: Callee.kind -> how a call of it is translated
CALLEE_KINDS = {"py": ExprMixin.py_call, "math": ExprMixin.math_call,
                "atomic": ExprMixin.atomic_call,
                "barrier": ExprMixin.barrier_value, "shared": ExprMixin.shared_value,
                "complex": ExprMixin.complex_call, "cmath": ExprMixin.cmath_call}
