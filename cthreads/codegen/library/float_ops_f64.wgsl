// The fma-free float32 helpers computed in float64, for devices with shader-f64 whose fma
// rounds twice ('// form: f64': the text that float_ops.device_form puts in for the helper of
// the same name; codegen/float_ops.py says why the results are the same).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_div_exact_f
// form: f64
// requires: ct_hide_f
// features: shader-f64
fn ct_div_exact_f(x: f32, y: f32) -> f32 {
    return f32(f64(x) / f64(ct_hide_f(y)));
}

// helper: ct_fmodq_exact_f
// form: f64
// requires: ct_copysign, ct_hide_f
// features: shader-f64
fn ct_fmodq_exact_f(a: f32, b: f32) -> vec2<f32> {
    let x = f64(a);
    let y = f64(ct_hide_f(b));
    let q = trunc(x / y);
    let r = f32(x - q * y);
    if (q == 0.0lf) { return vec2<f32>(a, 0.0f); }
    return vec2<f32>(ct_copysign(r, a), f32(q));
}
