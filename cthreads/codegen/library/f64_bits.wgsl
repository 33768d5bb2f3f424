// float64 bits, exact products and sums, scaling (the float64 library's base).
// Built from exact operations only (no float32 step); methods, accuracy and the differences
// from Python: docs/float64.md. Constants are exact hex literals (tests/codegen/test_library.py
// checks the polynomial coefficients).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_isnan_d
// features: shader-f64, shader-int64
fn ct_isnan_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu;
}

// helper: ct_isinf_d
// features: shader-f64, shader-int64
fn ct_isinf_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu;
}

// helper: ct_isfinite_d
// features: shader-f64, shader-int64
fn ct_isfinite_d(v: f64) -> bool {
    return (bitcast<u64>(v) & 0x7ff0000000000000lu) != 0x7ff0000000000000lu;
}

// helper: ct_copysign_d
// features: shader-f64, shader-int64
fn ct_copysign_d(a: f64, b: f64) -> f64 {
    return bitcast<f64>((bitcast<u64>(a) & 0x7ffffffffffffffflu)
                        | (bitcast<u64>(b) & 0x8000000000000000lu));
}

// helper: ct_signbit_d
// features: shader-f64, shader-int64
fn ct_signbit_d(v: f64) -> bool {
    return (bitcast<u64>(v) >> 63u) == 1lu;
}

// helper: ct_split_d
// requires: ct_hide_d
// features: shader-f64
// Exact products without fma: Vulkan lets fma round twice (lavapipe's f64 fma does), so a * b -
// fl(a * b) comes from Veltkamp's split into 26-bit halves (Dekker's product)
fn ct_split_d(a: f64) -> vec2<f64> {
    let c = ct_hide_d(134217729.0lf * a);
    let hi = ct_hide_d(c - ct_hide_d(c - a));
    return vec2<f64>(hi, a - hi);
}

// helper: ct_mul_err_d
// requires: ct_split_d, ct_fused_d, ct_hide_d
// features: shader-f64
// a * b - p exactly, for p = fl(a * b) (large factors and products are scaled first so that the
// split cannot overflow; an underflowing product loses the exactness)
fn ct_mul_err_d(a: f64, b: f64, p: f64) -> f64 {
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
}

// helper: ct_residual_d
// requires: ct_mul_err_d, ct_hide_d
// features: shader-f64
// n - a * b for a * b within a factor 2 of n (a quotient's residual), one rounding
fn ct_residual_d(n: f64, a: f64, b: f64) -> f64 {
    let p = ct_hide_d(a * b);
    return ct_hide_d(n - p) - ct_mul_err_d(a, b, p);
}

// helper: ct_fused_d
// requires: ct_hide_d
// features: shader-f64
// True where fma rounds once (NVIDIA's driver; not lavapipe's): there the error of a product is
// fma(a, b, -p) exactly, and Dekker's split, whose steps that driver fuses in its own way, is not
// needed (the operands are hidden so the compiler cannot decide it)
fn ct_fused_d() -> bool {
    let a = ct_hide_d(1.0lf + 0x1p-30lf);
    return fma(a, a, -ct_hide_d(1.0lf + 0x1p-29lf)) != 0.0lf;
}

// helper: ct_hide_d
// requires: ct_zero
// features: shader-f64, shader-int64
// x, unknown to the driver's compiler: keeps it from re-associating the error-free transformations
// (a + b - a ...) and from folding fma(a, b, -(a * b)) to 0, as lavapipe did (ct_zero() is 0 at
// run time, defined by each kernel)
fn ct_hide_d(x: f64) -> f64 {
    return bitcast<f64>(bitcast<u64>(x) ^ u64(ct_zero()));
}

// helper: ct_two_sum_d
// requires: ct_hide_d
// features: shader-f64
// (s, e) with s = a + b rounded and a + b = s + e exactly (Knuth's two-sum), every step on hidden
// values: a driver that re-associates (Vulkan lets it) would otherwise fold e to 0, as ((a + b) -
// a) - b
fn ct_two_sum_d(a: f64, b: f64) -> vec2<f64> {
    let x = ct_hide_d(a);
    let y = ct_hide_d(b);
    let s = ct_hide_d(x + y);
    let yv = ct_hide_d(s - x);
    let xv = ct_hide_d(s - yv);
    return vec2<f64>(s, ct_hide_d(x - xv) + ct_hide_d(y - yv));
}

// helper: ct_pow2i_d
// features: shader-f64, shader-int64
// 2^k for -1022 <= k <= 1023
fn ct_pow2i_d(k: i32) -> f64 {
    return bitcast<f64>(u64(k + 1023i) << 52u);
}

// helper: ct_scale_d
// requires: ct_hide_d, ct_pow2i_d
// features: shader-f64
// y * 2^k for |k| <= 2044, in two exact steps (one rounding at most, into subnormals)
fn ct_scale_d(y: f64, k: i32) -> f64 {
    let k1 = k / 2i;
    return ct_hide_d(ct_hide_d(y * ct_pow2i_d(k1)) * ct_pow2i_d(k - k1));
}

// helper: ct_exponent_d
// features: shader-f64, shader-int64
// the exponent e of x = f * 2^e, 0.5 <= |f| < 1 (finite nonzero x, subnormals too)
fn ct_exponent_d(x: f64) -> i32 {
    let e = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
    if (e == 0i) {
        return i32((bitcast<u64>(x * 0x1p54lf) >> 52u) & 0x7fflu) - 1076i;
    }
    return e - 1022i;
}
