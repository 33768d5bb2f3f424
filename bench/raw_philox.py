"""The hand-written floor of ``bench/random_fill.py``: a Philox-4x32-10 fill in WGSL run
through wgpu-py directly (``raw_wgpu.Raw``: the same driver, no cthreads).

Thread ``i`` computes block 0 of stream ``i`` under the seed (the block ``Random(seed, i)``
starts with) and writes its four words as floats ``(w >> 8) / 2**24`` to ``out[4i .. 4i+3]``
(one ``vec4<f32>`` store, or four ``f32`` stores: ``vec4=False``): what ``Random(seed, i)``'s first four float32 ``random()`` draws
give, so the output is checked against cthreads' four-per-thread kernel. The multiply-high is
one 64-bit product where the adapter has ``shader-int64`` (as cthreads' default), else 16-bit
halves.
"""

from __future__ import annotations

import numpy as np

_MULHI_INT64 = "fn mulhi(a: u32, b: u32) -> u32 { return u32((u64(a) * u64(b)) >> 32u); }"
_MULHI_HALVES = """fn mulhi(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
    let p01 = a0 * b1; let p10 = a1 * b0;
    let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}"""


_STORE_VEC4 = "out[i] = v;"
_STORE_SCALAR = "out[4u * i] = v.x; out[4u * i + 1u] = v.y; out[4u * i + 2u] = v.z; " \
    "out[4u * i + 3u] = v.w;"


def philox_fill_wgsl(wg: int, int64: bool, vec4: bool = True) -> str:
    """``vec4``: one ``vec4<f32>`` store per thread, else four ``f32`` stores (what a kernel
    writing ``out[4*i + k]`` makes)."""
    elem = "vec4<f32>" if vec4 else "f32"
    return f"""
struct Params {{ blocks: u32, seed_lo: u32, seed_hi: u32, stride: u32 }}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<{elem}>;

{_MULHI_INT64 if int64 else _MULHI_HALVES}

@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = g.y * p.stride + g.x;
    if (i >= p.blocks) {{ return; }}
    var c = vec4<u32>(0u, 0u, i, 0u);
    var k = vec2<u32>(p.seed_lo, p.seed_hi);
    for (var r = 0u; r < 10u; r = r + 1u) {{
        let hi0 = mulhi(0xD2511F53u, c.x);
        let hi1 = mulhi(0xCD9E8D57u, c.z);
        c = vec4<u32>(hi1 ^ c.y ^ k.x, 0xCD9E8D57u * c.z, hi0 ^ c.w ^ k.y, 0xD2511F53u * c.x);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }}
    let v = vec4<f32>(c >> vec4<u32>(8u)) * 5.9604644775390625e-8f;
    {_STORE_VEC4 if vec4 else _STORE_SCALAR}
}}
"""


class PhiloxFill:
    """``n`` float32 (a multiple of 4) filled on a raw wgpu device; ``launch()`` then
    ``raw.wait()``; ``read()`` downloads them."""

    def __init__(self, n: int, seed: int, wg: int = 256, vec4: bool = True, raw=None):
        from raw_wgpu import Raw
        if n % 4 or not 0 <= seed < 2 ** 63:
            raise ValueError("PhiloxFill: n a multiple of 4, seed in [0, 2**63)")
        self.raw = raw = raw or Raw(features=("shader-int64",))
        self.int64 = "shader-int64" in raw.features
        self.n, blocks = n, n // 4
        self.gx, gy = raw.groups(blocks, wg)
        self.pipe = raw.pipeline(philox_fill_wgsl(wg, self.int64, vec4))
        self.params = raw.uniform(np.array([blocks, seed & 0xFFFFFFFF, seed >> 32,
                                            self.gx * wg], np.uint32).tobytes())
        self.out = raw.storage(4 * n)
        self.stage = raw.staging(4 * n)
        self.gy = gy
        self.bg = raw.bind_group(self.pipe, [self.params, self.out])

    def launch(self) -> None:
        self.raw.dispatch(self.pipe, self.bg, self.gx, self.gy)

    def run(self) -> None:
        self.launch()
        self.raw.wait()

    def read(self) -> np.ndarray:
        return self.raw.read(self.out, self.stage, 4 * self.n, np.float32)
