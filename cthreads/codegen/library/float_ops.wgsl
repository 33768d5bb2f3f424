// float32 operators with Python's exact meaning on every driver (/, %, //, fmod, **) and
// float-to-int conversions that saturate (codegen/float_ops.py says how they are chosen).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_fused_f32
// Float division and remainders with Python's exact results: WGSL lets f32 division be off by 2.5
// ulp, and NVIDIA's driver is (27.0 / 1.0 came out 26.999998 in a 27 * y / y test), which also
// made `%` (a - b * trunc(a / b)) off by a whole b. The quotient is corrected with its exact
// residual; fmod's integer quotient is fixed with the residual's sign. Where fma rounds once (GPU
// drivers: ct_fused_f32, a pipeline constant the runtime sets per device, docs/language.md) the
// residual is one fma; where it may round twice (Vulkan allows that, and lavapipe's does) it comes
// from Dekker's exact product (ct_residual_f), or, on devices with shader-f64, the same helpers
// compute in float64 (F64_FORMS). ct_zero() (emitted per kernel, codegen/__init__.py) is 0 at run
// time but unknown to the driver's compiler, which folded fma(-(x / y), y, x) to 0 otherwise
// (NVIDIA).
override ct_fused_f32: bool = true;

// helper: ct_hide_f
// requires: ct_zero
// x, unknown to the driver's compiler: keeps it from re-associating the exact transformations ((c
// - (c - a)) is not a) and from folding a division by a zero it sees
fn ct_hide_f(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ ct_zero());
}

// helper: ct_mul_err_f
// requires: ct_hide_f
// a * b - p exactly for p = fl(a * b), without fma (Veltkamp's split into 12-bit halves, Dekker's
// product); |a|, |b| <= 2^115 (else NaN) and |a * b| >= 2^-100 (else inexact)
fn ct_mul_err_f(a: f32, b: f32, p: f32) -> f32 {
    let ca = ct_hide_f(4097.0f * a);
    let ah = ct_hide_f(ca - ct_hide_f(ca - a));
    let al = ct_hide_f(a - ah);
    let cb = ct_hide_f(4097.0f * b);
    let bh = ct_hide_f(cb - ct_hide_f(cb - b));
    let bl = ct_hide_f(b - bh);
    let e1 = ct_hide_f(ct_hide_f(ah * bh - p) + ct_hide_f(ah * bl));
    return ct_hide_f(e1 + ct_hide_f(al * bh)) + ct_hide_f(al * bl);
}

// helper: ct_residual_f
// requires: ct_hide_f, ct_mul_err_f
// n - a * b with one rounding, for a * b within a factor 2 of n (a quotient's residual)
fn ct_residual_f(n: f32, a: f32, b: f32) -> f32 {
    let p = ct_hide_f(a * b);
    return ct_hide_f(n - p) - ct_mul_err_f(a, b, p);
}

// helper: ct_div0_f
// requires: ct_isnan
// x / y for y == +-0 (IEEE: +-inf, NaN for 0 / 0 and NaN / 0), made from the bits: a driver that
// sees the zero divisor folded x / 0.0 to 0.0 (lavapipe)
fn ct_div0_f(x: f32, y: f32) -> f32 {
    if (x == 0.0f || ct_isnan(x)) { return bitcast<f32>(0x7fc00000u); }
    return bitcast<f32>(0x7f800000u | ((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u));
}

// helper: ct_div_exact_f
// requires: ct_hide_f, ct_residual_f, ct_isfinite
// The quotient without a single-rounding fma: the driver's (the divisor hidden), kept when its
// exact residual shows it is the nearest float, else corrected when the candidate's own exact
// residual is smaller (so a correction that rounds can never make a right quotient wrong); tiny or
// huge operands keep the driver's quotient.
fn ct_div_exact_f(x: f32, y: f32) -> f32 {
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
}

// helper: ct_div_f
// requires: ct_isfinite, ct_fused_f32, ct_div_exact_f, ct_hide_f, ct_zero
// an exact residual of zero keeps q (q + 0.0 would turn -0.0 / y into +0.0); the correction
// applies where q is finite and not zero (then r and c are finite too), tested on q, which the
// driver cannot see through: NVIDIA's takes r and c, results of float arithmetic, to be finite,
// and picked c = nan for inf / y; the divisor is hidden too, or NVIDIA's driver folds t / t to
// 1.0 (0.0 / 0.0 is nan)
fn ct_div_f(x: f32, y: f32) -> f32 {
    if (!ct_fused_f32) { return ct_div_exact_f(x, y); }
    let q = bitcast<f32>(bitcast<u32>(x / ct_hide_f(y)) ^ ct_zero());
    let r = fma(-q, y, x);
    let c = q + r / y;
    return select(q, c, r != 0.0f && ct_isfinite(q) && q != 0.0f);
}

// helper: ct_fmodq_f
// requires: ct_copysign, ct_fused_f32, ct_fmodq_exact_f
// (fmod(a, b), trunc(a / b)), both exact, for finite a, finite nonzero b and |trunc(a / b)| <
// 2^24: the quotient's truncation corrected with the sign and size of the exact residual, which is
// then the remainder (with a's sign, as fmod's zero has)
fn ct_fmodq_f(a: f32, b: f32) -> vec2<f32> {
    if (!ct_fused_f32) { return ct_fmodq_exact_f(a, b); }
    var q = trunc(a / b);
    // a / b may be 2.5 ulp off: from 2^23 on that is several whole units, so q is first moved
    // by the residual's own quotient (a few units at most, computed well), then by one
    q = q + trunc(fma(-q, b, a) / b);
    let s = select(-1.0f, 1.0f, (a < 0.0f) == (b < 0.0f));
    let r = fma(-q, b, a);
    if (r != 0.0f && ((r < 0.0f) != (a < 0.0f))) {
        q = q - s;
    } else if (abs(r) >= abs(b)) {
        q = q + s;
    }
    return vec2<f32>(ct_copysign(fma(-q, b, a), a), q);
}

// helper: ct_fmodq_exact_f
// requires: ct_hide_f, ct_residual_f, ct_copysign
// the same without a single-rounding fma: tiny and huge divisors are scaled by a power of 2 first
// (exact both ways) so that the residuals are exact
fn ct_fmodq_exact_f(a: f32, b: f32) -> vec2<f32> {
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
}

// helper: ct_fmod
// requires: ct_isfinite, ct_isinf, ct_isnan, ct_fmodq_f
// quotients beyond 2^24: the driver's `%`, as precise as float32 allows (docs/language.md)
fn ct_fmod(a: f32, b: f32) -> f32 {
    if (!ct_isfinite(a) || b == 0.0f || ct_isnan(b)) { return bitcast<f32>(0x7fc00000u); }
    if (ct_isinf(b)) { return a; }
    if (!(abs(trunc(a / b)) < 16777216.0f)) { return a % b; }
    return ct_fmodq_f(a, b).x;
}

// helper: ct_mod_f
// requires: ct_copysign, ct_fmod
fn ct_mod_f(a: f32, b: f32) -> f32 {
    var r = ct_fmod(a, b);
    if (r == 0.0f) { return ct_copysign(0.0f, b); }
    if ((r < 0.0f) != (b < 0.0f)) { r = r + b; }
    return r;
}

// helper: ct_floordiv_f
// requires: ct_copysign, ct_fmod, ct_div0_f, ct_fmodq_f, ct_isfinite, ct_isinf
// the exact truncated quotient, one less where the remainder's sign differs from b's; quotients
// beyond 2^24, infinities and NaN as numpy (from fmod, rounded to an integer)
fn ct_floordiv_f(a: f32, b: f32) -> f32 {
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
}

// helper: ct_pow_f
// requires: ct_isnan, ct_isinf
// Python's (IEEE's) special cases first, as ct_pow_d: the driver's pow is only asked for finite
// nonzero bases and finite exponents (its own special cases differ between drivers)
fn ct_pow_f(a: f32, b: f32) -> f32 {
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
}

// helper: ct_i32_f
// requires: ct_zero
// Float-to-int conversions that saturate at the int's limits (docs/language.md): WGSL clamps to
// the largest float of the source type below the limit (2147483520 for f32), so values at or past
// 2^31 (2^32, 2^63) take the limit explicitly; negative floats into uint32 wrap as their int32
// value would. The result is hidden from the driver's compiler (ct_zero()), which folded
// f32(i32(x)) into trunc(x), giving -0.0 (lavapipe).
fn ct_i32_f(v: f32) -> i32 {
    return bitcast<i32>(bitcast<u32>(select(i32(v), 2147483647i, v >= 0x1p31f)) ^ ct_zero());
}

// helper: ct_u32_f
// requires: ct_zero
fn ct_u32_f(v: f32) -> u32 {
    let u = select(select(u32(v), 4294967295u, v >= 0x1p32f), bitcast<u32>(i32(v)), v < 0.0f);
    return u ^ ct_zero();
}

// helper: ct_i64_f
// requires: ct_zero
// features: shader-int64
fn ct_i64_f(v: f32) -> i64 {
    let w = select(i64(v), 9223372036854775807li, v >= 0x1p63f);
    return bitcast<i64>(bitcast<u64>(w) ^ u64(ct_zero()));
}

// helper: ct_i32_d
// requires: ct_zero
// features: shader-f64
fn ct_i32_d(v: f64) -> i32 {
    return bitcast<i32>(bitcast<u32>(select(i32(v), 2147483647i, v >= 0x1p31lf)) ^ ct_zero());
}

// helper: ct_u32_d
// requires: ct_zero
// features: shader-f64
fn ct_u32_d(v: f64) -> u32 {
    let u = select(select(u32(v), 4294967295u, v >= 0x1p32lf), bitcast<u32>(i32(v)), v < 0.0lf);
    return u ^ ct_zero();
}

// helper: ct_i64_d
// requires: ct_zero
// features: shader-f64, shader-int64
fn ct_i64_d(v: f64) -> i64 {
    let w = select(i64(v), 9223372036854775807li, v >= 0x1p63lf);
    return bitcast<i64>(bitcast<u64>(w) ^ u64(ct_zero()));
}
