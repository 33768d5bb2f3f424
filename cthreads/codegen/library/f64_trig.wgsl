// float64 sin, cos, tan (Cody-Waite and Payne-Hanek reduction), atan, atan2, asin, acos.
// Built from exact operations only (no float32 step); methods, accuracy and the differences
// from Python: docs/float64.md. Constants are exact hex literals (tests/codegen/test_library.py
// checks the polynomial coefficients).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_rem_pio2_big_d
// requires: ct_mul_err_d, ct_hide_d
// features: shader-f64, shader-int64
// Payne-Hanek: x * 2/pi mod 4 from a 192-bit window of 2/pi's bits times the 53-bit significand
// (u64 arithmetic); returns (quadrant, r hi, r lo) with x = q pi/2 + r.
const CT_TWO_OVER_PI_D = array<u32, 46>(
    0x00000000u, 0x00000000u,
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
    0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu,
    0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu,
    0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u,
    0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u,
    0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du, 0xa9e39161u, 0x5ee61b08u,
    0x00000000u, 0x00000000u);

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
    let c0 = u64(select((T[wi + 0u] << sh) | (T[wi + 1u] >> (32u - sh)), T[wi + 0u], sh == 0u));
    let c1 = u64(select((T[wi + 1u] << sh) | (T[wi + 2u] >> (32u - sh)), T[wi + 1u], sh == 0u));
    let c2 = u64(select((T[wi + 2u] << sh) | (T[wi + 3u] >> (32u - sh)), T[wi + 2u], sh == 0u));
    let c3 = u64(select((T[wi + 3u] << sh) | (T[wi + 4u] >> (32u - sh)), T[wi + 3u], sh == 0u));
    let c4 = u64(select((T[wi + 4u] << sh) | (T[wi + 5u] >> (32u - sh)), T[wi + 4u], sh == 0u));
    let c5 = u64(select((T[wi + 5u] << sh) | (T[wi + 6u] >> (32u - sh)), T[wi + 5u], sh == 0u));
    var acc = 0lu;
    var nxt = 0lu;
    let a0 = c5 * ml;
    let b0 = c5 * mh;
    acc = acc + (a0 & 0xfffffffflu);
    let p0 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a0 >> 32u) + (b0 & 0xfffffffflu);
    nxt = b0 >> 32u;
    let a1 = c4 * ml;
    let b1 = c4 * mh;
    acc = acc + (a1 & 0xfffffffflu);
    let p1 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a1 >> 32u) + (b1 & 0xfffffffflu);
    nxt = b1 >> 32u;
    let a2 = c3 * ml;
    let b2 = c3 * mh;
    acc = acc + (a2 & 0xfffffffflu);
    let p2 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a2 >> 32u) + (b2 & 0xfffffffflu);
    nxt = b2 >> 32u;
    let a3 = c2 * ml;
    let b3 = c2 * mh;
    acc = acc + (a3 & 0xfffffffflu);
    let p3 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a3 >> 32u) + (b3 & 0xfffffffflu);
    nxt = b3 >> 32u;
    let a4 = c1 * ml;
    let b4 = c1 * mh;
    acc = acc + (a4 & 0xfffffffflu);
    let p4 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a4 >> 32u) + (b4 & 0xfffffffflu);
    nxt = b4 >> 32u;
    let a5 = c0 * ml;
    let b5 = c0 * mh;
    acc = acc + (a5 & 0xfffffffflu);
    let p5 = acc & 0xfffffffflu;
    acc = (acc >> 32u) + nxt + (a5 >> 32u) + (b5 & 0xfffffffflu);
    nxt = b5 >> 32u;
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
    var rh = ct_hide_d(hi * 0x1.921fb54442d18p+0lf);
    var rl = ct_mul_err_d(hi, 0x1.921fb54442d18p+0lf, rh) + (hi * 0x1.1a62633145c07p-54lf + lo * 0x1.921fb54442d18p+0lf);
    var qi = u32(q & 3lu);
    if (x < 0.0lf) {
        rh = -rh;
        rl = -rl;
        qi = (4u - qi) & 3u;
    }
    return vec3<f64>(f64(qi), rh, rl);
}

// helper: ct_rem_pio2_d
// requires: ct_mul_err_d, ct_hide_d, ct_two_sum_d, ct_rem_pio2_big_d
// features: shader-f64
// x = q pi/2 + r: Cody-Waite with a three-part pi/2 below 2^20, Payne-Hanek above
fn ct_rem_pio2_d(x: f64) -> vec3<f64> {
    if (abs(x) <= 0x1.921fb54442d18p-1lf) { return vec3<f64>(0.0lf, x, 0.0lf); }
    if (abs(x) >= 0x1p20lf) { return ct_rem_pio2_big_d(x); }
    let k = round(x * 0x1.45f306dc9c883p-1lf);
    let d = fma(-k, 0x1.921fb54400000p+0lf, x);
    let u = ct_hide_d(k * 0x1.0b4611a626331p-34lf);
    let ul = ct_mul_err_d(k, 0x1.0b4611a626331p-34lf, u);
    let v = ct_two_sum_d(d, -u);
    let r0 = ct_hide_d((v.y - ul) - k * 0x1.1701b839a2520p-88lf);
    let rh = ct_hide_d(v.x + r0);
    let rl = r0 - ct_hide_d(rh - v.x);
    let kq = i32(k) & 3i;
    return vec3<f64>(f64(kq), rh, rl);
}

// helper: ct_sin_k_d
// requires: ct_hide_d
// features: shader-f64
// sin(x + y), cos(x + y) for |x| <= pi/4 + tiny, |y| tiny (Taylor polynomials)
fn ct_sin_k_d(x: f64, y: f64) -> f64 {
    let z = x * x;
    let v = z * x;
    return ct_hide_d(x + fma(v, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, -0x1.2f49b46814157p-57lf, 0x1.952c77030ad4ap-49lf), -0x1.ae7f3e733b81fp-41lf), 0x1.6124613a86d09p-33lf), -0x1.ae64567f544e4p-26lf), 0x1.71de3a556c734p-19lf), -0x1.a01a01a01a01ap-13lf), 0x1.1111111111111p-7lf), -0x1.5555555555555p-3lf), y * (1.0lf - 0.5lf * z)));
}

// helper: ct_cos_k_d
// requires: ct_mul_err_d, ct_hide_d
// features: shader-f64
fn ct_cos_k_d(x: f64, y: f64) -> f64 {
    let z = ct_hide_d(x * x);
    let zl = ct_mul_err_d(x, x, z);
    let hz = 0.5lf * z;
    let w = ct_hide_d(1.0lf - hz);
    let c = z * z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.e542ba4020225p-62lf, -0x1.6827863b97d97p-53lf), 0x1.ae7f3e733b81fp-45lf), -0x1.93974a8c07c9dp-37lf), 0x1.1eed8eff8d898p-29lf), -0x1.27e4fb7789f5cp-22lf), 0x1.a01a01a01a01ap-16lf), -0x1.6c16c16c16c17p-10lf), 0x1.5555555555555p-5lf);
    return ct_hide_d(w + ct_hide_d(ct_hide_d(ct_hide_d(1.0lf - w) - hz)
                                   + (c - fma(x, y, 0.5lf * zl))));
}

// helper: ct_sin_d
// requires: ct_isfinite_d, ct_rem_pio2_d, ct_sin_k_d, ct_cos_k_d
// features: shader-f64, shader-int64
fn ct_sin_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (abs(x) < 0x1p-27lf) { return x; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    var v = 0.0lf;
    if ((q & 1u) == 0u) { v = ct_sin_k_d(t.y, t.z); } else { v = ct_cos_k_d(t.y, t.z); }
    if ((q & 2u) != 0u) { v = -v; }
    return v;
}

// helper: ct_cos_d
// requires: ct_isfinite_d, ct_rem_pio2_d, ct_sin_k_d, ct_cos_k_d
// features: shader-f64, shader-int64
fn ct_cos_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (abs(x) < 0x1p-27lf) { return 1.0lf; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    var v = 0.0lf;
    if ((q & 1u) == 0u) { v = ct_cos_k_d(t.y, t.z); } else { v = -ct_sin_k_d(t.y, t.z); }
    if ((q & 2u) != 0u) { v = -v; }
    return v;
}

// helper: ct_tan_d
// requires: ct_isfinite_d, ct_mul_err_d, ct_residual_d, ct_hide_d, ct_rem_pio2_d
// features: shader-f64, shader-int64
// tan = sin / cos (or -cos / sin in odd quadrants), both as double-doubles, divided with one
// correction step
fn ct_tan_d(x: f64) -> f64 {
    if (!ct_isfinite_d(x)) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (abs(x) < 0x1p-27lf) { return x; }
    let t = ct_rem_pio2_d(x);
    let q = u32(t.x);
    let r = t.y;
    let y = t.z;
    let z = ct_hide_d(r * r);
    let zl = ct_mul_err_d(r, r, z);
    let sh = r;
    let sl = fma(z * r, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, -0x1.2f49b46814157p-57lf, 0x1.952c77030ad4ap-49lf), -0x1.ae7f3e733b81fp-41lf), 0x1.6124613a86d09p-33lf), -0x1.ae64567f544e4p-26lf), 0x1.71de3a556c734p-19lf), -0x1.a01a01a01a01ap-13lf), 0x1.1111111111111p-7lf), -0x1.5555555555555p-3lf), y * (1.0lf - 0.5lf * z));
    let hz = 0.5lf * z;
    let ch = ct_hide_d(1.0lf - hz);
    let cl = ct_hide_d(ct_hide_d(1.0lf - ch) - hz) + (z * z * fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.e542ba4020225p-62lf, -0x1.6827863b97d97p-53lf), 0x1.ae7f3e733b81fp-45lf), -0x1.93974a8c07c9dp-37lf), 0x1.1eed8eff8d898p-29lf), -0x1.27e4fb7789f5cp-22lf), 0x1.a01a01a01a01ap-16lf), -0x1.6c16c16c16c17p-10lf), 0x1.5555555555555p-5lf) - fma(r, y, 0.5lf * zl));
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
}

// helper: ct_atan_k_d
// features: shader-f64
// atan(t_hi + t_lo), |t| <= 0.4375
fn ct_atan_k_d(t: f64, tl: f64) -> f64 {
    let z = t * t;
    return t + fma(t * z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.6c16c16c16c17p-6lf, -0x1.7d05f417d05f4p-6lf), 0x1.8f9c18f9c18fap-6lf), -0x1.a41a41a41a41ap-6lf), 0x1.bacf914c1bad0p-6lf), -0x1.d41d41d41d41dp-6lf), 0x1.f07c1f07c1f08p-6lf), -0x1.0842108421084p-5lf), 0x1.1a7b9611a7b96p-5lf), -0x1.2f684bda12f68p-5lf), 0x1.47ae147ae147bp-5lf), -0x1.642c8590b2164p-5lf), 0x1.8618618618618p-5lf), -0x1.af286bca1af28p-5lf), 0x1.e1e1e1e1e1e1ep-5lf), -0x1.1111111111111p-4lf), 0x1.3b13b13b13b14p-4lf), -0x1.745d1745d1746p-4lf), 0x1.c71c71c71c71cp-4lf), -0x1.2492492492492p-3lf), 0x1.999999999999ap-3lf), -0x1.5555555555555p-2lf), tl * (1.0lf - z));
}

// helper: ct_atan_pos_d
// requires: ct_isinf_d, ct_mul_err_d, ct_residual_d, ct_hide_d, ct_two_sum_d, ct_atan_k_d
// features: shader-f64
// atan(n / d) for n, d >= 0 (not both 0, not nan) as (hi, lo): the ratio is reduced around 0, 1/2,
// 1, 3/2 or infinity, the reduced argument kept as a double-double
fn ct_atan_pos_d(n0: f64, d0: f64) -> vec2<f64> {
    if (ct_isinf_d(n0) || d0 == 0.0lf) {
        if (ct_isinf_d(d0)) { return vec2<f64>(0x1.921fb54442d18p-1lf, 0x1.1a62633145c07p-55lf); }
        return vec2<f64>(0x1.921fb54442d18p+0lf, 0x1.1a62633145c07p-54lf);
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
        bh = 0x1.dac670561bb4fp-2lf;
        bl = 0x1.a2b7f222f65e2p-56lf;
        let num = 2.0lf * n - d;
        let dh0 = 2.0lf * d;
        let den = ct_two_sum_d(dh0, n);
        th = ct_hide_d(num / den.x);
        tl = (ct_residual_d(num, th, den.x) - th * den.y) / den.x;
    } else if (n <= 1.1875lf * d) {
        bh = 0x1.921fb54442d18p-1lf;
        bl = 0x1.1a62633145c07p-55lf;
        let num = n - d;
        let den = ct_two_sum_d(n, d);
        th = ct_hide_d(num / den.x);
        tl = (ct_residual_d(num, th, den.x) - th * den.y) / den.x;
    } else if (n <= 2.4375lf * d) {
        bh = 0x1.f730bd281f69bp-1lf;
        bl = 0x1.007887af0cbbdp-56lf;
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
        bh = 0x1.921fb54442d18p+0lf;
        bl = 0x1.1a62633145c07p-54lf;
        sgn = -1.0lf;
        th = ct_hide_d(d / n);
        tl = ct_residual_d(d, th, n) / n;
    }
    let a = ct_atan_k_d(th, tl);
    if (bh == 0.0lf) { return vec2<f64>(a, 0.0lf); }
    return vec2<f64>(bh, bl + sgn * a);
}

// helper: ct_atan_d
// requires: ct_isnan_d, ct_copysign_d, ct_hide_d, ct_atan_pos_d
// features: shader-f64
fn ct_atan_d(x: f64) -> f64 {
    if (ct_isnan_d(x)) { return x; }
    if (abs(x) < 0x1p-27lf) { return x; }
    let a = ct_atan_pos_d(abs(x), 1.0lf);
    return ct_copysign_d(ct_hide_d(a.x + a.y), x);
}

// helper: ct_atan2_d
// requires: ct_isnan_d, ct_copysign_d, ct_signbit_d, ct_hide_d, ct_two_sum_d, ct_atan_pos_d
// features: shader-f64, shader-int64
fn ct_atan2_d(y: f64, x: f64) -> f64 {
    if (ct_isnan_d(x) || ct_isnan_d(y)) { return bitcast<f64>(0x7ff8000000000000lu); }
    if (y == 0.0lf) {
        if (ct_signbit_d(x)) { return ct_copysign_d(0x1.921fb54442d18p+1lf, y); }
        return y;
    }
    let a = ct_atan_pos_d(abs(y), abs(x));
    var v = ct_hide_d(a.x + a.y);
    if (ct_signbit_d(x)) {
        let h = ct_two_sum_d(0x1.921fb54442d18p+1lf, -a.x);
        v = ct_hide_d(h.x + ct_hide_d(h.y + (0x1.1a62633145c07p-53lf - a.y)));
    }
    return ct_copysign_d(v, y);
}

// helper: ct_asin_k_d
// features: shader-f64
// asin(s + sl) - s for |s| <= 1/2 (Taylor series of asin; sl a small correction)
fn ct_asin_k_d(s: f64, sl: f64) -> f64 {
    let z = s * s;
    return fma(s * z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, fma(z, 0x1.1052bc5fa960ap-9lf, 0x1.208d3570ae5a6p-9lf), 0x1.3275586c5f2f0p-9lf), 0x1.464c0950f7d47p-9lf), 0x1.5c5f56efaaaabp-9lf), 0x1.750de64d7d05fp-9lf), 0x1.90cb77f60c7cep-9lf), 0x1.b026f57b13b14p-9lf), 0x1.d3d2a8e0dd67dp-9lf), 0x1.fcaf8fb6db6dbp-9lf), 0x1.15ee9d45d1746p-8lf), 0x1.31683bdef7bdfp-8lf), 0x1.51ba308d3dcb1p-8lf), 0x1.782dda12f684cp-8lf), 0x1.a6863d70a3d71p-8lf), 0x1.df3bd37a6f4dfp-8lf), 0x1.12ef3cf3cf3cfp-7lf), 0x1.3fde50d79435ep-7lf), 0x1.7a87878787878p-7lf), 0x1.c99999999999ap-7lf), 0x1.1c4ec4ec4ec4fp-6lf), 0x1.6e8ba2e8ba2e9p-6lf), 0x1.f1c71c71c71c7p-6lf), 0x1.6db6db6db6db7p-5lf), 0x1.3333333333333p-4lf), 0x1.5555555555555p-3lf), sl * (1.0lf + 0.5lf * z));
}

// helper: ct_sqrt_dd_d
// requires: ct_residual_d, ct_hide_d
// features: shader-f64
// sqrt(w) as (hi, lo), w >= 0
fn ct_sqrt_dd_d(w: f64) -> vec2<f64> {
    let h = ct_hide_d(sqrt(w));
    if (h == 0.0lf) { return vec2<f64>(0.0lf, 0.0lf); }
    return vec2<f64>(h, ct_residual_d(w, h, h) / (2.0lf * h));
}

// helper: ct_asin_d
// requires: ct_copysign_d, ct_hide_d, ct_two_sum_d, ct_asin_k_d, ct_sqrt_dd_d
// features: shader-f64, shader-int64
// |x| <= 1/2: the series; beyond: asin x = pi/2 - 2 asin(sqrt((1 - x) / 2))
fn ct_asin_d(x: f64) -> f64 {
    if (!(abs(x) <= 1.0lf)) { return bitcast<f64>(0x7ff8000000000000lu); }
    let a = abs(x);
    if (a < 0x1p-27lf) { return x; }
    if (a <= 0.5lf) { return x + ct_asin_k_d(x, 0.0lf); }
    let s = ct_sqrt_dd_d(0.5lf * (1.0lf - a));
    let t = ct_asin_k_d(s.x, s.y);
    let h = ct_two_sum_d(0x1.921fb54442d18p+0lf, -2.0lf * s.x);
    return ct_copysign_d(ct_hide_d(h.x + ct_hide_d(h.y + (0x1.1a62633145c07p-54lf - 2.0lf * t))), x);
}

// helper: ct_acos_d
// requires: ct_hide_d, ct_two_sum_d, ct_asin_k_d, ct_sqrt_dd_d
// features: shader-f64, shader-int64
// |x| <= 1/2: pi/2 - asin x; beyond: 2 asin(sqrt((1 - x) / 2)), or pi minus that of -x
fn ct_acos_d(x: f64) -> f64 {
    if (!(abs(x) <= 1.0lf)) { return bitcast<f64>(0x7ff8000000000000lu); }
    var bh = 0x1.921fb54442d18p+0lf;
    var bl = 0x1.1a62633145c07p-54lf;
    var sh = x;
    var tl = 0.0lf;
    if (abs(x) <= 0.5lf) {
        tl = ct_asin_k_d(x, 0.0lf);
    } else {
        let s = ct_sqrt_dd_d(0.5lf * (1.0lf - abs(x)));
        let t = ct_asin_k_d(s.x, s.y);
        if (x > 0.0lf) { return ct_hide_d(2.0lf * s.x + 2.0lf * t); }
        bh = 0x1.921fb54442d18p+1lf;
        bl = 0x1.1a62633145c07p-53lf;
        sh = 2.0lf * s.x;
        tl = 2.0lf * t;
    }
    let h = ct_two_sum_d(bh, -sh);
    return ct_hide_d(h.x + ct_hide_d(h.y + (bl - tl)));
}
