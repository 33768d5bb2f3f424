"""Tables: which Python objects a kernel may call, their type rules, their WGSL spelling.

Functions are recognised by object identity (``math.sqrt`` however it was imported or
aliased), never by name. WGSL helper functions that give Python's meaning (floor division,
``%``, ``**``, NaN tests ...) live in ``HELPERS``; the emitter includes only those used.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from .. import indexes, intrinsics, sync, widths
from ..errors import GpuKernelTypeError
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
LOG_BASE = "(log({0}) / log({1}))"


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

#: (float type, int type) -> the helper converting with saturation (HELPERS: ct_i32_f ...)
FLOAT_TO_INT = {("float", "int"): "ct_i32_f", ("float", "uint32"): "ct_u32_f",
                ("float", "int64"): "ct_i64_f", ("float64", "int"): "ct_i32_d",
                ("float64", "uint32"): "ct_u32_d", ("float64", "int64"): "ct_i64_d"}

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
    for modname in ("cthreads.gpu", "cthreads.intrinsics"):
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
    "ct_mod_i": ((), """fn ct_mod_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    var r = ua - (ua / ub) * ub;
    if (((a < 0i) != (b < 0i)) && r != 0u) { r = ub - r; }
    return bitcast<i32>(select(r, 0u - r, b < 0i));
}"""),
    # Float division and remainders with Python's exact results: WGSL lets f32 division be off
    # by 2.5 ulp, and NVIDIA's driver is (27.0 / 1.0 came out 26.999998 in a 27 * y / y test),
    # which also made `%` (a - b * trunc(a / b)) off by a whole b. The quotient is corrected
    # with its exact residual; fmod's integer quotient is fixed with the residual's sign.
    # Where fma rounds once (GPU drivers: ct_fused_f32, a pipeline constant the runtime sets
    # per device, docs/language.md) the residual is one fma; where it may round twice (Vulkan
    # allows that, and lavapipe's does) it comes from Dekker's exact product (ct_residual_f),
    # or, on devices with shader-f64, the same helpers compute in float64 (F64_FORMS).
    # ct_zero() (emitted per kernel, codegen/__init__.py) is 0 at run time but unknown to the
    # driver's compiler, which folded fma(-(x / y), y, x) to 0 otherwise (NVIDIA).
    "ct_fused_f32": ((), "override ct_fused_f32: bool = true;"),
    # x, unknown to the driver's compiler: keeps it from re-associating the exact
    # transformations ((c - (c - a)) is not a) and from folding a division by a zero it sees
    "ct_hide_f": ((), """fn ct_hide_f(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ ct_zero());
}"""),
    # a * b - p exactly for p = fl(a * b), without fma (Veltkamp's split into 12-bit halves,
    # Dekker's product); |a|, |b| <= 2^115 (else NaN) and |a * b| >= 2^-100 (else inexact)
    "ct_mul_err_f": (("ct_hide_f",), """fn ct_mul_err_f(a: f32, b: f32, p: f32) -> f32 {
    let ca = ct_hide_f(4097.0f * a);
    let ah = ct_hide_f(ca - ct_hide_f(ca - a));
    let al = ct_hide_f(a - ah);
    let cb = ct_hide_f(4097.0f * b);
    let bh = ct_hide_f(cb - ct_hide_f(cb - b));
    let bl = ct_hide_f(b - bh);
    let e1 = ct_hide_f(ct_hide_f(ah * bh - p) + ct_hide_f(ah * bl));
    return ct_hide_f(e1 + ct_hide_f(al * bh)) + ct_hide_f(al * bl);
}"""),
    # n - a * b with one rounding, for a * b within a factor 2 of n (a quotient's residual)
    "ct_residual_f": (("ct_hide_f", "ct_mul_err_f"),
                """fn ct_residual_f(n: f32, a: f32, b: f32) -> f32 {
    let p = ct_hide_f(a * b);
    return ct_hide_f(n - p) - ct_mul_err_f(a, b, p);
}"""),
    # x / y for y == +-0 (IEEE: +-inf, NaN for 0 / 0 and NaN / 0), made from the bits: a driver
    # that sees the zero divisor folded x / 0.0 to 0.0 (lavapipe)
    "ct_div0_f": (("ct_isnan",), """fn ct_div0_f(x: f32, y: f32) -> f32 {
    if (x == 0.0f || ct_isnan(x)) { return bitcast<f32>(0x7fc00000u); }
    return bitcast<f32>(0x7f800000u | ((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u));
}"""),
    # The quotient without a single-rounding fma: the driver's (the divisor hidden), kept when
    # its exact residual shows it is the nearest float, else corrected when the candidate's own
    # exact residual is smaller (so a correction that rounds can never make a right quotient
    # wrong); tiny or huge operands keep the driver's quotient.
    "ct_div_exact_f": (("ct_hide_f", "ct_residual_f", "ct_isfinite"),
                """fn ct_div_exact_f(x: f32, y: f32) -> f32 {
    let q = ct_hide_f(x / ct_hide_f(y));
    if (!(abs(x) >= 0x1p-96f) || !(min(abs(q), abs(y)) >= 0x1p-100f)) { return q; }
    let r = ct_residual_f(x, q, y);
    // q is the nearest float when |x / y - q| is below half the gap to its neighbours: |r|
    // below |y| times half q's ulp (a quarter below a power of 2, where the lower gap halves)
    let bits = bitcast<u32>(q);
    let down = select(24u, 25u, (bits & 0x7fffffu) == 0u) << 23u;
    if (r == 0.0f || !ct_isfinite(r)
        || abs(r) < abs(y) * bitcast<f32>((bits & 0x7f800000u) - down)) { return q; }
    let c = ct_hide_f(q + ct_hide_f(r / y));
    if (c == q || !ct_isfinite(c)) { return q; }
    return select(q, c, abs(ct_residual_f(x, c, y)) < abs(r));
}"""),
    # an exact residual of zero keeps q (q + 0.0 would turn -0.0 / y into +0.0)
    "ct_div_f": (("ct_isfinite", "ct_fused_f32", "ct_div_exact_f"),
                """fn ct_div_f(x: f32, y: f32) -> f32 {
    if (!ct_fused_f32) { return ct_div_exact_f(x, y); }
    let q = bitcast<f32>(bitcast<u32>(x / y) ^ ct_zero());
    let r = fma(-q, y, x);
    let c = q + r / y;
    return select(q, c, r != 0.0f && ct_isfinite(r) && ct_isfinite(c));
}"""),
    # (fmod(a, b), trunc(a / b)), both exact, for finite a, finite nonzero b and
    # |trunc(a / b)| < 2^24: the quotient's truncation corrected with the sign and size of the
    # exact residual, which is then the remainder (with a's sign, as fmod's zero has)
    "ct_fmodq_f": (("ct_copysign", "ct_fused_f32", "ct_fmodq_exact_f"),
                """fn ct_fmodq_f(a: f32, b: f32) -> vec2<f32> {
    if (!ct_fused_f32) { return ct_fmodq_exact_f(a, b); }
    var q = trunc(a / b);
    let s = select(-1.0f, 1.0f, (a < 0.0f) == (b < 0.0f));
    let r = fma(-q, b, a);
    if (r != 0.0f && ((r < 0.0f) != (a < 0.0f))) {
        q = q - s;
    } else if (abs(r) >= abs(b)) {
        q = q + s;
    }
    return vec2<f32>(ct_copysign(fma(-q, b, a), a), q);
}"""),
    # the same without a single-rounding fma: tiny and huge divisors are scaled by a power of
    # 2 first (exact both ways) so that the residuals are exact
    "ct_fmodq_exact_f": (("ct_hide_f", "ct_residual_f", "ct_copysign"),
                """fn ct_fmodq_exact_f(a: f32, b: f32) -> vec2<f32> {
    var x = a;
    var y = b;
    var sc = 1.0f;
    if (abs(b) < 0x1p-90f) {
        x = a * 0x1p64f;
        y = b * 0x1p64f;
        sc = 0x1p-64f;
    } else if (abs(b) > 0x1p100f) {
        x = a * 0x1p-32f;
        y = b * 0x1p-32f;
        sc = 0x1p32f;
    }
    var q = trunc(ct_hide_f(x / ct_hide_f(y)));
    let s = select(-1.0f, 1.0f, (a < 0.0f) == (b < 0.0f));
    let r = ct_residual_f(x, q, y);
    if (r != 0.0f && ((r < 0.0f) != (a < 0.0f))) {
        q = q - s;
    } else if (abs(r) >= abs(y)) {
        q = q + s;
    }
    if (q == 0.0f) { return vec2<f32>(a, q); }
    return vec2<f32>(ct_copysign(ct_hide_f(ct_residual_f(x, q, y) * sc), a), q);
}"""),
    # quotients beyond 2^24: the driver's `%`, as precise as float32 allows (docs/language.md)
    "ct_fmod": (("ct_isfinite", "ct_isinf", "ct_isnan", "ct_fmodq_f"),
                """fn ct_fmod(a: f32, b: f32) -> f32 {
    if (!ct_isfinite(a) || b == 0.0f || ct_isnan(b)) { return bitcast<f32>(0x7fc00000u); }
    if (ct_isinf(b)) { return a; }
    if (!(abs(trunc(a / b)) < 16777216.0f)) { return a % b; }
    return ct_fmodq_f(a, b).x;
}"""),
    "ct_mod_f": (("ct_copysign", "ct_fmod"), """fn ct_mod_f(a: f32, b: f32) -> f32 {
    var r = ct_fmod(a, b);
    if (r == 0.0f) { return ct_copysign(0.0f, b); }
    if ((r < 0.0f) != (b < 0.0f)) { r = r + b; }
    return r;
}"""),
    # the exact truncated quotient, one less where the remainder's sign differs from b's;
    # quotients beyond 2^24, infinities and NaN as numpy (from fmod, rounded to an integer)
    "ct_floordiv_f": (("ct_copysign", "ct_fmod", "ct_div0_f", "ct_fmodq_f", "ct_isfinite",
                       "ct_isinf"), """fn ct_floordiv_f(a: f32, b: f32) -> f32 {
    if (b == 0.0f) { return ct_div0_f(a, b); }
    if (ct_isfinite(a) && !ct_isinf(b) && abs(trunc(a / b)) < 16777216.0f) {
        let rq = ct_fmodq_f(a, b);
        var k = rq.y;
        if (rq.x != 0.0f && ((rq.x < 0.0f) != (b < 0.0f))) { k = k - 1.0f; }
        if (k == 0.0f) { return ct_copysign(0.0f, a / b); }
        return k;
    }
    var m = ct_fmod(a, b);
    var d = (a - m) / b;
    if (!(m == 0.0f) && ((b < 0.0f) != (m < 0.0f))) { d = d - 1.0f; }
    if (d == 0.0f) { return ct_copysign(0.0f, a / b); }
    var q = floor(d);
    if (d - q > 0.5f) { q = q + 1.0f; }
    return q;
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
    # Python's (IEEE's) special cases first, as ct_pow_d: the driver's pow is only asked for
    # finite nonzero bases and finite exponents (its own special cases differ between drivers)
    "ct_pow_f": (("ct_isnan", "ct_isinf"), """fn ct_pow_f(a: f32, b: f32) -> f32 {
    if (b == 0.0f || a == 1.0f) { return 1.0f; }
    if (ct_isnan(a) || ct_isnan(b)) { return bitcast<f32>(0x7fc00000u); }
    if (ct_isinf(b)) {
        let m = abs(a);
        if (m == 1.0f) { return 1.0f; }
        if ((m > 1.0f) == (b > 0.0f)) { return bitcast<f32>(0x7f800000u); }
        return 0.0f;
    }
    let whole = trunc(b) == b;
    let odd = whole && trunc(b * 0.5f) != b * 0.5f;
    if (a == 0.0f || ct_isinf(a)) {
        let big = (a == 0.0f) == (b < 0.0f);
        let sign = select(0u, bitcast<u32>(a) & 0x80000000u, odd);
        return bitcast<f32>(select(0u, 0x7f800000u, big) | sign);
    }
    if (a < 0.0f) {
        if (!whole) { return bitcast<f32>(0x7fc00000u); }
        let m = pow(-a, b);
        return select(m, -m, odd);
    }
    return pow(a, b);
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
    # Float-to-int conversions that saturate at the int's limits (docs/language.md): WGSL
    # clamps to the largest float of the source type below the limit (2147483520 for f32),
    # so values at or past 2^31 (2^32, 2^63) take the limit explicitly; negative floats into
    # uint32 wrap as their int32 value would. The result is hidden from the driver's
    # compiler (ct_zero()), which folded f32(i32(x)) into trunc(x), giving -0.0 (lavapipe).
    "ct_i32_f": ((), """fn ct_i32_f(v: f32) -> i32 {
    return bitcast<i32>(bitcast<u32>(select(i32(v), 2147483647i, v >= 0x1p31f)) ^ ct_zero());
}"""),
    "ct_u32_f": ((), """fn ct_u32_f(v: f32) -> u32 {
    let u = select(select(u32(v), 4294967295u, v >= 0x1p32f), bitcast<u32>(i32(v)), v < 0.0f);
    return u ^ ct_zero();
}"""),
    "ct_i64_f": ((), """fn ct_i64_f(v: f32) -> i64 {
    let w = select(i64(v), 9223372036854775807li, v >= 0x1p63f);
    return bitcast<i64>(bitcast<u64>(w) ^ u64(ct_zero()));
}"""),
    "ct_i32_d": ((), """fn ct_i32_d(v: f64) -> i32 {
    return bitcast<i32>(bitcast<u32>(select(i32(v), 2147483647i, v >= 0x1p31lf)) ^ ct_zero());
}"""),
    "ct_u32_d": ((), """fn ct_u32_d(v: f64) -> u32 {
    let u = select(select(u32(v), 4294967295u, v >= 0x1p32lf), bitcast<u32>(i32(v)), v < 0.0lf);
    return u ^ ct_zero();
}"""),
    "ct_i64_d": ((), """fn ct_i64_d(v: f64) -> i64 {
    let w = select(i64(v), 9223372036854775807li, v >= 0x1p63lf);
    return bitcast<i64>(bitcast<u64>(w) ^ u64(ct_zero()));
}"""),
    # the value, unknown to the driver's compiler (ct_zero()): for literal-only expressions
    # (which WGSL would evaluate at compile time) and the operands of fold-prone shapes
    # (wgsl.fold_guard: x * 0.0, x - x, ...), which the drivers simplified as if NaN, inf and
    # -0.0 did not exist (lavapipe's abs(-0.0) gave -0.0)
    "ct_fid": ((), "fn ct_fid(v: f32) -> f32 "
                   "{ return bitcast<f32>(bitcast<u32>(v) ^ ct_zero()); }"),
    "ct_iid": ((), "fn ct_iid(v: i32) -> i32 { return v; }"),
}

HELPERS.update(WIDE_INT_HELPERS)

#: The fma-free float32 helpers computed in float64 instead, for devices with ``shader-f64``
#: whose fma rounds twice (CPU drivers, where float64 is as fast as float32): a float64
#: quotient of float32 values rounded to float32 is the correctly rounded float32 quotient
#: (53 >= 2 * 24 + 2 bits), and for |trunc(a / b)| < 2^24 the float64 ``a - q * b`` is exact
#: (q * b has at most 48 bits, and the remainder fits 24 bits of b's last place), as is
#: trunc of the float64 quotient (a / b is at least 2^-48 relative from an integer it is not).
#: ``device_form`` swaps these texts in for the ``HELPERS`` ones of the same name.
F64_FORMS = {
    "ct_div_exact_f": """fn ct_div_exact_f(x: f32, y: f32) -> f32 {
    return f32(f64(x) / f64(ct_hide_f(y)));
}""",
    "ct_fmodq_exact_f": """fn ct_fmodq_exact_f(a: f32, b: f32) -> vec2<f32> {
    let x = f64(a);
    let y = f64(ct_hide_f(b));
    let q = trunc(x / y);
    let r = f32(x - q * y);
    if (q == 0.0lf) { return vec2<f32>(a, 0.0f); }
    return vec2<f32>(ct_copysign(r, a), f32(q));
}""",
}


def device_form(wgsl: str, f64: bool) -> str:
    """The WGSL for a device: with ``f64`` (a device with ``shader-f64`` whose fma rounds
    twice), the ``F64_FORMS`` of the fma-free float32 helpers the text contains; else the
    text itself."""
    if not f64:
        return wgsl
    for name, text in F64_FORMS.items():
        wgsl = wgsl.replace(HELPERS[name][1], text)
    return wgsl


#: the helpers that declare a pipeline-overridable constant (WGSL ``override``), which the
#: runtime sets per device when it makes the pipeline: ``ct_fused_f32``, whether the device's
#: float32 fma rounds once (``backend.DeviceContext.fma_rounds_once``)
OVERRIDES = frozenset({"ct_fused_f32"})

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
