"""Probe: matmul kernel shapes on a CPU Vulkan driver (lavapipe), hand-written WGSL through
wgpu-py (bench/raw_wgpu.py), each checked against numpy, timed in alternating rounds beside
numpy's BLAS and the cthreads direct form of the time (``codegen.matmul_wgsl`` with
``TILES_CPU`` as before issue 26's third round).

llvmpipe runs the invocations of a workgroup eight (float32; four in float64) to the lanes of a
256-bit vector; a storage load whose address differs between lanes is a gather, one whose
address is uniform (made of workgroup ids, uniforms and loop counters only) a scalar load and a
broadcast. The "lanes" shapes map consecutive invocations (local_invocation_id.x, the lanes) to
consecutive columns: B[k, j] is read along the lanes (vec4 per lane: four columns each), A[i, k]
is uniform (a workgroup's rows: wid.y), each invocation keeps ``tm`` rows x ``tn`` vectors of
accumulators.

Run: ``python bench/probe_matmul_cpu.py [--n 512] [--reps 5] [--dtype float32] [--only NAME..]``
"""

from __future__ import annotations

import argparse
import statistics
import time
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402



def lanes_wgsl(ty: str, wx: int, tm: int, tn: int, vec: int, ka: int = 1,
               arrays: bool = False) -> str:
    """C = A @ B (m x k, k x n, n a multiple of vec * wx * tn, m of tm, k of ka): invocation x
    of workgroup (gx, gy) computes rows gy*tm .. +tm and the vec-wide column groups
    gx*wx*tn + x + c*wx (c < tn). ``ka`` 4: A read as vec4 along k, k unrolled by 4.
    ``arrays``: accumulators in a private array instead of named variables."""
    v = f"vec4<{ty}>" if vec == 4 else ty
    av = f"vec4<{ty}>" if ka == 4 else ty
    lines = [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;",
        f"@group(0) @binding(1) var<storage, read> a: array<{av}>;",
        f"@group(0) @binding(2) var<storage, read> b: array<{v}>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<{v}>;",
        f"@compute @workgroup_size({wx}, 1, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: "
        "vec3<u32>) {",
        f"    let row0 = wid.y * {tm}u;",
        f"    let col = wid.x * {wx * tn}u + lid.x;",
    ]
    lines += [f"    let ra{i} = (row0 + {i}u) * p.k / {ka}u;" for i in range(tm)]
    if arrays:
        lines.append(f"    var acc: array<{v}, {tm * tn}>;")
        acc = lambda i, j: f"acc[{i * tn + j}]"
    else:
        lines += [f"    var c{i}_{j} = {v}();" for i in range(tm) for j in range(tn)]
        acc = lambda i, j: f"c{i}_{j}"
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }"]
    if ka == 1:
        lines += [f"        let a{i} = a[ra{i} + k];" for i in range(tm)]
        steps = [("", "k")]
    else:
        lines += [f"        let a{i} = a[ra{i} + k / 4u];" for i in range(tm)]
        steps = [(f"[{s}]", f"(k + {s}u)") for s in range(4)]
    for comp, kk in steps:
        tag = comp.strip("[]") or "0"
        lines += [f"        let b{tag}_{j} = b[{kk} * p.nv + col + {j * wx}u];" for j in range(tn)]
        for i in range(tm):
            for j in range(tn):
                av_ = f"{v}(a{i}{comp})"
                lines.append(f"        {acc(i, j)} = fma({av_}, b{tag}_{j}, {acc(i, j)});")
    lines += [f"        k = k + {ka}u;", "    }"]
    lines += [f"    c[(row0 + {i}u) * p.nv + col + {j * wx}u] = {acc(i, j)};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def rows_wgsl(ty: str, wx: int, tm: int, tn: int) -> str:
    """The transposed mapping for comparison: lanes along rows i (A gathered, B uniform)."""
    lines = [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;",
        f"@group(0) @binding(1) var<storage, read> a: array<{ty}>;",
        f"@group(0) @binding(2) var<storage, read> b: array<vec4<{ty}>>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<vec4<{ty}>>;",
        f"@compute @workgroup_size({wx}, 1, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: "
        "vec3<u32>) {",
        f"    let row0 = wid.y * {wx * tm}u + lid.x;",
        f"    let col = wid.x * {tn}u;",
    ]
    lines += [f"    let ra{i} = (row0 + {i * wx}u) * p.k;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = vec4<{ty}>();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }"]
    lines += [f"        let a{i} = a[ra{i} + k];" for i in range(tm)]
    lines += [f"        let b{j} = b[k * p.nv + col + {j}u];" for j in range(tn)]
    lines += [f"        c{i}_{j} = fma(vec4<{ty}>(a{i}), b{j}, c{i}_{j});"
              for i in range(tm) for j in range(tn)]
    lines += ["        k = k + 1u;", "    }"]
    lines += [f"    c[(row0 + {i * wx}u) * p.nv + col + {j}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def sg_wgsl(ty: str, tm: int, tn: int, kb: int = 8) -> str:
    """Workgroups of 8 (one subgroup: llvmpipe's eight lanes); lane x keeps tm rows x tn vec4
    columns (wid.x*8*tn + x + 8*j); per block of ``kb`` (8) k each lane loads A[row, k0 + x]
    (one lane-load per row for 8 k) and the product reads them with subgroupBroadcast(a, kk)
    (an extract and a broadcast); B as vec4 per lane. k a multiple of 8."""
    lines = [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;",
        f"@group(0) @binding(1) var<storage, read> a: array<{ty}>;",
        f"@group(0) @binding(2) var<storage, read> b: array<vec4<{ty}>>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<vec4<{ty}>>;",
        "@compute @workgroup_size(8, 1, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: "
        "vec3<u32>) {",
        f"    let row0 = wid.y * {tm}u;",
        f"    let col = wid.x * {8 * tn}u + lid.x;",
    ]
    lines += [f"    let ra{i} = (row0 + {i}u) * p.k + lid.x;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = vec4<{ty}>();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }"]
    lines += [f"        let a{i} = a[ra{i} + k];" for i in range(tm)]
    for kk in range(kb):
        lines += [f"        let b{kk}_{j} = b[(k + {kk}u) * p.nv + col + {j * 8}u];"
                  for j in range(tn)]
        for i in range(tm):
            lines.append(f"        let s{kk}_{i} = vec4<{ty}>(subgroupBroadcast(a{i}, {kk}u));")
            for j in range(tn):
                lines.append(f"        c{i}_{j} = fma(s{kk}_{i}, b{kk}_{j}, c{i}_{j});")
    lines += [f"        k = k + {kb}u;", "    }"]
    lines += [f"    c[(row0 + {i}u) * p.nv + col + {j * 8}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def dv_wgsl(ty: str, wx: int, wy: int, tm: int, tn: int) -> str:
    """The direct mapping (invocation (x, y): rows (wid.y*wy + y)*tm .., vec4 columns
    (wid.x*wx + x)*tn ..) with A read as vec4 along k (k unrolled by 4) and B as vec4."""
    lines = [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;",
        f"@group(0) @binding(1) var<storage, read> a: array<vec4<{ty}>>;",
        f"@group(0) @binding(2) var<storage, read> b: array<vec4<{ty}>>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<vec4<{ty}>>;",
        f"@compute @workgroup_size({wx}, {wy}, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: "
        "vec3<u32>) {",
        f"    let row0 = (wid.y * {wy}u + lid.y) * {tm}u;",
        f"    let col = (wid.x * {wx}u + lid.x) * {tn}u;",
    ]
    lines += [f"    let ra{i} = (row0 + {i}u) * p.k / 4u;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = vec4<{ty}>();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }"]
    lines += [f"        let a{i} = a[ra{i} + k / 4u];" for i in range(tm)]
    for s in range(4):
        lines += [f"        let b{s}_{j} = b[(k + {s}u) * p.nv + col + {j}u];" for j in range(tn)]
        lines += [f"        c{i}_{j} = fma(vec4<{ty}>(a{i}[{s}]), b{s}_{j}, c{i}_{j});"
                  for i in range(tm) for j in range(tn)]
    lines += ["        k = k + 4u;", "    }"]
    lines += [f"    c[(row0 + {i}u) * p.nv + col + {j}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def _head(ty: str, av: str, bv: str, cv: str, wx: int) -> list:
    return [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;",
        f"@group(0) @binding(1) var<storage, read> a: array<{av}>;",
        f"@group(0) @binding(2) var<storage, read> b: array<{bv}>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<{cv}>;",
        f"@compute @workgroup_size({wx}, 1, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: "
        "vec3<u32>) {",
    ]


def sg4_wgsl(ty: str, tm: int, tn: int) -> str:
    """Lanes along columns (lane x: vec4 columns wid.x*8*tn + x + 8j), A read as vec4 along k
    by the lanes together: lane x loads A[row, k0 + 4x .. 4x + 3], so one load per row covers
    32 k; subgroupBroadcast(a, kk / 4)[kk % 4] gives every lane A[row, k0 + kk]. k % 32 == 0."""
    v4 = f"vec4<{ty}>"
    lines = _head(ty, v4, v4, v4, 8) + [
        f"    let row0 = wid.y * {tm}u;",
        f"    let col = wid.x * {8 * tn}u + lid.x;",
    ]
    lines += [f"    let ra{i} = (row0 + {i}u) * p.k / 4u + lid.x;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = {v4}();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }"]
    lines += [f"        let a{i} = a[ra{i} + k / 4u];" for i in range(tm)]
    for q in range(8):
        lines += [f"        let s{q}_{i} = subgroupBroadcast(a{i}, {q}u);" for i in range(tm)]
        for e in range(4):
            kk = 4 * q + e
            lines += [f"        let b{kk}_{j} = b[(k + {kk}u) * p.nv + col + {j * 8}u];"
                      for j in range(tn)]
            lines += [f"        c{i}_{j} = fma({v4}(s{q}_{i}[{e}]), b{kk}_{j}, c{i}_{j});"
                      for i in range(tm) for j in range(tn)]
    lines += ["        k = k + 32u;", "    }"]
    lines += [f"    c[(row0 + {i}u) * p.nv + col + {j * 8}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def sgt_wgsl(ty: str, tm: int, tn: int) -> str:
    """Lanes along rows (lane x: rows wid.y*8*tm + x + 8i), B read by the lanes together: lane x
    loads B[k0 + x, col + 4j .. 4j + 3] (vec4), subgroupBroadcast(b, kk) gives every lane
    row k0 + kk of it; A read as two vec4 along k per row (k0 .. k0 + 7). k % 8 == 0."""
    v4 = f"vec4<{ty}>"
    lines = _head(ty, v4, v4, v4, 8) + [
        f"    let row0 = wid.y * {8 * tm}u + lid.x;",
        f"    let col = wid.x * {tn}u;",
    ]
    lines += [f"    let ra{i} = (row0 + {8 * i}u) * p.k / 4u;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = {v4}();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }",
              "        let kb = (k + lid.x) * p.nv + col;"]
    lines += [f"        let b{j} = b[kb + {j}u];" for j in range(tn)]
    for i in range(tm):
        lines += [f"        let a{i}_0 = a[ra{i} + k / 4u];",
                  f"        let a{i}_1 = a[ra{i} + k / 4u + 1u];"]
    for kk in range(8):
        for j in range(tn):
            lines.append(f"        let s{kk}_{j} = subgroupBroadcast(b{j}, {kk}u);")
            lines += [f"        c{i}_{j} = fma({v4}(a{i}_{kk // 4}[{kk % 4}]), s{kk}_{j}, "
                      f"c{i}_{j});" for i in range(tm)]
    lines += ["        k = k + 8u;", "    }"]
    lines += [f"    c[(row0 + {8 * i}u) * p.nv + col + {j}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def u64_wgsl(tm, tq):
    """float32 in the lanes shape with 64-bit loads: A bound as vec4<u64> (8 k of a row, two
    floats a component), B's row k0 + lane as tq vec4<u64> (8 columns each), the floats taken
    apart by bitcasts: half the load instructions of vec4<f32> (shader-int64)."""
    L = ["struct P { m: u32, n: u32, k: u32, nv: u32 }",
         "@group(0) @binding(0) var<uniform> p: P;",
         "@group(0) @binding(1) var<storage, read> a: array<vec4<u64>>;",
         "@group(0) @binding(2) var<storage, read> b: array<vec4<u64>>;",
         "@group(0) @binding(3) var<storage, read_write> c: array<vec4<f32>>;",
         "fn lo(x: vec4<u64>) -> vec4<f32> {",
         "    return bitcast<vec4<f32>>(vec4<u32>(x & vec4<u64>(0xfffffffflu))); }",
         "fn hi(x: vec4<u64>) -> vec4<f32> {",
         "    return bitcast<vec4<f32>>(vec4<u32>(x >> vec4<u32>(32u))); }",
         "@compute @workgroup_size(8, 1, 1)",
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, "
         "@builtin(subgroup_invocation_id) lane: u32) {",
         f"    let row0 = wid.y * {8*tm}u + lane;",
         f"    let col8 = wid.x * {tq}u;"]
    L += [f"    let ra{i} = (row0 + {8*i}u) * p.k / 8u;" for i in range(tm)]
    tn = 2 * tq
    L += [f"    var c{i}_{j} = vec4<f32>();" for i in range(tm) for j in range(tn)]
    L += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }",
          "        let kb = (k + lane) * (p.n / 8u) + col8;"]
    for q in range(tq):
        L += [f"        let bq{q} = b[kb + {q}u];",
              # elements of a u64 vector: (x.lo, x.hi, y.lo, y.hi, ...): columns 8q + 0..7
              f"        let lo{q} = lo(bq{q}); let hi{q} = hi(bq{q});",
              f"        let b{2*q} = vec4<f32>(lo{q}.x, hi{q}.x, lo{q}.y, hi{q}.y);",
              f"        let b{2*q+1} = vec4<f32>(lo{q}.z, hi{q}.z, lo{q}.w, hi{q}.w);"]
    for i in range(tm):
        L += [f"        let aq{i} = a[ra{i} + k / 8u];",
              f"        let al{i} = lo(aq{i}); let ah{i} = hi(aq{i});"]
    for kk in range(8):
        comp = "xyzw"[kk // 2]
        for j in range(tn):
            L.append(f"        let s{kk}_{j} = subgroupBroadcast(b{j}, {kk}u);")
            half = "al" if kk % 2 == 0 else "ah"
            L += [f"        c{i}_{j} = fma(vec4<f32>({half}{i}.{comp}), s{kk}_{j}, c{i}_{j});"
                  for i in range(tm)]
    L += ["        k = k + 8u;", "    }"]
    L += [f"    c[(row0 + {8*i}u) * p.nv + col8 * 2u + {j}u] = c{i}_{j};"
          for i in range(tm) for j in range(tn)]
    return "\n".join(L + ["}"]) + "\n"


class Probe:
    def __init__(self, n: int, dtype: str):
        from raw_wgpu import Raw
        self.raw = Raw(features=["shader-f64", "subgroup", "shader-int64"])
        self.n, self.dtype = n, dtype
        rng = np.random.default_rng(3)
        self.a = rng.standard_normal((n, n)).astype(dtype)
        self.b = rng.standard_normal((n, n)).astype(dtype)
        size = np.dtype(dtype).itemsize
        r = self.raw
        self.ga, self.gb, self.gc = (r.storage(n * n * size) for _ in range(3))
        r.upload(self.ga, self.a)
        r.upload(self.gb, self.b)
        self.stage = r.staging(n * n * size)
        self.want = self.a.astype(np.float64) @ self.b.astype(np.float64)

    def _pipe(self, wgsl: str, entry: str):
        d = self.raw.device
        module = d.create_shader_module(code=wgsl)
        return d.create_compute_pipeline(layout="auto",
                                         compute={"module": module, "entry_point": entry})

    def variant(self, wgsl: str, grid: tuple, params: bytes, entry: str = "main"):
        pipe = self._pipe(wgsl, entry)
        ub = self.raw.uniform(params)
        bg = self.raw.bind_group(pipe, [ub, self.ga, self.gb, self.gc])
        r = self.raw

        def run():
            r.dispatch(pipe, bg, grid[0], grid[1])
            r.wait()
        return run

    def check(self, name: str, run) -> None:
        self.raw.queue.write_buffer(self.gc, 0, np.zeros(self.n * self.n, self.dtype))
        run()
        n = self.n
        got = self.raw.read(self.gc, self.stage, n * n * self.a.itemsize, self.dtype)
        err = np.abs(got.reshape(n, n) - self.want).max()
        tol = (1e-3 if self.dtype == "float32" else 1e-10) * np.sqrt(n)
        if not err <= tol:
            raise AssertionError(f"{name}: max error {err}")


def variants(pr: Probe, only) -> dict:
    n, ty = pr.n, "f32" if pr.dtype == "float32" else "f64"
    out = {}

    def add(name, wgsl, grid, params, entry="main"):
        if only and not any(o in name for o in only):
            return
        try:
            run = pr.variant(wgsl, grid, params, entry)
            pr.check(name, run)
        except Exception as exc:          # noqa: BLE001 -- a probe reports and goes on
            print(f"  {name}: FAILED {str(exc)[:600]}", flush=True)
            return
        out[name] = run

    # the direct form as it was (TILES_CPU: 128x128 tiles of 16x16 per invocation)
    from cthreads.codegen import matmul as codegen
    t = codegen.Tiles(128, 128, 1, 16, 16, shared=False)
    u = codegen.uniform_bytes(n, n, n, 0, n, False, (0, 0, 0), (0, 0, 0))
    add("old direct 128x128 of 16x16", codegen.matmul_wgsl(pr.dtype, pr.dtype, pr.dtype, t),
        (-(-n // 128), -(-n // 128)), u, codegen.ENTRY_POINT)
    t8 = codegen.Tiles(64, 64, 1, 8, 8, shared=False)
    add("old direct 64x64 of 8x8", codegen.matmul_wgsl(pr.dtype, pr.dtype, pr.dtype, t8),
        (-(-n // 64), -(-n // 64)), u, codegen.ENTRY_POINT)
    from cthreads.codegen import matmul_lanes
    for tm, tn in [(4, 4), (4, 2), (2, 4), (3, 4), (8, 2), (4, 3), (2, 2), (4, 8), (8, 4),
                   (6, 4), (2, 8), (4, 6), (3, 8), (2, 12), (3, 6)]:
        lt = matmul_lanes.Lanes(tm, tn, 8)
        add(f"lib lanes {tm}x{tn}", matmul_lanes.lanes_wgsl(pr.dtype, pr.dtype, pr.dtype, lt,
                                                           4, 4, 4),
            (-(-n // lt.bn), -(-n // lt.bm)), u, codegen.ENTRY_POINT)
        if pr.dtype == "float32" and tn % 2 == 0:
            add(f"lib pairs {tm}x{tn}", matmul_lanes.lanes_wgsl(
                pr.dtype, pr.dtype, pr.dtype, lt, 8, 8, 4), (-(-n // lt.bn), -(-n // lt.bm)), u,
                codegen.ENTRY_POINT)
    for wx, tm, tn, vec, ka, arr in [
            (8, 4, 1, 4, 1, False), (8, 2, 2, 4, 1, False), (8, 3, 1, 4, 1, False),
            (8, 6, 1, 4, 1, False), (8, 8, 1, 4, 1, False), (8, 4, 2, 4, 1, False),
            (8, 4, 1, 4, 4, False), (8, 2, 1, 4, 4, False), (8, 4, 1, 4, 1, True),
            (16, 4, 1, 4, 1, False), (32, 4, 1, 4, 1, False), (64, 4, 1, 4, 1, False),
            (8, 6, 2, 1, 1, False), (8, 4, 3, 1, 1, False), (8, 8, 2, 1, 1, False),
            (8, 4, 4, 1, 1, False), (8, 8, 4, 1, 1, False), (8, 16, 1, 1, 1, False)]:
        cols = wx * tn * vec
        if n % cols or n % tm:
            continue
        name = f"lanes wx{wx} {tm}x{tn} vec{vec}" + (" a4" if ka == 4 else "") + \
            (" arr" if arr else "")
        params = struct.pack("<4I", n, n, n, n // vec)
        add(name, lanes_wgsl(ty, wx, tm, tn, vec, ka, arr), (n // cols, n // tm), params)
    for wx, tm, tn in [(8, 2, 2), (8, 4, 1)]:
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"rows wx{wx} {tm}x{tn} vec4", rows_wgsl(ty, wx, tm, tn),
            (n // (4 * tn), n // (wx * tm)), params)
    for tm, tn in [(2, 1), (4, 1), (2, 2), (8, 1), (4, 2)]:
        if n % (32 * tn) or n % tm:
            continue
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"sg {tm}x{tn} vec4", sg_wgsl(ty, tm, tn), (n // (32 * tn), n // tm), params)
    for wx, wy, tm, tn in [(8, 8, 8, 2), (8, 8, 16, 4), (8, 8, 8, 4), (8, 4, 4, 2),
                           (8, 8, 4, 4), (8, 1, 4, 2), (8, 1, 8, 2)]:
        if n % (4 * wx * tn) or n % (wy * tm):
            continue
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"dv {wx}x{wy} {tm}x{tn} vec4", dv_wgsl(ty, wx, wy, tm, tn),
            (n // (4 * wx * tn), n // (wy * tm)), params)
    for tm, tq in [(4, 3), (4, 2), (2, 4), (8, 1)]:
        if pr.dtype != "float32" or n % (8 * tq) or n % (8 * tm):
            continue
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"u64 {tm}x{8 * tq}", u64_wgsl(tm, tq), (n // (8 * tq), n // (8 * tm)), params)
    for tm, tn in [(4, 1), (8, 1), (12, 1), (16, 1), (4, 2), (8, 2)]:
        if n % (32 * tn) or n % tm:
            continue
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"sg4 {tm}x{tn}", sg4_wgsl(ty, tm, tn), (n // (32 * tn), n // tm), params)
    for tm, tn in [(1, 4), (2, 4), (2, 2), (3, 3), (4, 4), (1, 8), (2, 3), (4, 2), (8, 2),
                   (4, 3), (3, 4), (6, 2), (8, 4), (2, 8)]:
        if n % (4 * tn) or n % (8 * tm):
            continue
        params = struct.pack("<4I", n, n, n, n // 4)
        add(f"sgt {tm}x{tn}", sgt_wgsl(ty, tm, tn), (n // (4 * tn), n // (8 * tm)), params)
    return out


def _rounds(fns: dict, reps: int) -> dict:
    """ms of each call of each of ``fns`` over ``reps`` rounds, the order rotating."""
    times = {k: [] for k in fns}
    names = list(fns)
    for r in range(reps):
        for k in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            fns[k]()
            times[k].append((time.perf_counter() - t0) * 1e3)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--only", nargs="*", default=())
    args = ap.parse_args()
    pr = Probe(args.n, args.dtype)
    print(f"{pr.raw.info['device']}: {args.n}^2 {args.dtype}, GFLOP/s, medians of {args.reps} "
          "alternating rounds", flush=True)
    fns = variants(pr, args.only)
    host = np.empty((args.n, args.n), args.dtype)
    fns["numpy"] = lambda: np.matmul(pr.a, pr.b, out=host)
    for f in fns.values():
        f()
    rounds = _rounds(fns, args.reps)
    ms = {k: statistics.median(v) for k, v in rounds.items()}
    best = {k: min(v) for k, v in rounds.items()}
    flops = 2 * args.n ** 3
    base, base_b = flops / ms["numpy"] / 1e6, flops / best["numpy"] / 1e6
    print("  (median of the rounds; then the fastest single run, a less loaded moment)")
    for name, v in sorted(ms.items(), key=lambda kv: kv[1]):
        g, gb = flops / v / 1e6, flops / best[name] / 1e6
        print(f"  {name:34s} {v:8.2f} ms {g:8.2f} GFLOP/s  {g / base:5.2f}x numpy | "
              f"best {gb:8.2f} GFLOP/s {gb / base_b:5.2f}x", flush=True)


def ubo_wgsl(ty: str, tm: int, tn: int, uniform_a: bool, kdim: int) -> str:
    """The lanes shape (lanes along rows, B broadcast from the lanes) with A in a uniform
    buffer (``uniform_a``: llvmpipe gathers uniform loads without its per-lane loop of
    bounds-checked storage loads) or in storage; for a 32-row A of 64 KiB (one binding)."""
    v4 = f"vec4<{ty}>"
    size = 65536 // (16 if ty == "f32" else 32)
    decl_a = (f"@group(0) @binding(1) var<uniform> a: array<{v4}, {size}>;" if uniform_a
              else f"@group(0) @binding(1) var<storage, read> a: array<{v4}>;")
    lines = [
        "struct P { m: u32, n: u32, k: u32, nv: u32 }",
        "@group(0) @binding(0) var<uniform> p: P;", decl_a,
        f"@group(0) @binding(2) var<storage, read> b: array<{v4}>;",
        f"@group(0) @binding(3) var<storage, read_write> c: array<{v4}>;",
        "@compute @workgroup_size(8, 1, 1)",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(subgroup_invocation_id) lane: "
        "u32) {",
        f"    let row0 = wid.y * {8 * tm}u + lane;",
        f"    let col = wid.x * {tn}u;",
    ]
    lines += [f"    let ra{i} = (row0 + {8 * i}u) * {kdim // 4}u;" for i in range(tm)]
    lines += [f"    var c{i}_{j} = {v4}();" for i in range(tm) for j in range(tn)]
    lines += ["    var k = 0u;", "    loop {", "        if (k >= p.k) { break; }",
              "        let kb = (k + lane) * p.nv + col;"]
    lines += [f"        let b{j} = b[kb + {j}u];" for j in range(tn)]
    for i in range(tm):
        lines += [f"        let a{i}_0 = a[ra{i} + k / 4u];",
                  f"        let a{i}_1 = a[ra{i} + k / 4u + 1u];"]
    for kk in range(8):
        for j in range(tn):
            lines.append(f"        let s{kk}_{j} = subgroupBroadcast(b{j}, {kk}u);")
            lines += [f"        c{i}_{j} = fma({v4}(a{i}_{kk // 4}[{kk % 4}]), s{kk}_{j}, "
                      f"c{i}_{j});" for i in range(tm)]
    lines += ["        k = k + 8u;", "    }"]
    lines += [f"    c[(row0 + {8 * i}u) * p.nv + col + {j}u] = c{i}_{j};"
              for i in range(tm) for j in range(tn)]
    return "\n".join(lines + ["}"]) + "\n"


def ubo_main(n: int, reps: int, dtype: str) -> None:
    """``--ubo``: a 32 x k (64 KiB) A from a uniform buffer vs from storage, k x n B."""
    from raw_wgpu import Raw
    raw = Raw(features=["shader-f64", "subgroup", "shader-int64"])
    size = np.dtype(dtype).itemsize
    k = 65536 // (32 * size)
    ty = "f32" if dtype == "float32" else "f64"
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    u = raw.wgpu.BufferUsage
    ga_u = raw.device.create_buffer(size=a.nbytes, usage=u.UNIFORM | u.COPY_DST)
    ga_s, gb, gc = raw.storage(a.nbytes), raw.storage(b.nbytes), raw.storage(32 * n * size)
    for buf, arr in ((ga_u, a), (ga_s, a), (gb, b)):
        raw.upload(buf, arr)
    stage = raw.staging(32 * n * size)
    fns = {}
    for tn in (6, 4):
        for uni in (True, False):
            pipe = raw.pipeline(ubo_wgsl(ty, 4, tn, uni, k))
            params = raw.uniform(struct.pack("<4I", 32, n, k, n // 4))
            bg = raw.bind_group(pipe, [params, ga_u if uni else ga_s, gb, gc])
            grid = -(-n // (4 * tn))

            def run(pipe=pipe, bg=bg, grid=grid):
                raw.dispatch(pipe, bg, grid, 1)
                raw.wait()
            raw.queue.write_buffer(gc, 0, np.zeros(32 * n, dtype))
            run()
            got = raw.read(gc, stage, 32 * n * size, dtype).reshape(32, n)
            cols = (n // (4 * tn)) * 4 * tn
            assert np.allclose(got[:, :cols], (a @ b)[:, :cols], rtol=1e-3, atol=1e-3)
            fns[f"4x{tn} A {'uniform' if uni else 'storage'}"] = run
    host = np.empty((32, n), dtype)
    fns["numpy"] = lambda: np.matmul(a, b, out=host)
    rounds = _rounds(fns, reps)
    flops = 2 * 32 * n * k
    for name, v in rounds.items():
        print(f"  {name:24s} median {flops / statistics.median(v) / 1e6:8.2f} GFLOP/s, best "
              f"{flops / min(v) / 1e6:8.2f}", flush=True)


if __name__ == "__main__" and "--ubo" in sys.argv:
    ubo_main(int(sys.argv[sys.argv.index("--ubo") + 1]), 9, sys.argv[-1]
             if sys.argv[-1].startswith("float") else "float32")
    sys.exit(0)


if __name__ == "__main__":
    main()
