"""float64 math in WGSL: Python's ``math`` functions and operators for f64 values.

Vulkan's standard instruction set has 64-bit ``sqrt``, ``floor``, ``ceil``, ``trunc``, ``round``,
``fma``, ``abs``, ``min``, ``max`` but no 64-bit ``sin``, ``exp``, ``log``, ``pow``, ``atan`` ...
(naga accepts WGSL's ``exp(x)`` on an f64 and lavapipe then returns garbage: never emit those).
This module spells them out as WGSL functions built from exact operations only (no float32
step anywhere):

* ``F64_HELPERS``: helper name -> (names of the helpers its text calls, WGSL text), the format
  of ``builtins.HELPERS``. Every function is ``ct_<what>_d``.
* ``F64_CALLS``: ``ir.Call.fn`` name -> WGSL format string over f64 arguments ``{0}``, ``{1}``.
  ``floor``/``ceil``/``trunc``/``round`` give the f64 value; the emitter converts it to the int.
* ``F64_OPS``: Python operator -> helper (``/``, ``//``, ``%``, ``**``).

The helpers use ``u64`` bit patterns (the device needs ``shader-int64`` as well as
``shader-f64``), and ``ct_hide_d`` (under nearly all of them) calls ``ct_zero()``, the zero
each kernel defines from its uniform block. Methods, measured accuracy and the differences from
Python are in docs/float64.md. No loops except in ``ct_fmod_d`` (``%``, ``//`` and ``fmod``)
for quotients beyond 2**50: at most 42 passes.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial
from string import Template


def _lit(value) -> str:
    """The exact WGSL f64 literal of a Python float (or the nearest double of a Fraction)."""
    return float(value).hex() + "lf"


def _horner(var: str, coefs) -> str:
    """``c0 + var*(c1 + var*(c2 + ...))`` as nested fma calls."""
    expr = _lit(coefs[-1])
    for c in reversed(coefs[:-1]):
        expr = f"fma({var}, {expr}, {_lit(c)})"
    return expr


# Constants (computed once with exact integer arithmetic; hex so the literals are exact).
_C = {
    "INF": "bitcast<f64>(0x7ff0000000000000lu)",
    "NAN": "bitcast<f64>(0x7ff8000000000000lu)",
    # ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 significant bits (k * LN2_HI exact for |k| < 2^21)
    "LN2_HI": "0x1.62e42ff000000p-1lf", "LN2_LO": "-0x1.718432a1b0e26p-35lf",
    "LN2": "0x1.62e42fefa39efp-1lf", "LN2_L": "0x1.abc9e3b39803fp-56lf",
    "LOG2E": "0x1.71547652b82fep+0lf", "LOG2E_L": "0x1.777d0ffda0d24p-56lf",
    "LOG10E": "0x1.bcb7b1526e50ep-2lf", "LOG10E_L": "0x1.95355baaafad3p-57lf",
    # log10(2) = L10_2_HI + L10_2_LO, the high part with 32 significant bits
    "L10_2_HI": "0x1.3441350a00000p-2lf", "L10_2_LO": "-0x1.0c0219dc1da99p-39lf",
    # pi/2 = PIO2_1 (33 bits) + PIO2_2 + PIO2_3
    "PIO2_1": "0x1.921fb54400000p+0lf", "PIO2_2": "0x1.0b4611a626331p-34lf",
    "PIO2_3": "0x1.1701b839a2520p-88lf",
    "PIO2": "0x1.921fb54442d18p+0lf", "PIO2_L": "0x1.1a62633145c07p-54lf",
    "PI": "0x1.921fb54442d18p+1lf", "PI_L": "0x1.1a62633145c07p-53lf",
    "PIO4": "0x1.921fb54442d18p-1lf", "PIO4_L": "0x1.1a62633145c07p-55lf",
    "TWO_OPI": "0x1.45f306dc9c883p-1lf",
    "TWO3": "0x1.5555555555555p-1lf", "TWO3_L": "0x1.5555555555555p-55lf",
    "ATAN_HALF": "0x1.dac670561bb4fp-2lf", "ATAN_HALF_L": "0x1.a2b7f222f65e2p-56lf",
    "ATAN_3HALF": "0x1.f730bd281f69bp-1lf", "ATAN_3HALF_L": "0x1.007887af0cbbdp-56lf",
    # Python's math.degrees / radians multiply by these doubles (180/pi and pi/180 rounded)
    "DEG": "0x1.ca5dc1a63c1f8p+5lf", "RAD": "0x1.1df46a2529d39p-6lf",
    # e^r - 1 = r + r^2 * P(r), |r| <= ln2/2: Taylor terms 1/2! .. 1/14!
    "EXPM1_P": _horner("r", [Fraction(1, factorial(n)) for n in range(2, 15)]),
    # 2 atanh(s) = 2s + 2s^3/3 + s^5 * Q(s^2), s^2 <= 0.0295: 2/5, 2/7, ... 2/27
    "LOG_Q": _horner("z", [Fraction(2, 2 * k + 1) for k in range(2, 14)]),
    # sin r = r + r^3 * S(r^2), |r| <= pi/4: -1/3!, 1/5!, ... -1/19!
    "SIN_S": _horner("z", [Fraction((-1) ** k, factorial(2 * k + 1)) for k in range(1, 10)]),
    # cos r = 1 - r^2/2 + r^4 * C(r^2): 1/4!, -1/6!, ... 1/20!
    "COS_C": _horner("z", [Fraction((-1) ** k, factorial(2 * k)) for k in range(2, 11)]),
    # atan t = t + t^3 * A(t^2), |t| <= 0.4375: -1/3, 1/5, ... 1/45
    "ATAN_A": _horner("z", [Fraction((-1) ** k, 2 * k + 1) for k in range(1, 23)]),
    # asin s = s + s^3 * A(s^2), |s| <= 1/2: (2n)! / (4^n n!^2 (2n + 1)), n = 1 .. 26
    "ASIN_A": _horner("z", [Fraction(factorial(2 * n), 4 ** n * factorial(n) ** 2 * (2 * n + 1))
                            for n in range(1, 27)]),
    # sinh r = r + r^3 * SH(r^2), |r| < 1: 1/3!, ... 1/21!
    "SINH_S": _horner("z", [Fraction(1, factorial(2 * k + 1)) for k in range(1, 11)]),
    # cosh r = 1 + r^2 * CH(r^2), |r| < 1: 1/2!, ... 1/22!
    "COSH_C": _horner("z", [Fraction(1, factorial(2 * k)) for k in range(1, 12)]),
}

#: bits of 2/pi, 32 per word, after two zero words (the window of ct_rem_pio2_big_d starts
#: at most 64 bits before the binary point) and with two zero words after
_TWO_OVER_PI = """0x00000000u, 0x00000000u,
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
    0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
    0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
    0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du, 0xa9e39161u, 0x5ee61b08u,
    0x00000000u, 0x00000000u"""


def _product_steps() -> str:
    """The unrolled product of the 192-bit window (six words c0..c5, c5 least significant)
    with the 53-bit significand (halves ml, mh): words p0..p5 of the result, least first."""
    lines = ["    var acc = 0lu;", "    var nxt = 0lu;"]
    for k in range(6):
        c = f"c{5 - k}"
        lines += [f"    let a{k} = {c} * ml;",
                  f"    let b{k} = {c} * mh;",
                  f"    acc = acc + (a{k} & 0xfffffffflu);",
                  f"    let p{k} = acc & 0xfffffffflu;",
                  f"    acc = (acc >> 32u) + nxt + (a{k} >> 32u) + (b{k} & 0xfffffffflu);",
                  f"    nxt = b{k} >> 32u;"]
    return "\n".join(lines)


def _window_words() -> str:
    lines = []
    for k in range(6):
        lines.append(f"    let c{k} = u64(select((T[wi + {k}u] << sh) | "
                     f"(T[wi + {k + 1}u] >> (32u - sh)), T[wi + {k}u], sh == 0u));")
    return "\n".join(lines)


def _pow_int_steps() -> str:
    """Unrolled binary powering for integral exponents up to 64, tracking exactness."""
    lines = []
    for step in range(7):
        lines += ["    if ((k & 1u) == 1u) {",
                  "        let p = ct_hide_d(acc * b);",
                  "        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;",
                  "        acc = p;",
                  "    }",
                  "    k = k >> 1u;"]
        if step < 6:
            lines += ["    if (k != 0u) {",
                      "        let p = ct_hide_d(b * b);",
                      "        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;",
                      "        b = p;",
                      "    }"]
    return "\n".join(lines)


#: helper -> its WGSL, with $NAME placeholders for the constants (the helpers a text calls
#: are found in it: ``F64_HELPERS``)
_RAW: dict[str, str] = {
    # -- bits -------------------------------------------------------------------------------
    "ct_isnan_d": """fn ct_isnan_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu;
}""",
    "ct_isinf_d": """fn ct_isinf_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu;
}""",
    "ct_isfinite_d": """fn ct_isfinite_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ff0000000000000lu) != 0x7ff0000000000000lu;
}""",
    "ct_copysign_d": """fn ct_copysign_d(a: f64, b: f64) -> f64 {
    return bitcast<f64>((bitcast<u64>(a) & 0x7ffffffffffffffflu)
                        | (bitcast<u64>(b) & 0x8000000000000000lu));
}""",
    "ct_signbit_d": """fn ct_signbit_d(v: f64) -> bool {
    return (bitcast<u64>(v) >> 63u) == 1lu;
}""",
    # Exact products without fma: Vulkan lets fma round twice (lavapipe's f64 fma does), so
    # a * b - fl(a * b) comes from Veltkamp's split into 26-bit halves (Dekker's product)
    "ct_split_d": """fn ct_split_d(a: f64) -> vec2<f64> {
    let c = ct_hide_d(134217729.0lf * a);
    let hi = ct_hide_d(c - ct_hide_d(c - a));
    return vec2<f64>(hi, a - hi);
}""",
    # a * b - p exactly, for p = fl(a * b) (large factors and products are scaled first so
    # that the split cannot overflow; an underflowing product loses the exactness)
    "ct_mul_err_d": """fn ct_mul_err_d(a: f64, b: f64, p: f64) -> f64 {
    var a1 = a;
    var b1 = b;
    var p1 = p;
    var sc = 1.0lf;
    if (abs(a1) > 0x1p995lf) {
        a1 = a1 * 0x1p-28lf;
        p1 = p1 * 0x1p-28lf;
        sc = 0x1p28lf;
    }
    if (abs(b1) > 0x1p995lf) {
        b1 = b1 * 0x1p-28lf;
        p1 = p1 * 0x1p-28lf;
        sc = sc * 0x1p28lf;
    }
    if (abs(p1) > 0x1p1000lf) {
        a1 = a1 * 0x1p-28lf;
        p1 = p1 * 0x1p-28lf;
        sc = sc * 0x1p28lf;
    }
    // factors hidden, as in ct_fused_d: Vulkan lets a driver compute fma as a product and a
    // sum rounded apart, and one that has a1 * b1 already (in p) could reuse it, giving 0
    if (ct_fused_d()) { return ct_hide_d(fma(ct_hide_d(a1), ct_hide_d(b1), -p1)) * sc; }
    let x = ct_split_d(a1);
    let y = ct_split_d(b1);
    let e1 = ct_hide_d(ct_hide_d(x.x * y.x - p1) + x.x * y.y);
    return (ct_hide_d(e1 + x.y * y.x) + x.y * y.y) * sc;
}""",
    # n - a * b for a * b within a factor 2 of n (a quotient's residual), one rounding
    "ct_residual_d": """fn ct_residual_d(n: f64, a: f64, b: f64) -> f64 {
    let p = ct_hide_d(a * b);
    return ct_hide_d(n - p) - ct_mul_err_d(a, b, p);
}""",
    # True where fma rounds once (NVIDIA's driver; not lavapipe's): there the error of a
    # product is fma(a, b, -p) exactly, and Dekker's split, whose steps that driver fuses in
    # its own way, is not needed (the operands are hidden so the compiler cannot decide it)
    "ct_fused_d": """fn ct_fused_d() -> bool {
    let a = ct_hide_d(1.0lf + 0x1p-30lf);
    return fma(a, a, -ct_hide_d(1.0lf + 0x1p-29lf)) != 0.0lf;
}""",
    # x, unknown to the driver's compiler: keeps it from re-associating the error-free
    # transformations (a + b - a ...) and from folding fma(a, b, -(a * b)) to 0, as lavapipe
    # did (ct_zero() is 0 at run time, defined by each kernel)
    "ct_hide_d": """fn ct_hide_d(x: f64) -> f64 {
    return bitcast<f64>(bitcast<u64>(x) ^ u64(ct_zero()));
}""",
    # (s, e) with s = a + b rounded and a + b = s + e exactly (Knuth's two-sum), every
    # step on hidden values: a driver that re-associates (Vulkan lets it) would otherwise
    # fold e to 0, as ((a + b) - a) - b
    "ct_two_sum_d": """fn ct_two_sum_d(a: f64, b: f64) -> vec2<f64> {
    let x = ct_hide_d(a);
    let y = ct_hide_d(b);
    let s = ct_hide_d(x + y);
    let yv = ct_hide_d(s - x);
    let xv = ct_hide_d(s - yv);
    return vec2<f64>(s, ct_hide_d(x - xv) + ct_hide_d(y - yv));
}""",
    # 2^k for -1022 <= k <= 1023
    "ct_pow2i_d": """fn ct_pow2i_d(k: i32) -> f64 {
    return bitcast<f64>(u64(k + 1023i) << 52u);
}""",
    # y * 2^k for |k| <= 2044, in two exact steps (one rounding at most, into subnormals)
    "ct_scale_d": """fn ct_scale_d(y: f64, k: i32) -> f64 {
    let k1 = k / 2i;
    return ct_hide_d(ct_hide_d(y * ct_pow2i_d(k1)) * ct_pow2i_d(k - k1));
}""",
    # the exponent e of x = f * 2^e, 0.5 <= |f| < 1 (finite nonzero x, subnormals too)
    "ct_exponent_d": """fn ct_exponent_d(x: f64) -> i32 {
    let e = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
    if (e == 0i) {
        return i32((bitcast<u64>(x * 0x1p54lf) >> 52u) & 0x7fflu) - 1076i;
    }
    return e - 1022i;
}""",
    # -- operators --------------------------------------------------------------------------
    # A driver may round f64 division loosely; the exact residual corrects the quotient (it is
    # correctly rounded already on lavapipe). Tiny operands, whose residual would underflow,
    # keep the driver's quotient.
    "ct_div_d": """fn ct_div_d(x: f64, y: f64) -> f64 {
    // the divisor hidden: a driver may replace x / c by x * (1 / c) for a constant c (the
    // H200 gave -2.5 / 3 one ulp off), which the hidden value rules out
    let q = ct_hide_d(x / ct_hide_d(y));
    if (!(abs(x) >= 0x1p-916lf) || !(min(abs(q), abs(y)) >= 0x1p-960lf)) { return q; }
    let r = ct_residual_d(x, q, y);
    let c = ct_hide_d(q + ct_hide_d(r / y));
    if (c == q || !(ct_isfinite_d(r) && ct_isfinite_d(c))) { return q; }
    // keep the candidate only when its own exact residual is smaller: a driver that fuses
    // or reassociates the correction (NVIDIA's) can then never make a right quotient wrong
    let rc = ct_residual_d(x, c, y);
    return select(q, c, abs(rc) < abs(r));
}""",
    # Exact remainder with the sign of a, in integers: with x = mx 2^ex and y = my 2^ey (53-bit
    # integer significands), fmod(x, y) = (mx 2^(ex-ey) mod my) 2^ey, computed 11 bits of the
    # exponent gap at a time (r < my < 2^53, so r << 11 fits u64). No float step is involved,
    # so no driver's rounding, fusing or flushing can change it; at most 191 passes.
    "ct_fmod_d": """fn ct_fmod_d(a: f64, b: f64) -> f64 {
    if (!ct_isfinite_d(a) || ct_isnan_d(b) || b == 0.0lf) { return $NAN; }
    if (ct_isinf_d(b)) { return a; }
    let x = abs(a);
    let y = abs(b);
    if (x < y) { return a; }
    let bx = bitcast<u64>(x);
    let by = bitcast<u64>(y);
    let fx = i32((bx >> 52u) & 0x7fflu);
    let fy = i32((by >> 52u) & 0x7fflu);
    var mx = bx & 0xffffffffffffflu;
    var my = by & 0xffffffffffffflu;
    var ex = -1074i;
    var ey = -1074i;
    if (fx != 0i) { mx = mx | 0x10000000000000lu; ex = fx - 1075i; }
    if (fy != 0i) { my = my | 0x10000000000000lu; ey = fy - 1075i; }
    var r = mx % my;
    var k = ex - ey;
    loop {
        if (k <= 0i || r == 0lu) { break; }
        let s = min(k, 11i);
        r = (r << u32(s)) % my;
        k = k - s;
    }
    return ct_copysign_d(ct_scale_d(f64(r), ey), a);
}""",
    "ct_mod_d": """fn ct_mod_d(a: f64, b: f64) -> f64 {
    var r = ct_fmod_d(a, b);
    if (r == 0.0lf) { return ct_copysign_d(0.0lf, b); }
    if ((r < 0.0lf) != (b < 0.0lf)) { r = ct_hide_d(r + b); }
    return r;
}""",
    # a / b for b == +-0 (IEEE: +-inf, NaN for 0 / 0 and NaN / 0), made from the bits: a driver
    # that sees the zero divisor folded floor(a / 0.0) to NaN (lavapipe)
    "ct_div0_d": """fn ct_div0_d(a: f64, b: f64) -> f64 {
    if (a == 0.0lf || ct_isnan_d(a)) { return $NAN; }
    return bitcast<f64>(0x7ff0000000000000lu
                        | ((bitcast<u64>(a) ^ bitcast<u64>(b)) & 0x8000000000000000lu));
}""",
    "ct_floordiv_d": """fn ct_floordiv_d(a: f64, b: f64) -> f64 {
    if (b == 0.0lf) { return ct_div0_d(a, b); }
    let m = ct_fmod_d(a, b);
    var d = ct_div_d(a - m, b);
    if (!(m == 0.0lf) && ((b < 0.0lf) != (m < 0.0lf))) { d = d - 1.0lf; }
    if (d == 0.0lf) { return ct_copysign_d(0.0lf, a / b); }
    var q = floor(d);
    if (d - q > 0.5lf) { q = q + 1.0lf; }
    return q;
}""",
    "ct_min_d": """fn ct_min_d(a: f64, b: f64) -> f64 {
    return select(a, b, b < a);
}""",
    "ct_max_d": """fn ct_max_d(a: f64, b: f64) -> f64 {
    return select(a, b, b > a);
}""",
    # -- exp --------------------------------------------------------------------------------
    "ct_expm1_poly_d": """fn ct_expm1_poly_d(r: f64) -> f64 {
    return fma(r * r, $EXPM1_P, r);
}""",
    # e^(hi + lo), |lo| small: k = round(hi / ln2), r = hi - k ln2 (Cody-Waite, r kept as a
    # double-double), e^r - 1 by its Taylor polynomial, scaled by 2^k
    "ct_exp_dd_d": """fn ct_exp_dd_d(hi: f64, lo: f64) -> f64 {
    if (ct_isnan_d(hi)) { return hi; }
    if (hi > 709.8lf) { return $INF; }
    if (hi < -745.2lf) { return 0.0lf; }
    let k = round(hi * $LOG2E);
    let r1 = fma(-k, $LN2_HI, hi);
    let t = ct_hide_d(k * $LN2_LO);
    let r = ct_two_sum_d(r1, -t);
    let rh = r.x;
    let rl = r.y + lo;
    let p = ct_expm1_poly_d(rh);
    return ct_scale_d(1.0lf + ct_hide_d(fma(rl, 1.0lf + p, p)), i32(k));
}""",
    "ct_exp_d": """fn ct_exp_d(x: f64) -> f64 {
    return ct_exp_dd_d(x, 0.0lf);
}""",
    "ct_exp2_d": """fn ct_exp2_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (x > 1024.5lf) { return $INF; }
    if (x < -1075.5lf) { return 0.0lf; }
    let k = round(x);
    let f = x - k;
    let rh = ct_hide_d(f * $LN2);
    let rl = ct_mul_err_d(f, $LN2, rh) + f * $LN2_L;
    let p = ct_expm1_poly_d(rh);
    return ct_scale_d(1.0lf + ct_hide_d(fma(rl, 1.0lf + p, p)), i32(k));
}""",
    "ct_expm1_d": """fn ct_expm1_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (x > 709.8lf) { return $INF; }
    if (x < -40.0lf) { return -1.0lf; }
    if (abs(x) < 0x1p-54lf) { return x; }
    if (abs(x) <= 0.34657359027997264lf) { return ct_expm1_poly_d(x); }
    let k = round(x * $LOG2E);
    let r1 = ct_hide_d(fma(-k, $LN2_HI, x));
    let t = ct_hide_d(k * $LN2_LO);
    let rh = ct_hide_d(r1 - t);
    let rl = ct_hide_d(r1 - rh) - t;
    let p0 = ct_expm1_poly_d(rh);
    let p = ct_hide_d(fma(rl, 1.0lf + p0, p0));
    let ki = i32(k);
    if (ki > 56i) { return ct_scale_d(1.0lf + p, ki); }
    let tk = ct_pow2i_d(ki);
    return ct_hide_d(fma(tk, p, tk - 1.0lf));
}""",
    # -- log --------------------------------------------------------------------------------
    # x = 2^e * m, sqrt(1/2) <= m < sqrt(2); log m = 2 atanh(s), s = (m - 1) / (m + 1), with
    # 2s and 2s^3/3 as double-doubles. Returns (hi, lo) with hi + lo = log(x) to ~2^-64, for
    # finite x > 0.
    "ct_log_core_d": """fn ct_log_core_d(x: f64) -> vec3<f64> {
    var b = bitcast<u64>(x);
    var e = -1023i;
    if (b < 0x0010000000000000lu) {
        b = bitcast<u64>(x * 0x1p54lf);
        e = -1077i;
    }
    e = e + i32(b >> 52u);
    var mb = (b & 0x000ffffffffffffflu) | 0x3ff0000000000000lu;
    if (mb > 0x3ff6a09e667f3bcdlu) {
        mb = mb - 0x0010000000000000lu;
        e = e + 1i;
    }
    let f = ct_hide_d(bitcast<f64>(mb) - 1.0lf);
    let dh = ct_hide_d(2.0lf + f);
    let dl = f - ct_hide_d(dh - 2.0lf);
    let sh = ct_hide_d(f / dh);
    let sl = (ct_residual_d(f, sh, dh) - sh * dl) / dh;
    let zh = ct_hide_d(sh * sh);
    let zl = ct_mul_err_d(sh, sh, zh) + 2.0lf * sh * sl;
    let ch = ct_hide_d(sh * zh);
    let cl = ct_mul_err_d(sh, zh, ch) + (sh * zl + sl * zh);
    let th = ct_hide_d(ch * $TWO3);
    let tl = ct_mul_err_d(ch, $TWO3, th) + (ch * $TWO3_L + cl * $TWO3);
    let z = zh;
    let tail = ch * zh * $LOG_Q;
    let ah = 2.0lf * sh;
    let s1 = ct_hide_d(ah + th);
    let l1 = ct_hide_d(th - ct_hide_d(s1 - ah)) + (2.0lf * sl + tl + tail);
    let s2 = ct_hide_d(s1 + l1);
    return vec3<f64>(f64(e), s2, l1 - ct_hide_d(s2 - s1));
}""",
    "ct_log_dd_d": """fn ct_log_dd_d(x: f64) -> vec2<f64> {
    let c = ct_log_core_d(x);
    let ef = c.x;
    let eh = ct_hide_d(ef * $LN2_HI);
    let s = ct_two_sum_d(eh, c.y);
    let hi = s.x;
    let lo = s.y + (c.z + ef * $LN2_LO);
    let h2 = ct_hide_d(hi + lo);
    return vec2<f64>(h2, lo - ct_hide_d(h2 - hi));
}""",
    # log of the special values: nan for x < 0 or nan, -inf for 0, inf for inf; else 0
    "ct_log_special_d": """fn ct_log_special_d(x: f64) -> f64 {
    if (x == 0.0lf) { return -$INF; }
    if (ct_isnan_d(x) || x < 0.0lf) { return $NAN; }
    return x;
}""",
    "ct_log_d": """fn ct_log_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let l = ct_log_dd_d(x);
    return ct_hide_d(l.x + l.y);
}""",
    # log2 = e + log(m) / ln 2 (exact at powers of two)
    "ct_log2_d": """fn ct_log2_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let c = ct_log_core_d(x);
    let ph = ct_hide_d(c.y * $LOG2E);
    let pl = ct_mul_err_d(c.y, $LOG2E, ph) + (c.y * $LOG2E_L + c.z * $LOG2E);
    let s = ct_two_sum_d(c.x, ph);
    return ct_hide_d(s.x + ct_hide_d(s.y + pl));
}""",
    "ct_log10_d": """fn ct_log10_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let c = ct_log_core_d(x);
    let ph = ct_hide_d(c.y * $LOG10E);
    let pl = ct_mul_err_d(c.y, $LOG10E, ph) + (c.y * $LOG10E_L + c.z * $LOG10E);
    let ef = c.x;
    let s = ct_two_sum_d(ct_hide_d(ef * $L10_2_HI), ph);
    return ct_hide_d(s.x + ct_hide_d(s.y + (pl + ef * $L10_2_LO)));
}""",
    "ct_log1p_d": """fn ct_log1p_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || x < -1.0lf) { return $NAN; }
    if (x == -1.0lf) { return -$INF; }
    if (x > 0x1p1020lf) {
        if (x > 0x1.fffffffffffffp1023lf) { return x; }
        let l = ct_log_dd_d(x);
        return ct_hide_d(l.x + l.y);
    }
    if (abs(x) < 0x1p-54lf) { return x; }
    let u = ct_two_sum_d(1.0lf, x);
    let l = ct_log_dd_d(u.x);
    return ct_hide_d(l.x + ct_hide_d(l.y + u.y / u.x));
}""",
    # -- pow --------------------------------------------------------------------------------
    # |x|^y = e^(y log|x|) with log|x| and the product as double-doubles; integral exponents up
    # to 64 use exact binary powering when every step is exact; Python's special cases first.
    "ct_pow_d": """fn ct_pow_d(x: f64, y: f64) -> f64 {
    if (y == 0.0lf || x == 1.0lf) { return 1.0lf; }
    if (ct_isnan_d(x) || ct_isnan_d(y)) { return $NAN; }
    let ax = abs(x);
    if (ct_isinf_d(y)) {
        if (ax == 1.0lf) { return 1.0lf; }
        if ((ax > 1.0lf) == (y > 0.0lf)) { return $INF; }
        return 0.0lf;
    }
    let yint = trunc(y) == y;
    let yodd = yint && abs(y) < 0x1p53lf && trunc(y * 0.5lf) != y * 0.5lf;
    if (ct_isinf_d(x) || x == 0.0lf) {
        var r = 0.0lf;
        if ((y > 0.0lf) == ct_isinf_d(x)) { r = $INF; }
        if (yodd) { return ct_copysign_d(r, x); }
        return r;
    }
    if (y == 1.0lf) { return x; }
    if (y == 2.0lf) { return ct_hide_d(x * x); }
    if (x < 0.0lf && !yint) { return $NAN; }
    var res = 0.0lf;
    var done = false;
    if (yint && abs(y) <= 64.0lf) {
        var k = u32(abs(y));
        var acc = 1.0lf;
        var b = ax;
        var exact = true;
$POW_INT_STEPS
        if (y < 0.0lf) {
            let inv = ct_hide_d(1.0lf / acc);
            exact = exact && ct_hide_d(inv * acc) == 1.0lf
                && ct_mul_err_d(inv, acc, 1.0lf) == 0.0lf;
            acc = inv;
        }
        if (exact) { res = acc; done = true; }
    }
    if (!done) {
        let l = ct_log_dd_d(ax);
        let yh = ct_hide_d(y * l.x);
        let yl = ct_mul_err_d(y, l.x, yh) + y * l.y;
        res = ct_exp_dd_d(yh, yl);
    }
    if (x < 0.0lf && yodd) { return -res; }
    return res;
}""",
    # -- trigonometry -----------------------------------------------------------------------
    # Payne-Hanek: x * 2/pi mod 4 from a 192-bit window of 2/pi's bits times the 53-bit
    # significand (u64 arithmetic); returns (quadrant, r hi, r lo) with x = q pi/2 + r.
    "ct_rem_pio2_big_d": """const CT_TWO_OVER_PI_D = array<u32, 46>(
    $TWO_OVER_PI);

fn ct_rem_pio2_big_d(x: f64) -> vec3<f64> {
    let b = bitcast<u64>(x);
    let E = i32((b >> 52u) & 0x7fflu) - 1075i;
    let m = (b & 0x000ffffffffffffflu) | 0x0010000000000000lu;
    let ml = m & 0xfffffffflu;
    let mh = m >> 32u;
    let t0 = u32(E + 62i);
    let wi = t0 >> 5u;
    let sh = t0 & 31u;
    var T = CT_TWO_OVER_PI_D;
$WINDOW_WORDS
$PRODUCT_STEPS
    var q = (p5 >> 30u) & 3lu;
    let fa = f64(p5 & 0x3ffffffflu) * 0x1p-30lf;
    let fb = f64(p4) * 0x1p-62lf;
    var hi = ct_hide_d(fa + fb);
    var lo = ct_hide_d(fb - ct_hide_d(hi - fa));
    lo = lo + (f64(p3) * 0x1p-94lf + (f64(p2) * 0x1p-126lf + f64(p1) * 0x1p-158lf));
    var h2 = ct_hide_d(hi + lo);
    lo = lo - ct_hide_d(h2 - hi);
    hi = h2;
    if (hi >= 0.5lf) {
        hi = ct_hide_d(hi - 1.0lf);
        q = q + 1lu;
        h2 = ct_hide_d(hi + lo);
        lo = lo - ct_hide_d(h2 - hi);
        hi = h2;
    }
    var rh = ct_hide_d(hi * $PIO2);
    var rl = ct_mul_err_d(hi, $PIO2, rh) + (hi * $PIO2_L + lo * $PIO2);
    var qi = u32(q & 3lu);
    if (x < 0.0lf) {
        rh = -rh;
        rl = -rl;
        qi = (4u - qi) & 3u;
    }
    return vec3<f64>(f64(qi), rh, rl);
}""",
    # x = q pi/2 + r: Cody-Waite with a three-part pi/2 below 2^20, Payne-Hanek above
    "ct_rem_pio2_d": """fn ct_rem_pio2_d(x: f64) -> vec3<f64> {
    if (abs(x) <= $PIO4) { return vec3<f64>(0.0lf, x, 0.0lf); }
    if (abs(x) >= 0x1p20lf) { return ct_rem_pio2_big_d(x); }
    let k = round(x * $TWO_OPI);
    let d = fma(-k, $PIO2_1, x);
    let u = ct_hide_d(k * $PIO2_2);
    let ul = ct_mul_err_d(k, $PIO2_2, u);
    let v = ct_two_sum_d(d, -u);
    let r0 = ct_hide_d((v.y - ul) - k * $PIO2_3);
    let rh = ct_hide_d(v.x + r0);
    let rl = r0 - ct_hide_d(rh - v.x);
    let kq = i32(k) & 3i;
    return vec3<f64>(f64(kq), rh, rl);
}""",
    # sin(x + y), cos(x + y) for |x| <= pi/4 + tiny, |y| tiny (Taylor polynomials)
    "ct_sin_k_d": """fn ct_sin_k_d(x: f64, y: f64) -> f64 {
    let z = x * x;
    let v = z * x;
    return ct_hide_d(x + fma(v, $SIN_S, y * (1.0lf - 0.5lf * z)));
}""",
    "ct_cos_k_d": """fn ct_cos_k_d(x: f64, y: f64) -> f64 {
    let z = ct_hide_d(x * x);
    let zl = ct_mul_err_d(x, x, z);
    let hz = 0.5lf * z;
    let w = ct_hide_d(1.0lf - hz);
    let c = z * z * $COS_C;
    return ct_hide_d(w + ct_hide_d(ct_hide_d(ct_hide_d(1.0lf - w) - hz)
                                   + (c - fma(x, y, 0.5lf * zl))));
}""",
    "ct_sin_d": """fn ct_sin_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return $NAN; }
    if (abs(x) < 0x1p-27lf) { return x; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    var v = 0.0lf;
    if ((q & 1u) == 0u) { v = ct_sin_k_d(t.y, t.z); } else { v = ct_cos_k_d(t.y, t.z); }
    if ((q & 2u) != 0u) { v = -v; }
    return v;
}""",
    "ct_cos_d": """fn ct_cos_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return $NAN; }
    if (abs(x) < 0x1p-27lf) { return 1.0lf; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    var v = 0.0lf;
    if ((q & 1u) == 0u) { v = ct_cos_k_d(t.y, t.z); } else { v = -ct_sin_k_d(t.y, t.z); }
    if ((q & 2u) != 0u) { v = -v; }
    return v;
}""",
    # tan = sin / cos (or -cos / sin in odd quadrants), both as double-doubles, divided with
    # one correction step
    "ct_tan_d": """fn ct_tan_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return $NAN; }
    if (abs(x) < 0x1p-27lf) { return x; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    let r = t.y;
    let y = t.z;
    let z = ct_hide_d(r * r);
    let zl = ct_mul_err_d(r, r, z);
    let sh = r;
    let sl = fma(z * r, $SIN_S, y * (1.0lf - 0.5lf * z));
    let hz = 0.5lf * z;
    let ch = ct_hide_d(1.0lf - hz);
    let cl = ct_hide_d(ct_hide_d(1.0lf - ch) - hz) + (z * z * $COS_C - fma(r, y, 0.5lf * zl));
    var nh = sh;
    var nl = sl;
    var dh = ch;
    var dl = cl;
    if ((q & 1u) == 1u) {
        nh = -ch;
        nl = -cl;
        dh = sh;
        dl = sl;
    }
    let q0 = ct_hide_d((nh + nl) / (dh + dl));
    let rem = (ct_residual_d(nh, q0, dh) + nl) - q0 * dl;
    return ct_hide_d(q0 + rem / (dh + dl));
}""",
    # -- inverse trigonometry -----------------------------------------------------------------
    # atan(t_hi + t_lo), |t| <= 0.4375
    "ct_atan_k_d": """fn ct_atan_k_d(t: f64, tl: f64) -> f64 {
    let z = t * t;
    return t + fma(t * z, $ATAN_A, tl * (1.0lf - z));
}""",
    # atan(n / d) for n, d >= 0 (not both 0, not nan) as (hi, lo): the ratio is reduced
    # around 0, 1/2, 1, 3/2 or infinity, the reduced argument kept as a double-double
    "ct_atan_pos_d": """fn ct_atan_pos_d(n0: f64, d0: f64) -> vec2<f64> {
    if (ct_isinf_d(n0) || d0 == 0.0lf) {
        if (ct_isinf_d(d0)) { return vec2<f64>($PIO4, $PIO4_L); }
        return vec2<f64>($PIO2, $PIO2_L);
    }
    if (ct_isinf_d(d0)) { return vec2<f64>(0.0lf, 0.0lf); }
    var n = n0;
    var d = d0;
    let big = max(n, d);
    if (big > 0x1p1000lf) { n = n * 0x1p-60lf; d = d * 0x1p-60lf; }
    if (big < 0x1p-900lf) { n = n * 0x1p100lf; d = d * 0x1p100lf; }
    var bh = 0.0lf;
    var bl = 0.0lf;
    var th = 0.0lf;
    var tl = 0.0lf;
    var sgn = 1.0lf;
    if (n <= 0.4375lf * d) {
        th = ct_hide_d(n / d);
        tl = ct_residual_d(n, th, d) / d;
    } else if (n <= 0.6875lf * d) {
        bh = $ATAN_HALF;
        bl = $ATAN_HALF_L;
        let num = 2.0lf * n - d;
        let dh0 = 2.0lf * d;
        let den = ct_two_sum_d(dh0, n);
        th = ct_hide_d(num / den.x);
        tl = (ct_residual_d(num, th, den.x) - th * den.y) / den.x;
    } else if (n <= 1.1875lf * d) {
        bh = $PIO4;
        bl = $PIO4_L;
        let num = n - d;
        let den = ct_two_sum_d(n, d);
        th = ct_hide_d(num / den.x);
        tl = (ct_residual_d(num, th, den.x) - th * den.y) / den.x;
    } else if (n <= 2.4375lf * d) {
        bh = $ATAN_3HALF;
        bl = $ATAN_3HALF_L;
        let d3 = ct_hide_d(3.0lf * d);
        let d3l = ct_mul_err_d(3.0lf, d, d3);
        let num0 = ct_hide_d(2.0lf * n - d3);
        let num = ct_hide_d(num0 - d3l);
        let numl = ct_hide_d(num0 - num) - d3l;
        let n3 = ct_hide_d(3.0lf * n);
        let n3l = ct_mul_err_d(3.0lf, n, n3);
        let den = ct_two_sum_d(n3, 2.0lf * d);
        th = ct_hide_d(num / den.x);
        tl = ((ct_residual_d(num, th, den.x) + numl) - th * (den.y + n3l)) / den.x;
    } else {
        bh = $PIO2;
        bl = $PIO2_L;
        sgn = -1.0lf;
        th = ct_hide_d(d / n);
        tl = ct_residual_d(d, th, n) / n;
    }
    let a = ct_atan_k_d(th, tl);
    if (bh == 0.0lf) { return vec2<f64>(a, 0.0lf); }
    return vec2<f64>(bh, bl + sgn * a);
}""",
    "ct_atan_d": """fn ct_atan_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (abs(x) < 0x1p-27lf) { return x; }
    let a = ct_atan_pos_d(abs(x), 1.0lf);
    return ct_copysign_d(ct_hide_d(a.x + a.y), x);
}""",
    "ct_atan2_d": """fn ct_atan2_d(y: f64, x: f64) -> f64 {
    if (ct_isnan_d(x) || ct_isnan_d(y)) { return $NAN; }
    if (y == 0.0lf) {
        if (ct_signbit_d(x)) { return ct_copysign_d($PI, y); }
        return y;
    }
    let a = ct_atan_pos_d(abs(y), abs(x));
    var v = ct_hide_d(a.x + a.y);
    if (ct_signbit_d(x)) {
        let h = ct_two_sum_d($PI, -a.x);
        v = ct_hide_d(h.x + ct_hide_d(h.y + ($PI_L - a.y)));
    }
    return ct_copysign_d(v, y);
}""",
    # asin(s + sl) - s for |s| <= 1/2 (Taylor series of asin; sl a small correction)
    "ct_asin_k_d": """fn ct_asin_k_d(s: f64, sl: f64) -> f64 {
    let z = s * s;
    return fma(s * z, $ASIN_A, sl * (1.0lf + 0.5lf * z));
}""",
    # sqrt(w) as (hi, lo), w >= 0
    "ct_sqrt_dd_d": """fn ct_sqrt_dd_d(w: f64) -> vec2<f64> {
    let h = ct_hide_d(sqrt(w));
    if (h == 0.0lf) { return vec2<f64>(0.0lf, 0.0lf); }
    return vec2<f64>(h, ct_residual_d(w, h, h) / (2.0lf * h));
}""",
    # |x| <= 1/2: the series; beyond: asin x = pi/2 - 2 asin(sqrt((1 - x) / 2))
    "ct_asin_d": """fn ct_asin_d(x: f64) -> f64 {
    if (!(abs(x) <= 1.0lf)) { return $NAN; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    if (a <= 0.5lf) { return x + ct_asin_k_d(x, 0.0lf); }
    let s = ct_sqrt_dd_d(0.5lf * (1.0lf - a));
    let t = ct_asin_k_d(s.x, s.y);
    let h = ct_two_sum_d($PIO2, -2.0lf * s.x);
    return ct_copysign_d(ct_hide_d(h.x + ct_hide_d(h.y + ($PIO2_L - 2.0lf * t))), x);
}""",
    # |x| <= 1/2: pi/2 - asin x; beyond: 2 asin(sqrt((1 - x) / 2)), or pi minus that of -x
    "ct_acos_d": """fn ct_acos_d(x: f64) -> f64 {
    if (!(abs(x) <= 1.0lf)) { return $NAN; }
    var bh = $PIO2;
    var bl = $PIO2_L;
    var sh = x;
    var tl = 0.0lf;
    if (abs(x) <= 0.5lf) {
        tl = ct_asin_k_d(x, 0.0lf);
    } else {
        let s = ct_sqrt_dd_d(0.5lf * (1.0lf - abs(x)));
        let t = ct_asin_k_d(s.x, s.y);
        if (x > 0.0lf) { return ct_hide_d(2.0lf * s.x + 2.0lf * t); }
        bh = $PI;
        bl = $PI_L;
        sh = 2.0lf * s.x;
        tl = 2.0lf * t;
    }
    let h = ct_two_sum_d(bh, -sh);
    return ct_hide_d(h.x + ct_hide_d(h.y + (bl - tl)));
}""",
    # -- hyperbolic -------------------------------------------------------------------------
    # e^a as an unrounded (hi, lo) pair, for |a| < 700 (the sum of sinh and cosh)
    "ct_exp_pair_d": """fn ct_exp_pair_d(a: f64) -> vec2<f64> {
    let k = round(a * $LOG2E);
    let r1 = fma(-k, $LN2_HI, a);
    let r = ct_two_sum_d(r1, -ct_hide_d(k * $LN2_LO));
    let p = ct_expm1_poly_d(r.x);
    let q = ct_hide_d(fma(r.y, 1.0lf + p, p));
    let y = ct_hide_d(1.0lf + q);
    let yl = ct_hide_d(1.0lf - y) + q;
    let sc = ct_pow2i_d(i32(k));
    return vec2<f64>(y * sc, yl * sc);
}""",
    # (e^a -+ e^-a) / 2 from the pair, the difference kept as a double-double
    "ct_sinhcosh_d": """fn ct_sinhcosh_d(a: f64, sign: f64) -> f64 {
    let e = ct_exp_pair_d(a);
    let inv = sign / e.x;
    let h = ct_hide_d(e.x + inv);
    let hl = inv - ct_hide_d(h - e.x);
    return 0.5lf * (h + ct_hide_d(e.y + hl - inv * e.y / e.x));
}""",
    "ct_sinh_d": """fn ct_sinh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var s = 0.0lf;
    if (a < 1.0lf) {
        let z = a * a;
        s = a + a * z * $SINH_S;
    } else if (a < 22.0lf) {
        s = ct_sinhcosh_d(a, -1.0lf);
    } else {
        let h = ct_two_sum_d(a, -$LN2);
        s = ct_exp_dd_d(h.x, h.y - $LN2_L);
    }
    return ct_copysign_d(s, x);
}""",
    "ct_cosh_d": """fn ct_cosh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return 1.0lf; }
    if (a < 1.0lf) {
        let z = a * a;
        return 1.0lf + z * $COSH_C;
    }
    if (a < 22.0lf) { return ct_sinhcosh_d(a, 1.0lf); }
    let h = ct_two_sum_d(a, -$LN2);
    return ct_exp_dd_d(h.x, h.y - $LN2_L);
}""",
    # below 1: sinh / cosh from their series as (hi, lo) pairs, divided with one correction;
    # above: 1 - 2 / (e^2a + 1)
    "ct_tanh_d": """fn ct_tanh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var t = 1.0lf;
    if (a < 1.0lf) {
        let z = a * a;
        let sl = a * z * $SINH_S;
        let cl = z * $COSH_C;
        let c = 1.0lf + cl;
        let q0 = ct_hide_d((a + sl) / c);
        let p = ct_hide_d(q0 * cl);
        let rem = (ct_hide_d(a - q0) + sl) - (p + ct_mul_err_d(q0, cl, p));
        t = ct_hide_d(q0 + rem / c);
    } else if (a < 22.0lf) {
        let e = ct_expm1_d(2.0lf * a);
        t = 1.0lf - 2.0lf / (e + 2.0lf);
    }
    return ct_copysign_d(t, x);
}""",
    "ct_asinh_d": """fn ct_asinh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || ct_isinf_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var r = 0.0lf;
    if (a > 0x1p28lf) {
        r = ct_log_d(a) + $LN2;
    } else if (a > 2.0lf) {
        r = ct_log_d(2.0lf * a + 1.0lf / (sqrt(fma(a, a, 1.0lf)) + a));
    } else {
        let z = a * a;
        r = ct_log1p_d(a + z / (1.0lf + sqrt(1.0lf + z)));
    }
    return ct_copysign_d(r, x);
}""",
    "ct_acosh_d": """fn ct_acosh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || !(x >= 1.0lf)) { return $NAN; }
    if (ct_isinf_d(x)) { return x; }
    if (x > 0x1p28lf) { return ct_log_d(x) + $LN2; }
    if (x > 2.0lf) { return ct_log_d(2.0lf * x - 1.0lf / (x + sqrt(fma(x, x, -1.0lf)))); }
    // log1p(t + sqrt(2t + t^2)), t = x - 1, with 2t + t^2, its root and the sum as pairs
    let t = x - 1.0lf;
    if (t == 0.0lf) { return 0.0lf; }
    let tt = ct_hide_d(t * t);
    let w = ct_hide_d(2.0lf * t + tt);
    let wl = ct_hide_d(tt - ct_hide_d(w - 2.0lf * t)) + ct_mul_err_d(t, t, tt);
    let s = ct_sqrt_dd_d(w);
    let u = ct_two_sum_d(t, s.x);
    let ul = u.y + (s.y + wl / (2.0lf * s.x));
    return ct_hide_d(ct_log1p_d(u.x) + ul / (1.0lf + u.x));
}""",
    "ct_atanh_d": """fn ct_atanh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || abs(x) > 1.0lf) { return $NAN; }
    let a = abs(x);
    if (a < 0x1p-28lf) { return x; }
    if (a == 1.0lf) { return ct_copysign_d($INF, x); }
    // atanh a = log1p(2a / (1 - a)) / 2, with 1 - a and the quotient as pairs
    let d = ct_hide_d(1.0lf - a);
    let dl = ct_hide_d(1.0lf - d) - a;
    let n = a + a;
    let v = ct_hide_d(n / d);
    let vl = (ct_residual_d(n, v, d) - v * dl) / d;
    return ct_copysign_d(0.5lf * (ct_log1p_d(v) + vl / (1.0lf + v)), x);
}""",
    # -- the rest ---------------------------------------------------------------------------
    # sqrt(x^2 + y^2) on values scaled by a power of two, the sum of squares as a
    # double-double, one Newton correction of the square root
    "ct_hypot_d": """fn ct_hypot_d(a: f64, b: f64) -> f64 {
    if (ct_isinf_d(a) || ct_isinf_d(b)) { return $INF; }
    if (ct_isnan_d(a) || ct_isnan_d(b)) { return $NAN; }
    let x = max(abs(a), abs(b));
    let y = min(abs(a), abs(b));
    if (x == 0.0lf) { return 0.0lf; }
    let e = ct_exponent_d(x);
    let xs = ct_scale_d(x, -e);
    let ys = ct_scale_d(y, -e);
    let sh = ct_hide_d(xs * xs);
    let sl = ct_mul_err_d(xs, xs, sh);
    let th = ct_hide_d(ys * ys);
    let tl = ct_mul_err_d(ys, ys, th);
    let s = ct_two_sum_d(sh, th);
    let h = ct_hide_d(sqrt(s.x));
    let c = (ct_residual_d(s.x, h, h) + (s.y + (sl + tl))) / (2.0lf * h);
    return ct_scale_d(h + c, e);
}""",
}


def _expand(text: str) -> str:
    return Template(text).substitute(
        _C, TWO_OVER_PI=_TWO_OVER_PI, PRODUCT_STEPS=_product_steps(),
        WINDOW_WORDS=_window_words(), POW_INT_STEPS=_pow_int_steps())


#: helper name -> (helpers its text calls, WGSL text), as ``builtins.HELPERS``
F64_HELPERS: dict[str, tuple[tuple[str, ...], str]] = {
    name: (tuple(other for other in _RAW if other != name and other + "(" in text), _expand(text))
    for name, text in _RAW.items()}

#: ``ir.Call.fn`` -> WGSL format string over f64 arguments (``floor``/``ceil``/``trunc``/
#: ``round`` give the f64 result; the caller converts it to its int type)
F64_CALLS: dict[str, str] = {
    "sqrt": "sqrt({0})",
    "sin": "ct_sin_d({0})", "cos": "ct_cos_d({0})", "tan": "ct_tan_d({0})",
    "asin": "ct_asin_d({0})", "acos": "ct_acos_d({0})", "atan": "ct_atan_d({0})",
    "atan2": "ct_atan2_d({0}, {1})",
    "sinh": "ct_sinh_d({0})", "cosh": "ct_cosh_d({0})", "tanh": "ct_tanh_d({0})",
    "asinh": "ct_asinh_d({0})", "acosh": "ct_acosh_d({0})", "atanh": "ct_atanh_d({0})",
    "exp": "ct_exp_d({0})", "exp2": "ct_exp2_d({0})", "expm1": "ct_expm1_d({0})",
    "log": "ct_log_d({0})", "log_base": "ct_log_d({0})",
    "log2": "ct_log2_d({0})", "log10": "ct_log10_d({0})", "log1p": "ct_log1p_d({0})",
    "pow": "ct_pow_d({0}, {1})",
    "fabs": "abs({0})", "abs": "abs({0})",
    "hypot": "ct_hypot_d({0}, {1})", "copysign": "ct_copysign_d({0}, {1})",
    "fmod": "ct_fmod_d({0}, {1})",
    "degrees": "({0} * " + _C["DEG"] + ")", "radians": "({0} * " + _C["RAD"] + ")",
    "floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})", "round": "round({0})",
    "isnan": "ct_isnan_d({0})", "isinf": "ct_isinf_d({0})", "isfinite": "ct_isfinite_d({0})",
    "min_f": "ct_min_d({0}, {1})", "max_f": "ct_max_d({0}, {1})",
}

#: Python operator -> the helper giving its meaning on f64 operands
F64_OPS: dict[str, str] = {"truediv": "ct_div_d", "floordiv": "ct_floordiv_d",
                           "mod": "ct_mod_d", "pow": "ct_pow_d"}


def helpers_of(template: str) -> tuple[str, ...]:
    """The F64_HELPERS a template calls directly (their dependencies follow from the table)."""
    return tuple(name for name in F64_HELPERS if name + "(" in template)


def helper_text(names) -> str:
    """The WGSL of ``names`` and everything they depend on, each once, dependencies first."""
    out: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for dep in F64_HELPERS[name][0]:
            add(dep)
        out.append(F64_HELPERS[name][1])

    for name in names:
        add(name)
    return "\n\n".join(out)


__all__ = ["F64_CALLS", "F64_HELPERS", "F64_OPS", "helper_text", "helpers_of"]
