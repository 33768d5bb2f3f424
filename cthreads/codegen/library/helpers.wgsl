// Helpers that give int32 and float32 operations Python's meaning (floor division, %, **,
// int abs, NaN tests, min/max, range counts) and keep values from the driver's compiler.
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_floordiv_i
// Integer // and % work on magnitudes in u32: signed i32 `%` with a negative divisor gave wrong
// results on NVIDIA's Vulkan driver (e.g. -60 % -59 == -60), and u32 division is exact everywhere.
// Division by zero gives 0; INT_MIN // -1 wraps to INT_MIN.
fn ct_floordiv_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    let neg = (a < 0i) != (b < 0i);
    var q = ua / ub;
    if (neg && (ua - q * ub) != 0u) { q = q + 1u; }
    return bitcast<i32>(select(q, 0u - q, neg));
}

// helper: ct_abs_i
// requires: ct_zero
// int abs wraps as numpy's does (abs(-2**31) == -2**31), so it may be negative. A driver may take
// an abs to be never negative and drop the sign tests that follow (NVIDIA's does: `abs(x) % 5` of
// -2**31 gave 3, Python's 2, with WGSL's abs and with a plain `(v ^ m) - m`, which it recognises):
// the mask takes a zero it cannot see (ct_zero)
fn ct_abs_i(v: i32) -> i32 {
    let m = (v >> 31u) | bitcast<i32>(ct_zero());
    return (v ^ m) - m;
}

// helper: ct_abs_l
// requires: ct_zero
// features: shader-int64
fn ct_abs_l(v: i64) -> i64 {
    let m = (v >> 63u) | i64(ct_zero());
    return (v ^ m) - m;
}

// helper: ct_mod_i
fn ct_mod_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    var r = ua - (ua / ub) * ub;
    if (((a < 0i) != (b < 0i)) && r != 0u) { r = ub - r; }
    return bitcast<i32>(select(r, 0u - r, b < 0i));
}

// helper: ct_pow_i
// loops
fn ct_pow_i(base: i32, e: i32) -> i32 {
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
}

// helper: ct_copysign
fn ct_copysign(a: f32, b: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u));
}

// helper: ct_hypot
// requires: ct_isinf
fn ct_hypot(a: f32, b: f32) -> f32 {
    if (ct_isinf(a) || ct_isinf(b)) { return bitcast<f32>(0x7f800000u); }
    let x = abs(a);
    let y = abs(b);
    let m = max(x, y);
    if (m == 0.0f) { return 0.0f; }
    let p = x / m;
    let q = y / m;
    return m * sqrt(p * p + q * q);
}

// helper: ct_isnan
fn ct_isnan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// helper: ct_isinf
fn ct_isinf(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u;
}

// helper: ct_isfinite
fn ct_isfinite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

// helper: ct_min_f
fn ct_min_f(a: f32, b: f32) -> f32 {
    return select(a, b, b < a);
}

// helper: ct_max_f
fn ct_max_f(a: f32, b: f32) -> f32 {
    return select(a, b, b > a);
}

// helper: ct_range_count
fn ct_range_count(start: i32, stop: i32, step: i32) -> u32 {
    if (step > 0i && start < stop) {
        return (bitcast<u32>(stop) - bitcast<u32>(start) - 1u) / bitcast<u32>(step) + 1u;
    }
    if (step < 0i && start > stop) {
        return (bitcast<u32>(start) - bitcast<u32>(stop) - 1u) / (0u - bitcast<u32>(step)) + 1u;
    }
    return 0u;
}

// helper: ct_fid
fn ct_fid(v: f32) -> f32 { return v; }

// helper: ct_opaque_f
// requires: ct_zero
// the value, unknown to the driver's compiler (ct_zero()): the operands of fold-prone shapes
// (wgsl.fold_guard: x * 0.0, x - x, ...) and of a literal abs(), which the drivers simplified as
// if NaN, inf and -0.0 did not exist (lavapipe's abs(-0.0) gave -0.0)
fn ct_opaque_f(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ ct_zero()); }

// helper: ct_iid
fn ct_iid(v: i32) -> i32 { return v; }

// helper: ct_opq
// a zero the shader compiler cannot see, set by the entry point (loop_entry.py)
var<private> ct_opq: u32;
