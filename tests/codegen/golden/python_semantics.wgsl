// cthreads kernel tests.codegen.golden_kernels.python_semantics
struct CtUniforms {
    ct_threads: u32,
    n: i32,
}
@group(0) @binding(0) var<uniform> ct_u: CtUniforms;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> k: array<i32>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;

var<private> ct_opq: u32;

fn ct_copysign(a: f32, b: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u));
}

fn ct_div0_f(x: f32, y: f32) -> f32 {
    if (x == 0.0f || ct_isnan(x)) { return bitcast<f32>(0x7fc00000u); }
    return bitcast<f32>(0x7f800000u | ((bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u));
}

fn ct_floordiv_f(a: f32, b: f32) -> f32 {
    if (b == 0.0f) { return ct_div0_f(a, b); }
    if (ct_isfinite(a) && !ct_isinf(b) && abs(trunc(a / b)) < 16777216.0f) {
        let rq = ct_fmodq_f(a, b);
        var k = rq.y;
        if (rq.x != 0.0f && ((rq.x < 0.0f) != (b < 0.0f))) { k = k - 1.0f; }
        if (k == 0.0f) { return ct_copysign(0.0f, a / b); }
        return k;
    }
    var m = ct_fmod(a, b);
    var d = (a - m) / b;
    if (!(m == 0.0f) && ((b < 0.0f) != (m < 0.0f))) { d = d - 1.0f; }
    if (d == 0.0f) { return ct_copysign(0.0f, a / b); }
    var q = floor(d);
    if (d - q > 0.5f) { q = q + 1.0f; }
    return q;
}

fn ct_floordiv_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    let neg = (a < 0i) != (b < 0i);
    var q = ua / ub;
    if (neg && (ua - q * ub) != 0u) { q = q + 1u; }
    return bitcast<i32>(select(q, 0u - q, neg));
}

fn ct_fmod(a: f32, b: f32) -> f32 {
    if (!ct_isfinite(a) || b == 0.0f || ct_isnan(b)) { return bitcast<f32>(0x7fc00000u); }
    if (ct_isinf(b)) { return a; }
    if (!(abs(trunc(a / b)) < 16777216.0f)) { return a % b; }
    return ct_fmodq_f(a, b).x;
}

fn ct_fmodq_exact_f(a: f32, b: f32) -> vec2<f32> {
    var x = a;
    var y = b;
    var sc = 1.0f;
    if (abs(b) < 0x1p-90f) {
        x = a * 0x1p64f;
        y = b * 0x1p64f;
        sc = 0x1p-64f;
    } else if (abs(b) > 0x1p100f) {
        x = a * 0x1p-32f;
        y = b * 0x1p-32f;
        sc = 0x1p32f;
    }
    var q = trunc(ct_hide_f(x / ct_hide_f(y)));
    let s = select(-1.0f, 1.0f, (a < 0.0f) == (b < 0.0f));
    let r = ct_residual_f(x, q, y);
    if (r != 0.0f && ((r < 0.0f) != (a < 0.0f))) {
        q = q - s;
    } else if (abs(r) >= abs(y)) {
        q = q + s;
    }
    if (q == 0.0f) { return vec2<f32>(a, q); }
    return vec2<f32>(ct_copysign(ct_hide_f(ct_residual_f(x, q, y) * sc), a), q);
}

fn ct_fmodq_f(a: f32, b: f32) -> vec2<f32> {
    if (!ct_fused_f32) { return ct_fmodq_exact_f(a, b); }
    var q = trunc(a / b);
    // a / b may be 2.5 ulp off: from 2^23 on that is several whole units, so q is first moved
    // by the residual's own quotient (a few units at most, computed well), then by one
    q = q + trunc(fma(-q, b, a) / b);
    let s = select(-1.0f, 1.0f, (a < 0.0f) == (b < 0.0f));
    let r = fma(-q, b, a);
    if (r != 0.0f && ((r < 0.0f) != (a < 0.0f))) {
        q = q - s;
    } else if (abs(r) >= abs(b)) {
        q = q + s;
    }
    return vec2<f32>(ct_copysign(fma(-q, b, a), a), q);
}

override ct_fused_f32: bool = true;

fn ct_hide_f(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ ct_zero());
}

fn ct_i32_f(v: f32) -> i32 {
    return bitcast<i32>(bitcast<u32>(select(i32(v), 2147483647i, v >= 0x1p31f)) ^ ct_zero());
}

fn ct_isfinite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

fn ct_isinf(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u;
}

fn ct_isnan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn ct_mod_i(a: i32, b: i32) -> i32 {
    if (b == 0i) { return 0i; }
    let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
    let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
    var r = ua - (ua / ub) * ub;
    if (((a < 0i) != (b < 0i)) && r != 0u) { r = ub - r; }
    return bitcast<i32>(select(r, 0u - r, b < 0i));
}

fn ct_mul_err_f(a: f32, b: f32, p: f32) -> f32 {
    let ca = ct_hide_f(4097.0f * a);
    let ah = ct_hide_f(ca - ct_hide_f(ca - a));
    let al = ct_hide_f(a - ah);
    let cb = ct_hide_f(4097.0f * b);
    let bh = ct_hide_f(cb - ct_hide_f(cb - b));
    let bl = ct_hide_f(b - bh);
    let e1 = ct_hide_f(ct_hide_f(ah * bh - p) + ct_hide_f(ah * bl));
    return ct_hide_f(e1 + ct_hide_f(al * bh)) + ct_hide_f(al * bl);
}

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

fn ct_range_count(start: i32, stop: i32, step: i32) -> u32 {
    if (step > 0i && start < stop) {
        return (bitcast<u32>(stop) - bitcast<u32>(start) - 1u) / bitcast<u32>(step) + 1u;
    }
    if (step < 0i && start > stop) {
        return (bitcast<u32>(start) - bitcast<u32>(stop) - 1u) / (0u - bitcast<u32>(step)) + 1u;
    }
    return 0u;
}

fn ct_residual_f(n: f32, a: f32, b: f32) -> f32 {
    let p = ct_hide_f(a * b);
    return ct_hide_f(n - p) - ct_mul_err_f(a, b, p);
}

fn ct_zero() -> u32 { return ct_opq; }

fn ct_body(ct_gidx: i32) {
    var n: i32 = ct_u.n;
    var i: i32;
    var ct_v_out: i32;
    // line 24: i = GlobalIdx.x
    i = ct_gidx;
    // line 25: if 0 <= i < n and flags[i]:
    if (((0i <= i) && (i < n)) && (flags[i] != 0u)) {
        // line 26: k[i] = k[i] // 3 % 4 + int(x[i]) ** 2
        k[i] = (ct_mod_i(ct_floordiv_i(k[i], 3i), 4i) + ct_pow_i(ct_i32_f(x[i]), 2i));
        // line 27: x[i] = x[i] // 2.0 + math.floor(x[i]) + (x[i] if x[i] > 0 else -x[i])
        var ct_t1: f32;
        if (x[i] > f32(0i)) {
            ct_t1 = x[i];
        } else {
            ct_t1 = (-x[i]);
        }
        x[i] = ((ct_floordiv_f(x[i], 2.0f) + f32(ct_i32_f(floor(x[i])))) + ct_t1);
    }
    // line 28: for out in range(n - 1, -1, -2):
    let ct_t3 = (n - 1i);
    let ct_r2n = ct_range_count(ct_t3, (-1i), (-2i));
    for (var ct_r2j: u32 = 0u; ct_r2j < ct_r2n; ct_r2j = ct_r2j + 1u) {
        ct_v_out = ct_t3 + bitcast<i32>(ct_r2j * bitcast<u32>((-2i)));
        // line 29: flags[out] = math.isnan(x[out]) or x[out] != 1.0
        flags[ct_v_out] = select(0u, 1u, (ct_isnan(x[ct_v_out]) || !(x[ct_v_out] == 1.0f)));
    }
}

@compute @workgroup_size(64)
fn ct_main(@builtin(workgroup_id) ct_wid: vec3<u32>, @builtin(num_workgroups) ct_nwg: vec3<u32>,
        @builtin(local_invocation_id) ct_lid: vec3<u32>) {
    ct_opq = (ct_nwg.z >> 31u) | (ct_u.ct_threads >> 31u);
    let ct_first: u32 = (ct_wid.y * ct_nwg.x + ct_wid.x) * 64u + ct_lid.x;
    let ct_g: u32 = ct_first;
    if (ct_g < ct_u.ct_threads) { ct_body(i32(ct_g)); }
}
