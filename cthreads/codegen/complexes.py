"""Complex numbers in kernels: ``complex`` values, ``1j``, ``complex(re, im)``, arithmetic,
``abs``, ``.real``, ``.imag``, ``.conjugate()``, ``==`` / ``!=`` and ``cmath.exp/sqrt/log/phase``.

A complex value is a WGSL ``vec2`` of its float type, (real, imag): ``complex`` (complex64,
``vec2<f32>``) in float32 launches, ``complex128`` (``vec2<f64>``) where plain floats are
float64, which is numpy's memory layout of complex64 / complex128 arrays exactly (a
``list[complex]`` binds the caller's array as it is). ``+``, ``-`` and unary ``-`` are WGSL's
vector operations; every other operation is an ``ir.Call`` of one of the ``COMPLEX_CALLS``
rows, whose forms call the helpers of ``library/complex.wgsl`` (division by Smith's method,
``abs`` by a guarded sqrt of the squares, else the scaled hypot). A real operand meeting a complex one is converted to it
(imaginary part 0.0), as Python and numpy convert.

``ComplexMixin`` is a mixin of ``frontend.Translator`` (through ``exprs.ExprMixin``): the
typing of complex expressions. ``cast`` gives the WGSL of conversions to and from complex
values for ``wgsl.py``.
"""

from __future__ import annotations

import ast
import math
import struct
from fractions import Fraction

from ..errors import GpuKernelTypeError
from . import ir
from .builtins import Form, MathFn
from .types import elem

#: complex type -> the float type of its parts
PART = {"complex": "float", "complex128": "float64"}
#: float type -> the complex type of that width
OF_PART = {"float": "complex", "float64": "complex128"}


def is_complex(ty: str) -> bool:
    return ty in PART


def _row(nargs, result, f32: str, f64: str, helpers32=(), helpers64=()) -> MathFn:
    return MathFn(nargs, result, Form(f32, tuple(helpers32)), Form(f64, tuple(helpers64)))


def _helpers(name: str, nargs: int = 1, result: str = "complex") -> MathFn:
    args = ", ".join("{%d}" % k for k in range(nargs))
    return _row((nargs,), result, f"ct_{name}_f({args})", f"ct_{name}_d({args})",
                (f"ct_{name}_f",), (f"ct_{name}_d",))


#: ``ir.Call.fn`` -> its row (the float64 form is used for complex128 first arguments)
COMPLEX_CALLS = {
    "c_make": _row((2,), "complex", "vec2<f32>({0}, {1})", "vec2<f64>({0}, {1})"),
    "c_real": _row((1,), "float", "{0}.x", "{0}.x"),
    "c_imag": _row((1,), "float", "{0}.y", "{0}.y"),
    "c_abs": _row((1,), "float", "ct_cabs_f({0})", "ct_cabs_d({0})", ("ct_cabs_f",),
                  ("ct_cabs_d",)),
    "c_norm": _row((1,), "float", "ct_cnorm_f({0})", "ct_cnorm_d({0})", ("ct_cnorm_f",),
                   ("ct_cnorm_d",)),
    "c_phase": _row((1,), "float", "ct_catan2_f({0}.y, {0}.x)", "ct_atan2_d({0}.y, {0}.x)",
                    ("ct_catan2_f",), ("ct_atan2_d",)),
    "c_eq": _row((2,), "bool", "all({0} == {1})", "all({0} == {1})"),
    "c_ne": _row((2,), "bool", "!all({0} == {1})", "!all({0} == {1})"),
    "c_conj": _helpers("cconj"),
    "c_mul": _helpers("cmul", 2),
    "c_sq": _helpers("csq"),
    "c_div": _helpers("cdiv", 2),
    "c_exp": _helpers("cexp"),
    "c_log": _helpers("clog"),
    "c_sqrt": _helpers("csqrt"),
}

#: the cmath functions kernels call -> their ``ir.Call.fn``
CMATH = {"exp": "c_exp", "log": "c_log", "sqrt": "c_sqrt", "phase": "c_phase"}


def form(fn: str, arg_ty: str) -> Form:
    """The WGSL form of complex call ``fn`` whose first argument has type ``arg_ty``."""
    row = COMPLEX_CALLS[fn]
    return row.f64 if arg_ty in ("complex128", "float64") else row.f32


#: complex type -> the helper hiding a complex value from the driver's compiler
OPAQUE = {"complex": "ct_copaque_f", "complex128": "ct_copaque_d"}
#: float type -> the helper hiding a float (the zero imaginary part of a converted real)
_OPAQUE_PART = {"float": "ct_opaque_f", "float64": "ct_opaque_d"}


def cast(text: str, src: str, dst: str, helper) -> str | None:
    """The WGSL of a conversion involving a complex type, or None when neither is complex.
    A real becomes (x, 0.0) with a zero the driver cannot see (``helper`` registers the
    helper): it would fold ``y * 0.0`` to 0.0 where Python's ``(inf + 1j) * 2.0`` has a NaN."""
    if dst in PART:
        if src in PART:
            return f"{elem(dst).wgsl}({text})"
        part = PART[dst]
        value = text if src == part else f"{elem(part).wgsl}({text})"
        if src == "bool":
            zero = elem(part).zero
            value = f"select({zero}, {zero.replace('0.0', '1.0')}, {text})"
        helper(_OPAQUE_PART[part])
        return f"{elem(dst).wgsl}({value}, {_OPAQUE_PART[part]}({elem(part).zero}))"
    if src in PART and dst == "bool":
        return f"any({text} != {elem(src).zero})"
    return None


class ComplexMixin:
    """Typing of complex expressions (a mixin of the translator; see the module docstring)."""

    @property
    def plain_complex(self) -> str:
        return OF_PART[self.plain_float]

    def complex_of(self, values) -> str:
        """The complex type of an operation among ``values`` of which one is complex."""
        ty = self.unify(values)
        if is_complex(ty):
            return ty
        if ty == "float64" or any(v.ty in ("complex128",) and not isinstance(v, ir.Const)
                                  for v in values):
            return "complex128"
        return self.plain_complex

    def complex_const(self, value: complex, node) -> ir.Const:
        return ir.Const(self.plain_complex, self.src.loc(node), complex(value))

    def complex_binary(self, op: str, left: ir.Expr, right: ir.Expr, node) -> ir.Expr:
        loc = self.src.loc(node)
        if op not in ("add", "sub", "mul", "truediv", "pow"):
            sym = {"floordiv": "//", "mod": "%", "bitand": "&", "bitor": "|", "bitxor": "^",
                   "lshift": "<<", "rshift": ">>"}.get(op, op)
            self.src.error(node, f"unsupported operand type for '{sym}': complex",
                           "complex numbers take + - * / (Python has no // % or bitwise "
                           "operators on complex values)", cls=GpuKernelTypeError)
        ty = self.complex_of((left, right))
        a, b = self.conv(left, ty), self.conv(right, ty)
        if op in ("add", "sub"):
            return ir.Binary(ty, loc, op, a, b)
        if op == "pow":
            if isinstance(right, ir.Const) and not is_complex(right.ty) and \
                    float(right.value) == 2.0:
                return ir.Call(ty, loc, "c_sq", (a,))
            self.src.error(node, "'**' of complex values is not supported in kernels (only "
                           "z ** 2)", "write z * z, or cmath.exp(w * cmath.log(z))",
                           cls=GpuKernelTypeError)
        if op == "mul" and isinstance(a, ir.Var) and isinstance(b, ir.Var) and a.ident == b.ident:
            return ir.Call(ty, loc, "c_sq", (a,))        # z * z: the same value, fewer operations
        return ir.Call(ty, loc, "c_mul" if op == "mul" else "c_div", (a, b))

    def complex_neg(self, e: ir.Expr, node) -> ir.Expr:
        if isinstance(e, ir.Const):
            return ir.Const(e.ty, e.loc, -e.value)
        return ir.Unary(e.ty, self.src.loc(node), "neg", e)

    def complex_compare(self, node, operands, ops) -> ir.Expr:
        if len(ops) != 1 or ops[0] not in ("==", "!="):
            sym = next((o for o in ops if o not in ("==", "!=")), ops[0])
            if sym in ("==", "!="):
                self.src.error(node, "chained comparisons of complex values are not supported "
                               "in kernels", "compare two values at a time: a == b and b == c",
                               cls=GpuKernelTypeError)
            self.src.error(node, f"complex numbers have no order: '{sym}' is not defined for "
                           "complex values", "compare abs(z) (or z.real) instead, e.g. "
                           "abs(z) < 2.0", cls=GpuKernelTypeError)
        ty = self.complex_of(operands)
        a, b = (self.conv(x, ty) for x in operands)
        return ir.Call("bool", self.src.loc(node), "c_eq" if ops[0] == "==" else "c_ne", (a, b))

    def abs_compare(self, node, operands, ops) -> ir.Expr | None:
        """``abs(z) <= K`` (or ``<``, ``>``, ``>=``; ``K`` on either side) for a constant
        ``K >= 0`` whose square the float type holds exactly: the squared magnitude compared
        with ``K * K``, no square root (Mandelbrot's escape test at the cost of the re/im-pair
        form). The two can differ only for ``|z|`` within an ulp or so of ``K``, where the
        rounding of the hypot itself decides (docs/language.md, "Complex numbers"). None when
        the comparison is not of that shape."""
        if len(ops) != 1 or ops[0] not in ("<", "<=", ">", ">="):
            return None
        left, right = operands
        op = ops[0]
        if isinstance(right, ir.Call) and right.fn == "c_abs" and isinstance(left, ir.Const):
            left, right = right, left
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if not (isinstance(left, ir.Call) and left.fn == "c_abs" and
                isinstance(right, ir.Const) and elem(right.ty).kind in "biuf"):
            return None
        part = left.ty
        k = float(right.value)
        if part == "float":
            k = struct.unpack("<f", struct.pack("<f", k))[0] if abs(k) < 1e38 else math.inf
        if not (math.isfinite(k) and k >= 0.0) or Fraction(k) ** 2 != Fraction(k * k):
            return None
        if part == "float" and struct.unpack("<f", struct.pack("<f", k * k))[0] != k * k:
            return None
        loc = self.src.loc(node)
        norm = ir.Call(part, loc, "c_norm", left.args)
        return ir.Compare("bool", loc, (op,), (norm, ir.Const(part, loc, k * k)), (part,))

    def refuse_complex(self, node, what: str, values, text: str = "") -> None:
        """A located error when one of ``values`` (ir.Expr) is complex where ``what``
        (a ``_REFUSED`` key, or a math function's name) takes real numbers only."""
        if any(is_complex(v.ty) for v in values):
            message, hint = _REFUSED.get(what) or _REFUSED["math"]
            fn = "exp sqrt log".split()
            if what not in _REFUSED:
                hint = _MATH_HINTS[what in fn]
            text = text or what
            self.src.error(node, message.format(what=what, text=text),
                           hint.format(what=what, text=text), cls=GpuKernelTypeError)

    def complex_attribute(self, node) -> ir.Expr | None:
        """``z.real`` / ``z.imag`` of a kernel value (None: not such an attribute)."""
        if node.attr not in ("real", "imag") or self.scope.resolve(node.value) is not None:
            return None
        value = self.expr(node.value)
        loc = self.src.loc(node)
        if is_complex(value.ty):
            return ir.Call(PART[value.ty], loc, "c_real" if node.attr == "real" else "c_imag",
                           (value,))
        if elem(value.ty).kind in "biuf":          # Python's numbers have them too
            ty = self.plain_int if value.ty == "bool" else value.ty
            return self.conv(value, ty) if node.attr == "real" else \
                ir.Const(ty, loc, 0)
        return None

    def complex_method(self, node) -> ir.Expr | None:
        """``z.conjugate()`` of a kernel value (None: not such a call)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr != "conjugate" or \
                self.scope.resolve(func.value) is not None:
            return None
        if node.args:
            self.src.error(node, "conjugate() takes no arguments", "write z.conjugate()",
                           cls=GpuKernelTypeError)
        value = self.expr(func.value)
        if not is_complex(value.ty):
            ty = self.plain_int if value.ty == "bool" else value.ty
            return self.conv(value, ty)
        return ir.Call(value.ty, self.src.loc(node), "c_conj", (value,))

    def complex_call(self, name, node, text):
        """``complex(re[, im])``."""
        self.nargs(node, text, (0, 1, 2))
        args = [self.expr(a) for a in node.args]
        loc = self.src.loc(node)
        if len(args) == 1 and is_complex(args[0].ty):
            return args[0]
        for a, n in zip(args, node.args):
            if is_complex(a.ty):
                self.src.error(n, "complex(re, im) takes real parts here",
                               "write complex(z.real, z.imag) or z + w * 1j",
                               cls=GpuKernelTypeError)
        ty = self.complex_of(args) if args else self.plain_complex
        part = PART[ty]
        parts = [self.conv(a, part) for a in args]
        while len(parts) < 2:
            parts.append(ir.Const(part, loc, 0.0))
        if all(isinstance(p, ir.Const) for p in parts):
            return ir.Const(ty, loc, complex(parts[0].value, parts[1].value))
        return ir.Call(ty, loc, "c_make", tuple(parts))

    def cmath_call(self, name, node, text):
        self.nargs(node, text, (1,))
        arg = self.expr(node.args[0])
        ty = arg.ty if is_complex(arg.ty) else self.complex_of((arg,))
        arg = self.conv(arg, ty)
        result = PART[ty] if name == "phase" else ty
        return ir.Call(result, self.src.loc(node), CMATH[name], (arg,))

    def complex_abs(self, arg: ir.Expr, node) -> ir.Expr:
        return ir.Call(PART[arg.ty], self.src.loc(node), "c_abs", (arg,))


_ORDER = "compare abs(z) (or z.real): {what}(abs(a), abs(b))"
#: what -> (message, hint) of ``refuse_complex``
_REFUSED = {
    "range": ("range() arguments must be int, got a complex expression",
              "count with an int, e.g. int(abs(z))"),
    "convert": ("{text}() of a complex value is not defined", "take a real part first: "
                "{text}(z.real), {text}(abs(z))"),
    "round": ("round() of a complex value is not defined", "round a real part: round(z.real)"),
    "min": ("complex numbers have no order: min() is not defined for complex values", _ORDER),
    "max": ("complex numbers have no order: max() is not defined for complex values", _ORDER),
    "math": ("{text}() takes real numbers, got a complex value", ""),
}
_MATH_HINTS = {True: "use cmath.{what}(z) for complex values (kernels have cmath.exp, cmath.sqrt, "
                     "cmath.log and cmath.phase)",
               False: "apply it to z.real or z.imag, or abs(z)"}


def complex_literal(value, ty: str, literal) -> str:
    """The WGSL of a complex constant (``literal`` writes each float part)."""
    part = PART[ty]
    value = complex(value)
    return f"{elem(ty).wgsl}({literal(value.real, part)}, {literal(value.imag, part)})"


__all__ = ["CMATH", "COMPLEX_CALLS", "ComplexMixin", "OF_PART", "OPAQUE", "PART", "cast",
           "form", "complex_literal", "is_complex"]
