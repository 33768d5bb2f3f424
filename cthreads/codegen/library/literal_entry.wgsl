// Float constants entering a name (codegen/literal_entry.py), hidden from the driver's compiler.

// helper: ct_enter_f
// requires: ct_zero
// the value, unknown to the driver's compiler: a float constant stored into a local, passed to
// a device function or returned (literal_entry.py). Its zero is ct_zero() << 1 (still 0 at run
// time), not ct_zero() itself: the helpers that hide an operand again with ct_zero()
// (ct_hide_f in ct_div_f ...) would undo an xor with the same value (0 ^ z ^ z is 0, a zero
// lavapipe saw, and folded x / w with w = 0.0 to 0.0)
fn ct_enter_f(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ (ct_zero() << 1u)); }

// helper: ct_enter_d
// requires: ct_zero
// features: shader-f64, shader-int64
// as ct_enter_f
fn ct_enter_d(v: f64) -> f64 { return bitcast<f64>(bitcast<u64>(v) ^ u64(ct_zero() << 1u)); }

// helper: ct_center_f
// requires: ct_zero
// as ct_enter_f, for a complex constant (z = 0j: c_mul's helpers folded z * w's zero parts)
fn ct_center_f(v: vec2<f32>) -> vec2<f32> {
    return bitcast<vec2<f32>>(bitcast<vec2<u32>>(v) ^ vec2<u32>(ct_zero() << 1u));
}

// helper: ct_center_d
// requires: ct_zero
// features: shader-f64, shader-int64
// as ct_center_f
fn ct_center_d(v: vec2<f64>) -> vec2<f64> {
    return bitcast<vec2<f64>>(bitcast<vec2<u64>>(v) ^ vec2<u64>(u64(ct_zero() << 1u)));
}
