// float64 operators with Python's meaning: /, %, //, min, max.
// Built from exact operations only (no float32 step); methods, accuracy and the differences
// from Python: docs/float64.md. Constants are exact hex literals (tests/codegen/test_library.py
// checks the polynomial coefficients).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_div_d
// requires: ct_isfinite_d, ct_residual_d, ct_hide_d
// features: shader-f64
// A driver may round f64 division loosely; the exact residual corrects the quotient (it is
// correctly rounded already on lavapipe). Tiny operands, whose residual would underflow, keep the
// driver's quotient.
fn ct_div_d(x: f64, y: f64) -> f64 {
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
}

// helper: ct_fmod_d
// requires: ct_isnan_d, ct_isinf_d, ct_isfinite_d, ct_copysign_d, ct_scale_d
// features: shader-f64, shader-int64
// loops
// Exact remainder with the sign of a, in integers: with x = mx 2^ex and y = my 2^ey (53-bit
// integer significands), fmod(x, y) = (mx 2^(ex-ey) mod my) 2^ey, computed 11 bits of the exponent
// gap at a time (r < my < 2^53, so r << 11 fits u64). No float step is involved, so no driver's
// rounding, fusing or flushing can change it; at most 191 passes.
fn ct_fmod_d(a: f64, b: f64) -> f64 {
    if (!ct_isfinite_d(a) || ct_isnan_d(b) || b == 0.0lf) { return bitcast<f64>(0x7ff8000000000000lu); }
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
}

// helper: ct_mod_d
// requires: ct_copysign_d, ct_hide_d, ct_fmod_d
// features: shader-f64
fn ct_mod_d(a: f64, b: f64) -> f64 {
    var r = ct_fmod_d(a, b);
    if (r == 0.0lf) { return ct_copysign_d(0.0lf, b); }
    if ((r < 0.0lf) != (b < 0.0lf)) { r = ct_hide_d(r + b); }
    return r;
}

// helper: ct_div0_d
// requires: ct_isnan_d
// features: shader-f64, shader-int64
// a / b for b == +-0 (IEEE: +-inf, NaN for 0 / 0 and NaN / 0), made from the bits: a driver that
// sees the zero divisor folded floor(a / 0.0) to NaN (lavapipe)
fn ct_div0_d(a: f64, b: f64) -> f64 {
    if (a == 0.0lf || ct_isnan_d(a)) { return bitcast<f64>(0x7ff8000000000000lu); }
    return bitcast<f64>(0x7ff0000000000000lu
                        | ((bitcast<u64>(a) ^ bitcast<u64>(b)) & 0x8000000000000000lu));
}

// helper: ct_floordiv_d
// requires: ct_copysign_d, ct_div_d, ct_fmod_d, ct_div0_d
// features: shader-f64
fn ct_floordiv_d(a: f64, b: f64) -> f64 {
    if (b == 0.0lf) { return ct_div0_d(a, b); }
    let m = ct_fmod_d(a, b);
    var d = ct_div_d(a - m, b);
    if (!(m == 0.0lf) && ((b < 0.0lf) != (m < 0.0lf))) { d = d - 1.0lf; }
    if (d == 0.0lf) { return ct_copysign_d(0.0lf, a / b); }
    var q = floor(d);
    if (d - q > 0.5lf) { q = q + 1.0lf; }
    return q;
}

// helper: ct_min_d
// features: shader-f64
fn ct_min_d(a: f64, b: f64) -> f64 {
    return select(a, b, b < a);
}

// helper: ct_max_d
// features: shader-f64
fn ct_max_d(a: f64, b: f64) -> f64 {
    return select(a, b, b > a);
}
