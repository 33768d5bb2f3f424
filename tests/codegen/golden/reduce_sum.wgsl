// cthreads kernel tests.codegen.golden_kernels.reduce_sum
struct CtUniforms {
    ct_groups: u32,
    n: i32,
}
@group(0) @binding(0) var<uniform> ct_u: CtUniforms;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> total: array<atomic<f32>>;
@group(0) @binding(3) var<storage, read_write> ct_status: array<atomic<u32>, 4>;
var<workgroup> tile: array<f32, 64>;

fn ct_floordiv_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    let neg = (a < 0i) != (b < 0i);
    var q = ua / ub;
    if (neg && (ua - q * ub) != 0u) { q = q + 1u; }
    return bitcast<i32>(select(q, 0u - q, neg));
}

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

fn ct_at_add_total(ct_i: i32, ct_a0: f32, ct_c: u32) -> f32 {
    let ct_bad_here = bitcast<u32>(ct_i) >= arrayLength(&total);
    ct_note(ct_bad_here, ct_c, ct_i, arrayLength(&total));
    if (ct_bad_here) { return 0.0f; }
    return atomicAdd(&total[ct_i], ct_a0);
}

fn ct_ld_tile(ct_i: i32, ct_c: u32) -> f32 {
    ct_note(bitcast<u32>(ct_i) >= 64u, ct_c, ct_i, 64u);
    return tile[ct_i];
}

fn ct_ld_x(ct_i: i32, ct_c: u32) -> f32 {
    ct_note(bitcast<u32>(ct_i) >= arrayLength(&x), ct_c, ct_i, arrayLength(&x));
    return x[ct_i];
}

fn ct_st_tile(ct_i: i32, ct_v: f32, ct_c: u32) {
    let ct_bad_here = bitcast<u32>(ct_i) >= 64u;
    ct_note(ct_bad_here, ct_c, ct_i, 64u);
    if (!ct_bad_here) { tile[ct_i] = ct_v; }
}

@compute @workgroup_size(64)
fn ct_main(@builtin(workgroup_id) ct_wid: vec3<u32>, @builtin(num_workgroups) ct_nwg: vec3<u32>,
        @builtin(local_invocation_id) ct_lid: vec3<u32>) {
    let ct_flat: u32 = ct_wid.y * ct_nwg.x + ct_wid.x;
    if (ct_flat >= ct_u.ct_groups) { return; }
    let ct_gidx: i32 = i32(ct_flat * 64u + ct_lid.x);
    for (var ct_k: u32 = ct_lid.x; ct_k < 64u; ct_k = ct_k + 64u) { tile[ct_k] = 0.0f; }
    workgroupBarrier();
    var n: i32 = ct_u.n;
    var i: i32;
    var t: i32;
    var s: i32;
    var ct_live: bool = true;
    if (ct_live) {
        // line 35: i = GlobalIdx.x
        i = ct_gidx;
        // line 36: t = ThreadIdx.x
        t = i32(ct_lid.x);
        // line 37: if i >= n:
        if (i >= n) {
            // line 38: return
            ct_live = false;
        }
        if (ct_live) {
            // line 39: tile[t] = x[i]
            ct_st_tile(t, ct_ld_x(i, 1u), 2u);
        }
    }
    // line 40: __sync_threads()
    storageBarrier();
    workgroupBarrier();
    // line 41: s = 32
    s = 32i;
    // line 42: while s > 0:
    while (s > 0i) {
        if (ct_live) {
            // line 43: if t < s:
            if (t < s) {
                // line 44: tile[t] += tile[t + s]
                ct_st_tile(t, (ct_ld_tile(t, 4u) + ct_ld_tile((t + s), 3u)), 4u);
            }
        }
        // line 45: __sync_threads()
        storageBarrier();
        workgroupBarrier();
        // line 46: s //= 2
        s = ct_floordiv_i(s, 2i);
    }
    if (ct_live) {
        // line 47: if t == 0:
        if (t == 0i) {
            // line 48: atomic_add(total, 0, tile[0])
            _ = ct_at_add_total(0i, ct_ld_tile(0i, 5u), 6u);
        }
    }
    ct_report();
}
