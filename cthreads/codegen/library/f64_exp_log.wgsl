// float64 exp, exp2, expm1, log, log2, log10, log1p and pow.
// Built from exact operations only (no float32 step); methods, accuracy and the differences
// from Python: docs/float64.md. Constants are exact hex literals (tests/codegen/test_library.py
// checks the polynomial coefficients).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_expm1_poly_d
// features: shader-f64
fn ct_expm1_poly_d(r: f64) -> f64 {
    return fma(r * r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, 0x1.93974a8c07c9dp-37lf, 0x1.6124613a86d09p-33lf), 0x1.1eed8eff8d898p-29lf), 0x1.ae64567f544e4p-26lf), 0x1.27e4fb7789f5cp-22lf), 0x1.71de3a556c734p-19lf), 0x1.a01a01a01a01ap-16lf), 0x1.a01a01a01a01ap-13lf), 0x1.6c16c16c16c17p-10lf), 0x1.1111111111111p-7lf), 0x1.5555555555555p-5lf), 0x1.5555555555555p-3lf), 0x1.0000000000000p-1lf), r);
}

// helper: ct_exp_dd_d
// requires: ct_isnan_d, ct_hide_d, ct_two_sum_d, ct_scale_d, ct_expm1_poly_d
// features: shader-f64, shader-int64
// e^(hi + lo), |lo| small: k = round(hi / ln2), r = hi - k ln2 (Cody-Waite, r kept as a double-
// double), e^r - 1 by its Taylor polynomial, scaled by 2^k
fn ct_exp_dd_d(hi: f64, lo: f64) -> f64 {
    if (ct_isnan_d(hi)) { return hi; }
    if (hi > 709.8lf) { return bitcast<f64>(0x7ff0000000000000lu); }
    if (hi < -745.2lf) { return 0.0lf; }
    let k = round(hi * 0x1.71547652b82fep+0lf);
    let r1 = fma(-k, 0x1.62e42ff000000p-1lf, hi);
    let t = ct_hide_d(k * -0x1.718432a1b0e26p-35lf);
    let r = ct_two_sum_d(r1, -t);
    let rh = r.x;
    let rl = r.y + lo;
    let p = ct_expm1_poly_d(rh);
    return ct_scale_d(1.0lf + ct_hide_d(fma(rl, 1.0lf + p, p)), i32(k));
}

// helper: ct_exp_d
// requires: ct_exp_dd_d
// features: shader-f64
fn ct_exp_d(x: f64) -> f64 {
    return ct_exp_dd_d(x, 0.0lf);
}

// helper: ct_exp2_d
// requires: ct_isnan_d, ct_mul_err_d, ct_hide_d, ct_scale_d, ct_expm1_poly_d
// features: shader-f64, shader-int64
fn ct_exp2_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (x > 1024.5lf) { return bitcast<f64>(0x7ff0000000000000lu); }
    if (x < -1075.5lf) { return 0.0lf; }
    let k = round(x);
    let f = x - k;
    let rh = ct_hide_d(f * 0x1.62e42fefa39efp-1lf);
    let rl = ct_mul_err_d(f, 0x1.62e42fefa39efp-1lf, rh) + f * 0x1.abc9e3b39803fp-56lf;
    let p = ct_expm1_poly_d(rh);
    return ct_scale_d(1.0lf + ct_hide_d(fma(rl, 1.0lf + p, p)), i32(k));
}

// helper: ct_expm1_d
// requires: ct_isnan_d, ct_hide_d, ct_pow2i_d, ct_scale_d, ct_expm1_poly_d
// features: shader-f64, shader-int64
fn ct_expm1_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (x > 709.8lf) { return bitcast<f64>(0x7ff0000000000000lu); }
    if (x < -40.0lf) { return -1.0lf; }
    if (abs(x) < 0x1p-54lf) { return x; }
    if (abs(x) <= 0.34657359027997264lf) { return ct_expm1_poly_d(x); }
    let k = round(x * 0x1.71547652b82fep+0lf);
    let r1 = ct_hide_d(fma(-k, 0x1.62e42ff000000p-1lf, x));
    let t = ct_hide_d(k * -0x1.718432a1b0e26p-35lf);
    let rh = ct_hide_d(r1 - t);
    let rl = ct_hide_d(r1 - rh) - t;
    let p0 = ct_expm1_poly_d(rh);
    let p = ct_hide_d(fma(rl, 1.0lf + p0, p0));
    let ki = i32(k);
    if (ki > 56i) { return ct_scale_d(1.0lf + p, ki); }
    let tk = ct_pow2i_d(ki);
    return ct_hide_d(fma(tk, p, tk - 1.0lf));
}

// helper: ct_log_core_d
// requires: ct_mul_err_d, ct_residual_d, ct_hide_d
// features: shader-f64, shader-int64
// x = 2^e * m, sqrt(1/2) <= m < sqrt(2); log m = 2 atanh(s), s = (m - 1) / (m + 1), with 2s and
// 2s^3/3 as double-doubles. Returns (hi, lo) with hi + lo = log(x) to ~2^-64, for finite x > 0.
fn ct_log_core_d(x: f64) -> vec3<f64> {
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
    let th = ct_hide_d(ch * 0x1.5555555555555p-1lf);
    let tl = ct_mul_err_d(ch, 0x1.5555555555555p-1lf, th) + (ch * 0x1.5555555555555p-55lf + cl * 0x1.5555555555555p-1lf);
    let z = zh;
    let tail = ch * zh * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.2f684bda12f68p-4lf, 0x1.47ae147ae147bp-4lf), 0x1.642c8590b2164p-4lf), 0x1.8618618618618p-4lf), 0x1.af286bca1af28p-4lf), 0x1.e1e1e1e1e1e1ep-4lf), 0x1.1111111111111p-3lf), 0x1.3b13b13b13b14p-3lf), 0x1.745d1745d1746p-3lf), 0x1.c71c71c71c71cp-3lf), 0x1.2492492492492p-2lf), 0x1.999999999999ap-2lf);
    let ah = 2.0lf * sh;
    let s1 = ct_hide_d(ah + th);
    let l1 = ct_hide_d(th - ct_hide_d(s1 - ah)) + (2.0lf * sl + tl + tail);
    let s2 = ct_hide_d(s1 + l1);
    return vec3<f64>(f64(e), s2, l1 - ct_hide_d(s2 - s1));
}

// helper: ct_log_dd_d
// requires: ct_hide_d, ct_two_sum_d, ct_log_core_d
// features: shader-f64
fn ct_log_dd_d(x: f64) -> vec2<f64> {
    let c = ct_log_core_d(x);
    let ef = c.x;
    let eh = ct_hide_d(ef * 0x1.62e42ff000000p-1lf);
    let s = ct_two_sum_d(eh, c.y);
    let hi = s.x;
    let lo = s.y + (c.z + ef * -0x1.718432a1b0e26p-35lf);
    let h2 = ct_hide_d(hi + lo);
    return vec2<f64>(h2, lo - ct_hide_d(h2 - hi));
}

// helper: ct_log_special_d
// requires: ct_isnan_d
// features: shader-f64, shader-int64
// log of the special values: nan for x < 0 or nan, -inf for 0, inf for inf; else 0
fn ct_log_special_d(x: f64) -> f64 {
    if (x == 0.0lf) { return -bitcast<f64>(0x7ff0000000000000lu); }
    if (ct_isnan_d(x) || x < 0.0lf) { return bitcast<f64>(0x7ff8000000000000lu); }
    return x;
}

// helper: ct_log_d
// requires: ct_isfinite_d, ct_hide_d, ct_log_dd_d, ct_log_special_d
// features: shader-f64
fn ct_log_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let l = ct_log_dd_d(x);
    return ct_hide_d(l.x + l.y);
}

// helper: ct_log2_d
// requires: ct_isfinite_d, ct_mul_err_d, ct_hide_d, ct_two_sum_d, ct_log_core_d, ct_log_special_d
// features: shader-f64
// log2 = e + log(m) / ln 2 (exact at powers of two)
fn ct_log2_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let c = ct_log_core_d(x);
    let ph = ct_hide_d(c.y * 0x1.71547652b82fep+0lf);
    let pl = ct_mul_err_d(c.y, 0x1.71547652b82fep+0lf, ph) + (c.y * 0x1.777d0ffda0d24p-56lf + c.z * 0x1.71547652b82fep+0lf);
    let s = ct_two_sum_d(c.x, ph);
    return ct_hide_d(s.x + ct_hide_d(s.y + pl));
}

// helper: ct_log10_d
// requires: ct_isfinite_d, ct_mul_err_d, ct_hide_d, ct_two_sum_d, ct_log_core_d, ct_log_special_d
// features: shader-f64
fn ct_log10_d(x: f64) -> f64 {
    if (!(x > 0.0lf) || !ct_isfinite_d(x)) { return ct_log_special_d(x); }
    let c = ct_log_core_d(x);
    let ph = ct_hide_d(c.y * 0x1.bcb7b1526e50ep-2lf);
    let pl = ct_mul_err_d(c.y, 0x1.bcb7b1526e50ep-2lf, ph) + (c.y * 0x1.95355baaafad3p-57lf + c.z * 0x1.bcb7b1526e50ep-2lf);
    let ef = c.x;
    let s = ct_two_sum_d(ct_hide_d(ef * 0x1.3441350a00000p-2lf), ph);
    return ct_hide_d(s.x + ct_hide_d(s.y + (pl + ef * -0x1.0c0219dc1da99p-39lf)));
}

// helper: ct_log1p_d
// requires: ct_isnan_d, ct_hide_d, ct_two_sum_d, ct_log_dd_d
// features: shader-f64, shader-int64
fn ct_log1p_d(x: f64) -> f64 {
    if (ct_isnan_d(x) || x < -1.0lf) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (x == -1.0lf) { return -bitcast<f64>(0x7ff0000000000000lu); }
    if (x > 0x1p1020lf) {
        if (x > 0x1.fffffffffffffp1023lf) { return x; }
        let l = ct_log_dd_d(x);
        return ct_hide_d(l.x + l.y);
    }
    if (abs(x) < 0x1p-54lf) { return x; }
    let u = ct_two_sum_d(1.0lf, x);
    let l = ct_log_dd_d(u.x);
    return ct_hide_d(l.x + ct_hide_d(l.y + u.y / u.x));
}

// helper: ct_pow_d
// requires: ct_isnan_d, ct_isinf_d, ct_copysign_d, ct_mul_err_d, ct_hide_d, ct_exp_dd_d, ct_log_dd_d
// features: shader-f64, shader-int64
// |x|^y = e^(y log|x|) with log|x| and the product as double-doubles; integral exponents up to 64
// use exact binary powering when every step is exact; Python's special cases first.
fn ct_pow_d(x: f64, y: f64) -> f64 {
    if (y == 0.0lf || x == 1.0lf) { return 1.0lf; }
    if (ct_isnan_d(x) || ct_isnan_d(y)) { return bitcast<f64>(0x7ff8000000000000lu); }
    let ax = abs(x);
    if (ct_isinf_d(y)) {
        if (ax == 1.0lf) { return 1.0lf; }
        if ((ax > 1.0lf) == (y > 0.0lf)) { return bitcast<f64>(0x7ff0000000000000lu); }
        return 0.0lf;
    }
    let yint = trunc(y) == y;
    let yodd = yint && abs(y) < 0x1p53lf && trunc(y * 0.5lf) != y * 0.5lf;
    if (ct_isinf_d(x) || x == 0.0lf) {
        var r = 0.0lf;
        if ((y > 0.0lf) == ct_isinf_d(x)) { r = bitcast<f64>(0x7ff0000000000000lu); }
        if (yodd) { return ct_copysign_d(r, x); }
        return r;
    }
    if (y == 1.0lf) { return x; }
    if (y == 2.0lf) { return ct_hide_d(x * x); }
    if (x < 0.0lf && !yint) { return bitcast<f64>(0x7ff8000000000000lu); }
    var res = 0.0lf;
    var done = false;
    if (yint && abs(y) <= 64.0lf) {
        var k = u32(abs(y));
        var acc = 1.0lf;
        var b = ax;
        var exact = true;
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
    if (k != 0u) {
        let p = ct_hide_d(b * b);
        exact = exact && ct_mul_err_d(b, b, p) == 0.0lf;
        b = p;
    }
    if ((k & 1u) == 1u) {
        let p = ct_hide_d(acc * b);
        exact = exact && ct_mul_err_d(acc, b, p) == 0.0lf;
        acc = p;
    }
    k = k >> 1u;
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
}
