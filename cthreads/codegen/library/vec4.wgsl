// Helpers of the four-lane variant (codegen/vectorize.py).
//
// Each helper: a '// helper: NAME' line, then its header lines ('// requires:' the library
// functions and shader names it uses, 'ct_zero' being the zero each shader defines from its
// uniform block; '// features:' the device features its own text needs; '// loops' when it
// has a loop), comments, and the WGSL up to the next helper (codegen/library.py reads them).

// helper: ct_div4
// requires: ct_fused_f32, ct_div_exact_f, ct_zero
// lane-wise ct_div_f: the quotient corrected by its fma residual where fma rounds once (the
// pipeline constant ct_fused_f32), else lane by lane ct_div_exact_f
fn ct_div4(x: vec4<f32>, y: vec4<f32>) -> vec4<f32> {
    if (!ct_fused_f32) {
        return vec4<f32>(ct_div_exact_f(x.x, y.x), ct_div_exact_f(x.y, y.y),
                         ct_div_exact_f(x.z, y.z), ct_div_exact_f(x.w, y.w));
    }
    let yh = bitcast<vec4<f32>>(bitcast<vec4<u32>>(y) ^ vec4<u32>(ct_zero()));
    let q = bitcast<vec4<f32>>(bitcast<vec4<u32>>(x / yh) ^ vec4<u32>(ct_zero()));
    let r = fma(-q, y, x);
    let c = q + r / y;
    let inf = vec4<u32>(0x7f800000u);
    let finite = ((bitcast<vec4<u32>>(q) & inf) != inf) & (q != vec4<f32>(0.0f));
    // tested on q, which the driver cannot see through (NVIDIA's takes r and c, results of
    // float arithmetic, to be finite); an exact residual of zero keeps q's sign of zero
    return select(q, c, finite & (r != vec4<f32>(0.0f)));
}
