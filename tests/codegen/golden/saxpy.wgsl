// cthreads kernel tests.codegen.golden_kernels.saxpy
struct CtUniforms {
    ct_threads: u32,
    n: i32,
    a: f32,
}
@group(0) @binding(0) var<uniform> ct_u: CtUniforms;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> ct_status: array<atomic<u32>, 4>;

var<private> ct_bad: u32;
var<private> ct_bad_i: i32;
var<private> ct_bad_n: u32;

fn ct_note(bad: bool, c: u32, i: i32, n: u32) {
    if (bad) {
        ct_bad = c;
        ct_bad_i = i;
        ct_bad_n = n;
    }
}

fn ct_report() {
    if (ct_bad == 0u || atomicLoad(&ct_status[0]) != 0u) { return; }
    loop {
        let r = atomicCompareExchangeWeak(&ct_status[0], 0u, ct_bad);
        if (r.exchanged) {
            atomicStore(&ct_status[1], bitcast<u32>(ct_bad_i));
            atomicStore(&ct_status[2], ct_bad_n);
            return;
        }
        if (r.old_value != 0u) { return; }
    }
}

fn ct_ld_x(ct_i: i32, ct_c: u32) -> f32 {
    ct_note(bitcast<u32>(ct_i) >= arrayLength(&x), ct_c, ct_i, arrayLength(&x));
    return x[ct_i];
}

fn ct_ld_y(ct_i: i32, ct_c: u32) -> f32 {
    ct_note(bitcast<u32>(ct_i) >= arrayLength(&y), ct_c, ct_i, arrayLength(&y));
    return y[ct_i];
}

fn ct_st_y(ct_i: i32, ct_v: f32, ct_c: u32) {
    let ct_bad_here = bitcast<u32>(ct_i) >= arrayLength(&y);
    ct_note(ct_bad_here, ct_c, ct_i, arrayLength(&y));
    if (!ct_bad_here) { y[ct_i] = ct_v; }
}

fn ct_body(ct_gidx: i32) {
    var n: i32 = ct_u.n;
    var a: f32 = ct_u.a;
    var i: i32;
    // line 16: i: int = GlobalIdx.x
    i = ct_gidx;
    // line 17: if i >= n:
    if (i >= n) {
        // line 18: return
        ct_report();
        return;
    }
    // line 19: y[i] = a * x[i] + y[i]
    ct_st_y(i, ((a * ct_ld_x(i, 1u)) + ct_ld_y(i, 2u)), 3u);
    ct_report();
}

@compute @workgroup_size(64)
fn ct_main(@builtin(workgroup_id) ct_wid: vec3<u32>, @builtin(num_workgroups) ct_nwg: vec3<u32>,
        @builtin(local_invocation_id) ct_lid: vec3<u32>) {
    let ct_first: u32 = (ct_wid.y * ct_nwg.x + ct_wid.x) * 64u + ct_lid.x;
    let ct_g: u32 = ct_first;
    if (ct_g < ct_u.ct_threads) { ct_body(i32(ct_g)); }
}
