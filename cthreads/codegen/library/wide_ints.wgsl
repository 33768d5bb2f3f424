// Helpers that give int64 and uint32 values Python's meaning (int32's are in helpers.wgsl).
// The same rules as for int32: // rounds toward minus infinity and % takes the divisor's sign,
// both computed on magnitudes in the unsigned type of the same width (exact everywhere);
// division by zero gives 0; ** by repeated squaring, wrapping; negative exponents give 0 except
// for bases 1 and -1. uint32 values are unsigned: // and % are the unsigned quotient and
// remainder. Index helpers turn a 64-bit or unsigned index into the i32 that WGSL arrays take,
// mapping values outside i32 to -1 (out of range, so bounds checks catch them).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_floordiv_l
// features: shader-int64
fn ct_floordiv_l(a: i64, b: i64) -> i64 {
    if (b == 0li) { return 0li; }
    let ua = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
    let ub = select(bitcast<u64>(b), 0lu - bitcast<u64>(b), b < 0li);
    let neg = (a < 0li) != (b < 0li);
    var q = ua / ub;
    if (neg && (ua - q * ub) != 0lu) { q = q + 1lu; }
    return bitcast<i64>(select(q, 0lu - q, neg));
}

// helper: ct_mod_l
// features: shader-int64
fn ct_mod_l(a: i64, b: i64) -> i64 {
    if (b == 0li) { return 0li; }
    let ua = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
    let ub = select(bitcast<u64>(b), 0lu - bitcast<u64>(b), b < 0li);
    var r = ua - (ua / ub) * ub;
    if (((a < 0li) != (b < 0li)) && r != 0lu) { r = ub - r; }
    return bitcast<i64>(select(r, 0lu - r, b < 0li));
}

// helper: ct_pow_l
// features: shader-int64
// loops
fn ct_pow_l(base: i64, e: i64) -> i64 {
    if (e < 0li) {
        if (base == 1li) { return 1li; }
        if (base == -1li) { return select(1li, -1li, (e & 1li) == 1li); }
        return 0li;
    }
    var r = 1li;
    var b = base;
    var k = e;
    loop {
        if (k == 0li) { break; }
        if ((k & 1li) == 1li) { r = r * b; }
        b = b * b;
        k = k >> 1u;
    }
    return r;
}

// helper: ct_floordiv_u
fn ct_floordiv_u(a: u32, b: u32) -> u32 {
    if (b == 0u) { return 0u; }
    return a / b;
}

// helper: ct_mod_u
fn ct_mod_u(a: u32, b: u32) -> u32 {
    if (b == 0u) { return 0u; }
    return a % b;
}

// helper: ct_pow_u
// loops
fn ct_pow_u(base: u32, e: u32) -> u32 {
    var r = 1u;
    var b = base;
    var k = e;
    loop {
        if (k == 0u) { break; }
        if ((k & 1u) == 1u) { r = r * b; }
        b = b * b;
        k = k >> 1u;
    }
    return r;
}

// helper: ct_range_count_l
// features: shader-int64
fn ct_range_count_l(start: i64, stop: i64, step: i64) -> u32 {
    var n = 0lu;
    if (step > 0li && start < stop) {
        n = (bitcast<u64>(stop) - bitcast<u64>(start) - 1lu) / bitcast<u64>(step) + 1lu;
    }
    if (step < 0li && start > stop) {
        n = (bitcast<u64>(start) - bitcast<u64>(stop) - 1lu) / (0lu - bitcast<u64>(step)) + 1lu;
    }
    return u32(min(n, 4294967295lu));
}

// helper: ct_index_l
// features: shader-int64
// (a round trip through i32, not comparisons with i64 literals: lavapipe miscompiled those in an
// index, e.g. `i <= 2147483647li` made every store vanish)
fn ct_index_l(i: i64) -> i32 {
    let lo = i32(i);
    return select(-1i, lo, i64(lo) == i);
}

// helper: ct_index_u
fn ct_index_u(i: u32) -> i32 {
    return select(-1i, bitcast<i32>(i), i <= 2147483647u);
}

// helper: ct_wide_i
// requires: ct_zero
// features: shader-int64
// i32 and u32 values widened to i64 without WGSL's i64(i32): lavapipe compared a plain i64(v) with
// a constant wrongly (i64(v) > 100li was true for v = 0 .. 7), and, with unrelated float64 code in
// the shader, sign-extended -5 as if from 16 bits (65531: issue 21, F07). The sign is extended by
// hand from the zero-extended u32 ((z ^ m) - m, m = 2^31), m made from ct_zero() (a uniform) so
// that the compiler cannot turn it back.
fn ct_wide_i(v: i32) -> i64 {
    let m = 0x80000000lu | u64(ct_zero());
    return bitcast<i64>((u64(bitcast<u32>(v)) ^ m) - m);
}

// helper: ct_wide_u
// requires: ct_zero
// features: shader-int64
// (u32 -> u64 -> i64: a direct i64(v) of a u32 came out sign-extended on lavapipe, so 2**31
// widened to -2**31)
fn ct_wide_u(v: u32) -> i64 { return bitcast<i64>(u64(v) + u64(ct_zero())); }

// helper: ct_id_l
// features: shader-int64
fn ct_id_l(v: i64) -> i64 { return v; }

// helper: ct_id_u
fn ct_id_u(v: u32) -> u32 { return v; }

// helper: ct_id_d
// features: shader-f64
fn ct_id_d(v: f64) -> f64 { return v; }

// helper: ct_opaque_d
// requires: ct_zero
// features: shader-f64, shader-int64
// as builtins' ct_opaque_f
fn ct_opaque_d(v: f64) -> f64 { return bitcast<f64>(bitcast<u64>(v) ^ u64(ct_zero())); }
