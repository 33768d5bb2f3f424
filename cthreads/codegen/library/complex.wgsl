// Complex numbers (codegen/complexes.py): a complex64 is a vec2<f32>, a complex128 a vec2<f64>,
// (real, imag). + - and unary - are WGSL's vector operations; these helpers give the rest. A
// helper ending _f takes vec2<f32>, _d vec2<f64> (built from the float64 library: no float32 step).

// helper: ct_cconj_f
fn ct_cconj_f(z: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(z.x, -z.y);
}

// helper: ct_cconj_d
// features: shader-f64
fn ct_cconj_d(z: vec2<f64>) -> vec2<f64> {
    return vec2<f64>(z.x, -z.y);
}

// helper: ct_cmul_f
// (a.x + i a.y)(b.x + i b.y), the textbook product numpy computes
fn ct_cmul_f(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// helper: ct_cmul_d
// features: shader-f64
fn ct_cmul_d(a: vec2<f64>, b: vec2<f64>) -> vec2<f64> {
    return vec2<f64>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// helper: ct_csq_f
// z * z: the product's value (x*y + y*x is exactly 2 (x*y), overflow included) in fewer
// operations than ct_cmul_f(z, z); a driver may fuse t + t into fma(z.x, z.y, t) as it fuses
// the product's a * b + c (docs/language.md, "Fused multiply-adds")
fn ct_csq_f(z: vec2<f32>) -> vec2<f32> {
    let t = z.x * z.y;
    return vec2<f32>(z.x * z.x - z.y * z.y, t + t);
}

// helper: ct_csq_d
// features: shader-f64
fn ct_csq_d(z: vec2<f64>) -> vec2<f64> {
    let t = z.x * z.y;
    return vec2<f64>(z.x * z.x - z.y * z.y, t + t);
}

// helper: ct_cdiv_f
// requires: ct_div_f
// Smith's method, as CPython's complex division: the ratio of the divisor's smaller part to its
// larger keeps every intermediate near the result's magnitude (no overflow or underflow of
// |b|^2); each quotient is the language's correctly rounded division. A zero divisor gives
// inf/nan parts (numpy's values; Python raises ZeroDivisionError), a NaN part NaN parts.
fn ct_cdiv_f(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let ar = abs(b.x);
    let ai = abs(b.y);
    if (ar >= ai) {
        if (ar == 0.0f) {
            return vec2<f32>(ct_div_f(a.x, ar), ct_div_f(a.y, ar));
        }
        let r = ct_div_f(b.y, b.x);
        let d = b.x + b.y * r;
        return vec2<f32>(ct_div_f(a.x + a.y * r, d), ct_div_f(a.y - a.x * r, d));
    }
    if (ai > ar) {
        let r = ct_div_f(b.x, b.y);
        let d = b.x * r + b.y;
        return vec2<f32>(ct_div_f(a.x * r + a.y, d), ct_div_f(a.y * r - a.x, d));
    }
    return vec2<f32>(b.x * b.y, b.x * b.y);
}

// helper: ct_cdiv_d
// requires: ct_div_d
// features: shader-f64
// ct_cdiv_f for complex128
fn ct_cdiv_d(a: vec2<f64>, b: vec2<f64>) -> vec2<f64> {
    let ar = abs(b.x);
    let ai = abs(b.y);
    if (ar >= ai) {
        if (ar == 0.0lf) {
            return vec2<f64>(ct_div_d(a.x, ar), ct_div_d(a.y, ar));
        }
        let r = ct_div_d(b.y, b.x);
        let d = b.x + b.y * r;
        return vec2<f64>(ct_div_d(a.x + a.y * r, d), ct_div_d(a.y - a.x * r, d));
    }
    if (ai > ar) {
        let r = ct_div_d(b.x, b.y);
        let d = b.x * r + b.y;
        return vec2<f64>(ct_div_d(a.x * r + a.y, d), ct_div_d(a.y * r - a.x, d));
    }
    return vec2<f64>(b.x * b.y, b.x * b.y);
}

// helper: ct_cexp_f
// exp(x) (cos y + i sin y); a zero imaginary part stays exactly exp(x) + 0j (with its sign)
fn ct_cexp_f(z: vec2<f32>) -> vec2<f32> {
    let e = exp(z.x);
    if (z.y == 0.0f) { return vec2<f32>(e, z.y); }
    return vec2<f32>(e * cos(z.y), e * sin(z.y));
}

// helper: ct_cexp_d
// requires: ct_exp_d, ct_cos_d, ct_sin_d
// features: shader-f64
fn ct_cexp_d(z: vec2<f64>) -> vec2<f64> {
    let e = ct_exp_d(z.x);
    if (z.y == 0.0lf) { return vec2<f64>(e, z.y); }
    return vec2<f64>(e * ct_cos_d(z.y), e * ct_sin_d(z.y));
}

// helper: ct_clog_f
// requires: ct_hypot, ct_catan2_f
// log|z| + i phase(z). Near |z| == 1 log|z| is small and log(hypot) would lose its digits: there
// it is log1p(d) / 2 with d = x^2 + y^2 - 1 from fmas (exact where y is small, as it is when the
// phase is small too), and log1p(d) = log(u) d / (u - 1), u = 1 + d (Goldberg's form)
fn ct_clog_f(z: vec2<f32>) -> vec2<f32> {
    let ax = max(abs(z.x), abs(z.y));
    let ay = min(abs(z.x), abs(z.y));
    var re = log(ct_hypot(z.x, z.y));
    if (ax > 0.5f && ax < 1.5f && ay < 0.75f) {
        let d = fma(ay, ay, fma(ax, ax, -1.0f));
        let u = 1.0f + d;
        re = 0.5f * select(log(u) * d / (u - 1.0f), d, u == 1.0f);
    }
    return vec2<f32>(re, ct_catan2_f(z.y, z.x));
}

// helper: ct_clog_d
// requires: ct_hypot_d, ct_log_d, ct_log1p_d, ct_atan2_d
// features: shader-f64
// ct_clog_f for complex128 (the float64 library's log1p)
fn ct_clog_d(z: vec2<f64>) -> vec2<f64> {
    let ax = max(abs(z.x), abs(z.y));
    let ay = min(abs(z.x), abs(z.y));
    var re = ct_log_d(ct_hypot_d(z.x, z.y));
    if (ax > 0.5lf && ax < 1.5lf && ay < 0.75lf) {
        re = 0.5lf * ct_log1p_d(fma(ay, ay, fma(ax, ax, -1.0lf)));
    }
    return vec2<f64>(re, ct_atan2_d(z.y, z.x));
}

// helper: ct_csqrt_f
// requires: ct_hypot, ct_isinf, ct_copysign, ct_div_f
// the principal root: t = sqrt((|x| + |z|) / 2) (halved before the sum: no overflow), then the
// other part y / 2t; a zero keeps the sign of its imaginary part, an infinite one gives inf
fn ct_csqrt_f(z: vec2<f32>) -> vec2<f32> {
    if (z.x == 0.0f && z.y == 0.0f) { return vec2<f32>(0.0f, z.y); }
    if (ct_isinf(z.y)) { return vec2<f32>(abs(z.y), z.y); }
    let t = sqrt(0.5f * abs(z.x) + 0.5f * ct_hypot(z.x, z.y));
    if (z.x >= 0.0f) { return vec2<f32>(t, ct_div_f(z.y, 2.0f * t)); }
    return vec2<f32>(ct_div_f(abs(z.y), 2.0f * t), ct_copysign(t, z.y));
}

// helper: ct_csqrt_d
// requires: ct_hypot_d, ct_isinf_d, ct_copysign_d, ct_div_d
// features: shader-f64
fn ct_csqrt_d(z: vec2<f64>) -> vec2<f64> {
    if (z.x == 0.0lf && z.y == 0.0lf) { return vec2<f64>(0.0lf, z.y); }
    if (ct_isinf_d(z.y)) { return vec2<f64>(abs(z.y), z.y); }
    let t = sqrt(0.5lf * abs(z.x) + 0.5lf * ct_hypot_d(z.x, z.y));
    if (z.x >= 0.0lf) { return vec2<f64>(t, ct_div_d(z.y, 2.0lf * t)); }
    return vec2<f64>(ct_div_d(abs(z.y), 2.0lf * t), ct_copysign_d(t, z.y));
}

// helper: ct_catan2_f
// requires: ct_div_f, ct_isnan, ct_isinf, ct_copysign
// atan2(y, x) to a few ulps (the phase of complex64 values: lavapipe's f32 atan2 was off by
// hundreds of ulps for small angles): t = min/max in [0, 1], reduced past tan(pi/8) by
// atan(t) = pi/4 + atan((t - 1) / (t + 1)), the series to t^15, then the octant; zeros and
// infinities as C's atan2 (numpy's angle)
fn ct_catan2_f(y: f32, x: f32) -> f32 {
    if (ct_isnan(x) || ct_isnan(y)) { return x + y; }
    let ax = abs(x);
    let ay = abs(y);
    let neg_x = x < 0.0f || (x == 0.0f && (bitcast<u32>(x) & 0x80000000u) != 0u);
    if (ay == 0.0f) { return ct_copysign(select(0.0f, 3.14159265358979f, neg_x), y); }
    if (ax == 0.0f) { return ct_copysign(1.57079632679490f, y); }
    if (ct_isinf(ax) && ct_isinf(ay)) {
        return ct_copysign(select(0.785398163397448f, 2.35619449019234f, neg_x), y);
    }
    var t = ct_div_f(min(ax, ay), max(ax, ay));
    var base = 0.0f;
    if (t > 0.414213562373095f) {
        t = ct_div_f(t - 1.0f, t + 1.0f);
        base = 0.785398163397448f;
    }
    let t2 = t * t;
    let p = -0.333333333333333f + t2 * (0.2f + t2 * (-0.142857142857143f + t2 * (
        0.111111111111111f + t2 * (-0.0909090909090909f + t2 * (0.0769230769230769f
        + t2 * -0.0666666666666667f)))));
    var r = base + (t + t * t2 * p);
    if (ay > ax) { r = 1.57079632679490f - r; }
    if (x < 0.0f) { r = 3.14159265358979f - r; }
    return ct_copysign(r, y);
}

// helper: ct_cabs_f
// requires: ct_hypot
// abs(z): sqrt(x^2 + y^2) where the squares can neither overflow nor underflow (within an ulp
// or so of the exact value; the common case, at the cost of a few operations), else the
// library's scaled hypot (infinities, NaNs, huge and tiny parts)
fn ct_cabs_f(z: vec2<f32>) -> f32 {
    let m = max(abs(z.x), abs(z.y));
    if (m > 1.0e-18f && m < 1.0e18f) { return sqrt(z.x * z.x + z.y * z.y); }
    return ct_hypot(z.x, z.y);
}

// helper: ct_cabs_d
// requires: ct_hypot_d
// features: shader-f64
// ct_cabs_f for complex128
fn ct_cabs_d(z: vec2<f64>) -> f64 {
    let m = max(abs(z.x), abs(z.y));
    if (m > 1.0e-150lf && m < 1.0e150lf) { return sqrt(z.x * z.x + z.y * z.y); }
    return ct_hypot_d(z.x, z.y);
}

// helper: ct_cnorm_f
// |z|^2, for abs(z) compared with a constant (complexes.abs_compare)
fn ct_cnorm_f(z: vec2<f32>) -> f32 {
    return z.x * z.x + z.y * z.y;
}

// helper: ct_cnorm_d
// features: shader-f64
fn ct_cnorm_d(z: vec2<f64>) -> f64 {
    return z.x * z.x + z.y * z.y;
}

// helper: ct_copaque_f
// requires: ct_zero
// the value, unknown to the driver's compiler (as ct_opaque_f): a constant operand of a product
// or quotient, whose zero parts a driver would fold away
fn ct_copaque_f(v: vec2<f32>) -> vec2<f32> {
    return bitcast<vec2<f32>>(bitcast<vec2<u32>>(v) ^ vec2<u32>(ct_zero()));
}

// helper: ct_copaque_d
// requires: ct_zero
// features: shader-f64, shader-int64
fn ct_copaque_d(v: vec2<f64>) -> vec2<f64> {
    return bitcast<vec2<f64>>(bitcast<vec2<u64>>(v) ^ vec2<u64>(u64(ct_zero())));
}
