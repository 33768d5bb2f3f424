// cthreads kernel tests.codegen.golden_kernels.saxpy
struct CtUniforms {
    ct_groups: u32,
    n: i32,
    a: f32,
}
@group(0) @binding(0) var<uniform> ct_u: CtUniforms;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> ct_status: array<atomic<u32>, 4>;

fn ct_fail(c: u32, i: i32, n: u32) {
    if (atomicLoad(&ct_status[0]) != 0u) { return; }
    loop {
        let r = atomicCompareExchangeWeak(&ct_status[0], 0u, c);
        if (r.exchanged) {
            atomicStore(&ct_status[1], bitcast<u32>(i));
            atomicStore(&ct_status[2], n);
            return;
        }
        if (r.old_value != 0u) { return; }
    }
}

fn ct_ld_x(ct_i: i32, ct_c: u32) -> f32 {
    if (bitcast<u32>(ct_i) < arrayLength(&x)) { return x[ct_i]; }
    ct_fail(ct_c, ct_i, arrayLength(&x));
    return 0.0f;
}

fn ct_ld_y(ct_i: i32, ct_c: u32) -> f32 {
    if (bitcast<u32>(ct_i) < arrayLength(&y)) { return y[ct_i]; }
    ct_fail(ct_c, ct_i, arrayLength(&y));
    return 0.0f;
}

fn ct_st_y(ct_i: i32, ct_v: f32, ct_c: u32) {
    if (bitcast<u32>(ct_i) < arrayLength(&y)) { y[ct_i] = ct_v; }
    else { ct_fail(ct_c, ct_i, arrayLength(&y)); }
}

@compute @workgroup_size(64)
fn ct_main(@builtin(workgroup_id) ct_wid: vec3<u32>, @builtin(num_workgroups) ct_nwg: vec3<u32>,
        @builtin(local_invocation_id) ct_lid: vec3<u32>) {
    let ct_flat: u32 = ct_wid.y * ct_nwg.x + ct_wid.x;
    if (ct_flat >= ct_u.ct_groups) { return; }
    let ct_gidx: i32 = i32(ct_flat * 64u + ct_lid.x);
    var n: i32 = ct_u.n;
    var a: f32 = ct_u.a;
    var i: i32;
    // line 16: i: int = GlobalIdx.x
    i = ct_gidx;
    // line 17: if i >= n:
    if (i >= n) {
        // line 18: return
        return;
    }
    // line 19: y[i] = a * x[i] + y[i]
    ct_st_y(i, ((a * ct_ld_x(i, 1u)) + ct_ld_y(i, 2u)), 3u);
}
