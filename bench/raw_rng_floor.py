"""What limits a counter-based random fill in WGSL on this driver: hand-written fills of
``--n`` float32 (four per thread, one ``vec4<f32>`` store), run through wgpu-py directly
(``raw_wgpu.Raw``, no cthreads), host time of a dispatch + wait (median of ``--reps``):

* ``philox`` -- Philox-4x32-10 with the 64-bit multiply-high (``bench/raw_philox.py``'s);
* ``philox, no high word`` -- the same rounds with the high words replaced by the low
  product (not a generator: the cost of the multiply-high alone);
* ``threefry`` -- Threefry-4x32-20 (Salmon et al., SC11: adds, rotations and xors only, no
  multiply);
* ``write`` -- the stores alone (``vec4(f32(i))``).

Prints ms and GB/s of output, and torch.rand's when torch and CUDA import. No asserts.

    python bench/raw_rng_floor.py [--n 268435456] [--reps 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from raw_philox import _MULHI_INT64  # noqa: E402

_HEAD = """
struct Params { blocks: u32, seed_lo: u32, seed_hi: u32, stride: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
"""

_MAIN = """
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.y * p.stride + g.x;
    if (i >= p.blocks) { return; }
    let c = block(i);
    out[i] = vec4<f32>(c >> vec4<u32>(8u)) * 5.9604644775390625e-8f;
}
"""

PHILOX = _MULHI_INT64 + """
fn block(i: u32) -> vec4<u32> {
    var c = vec4<u32>(0u, 0u, i, 0u);
    var k = vec2<u32>(p.seed_lo, p.seed_hi);
    for (var r = 0u; r < 10u; r = r + 1u) {
        let hi0 = mulhi(0xD2511F53u, c.x);
        let hi1 = mulhi(0xCD9E8D57u, c.z);
        c = vec4<u32>(hi1 ^ c.y ^ k.x, 0xCD9E8D57u * c.z, hi0 ^ c.w ^ k.y, 0xD2511F53u * c.x);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}
"""

PHILOX_LOW = """
fn block(i: u32) -> vec4<u32> {
    var c = vec4<u32>(0u, 0u, i, 0u);
    var k = vec2<u32>(p.seed_lo, p.seed_hi);
    for (var r = 0u; r < 10u; r = r + 1u) {
        let lo0 = 0xD2511F53u * c.x;
        let lo1 = 0xCD9E8D57u * c.z;
        c = vec4<u32>((lo1 >> 7u) ^ c.y ^ k.x, lo1, (lo0 >> 9u) ^ c.w ^ k.y, lo0);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}
"""

_R = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))


def _threefry() -> str:
    lines = ["fn rotl(x: u32, r: u32) -> u32 { return (x << r) | (x >> (32u - r)); }",
             "fn block(i: u32) -> vec4<u32> {",
             "    let k0 = p.seed_lo; let k1 = p.seed_hi; let k2 = 0u; let k3 = 0u;",
             "    let k4 = 0x1BD11BDAu ^ k0 ^ k1 ^ k2 ^ k3;",
             "    var x0 = 0u + k0; var x1 = 0u + k1; var x2 = i + k2; var x3 = 0u + k3;"]
    ks = ("k0", "k1", "k2", "k3", "k4")
    for r in range(20):
        a, b = _R[r % 8]
        if r % 2 == 0:
            lines.append(f"    x0 += x1; x1 = rotl(x1, {a}u) ^ x0; x2 += x3; x3 = rotl(x3, {b}u) ^ x2;")
        else:
            lines.append(f"    x0 += x3; x3 = rotl(x3, {a}u) ^ x0; x2 += x1; x1 = rotl(x1, {b}u) ^ x2;")
        if r % 4 == 3:
            s = r // 4 + 1
            lines.append(f"    x0 += {ks[s % 5]}; x1 += {ks[(s + 1) % 5]}; x2 += {ks[(s + 2) % 5]}; "
                         f"x3 += {ks[(s + 3) % 5]} + {s}u;")
    lines += ["    return vec4<u32>(x0, x1, x2, x3);", "}"]
    return "\n".join(lines) + "\n"


WRITE = "fn block(i: u32) -> vec4<u32> { return vec4<u32>(i << 8u); }\n"


def main() -> None:
    from raw_wgpu import Raw
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2 ** 28)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    raw = Raw(features=("shader-int64",))
    n = a.n - a.n % 4
    blocks = n // 4
    gx, gy = raw.groups(blocks, 256)
    params = raw.uniform(np.array([blocks, 12345, 678, gx * 256], np.uint32).tobytes())
    out = raw.storage(4 * n)
    print(f"{raw.info.get('device', '?')}: n = {n} float32, four per thread")
    for name, body in (("philox", PHILOX), ("philox, no high word", PHILOX_LOW),
                       ("threefry", _threefry()), ("write", WRITE)):
        if name.startswith("philox") and "shader-int64" not in raw.features and name == "philox":
            print(f"  {name}: skipped (no shader-int64)")
            continue
        pipe = raw.pipeline(_HEAD + body + _MAIN)
        bg = raw.bind_group(pipe, [params, out])
        raw.dispatch(pipe, bg, gx, gy)
        raw.wait()
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            raw.dispatch(pipe, bg, gx, gy)
            raw.wait()
            times.append(time.perf_counter() - t0)
        ms = statistics.median(times) * 1e3
        print(f"  {name:22s} {ms:8.3f} ms  {4 * n / ms / 1e6:8.1f} GB/s")
    try:
        import torch
        if torch.cuda.is_available():
            buf = torch.empty(n, device="cuda")
            for _ in range(3):
                torch.rand(n, device="cuda", out=buf)
            torch.cuda.synchronize()
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                torch.rand(n, device="cuda", out=buf)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            ms = statistics.median(times) * 1e3
            print(f"  {'torch.rand':22s} {ms:8.3f} ms  {4 * n / ms / 1e6:8.1f} GB/s")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
