"""Tables: which Python objects a kernel may call, their type rules, their WGSL spelling.

Functions are recognised by object identity (``math.sqrt`` however it was imported or
aliased), never by name. WGSL helper functions that give Python's meaning (floor division,
``%``, ``**``, NaN tests ...) live in ``HELPERS``; the emitter includes only those used.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from ..lang import indexes, intrinsics, widths
from .. import sync
from ..errors import GpuKernelTypeError
from .float_ops import FLOAT_HELPERS
from .wide_ints import WIDE_INT_HELPERS


@dataclass(frozen=True)
class MathFn:
    nargs: tuple          # accepted argument counts
    result: str           # 'float' | 'int' | 'bool'
    template: str         # WGSL format string over float arguments {0}, {1}
    int_identity: bool = False   # with an int argument the result is the argument (floor ...)


MATH = {
    "sqrt": MathFn((1,), "float", "sqrt({0})"),
    "sin": MathFn((1,), "float", "sin({0})"),
    "cos": MathFn((1,), "float", "cos({0})"),
    "tan": MathFn((1,), "float", "tan({0})"),
    "asin": MathFn((1,), "float", "asin({0})"),
    "acos": MathFn((1,), "float", "acos({0})"),
    "atan": MathFn((1,), "float", "atan({0})"),
    "atan2": MathFn((2,), "float", "atan2({0}, {1})"),
    "sinh": MathFn((1,), "float", "sinh({0})"),
    "cosh": MathFn((1,), "float", "cosh({0})"),
    "tanh": MathFn((1,), "float", "tanh({0})"),
    "asinh": MathFn((1,), "float", "asinh({0})"),
    "acosh": MathFn((1,), "float", "acosh({0})"),
    "atanh": MathFn((1,), "float", "atanh({0})"),
    "exp": MathFn((1,), "float", "exp({0})"),
    "exp2": MathFn((1,), "float", "exp2({0})"),
    "log": MathFn((1, 2), "float", "log({0})"),
    "log2": MathFn((1,), "float", "log2({0})"),
    "log10": MathFn((1,), "float", "(log2({0}) * 0.30102999566398120f)"),
    "pow": MathFn((2,), "float", "ct_pow_f({0}, {1})"),
    "fabs": MathFn((1,), "float", "abs({0})"),
    "hypot": MathFn((2,), "float", "ct_hypot({0}, {1})"),
    "copysign": MathFn((2,), "float", "ct_copysign({0}, {1})"),
    "fmod": MathFn((2,), "float", "ct_fmod({0}, {1})"),
    "degrees": MathFn((1,), "float", "degrees({0})"),
    "radians": MathFn((1,), "float", "radians({0})"),
    "floor": MathFn((1,), "int", "ct_i32_f(floor({0}))", int_identity=True),
    "ceil": MathFn((1,), "int", "ct_i32_f(ceil({0}))", int_identity=True),
    "trunc": MathFn((1,), "int", "ct_i32_f(trunc({0}))", int_identity=True),
    "isnan": MathFn((1,), "bool", "ct_isnan({0})"),
    "isinf": MathFn((1,), "bool", "ct_isinf({0})"),
    "isfinite": MathFn((1,), "bool", "ct_isfinite({0})"),
}
LOG_BASE = "log({0})"     # the log of log(x, b)'s base (exprs.math_call divides)


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
MINMAX = {("min", "int"): "min_i", ("max", "int"): "max_i",
          ("min", "float"): "min_f", ("max", "float"): "max_f",
          ("min", "int64"): "min_i", ("max", "int64"): "max_i",
          ("min", "uint32"): "min_i", ("max", "uint32"): "max_i",
          ("min", "float64"): "min_f", ("max", "float64"): "max_f"}
#: functions whose Python result is an int: the float result's WGSL, converted by the emitter
TO_INT = {"floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})",
          "round": "round({0})"}

#: ``ir.Call.fn`` -> WGSL format string over the (already converted) arguments
CALLS = {name: fn.template for name, fn in MATH.items()}
CALLS.update({"log_base": LOG_BASE, "abs": "abs({0})", "round": "ct_i32_f(round({0}))",
              "min_i": "min({0}, {1})", "max_i": "max({0}, {1})",
              "min_f": "ct_min_f({0}, {1})", "max_f": "ct_max_f({0}, {1})"})

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


# ---------------------------------------------------------------------- WGSL helper code
HELPERS = {
    # Integer // and % work on magnitudes in u32: signed i32 `%` with a negative divisor gave
    # wrong results on NVIDIA's Vulkan driver (e.g. -60 % -59 == -60), and u32 division is
    # exact everywhere. Division by zero gives 0; INT_MIN // -1 wraps to INT_MIN.
    "ct_floordiv_i": ((), """fn ct_floordiv_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    let neg = (a < 0i) != (b < 0i);
    var q = ua / ub;
    if (neg && (ua - q * ub) != 0u) { q = q + 1u; }
    return bitcast<i32>(select(q, 0u - q, neg));
}"""),
    # int abs wraps as numpy's does (abs(-2**31) == -2**31), so it may be negative. A driver
    # may take an abs to be never negative and drop the sign tests that follow (NVIDIA's does:
    # `abs(x) % 5` of -2**31 gave 3, Python's 2, with WGSL's abs and with a plain
    # `(v ^ m) - m`, which it recognises): the mask takes a zero it cannot see (ct_zero)
    "ct_abs_i": ((), """fn ct_abs_i(v: i32) -> i32 {
    let m = (v >> 31u) | bitcast<i32>(ct_zero());
    return (v ^ m) - m;
}"""),
    "ct_abs_l": ((), """fn ct_abs_l(v: i64) -> i64 {
    let m = (v >> 63u) | i64(ct_zero());
    return (v ^ m) - m;
}"""),
    "ct_mod_i": ((), """fn ct_mod_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    var r = ua - (ua / ub) * ub;
    if (((a < 0i) != (b < 0i)) && r != 0u) { r = ub - r; }
    return bitcast<i32>(select(r, 0u - r, b < 0i));
}"""),
    "ct_pow_i": ((), """fn ct_pow_i(base: i32, e: i32) -> i32 {
    if (e < 0i) {
        if (base == 1i) { return 1i; }
        if (base == -1i) { return select(1i, -1i, (e & 1i) == 1i); }
        return 0i;
    }
    var r = 1i;
    var b = base;
    var k = e;
    loop {
        if (k == 0i) { break; }
        if ((k & 1i) == 1i) { r = r * b; }
        b = b * b;
        k = k >> 1u;
    }
    return r;
}"""),
    "ct_copysign": ((), """fn ct_copysign(a: f32, b: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u));
}"""),
    "ct_hypot": (("ct_isinf",), """fn ct_hypot(a: f32, b: f32) -> f32 {
    if (ct_isinf(a) || ct_isinf(b)) { return bitcast<f32>(0x7f800000u); }
    let x = abs(a);
    let y = abs(b);
    let m = max(x, y);
    if (m == 0.0f) { return 0.0f; }
    let p = x / m;
    let q = y / m;
    return m * sqrt(p * p + q * q);
}"""),
    "ct_isnan": ((), """fn ct_isnan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}"""),
    "ct_isinf": ((), """fn ct_isinf(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u;
}"""),
    "ct_isfinite": ((), """fn ct_isfinite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}"""),
    "ct_min_f": ((), """fn ct_min_f(a: f32, b: f32) -> f32 {
    return select(a, b, b < a);
}"""),
    "ct_max_f": ((), """fn ct_max_f(a: f32, b: f32) -> f32 {
    return select(a, b, b > a);
}"""),
    "ct_range_count": ((), """fn ct_range_count(start: i32, stop: i32, step: i32) -> u32 {
    if (step > 0i && start < stop) {
        return (bitcast<u32>(stop) - bitcast<u32>(start) - 1u) / bitcast<u32>(step) + 1u;
    }
    if (step < 0i && start > stop) {
        return (bitcast<u32>(start) - bitcast<u32>(stop) - 1u) / (0u - bitcast<u32>(step)) + 1u;
    }
    return 0u;
}"""),
    "ct_fid": ((), "fn ct_fid(v: f32) -> f32 { return v; }"),
    # the value, unknown to the driver's compiler (ct_zero()): the operands of fold-prone
    # shapes (wgsl.fold_guard: x * 0.0, x - x, ...) and of a literal abs(), which the drivers
    # simplified as if NaN, inf and -0.0 did not exist (lavapipe's abs(-0.0) gave -0.0)
    "ct_opaque_f": ((), "fn ct_opaque_f(v: f32) -> f32 "
                        "{ return bitcast<f32>(bitcast<u32>(v) ^ ct_zero()); }"),
    "ct_iid": ((), "fn ct_iid(v: i32) -> i32 { return v; }"),
    # a zero the shader compiler cannot see, set by the entry point (loop_entry.py)
    "ct_opq": ((), "var<private> ct_opq: u32;"),
}

HELPERS.update(FLOAT_HELPERS)
HELPERS.update(WIDE_INT_HELPERS)

#: ``ir.Call.fn`` -> the HELPERS its WGSL calls
CALL_HELPERS = {fn: tuple(name for name in HELPERS if name + "(" in template)
                for fn, template in CALLS.items()}

#: float64 calls WGSL has natively (the rest come from ``f64math``)
F64_NATIVE = {"sqrt": "sqrt({0})", "fabs": "abs({0})", "abs": "abs({0})"}


def _load_f64() -> dict:
    try:
        from .f64math import F64_CALLS, F64_HELPERS  # noqa: PLC0415
    except ImportError:
        return {}
    for name, row in F64_HELPERS.items():
        HELPERS.setdefault(name, row)
    return F64_CALLS


def helper_row(name: str) -> tuple:
    """``HELPERS[name]``, the float64 ones loaded on first use."""
    if name not in HELPERS:
        _load_f64()
    if name not in HELPERS:
        raise GpuKernelTypeError(f"the WGSL helper {name} is not available (float64 math "
                                 "that cthreads does not provide yet); compute in float32")
    return HELPERS[name]


def f64_call(fn: str, src=None, loc=None) -> tuple:
    """(WGSL template, helper names) of ``ir.Call.fn`` over float64 arguments."""
    if fn in F64_NATIVE:
        return F64_NATIVE[fn], ()
    F64_CALLS = _load_f64()
    if fn not in F64_CALLS:
        message = f"{fn}() is not available for float64 values yet"
        if src is not None and loc is not None:
            src.error(loc, message, "convert the argument with float32(...)",
                      cls=GpuKernelTypeError)
        raise GpuKernelTypeError(message)
    template = F64_CALLS[fn]
    return template, tuple(name for name in HELPERS if name + "(" in template)
