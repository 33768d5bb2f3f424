"""Tables: which Python objects a kernel may call, their type rules, their WGSL spelling.

Functions are recognised by object identity (``math.sqrt`` however it was imported or
aliased), never by name. Each callable's WGSL is one ``MathFn`` row (``CALLS``): its float32
form, its float64 form and whether the four-lane variant applies it lane by lane. The WGSL
helper functions that give Python's meaning (floor division, ``%``, ``**``, NaN tests, the
float64 library ...) are the ``.wgsl`` files of ``codegen/library``; the emitter includes only
those used.
"""

from __future__ import annotations

import cmath
import math
import sys
from dataclasses import dataclass

from ..lang import indexes, intrinsics, widths
from .. import sync
from ..errors import GpuKernelTypeError
from .types import ELEM_TYPES


@dataclass(frozen=True)
class Form:
    """A call's WGSL: a format string over the (already converted) arguments ``{0}``, ``{1}``,
    and the library helpers (``codegen/library``) it calls."""
    template: str
    helpers: tuple = ()


def _native(template: str) -> Form:
    return Form(template)


def _helper(name: str, nargs: int = 1) -> Form:
    """The call of library helper ``name`` on the arguments."""
    return Form(f"{name}({', '.join('{%d}' % k for k in range(nargs))})", (name,))


#: the element types whose four-lane variant applies a call lane by lane (vectorize.py)
F32_LANES = frozenset({"float"})
ALL_LANES = frozenset({"float", "float64"})


@dataclass(frozen=True)
class MathFn:
    """One callable of the kernel language (``ir.Call.fn``): its type rule and its WGSL for
    float32 and float64 arguments."""
    nargs: tuple          # accepted argument counts
    result: str           # 'float' | 'int' | 'bool'
    f32: Form | None      # the WGSL over float32 (and int) arguments; None: float64 only
    f64: Form | None      # the WGSL over float64 arguments (floor ... give the f64 value, the
    #                       emitter converts it); None: not available for float64
    lanewise: frozenset = frozenset()   # element types whose vec4 form is the same template
    int_identity: bool = False   # with an int argument the result is the argument (floor ...)

    def form(self, ty: str) -> Form | None:
        """The form for arguments of float type ``ty``."""
        return self.f64 if ty == "float64" else self.f32


def _d(name: str, nargs: int = 1) -> Form:
    return _helper(f"ct_{name}_d", nargs)


def _math(nargs, result, f32, f64, lanes=frozenset(), int_identity=False) -> MathFn:
    return MathFn(nargs, result, f32, f64, lanes, int_identity)


_ONE, _TWO = (1,), (2,)
MATH = {
    "sqrt": _math(_ONE, "float", _native("sqrt({0})"), _native("sqrt({0})"), ALL_LANES),
    "sin": _math(_ONE, "float", _native("sin({0})"), _d("sin"), F32_LANES),
    "cos": _math(_ONE, "float", _native("cos({0})"), _d("cos"), F32_LANES),
    "tan": _math(_ONE, "float", _native("tan({0})"), _d("tan"), F32_LANES),
    "asin": _math(_ONE, "float", _native("asin({0})"), _d("asin"), F32_LANES),
    "acos": _math(_ONE, "float", _native("acos({0})"), _d("acos"), F32_LANES),
    "atan": _math(_ONE, "float", _native("atan({0})"), _d("atan"), F32_LANES),
    "atan2": _math(_TWO, "float", _native("atan2({0}, {1})"), _d("atan2", 2), F32_LANES),
    "sinh": _math(_ONE, "float", _native("sinh({0})"), _d("sinh"), F32_LANES),
    "cosh": _math(_ONE, "float", _native("cosh({0})"), _d("cosh"), F32_LANES),
    "tanh": _math(_ONE, "float", _native("tanh({0})"), _d("tanh"), F32_LANES),
    "asinh": _math(_ONE, "float", _native("asinh({0})"), _d("asinh"), F32_LANES),
    "acosh": _math(_ONE, "float", _native("acosh({0})"), _d("acosh"), F32_LANES),
    "atanh": _math(_ONE, "float", _native("atanh({0})"), _d("atanh"), F32_LANES),
    "exp": _math(_ONE, "float", _native("exp({0})"), _d("exp"), F32_LANES),
    "exp2": _math(_ONE, "float", _native("exp2({0})"), _d("exp2"), F32_LANES),
    "log": _math((1, 2), "float", _native("log({0})"), _d("log"), F32_LANES),
    "log2": _math(_ONE, "float", _native("log2({0})"), _d("log2"), F32_LANES),
    "log10": _math(_ONE, "float", _native("(log2({0}) * 0.30102999566398120f)"), _d("log10"),
                   F32_LANES),
    "pow": _math(_TWO, "float", _helper("ct_pow_f", 2), _d("pow", 2)),
    "fabs": _math(_ONE, "float", _native("abs({0})"), _native("abs({0})"), ALL_LANES),
    "hypot": _math(_TWO, "float", _helper("ct_hypot", 2), _d("hypot", 2)),
    "copysign": _math(_TWO, "float", _helper("ct_copysign", 2), _d("copysign", 2)),
    "fmod": _math(_TWO, "float", _helper("ct_fmod", 2), _d("fmod", 2)),
    # Python's math.degrees / radians multiply by the doubles 180/pi and pi/180 rounded
    "degrees": _math(_ONE, "float", _native("degrees({0})"),
                     _native("({0} * 0x1.ca5dc1a63c1f8p+5lf)"), F32_LANES),
    "radians": _math(_ONE, "float", _native("radians({0})"),
                     _native("({0} * 0x1.1df46a2529d39p-6lf)"), F32_LANES),
    "floor": _math(_ONE, "int", Form("ct_i32_f(floor({0}))", ("ct_i32_f",)),
                   _native("floor({0})"), int_identity=True),
    "ceil": _math(_ONE, "int", Form("ct_i32_f(ceil({0}))", ("ct_i32_f",)),
                  _native("ceil({0})"), int_identity=True),
    "trunc": _math(_ONE, "int", Form("ct_i32_f(trunc({0}))", ("ct_i32_f",)),
                   _native("trunc({0})"), int_identity=True),
    "isnan": _math(_ONE, "bool", _helper("ct_isnan"), _d("isnan")),
    "isinf": _math(_ONE, "bool", _helper("ct_isinf"), _d("isinf")),
    "isfinite": _math(_ONE, "bool", _helper("ct_isfinite"), _d("isfinite")),
}
#: the other ``ir.Call.fn`` names: the two-argument log, Python's abs and round, min and max
#: (``MINMAX``), and float64 functions of the library that the math module names but kernels
#: do not call yet (tests/device/test_f64math.py measures them)
OTHER_CALLS = {
    # the log of log(x, b)'s base: exprs.math_call divides log(x) by it with the language's
    # division (a base the driver can see is kept from WGSL's constant evaluation: wgsl.py)
    "log_base": _math(_ONE, "float", _native("log({0})"), Form("ct_log_d({0})", ("ct_log_d",))),
    "abs": _math(_ONE, "float", _native("abs({0})"), _native("abs({0})"), ALL_LANES),
    "round": _math(_ONE, "int", Form("ct_i32_f(round({0}))", ("ct_i32_f",)),
                   _native("round({0})")),
    "min_i": _math(_TWO, "int", _native("min({0}, {1})"), None),
    "max_i": _math(_TWO, "int", _native("max({0}, {1})"), None),
    "min_f": _math(_TWO, "float", _helper("ct_min_f", 2), _d("min", 2)),
    "max_f": _math(_TWO, "float", _helper("ct_max_f", 2), _d("max", 2)),
    "expm1": _math(_ONE, "float", None, _d("expm1")),
    "log1p": _math(_ONE, "float", None, _d("log1p")),
}
#: ``ir.Call.fn`` -> its row
CALLS = {**MATH, **OTHER_CALLS}


@dataclass(frozen=True)
class PyFn:
    """A Python builtin kernels may call: how the translator types it (``exprs.PY_RULES``)."""
    rule: str             # 'convert' | 'abs' | 'round' | 'len' | 'minmax' | 'range'
    nargs: tuple = (1,)   # accepted argument counts (() : the rule checks)
    result: str = ""      # the target type of a conversion


PY_BUILTINS = {
    "int": PyFn("convert", result="int"),
    "float": PyFn("convert", result="float"),
    "bool": PyFn("convert", result="bool"),
    "float32": PyFn("convert", result="float32"),
    "float64": PyFn("convert", result="float64"),
    "int32": PyFn("convert", result="int32"),
    "int64": PyFn("convert", result="int64"),
    "uint32": PyFn("convert", result="uint32"),
    "abs": PyFn("abs"),
    "round": PyFn("round"),
    "len": PyFn("len"),
    "min": PyFn("minmax", ()),
    "max": PyFn("minmax", ()),
    "range": PyFn("range", ()),
}

#: ``ir.Call.fn`` of min/max by the operand type (the float64 ones: ``f64_call``)
MINMAX = {(fn, row.name): f"{fn}_{'f' if row.is_float else 'i'}" for row in ELEM_TYPES.values()
          if row.kind in "iuf" for fn in ("min", "max")}
#: functions whose Python result is an int: the float result's WGSL, converted by the emitter
TO_INT = {"floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})",
          "round": "round({0})"}

ATOMIC_OPS = {
    intrinsics.atomic_add: "add", intrinsics.atomic_sub: "sub",
    intrinsics.atomic_min: "min", intrinsics.atomic_max: "max",
    intrinsics.atomic_exchange: "exchange",
    intrinsics.atomic_compare_exchange: "compare_exchange",
}
ATOMIC_WGSL = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
               "exchange": "atomicExchange"}

BARRIER_OBJECTS = (sync.__sync_threads, sync.Barrier.arrive_and_wait)


@dataclass(frozen=True)
class Callee:
    """What a callable object is to a kernel: a row of one of the tables above."""
    kind: str             # 'math' | 'py' | 'atomic' | 'barrier' | 'shared'
    name: str = ""        # the MATH / PY_BUILTINS key, or the atomic operation


def function_table() -> dict:
    """Object id -> ``Callee`` for every object a kernel may call."""
    import builtins as py
    table = {}
    for name in MATH:
        if hasattr(math, name):
            table[id(getattr(math, name))] = Callee("math", name)
    for name in PY_BUILTINS:
        obj = getattr(py, name, None) or getattr(widths, name)
        table[id(obj)] = Callee("py", name)
    for obj, op in ATOMIC_OPS.items():
        table[id(obj)] = Callee("atomic", op)
    for obj in BARRIER_OBJECTS:
        table[id(obj)] = Callee("barrier")
    table[id(intrinsics.shared)] = Callee("shared")
    # complex numbers (codegen/complexes.py): complex(re, im) and the cmath functions
    table[id(py.complex)] = Callee("complex", "complex")
    for name in ("exp", "log", "sqrt", "phase"):
        table[id(getattr(cmath, name))] = Callee("cmath", name)
    # Our own re-exports (cthreads.gpu.sqrt, ...) if they are distinct objects.
    for modname in ("cthreads.gpu", "cthreads.lang.intrinsics"):
        mod = sys.modules.get(modname)
        for name in MATH:
            obj = getattr(mod, name, None) if mod is not None else None
            if callable(obj) and id(obj) not in table:
                table[id(obj)] = Callee("math", name)
    return table


def index_builtin_name(obj) -> str | None:
    for name, b in indexes.INDEX_BUILTINS.items():
        if obj is b:
            return name
    return None


# WGSL reserved words, keywords, and predeclared names we call; user names matching are renamed.
WGSL_RESERVED = frozenset("""
alias break case const const_assert continue continuing default diagnostic discard else enable
false fn for if let loop override requires return struct switch true var while NULL Self abstract
active alignas alignof as asm asm_fragment async attribute auto await become binding_array cast
catch class co_await co_return co_yield coherent column_major common compile compile_fragment
concept const_cast consteval constexpr constinit crate debugger decltype delete demote
demote_to_helper do dynamic_cast enum explicit export extends extern external fallthrough filter
final finally friend from fxgroup get goto groupshared highp impl implements import inline
instanceof interface layout lowp macro macro_rules match mediump meta mod module move mut mutable
namespace new nil noexcept noinline nointerpolation non_coherent noncoherent noperspective null
nullptr of operator package packoffset partition pass patch pixelfragment precise precision
premerge priv protected pub public readonly ref regardless register reinterpret_cast require
resource restrict self set shared sizeof smooth snorm static static_assert static_cast std
subroutine super target template this thread_local throw trait try type typedef typeid typename
typeof union unless unorm unsafe unsized use using varying virtual volatile wgsl where with
writeonly yield out in inout main array atomic ptr bool f16 f32 i32 u32 vec2 vec3 vec4 mat2x2
f64 i64 u64
mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3 mat4x4 sampler sampler_comparison function
private workgroup uniform storage read write read_write vec2i vec3i vec4i vec2u vec3u vec4u vec2f
vec3f vec4f abs acos acosh all any arrayLength asin asinh atan atanh atan2 atomicAdd atomicSub
atomicMin atomicMax atomicAnd atomicOr atomicXor atomicExchange atomicCompareExchangeWeak
atomicLoad atomicStore bitcast ceil clamp cos cosh countLeadingZeros countOneBits
countTrailingZeros cross degrees determinant distance dot exp exp2 extractBits faceForward
firstLeadingBit firstTrailingBit floor fma fract frexp insertBits inverseSqrt ldexp length log
log2 max min mix modf normalize pow quantizeToF16 radians reflect refract reverseBits round
saturate select sign sin sinh smoothstep sqrt step storageBarrier tan tanh transpose trunc
workgroupBarrier workgroupUniformLoad textureBarrier
""".split())

HIDDEN_PREFIX = "ct_"
RENAMED_PREFIX = "ct_v_"


def wgsl_ident(name: str) -> str:
    """A WGSL-safe identifier for a Python name, distinct from every hidden name we use."""
    plain = name.isascii() and (name.replace("_", "a").isalnum()) and not name[0].isdigit()
    if (plain and name not in WGSL_RESERVED and not name.startswith(HIDDEN_PREFIX)
            and not name.startswith("__") and name != "_"):
        return name
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        else:
            out.append(f"_u{ord(ch):x}_")
    return RENAMED_PREFIX + "".join(out)


def f64_call(fn: str, src=None, loc=None) -> Form:
    """The WGSL of ``ir.Call.fn`` over float64 arguments; a located error when the float64
    library has none."""
    row = CALLS.get(fn)
    if row is None or row.f64 is None:
        message = f"{fn}() is not available for float64 values yet"
        if src is not None and loc is not None:
            src.error(loc, message, "convert the argument with float32(...)",
                      cls=GpuKernelTypeError)
        raise GpuKernelTypeError(message)
    return row.f64
