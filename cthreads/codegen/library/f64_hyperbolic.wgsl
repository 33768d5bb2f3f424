// float64 sinh, cosh, tanh, asinh, acosh, atanh and hypot.
// Built from exact operations only (no float32 step); methods, accuracy and the differences
// from Python: docs/float64.md. Constants are exact hex literals (tests/codegen/test_library.py
// checks the polynomial coefficients).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_exp_pair_d
// requires: ct_hide_d, ct_two_sum_d, ct_pow2i_d, ct_expm1_poly_d
// features: shader-f64
// e^a as an unrounded (hi, lo) pair, for |a| < 700 (the sum of sinh and cosh)
fn ct_exp_pair_d(a: f64) -> vec2<f64> {
    let k = round(a * 0x1.71547652b82fep+0lf);
    let r1 = fma(-k, 0x1.62e42ff000000p-1lf, a);
    let r = ct_two_sum_d(r1, -ct_hide_d(k * -0x1.718432a1b0e26p-35lf));
    let p = ct_expm1_poly_d(r.x);
    let q = ct_hide_d(fma(r.y, 1.0lf + p, p));
    let y = ct_hide_d(1.0lf + q);
    let yl = ct_hide_d(1.0lf - y) + q;
    let sc = ct_pow2i_d(i32(k));
    return vec2<f64>(y * sc, yl * sc);
}

// helper: ct_sinhcosh_d
// requires: ct_hide_d, ct_exp_pair_d
// features: shader-f64
// (e^a -+ e^-a) / 2 from the pair, the difference kept as a double-double
fn ct_sinhcosh_d(a: f64, sign: f64) -> f64 {
    let e = ct_exp_pair_d(a);
    let inv = sign / e.x;
    let h = ct_hide_d(e.x + inv);
    let hl = inv - ct_hide_d(h - e.x);
    return 0.5lf * (h + ct_hide_d(e.y + hl - inv * e.y / e.x));
}

// helper: ct_sinh_d
// requires: ct_isnan_d, ct_copysign_d, ct_two_sum_d, ct_exp_dd_d, ct_sinhcosh_d
// features: shader-f64
fn ct_sinh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var s = 0.0lf;
    if (a < 1.0lf) {
        let z = a * a;
        s = a + a * z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.71b8ef6dcf572p-66lf, 0x1.2f49b46814157p-57lf), 0x1.952c77030ad4ap-49lf), 0x1.ae7f3e733b81fp-41lf), 0x1.6124613a86d09p-33lf), 0x1.ae64567f544e4p-26lf), 0x1.71de3a556c734p-19lf), 0x1.a01a01a01a01ap-13lf), 0x1.1111111111111p-7lf), 0x1.5555555555555p-3lf);
    } else if (a < 22.0lf) {
        s = ct_sinhcosh_d(a, -1.0lf);
    } else {
        let h = ct_two_sum_d(a, -0x1.62e42fefa39efp-1lf);
        s = ct_exp_dd_d(h.x, h.y - 0x1.abc9e3b39803fp-56lf);
    }
    return ct_copysign_d(s, x);
}

// helper: ct_cosh_d
// requires: ct_isnan_d, ct_two_sum_d, ct_exp_dd_d, ct_sinhcosh_d
// features: shader-f64
fn ct_cosh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return 1.0lf; }
    if (a < 1.0lf) {
        let z = a * a;
        return 1.0lf + z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.0ce396db7f853p-70lf, 0x1.e542ba4020225p-62lf), 0x1.6827863b97d97p-53lf), 0x1.ae7f3e733b81fp-45lf), 0x1.93974a8c07c9dp-37lf), 0x1.1eed8eff8d898p-29lf), 0x1.27e4fb7789f5cp-22lf), 0x1.a01a01a01a01ap-16lf), 0x1.6c16c16c16c17p-10lf), 0x1.5555555555555p-5lf), 0x1.0000000000000p-1lf);
    }
    if (a < 22.0lf) { return ct_sinhcosh_d(a, 1.0lf); }
    let h = ct_two_sum_d(a, -0x1.62e42fefa39efp-1lf);
    return ct_exp_dd_d(h.x, h.y - 0x1.abc9e3b39803fp-56lf);
}

// helper: ct_tanh_d
// requires: ct_isnan_d, ct_copysign_d, ct_mul_err_d, ct_hide_d, ct_expm1_d
// features: shader-f64
// below 1: sinh / cosh from their series as (hi, lo) pairs, divided with one correction; above: 1
// - 2 / (e^2a + 1)
fn ct_tanh_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var t = 1.0lf;
    if (a < 1.0lf) {
        let z = a * a;
        let sl = a * z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.71b8ef6dcf572p-66lf, 0x1.2f49b46814157p-57lf), 0x1.952c77030ad4ap-49lf), 0x1.ae7f3e733b81fp-41lf), 0x1.6124613a86d09p-33lf), 0x1.ae64567f544e4p-26lf), 0x1.71de3a556c734p-19lf), 0x1.a01a01a01a01ap-13lf), 0x1.1111111111111p-7lf), 0x1.5555555555555p-3lf);
        let cl = z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.0ce396db7f853p-70lf, 0x1.e542ba4020225p-62lf), 0x1.6827863b97d97p-53lf), 0x1.ae7f3e733b81fp-45lf), 0x1.93974a8c07c9dp-37lf), 0x1.1eed8eff8d898p-29lf), 0x1.27e4fb7789f5cp-22lf), 0x1.a01a01a01a01ap-16lf), 0x1.6c16c16c16c17p-10lf), 0x1.5555555555555p-5lf), 0x1.0000000000000p-1lf);
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
}

// helper: ct_asinh_d
// requires: ct_isnan_d, ct_isinf_d, ct_copysign_d, ct_log_d, ct_log1p_d
// features: shader-f64
fn ct_asinh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || ct_isinf_d(x)) { return x; }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    var r = 0.0lf;
    if (a > 0x1p28lf) {
        r = ct_log_d(a) + 0x1.62e42fefa39efp-1lf;
    } else if (a > 2.0lf) {
        r = ct_log_d(2.0lf * a + 1.0lf / (sqrt(fma(a, a, 1.0lf)) + a));
    } else {
        let z = a * a;
        r = ct_log1p_d(a + z / (1.0lf + sqrt(1.0lf + z)));
    }
    return ct_copysign_d(r, x);
}

// helper: ct_acosh_d
// requires: ct_isnan_d, ct_isinf_d, ct_mul_err_d, ct_hide_d, ct_two_sum_d, ct_log_d, ct_log1p_d, ct_sqrt_dd_d
// features: shader-f64, shader-int64
fn ct_acosh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || !(x >= 1.0lf)) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (ct_isinf_d(x)) { return x; }
    if (x > 0x1p28lf) { return ct_log_d(x) + 0x1.62e42fefa39efp-1lf; }
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
}

// helper: ct_atanh_d
// requires: ct_isnan_d, ct_copysign_d, ct_residual_d, ct_hide_d, ct_log1p_d
// features: shader-f64, shader-int64
fn ct_atanh_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || abs(x) > 1.0lf) { return bitcast<f64>(0x7ff8000000000000lu); }
    let a = abs(x);
    if (a < 0x1p-28lf) { return x; }
    if (a == 1.0lf) { return ct_copysign_d(bitcast<f64>(0x7ff0000000000000lu), x); }
    // atanh a = log1p(2a / (1 - a)) / 2, with 1 - a and the quotient as pairs
    let d = ct_hide_d(1.0lf - a);
    let dl = ct_hide_d(1.0lf - d) - a;
    let n = a + a;
    let v = ct_hide_d(n / d);
    let vl = (ct_residual_d(n, v, d) - v * dl) / d;
    return ct_copysign_d(0.5lf * (ct_log1p_d(v) + vl / (1.0lf + v)), x);
}

// helper: ct_hypot_d
// requires: ct_isnan_d, ct_isinf_d, ct_mul_err_d, ct_residual_d, ct_hide_d, ct_two_sum_d, ct_scale_d, ct_exponent_d
// features: shader-f64, shader-int64
// sqrt(x^2 + y^2) on values scaled by a power of two, the sum of squares as a double-double, one
// Newton correction of the square root
fn ct_hypot_d(a: f64, b: f64) -> f64 {
    if (ct_isinf_d(a) || ct_isinf_d(b)) { return bitcast<f64>(0x7ff0000000000000lu); }
    if (ct_isnan_d(a) || ct_isnan_d(b)) { return bitcast<f64>(0x7ff8000000000000lu); }
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
}
