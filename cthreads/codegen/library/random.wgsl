// Random(seed, stream) in kernels (codegen/rng.py, cthreads/lang/random.py): Philox-4x32-10
// (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC11). Block b of
// stream (s0, s1) under key (k0, k1) is philox((b, 0, s0, s1), (k0, k1)), four words; the kernel
// keeps the block of its last word and takes its words in order (rng.py), so these helpers get
// the words. WGSL has no 32x32->64 multiply: its high word is computed from 16-bit halves in u32
// arithmetic (ct_mulhi32), or one 64-bit product (rng.device_form). Floats: float32 (w >> 8) /
// 2**24 of one word, float64 ((w0 >> 5) * 2**26 + (w1 >> 6)) / 2**53 of two, exact, as the Python
// class makes them. Integers: Lemire's multiply-shift with rejection for ranges of at most 2**32
// values (one word), masked rejection of a 64-bit word (two) for wider int64 ranges; a rejected
// word n tries the side blocks philox((n, k, s0, s1), key), k = 1, 2, ...; an empty range gives
// its start (Python raises).
//
// Each helper: a '// helper: NAME' line, then its header lines (codegen/library.py reads them).

// helper: ct_mulhi32
fn ct_mulhi32(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}

// helper: ct_mulhi32
// form: int64
// features: shader-int64
// The form for devices with shader-int64 (rng.device_form puts it in when the runtime makes a
// pipeline): the 64-bit product's high word, a native widening multiply on GPUs and CPUs.
fn ct_mulhi32(a: u32, b: u32) -> u32 {
    return u32((u64(a) * u64(b)) >> 32u);
}

// helper: ct_philox_round
// requires: ct_mulhi32
fn ct_philox_round(c: vec4<u32>, k: vec2<u32>) -> vec4<u32> {
    let hi0 = ct_mulhi32(0xD2511F53u, c.x);
    let hi1 = ct_mulhi32(0xCD9E8D57u, c.z);
    return vec4<u32>(hi1 ^ c.y ^ k.x, 0xCD9E8D57u * c.z, hi0 ^ c.w ^ k.y, 0xD2511F53u * c.x);
}

// helper: ct_philox
// requires: ct_philox_round
fn ct_philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    let w = vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    var c = ct_philox_round(ctr, key);
    c = ct_philox_round(c, key + w);
    c = ct_philox_round(c, key + 2u * w);
    c = ct_philox_round(c, key + 3u * w);
    c = ct_philox_round(c, key + 4u * w);
    c = ct_philox_round(c, key + 5u * w);
    c = ct_philox_round(c, key + 6u * w);
    c = ct_philox_round(c, key + 7u * w);
    c = ct_philox_round(c, key + 8u * w);
    return ct_philox_round(c, key + 9u * w);
}

// helper: ct_rng_pick
// Word p % 4 of a block, by selects (no dynamic vector index, which a GPU compiler may put in
// memory where p is not folded).
fn ct_rng_pick(p: u32, c0: u32, c1: u32, c2: u32, c3: u32) -> u32 {
    let q = p & 3u;
    return select(select(c0, c1, q == 1u), select(c2, c3, q == 3u), q >= 2u);
}

// helper: ct_rng_random_f
fn ct_rng_random_f(w: u32) -> f32 {
    return f32(w >> 8u) * 5.9604644775390625e-8f;
}

// helper: ct_rng_f53
// features: shader-f64
fn ct_rng_f53(a: u32, b: u32) -> f64 {
    return (f64(a >> 5u) * 67108864.0lf + f64(b >> 6u)) * 1.1102230246251565e-16lf;
}

// helper: ct_rng_normal_f
fn ct_rng_normal_f(a: u32, b: u32) -> f32 {
    let u1 = 1.0f - f32(a >> 8u) * 5.9604644775390625e-8f;
    let v = f32(b >> 8u) * 1.1920928955078125e-7f - 1.0f;
    return -sqrt(-2.0f * log(u1)) * cos(3.14159265358979f * v);
}

// helper: ct_rng_normal_d
// requires: ct_rng_f53, ct_log_d, ct_cos_d
// features: shader-f64
fn ct_rng_normal_d(w0: u32, w1: u32, w2: u32, w3: u32) -> f64 {
    let u1 = 1.0lf - ct_rng_f53(w0, w1);
    let v = 2.0lf * ct_rng_f53(w2, w3) - 1.0lf;
    return -sqrt(-2.0lf * ct_log_d(u1)) * ct_cos_d(3.141592653589793lf * v);
}

// helper: ct_rng_below
// requires: ct_philox, ct_mulhi32
// loops
fn ct_rng_below(w: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32, r: u32) -> u32 {
    if (r == 0u) { return w; }
    let t = (0u - r) % r;
    if (w * r >= t) { return ct_mulhi32(w, r); }
    let key = vec2<u32>(k0, k1);
    var k = 1u;
    loop {
        let b = ct_philox(vec4<u32>(n, k, s0, s1), key);
        for (var j = 0; j < 4; j++) {
            if (b[j] * r >= t) { return ct_mulhi32(b[j], r); }
        }
        k = k + 1u;
    }
    return 0u;
}

// helper: ct_rng_randint_i
// requires: ct_rng_below
fn ct_rng_randint_i(w: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32, a: i32, b: i32) -> i32 {
    if (b < a) { return a; }
    let r = bitcast<u32>(b) - bitcast<u32>(a) + 1u;
    return bitcast<i32>(bitcast<u32>(a) + ct_rng_below(w, n, s0, s1, k0, k1, r));
}

// helper: ct_rng_randrange_i
// requires: ct_rng_below
fn ct_rng_randrange_i(w: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32, a: i32,
                      b: i32) -> i32 {
    if (b <= a) { return a; }
    let r = bitcast<u32>(b) - bitcast<u32>(a);
    return bitcast<i32>(bitcast<u32>(a) + ct_rng_below(w, n, s0, s1, k0, k1, r));
}

// helper: ct_rng_wide_l
// features: shader-int64
// Whether the int64 range [a, b + incl) has more than 2**32 values (then a draw takes 2 words).
fn ct_rng_wide_l(a: i64, b: i64, incl: u64) -> bool {
    if (b < a || (b == a && incl == 0lu)) { return false; }
    let r1 = bitcast<u64>(b) - bitcast<u64>(a) - 1lu + incl;
    return r1 >= 0x100000000lu;
}

// helper: ct_rng_below_l
// requires: ct_philox, ct_rng_below
// features: shader-int64
// loops
fn ct_rng_below_l(lo: u32, hi: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32,
                  r: u64) -> u64 {
    if (r != 0lu && r <= 0x100000000lu) {
        return u64(ct_rng_below(lo, n, s0, s1, k0, k1,
                                select(u32(r), 0u, r == 0x100000000lu)));
    }
    var m = r - 1lu;
    m = m | (m >> 1u);
    m = m | (m >> 2u);
    m = m | (m >> 4u);
    m = m | (m >> 8u);
    m = m | (m >> 16u);
    m = m | (m >> 32u);
    let x0 = (u64(lo) | (u64(hi) << 32u)) & m;
    if (r == 0lu || x0 < r) { return x0; }
    let key = vec2<u32>(k0, k1);
    var k = 1u;
    loop {
        let b = ct_philox(vec4<u32>(n, k, s0, s1), key);
        let x = (u64(b.x) | (u64(b.y) << 32u)) & m;
        if (x < r) { return x; }
        let y = (u64(b.z) | (u64(b.w) << 32u)) & m;
        if (y < r) { return y; }
        k = k + 1u;
    }
    return 0lu;
}

// helper: ct_rng_randint_l
// requires: ct_rng_below_l
// features: shader-int64
fn ct_rng_randint_l(lo: u32, hi: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32, a: i64,
                    b: i64) -> i64 {
    if (b < a) { return a; }
    let r = bitcast<u64>(b) - bitcast<u64>(a) + 1lu;
    return bitcast<i64>(bitcast<u64>(a) + ct_rng_below_l(lo, hi, n, s0, s1, k0, k1, r));
}

// helper: ct_rng_randrange_l
// requires: ct_rng_below_l
// features: shader-int64
fn ct_rng_randrange_l(lo: u32, hi: u32, n: u32, s0: u32, s1: u32, k0: u32, k1: u32, a: i64,
                      b: i64) -> i64 {
    if (b <= a) { return a; }
    let r = bitcast<u64>(b) - bitcast<u64>(a);
    return bitcast<i64>(bitcast<u64>(a) + ct_rng_below_l(lo, hi, n, s0, s1, k0, k1, r));
}

// helper: ct_rng_words_i
fn ct_rng_words_i(x: i32) -> vec2<u32> {
    return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0i));
}

// helper: ct_rng_words_l
// features: shader-int64
fn ct_rng_words_l(x: i64) -> vec2<u32> {
    let u = bitcast<u64>(x);
    return vec2<u32>(u32(u & 0xfffffffflu), u32(u >> 32u));
}
