"""The hand-written floor of ``add.reduce(x, axis=1)`` and ``axis=0``: float32 sums of an
m x n array in WGSL variants run by plain wgpu-py (``bench/raw_wgpu.py``), each checked against
numpy, printed fastest first per axis, with numpy (and torch where CUDA imports) in the same
process.

Two times per variant, over rounds that time every variant once each (in a rotating order):
``call`` (the passes submitted, the n or m results copied to a staging buffer, waited for and
mapped: what one ``f.reduce(...).numpy()`` costs at best; median, and min) and ``kernel`` (the
passes recorded 8 times in one submission: ``(min t8 - min t1) / 7``, the device's time
without the fixed cost of a submit and a wait).

axis=1 variants (rows of n contiguous floats, ``vec4`` loads, n % 4 == 0):
  ``wg<W>-<tree|sg>``  one workgroup of W per row, a workgroup-memory tree or subgroupAdd;
  ``sg<W>-u<U>``       one subgroup per row (W / subgroup size rows per workgroup), U loads in
                       flight per lane, subgroupAdd (no barrier);
  ``multi<R>``         R rows per workgroup of 256, a workgroup-memory tree per row;
  ``thr<W>-u<U>``      one invocation per row walking it (U accumulators), workgroups of W;
  ``uni``              one workgroup of one invocation per row (loads the driver sees uniform).
axis=0 variants (n columns, m rows):
  ``col<W>``           one invocation per column walking every row (scalar);
  ``col4-<W>``         one invocation per four columns (``vec4``) walking every row;
  ``split<C>-u<U>``    ``vec4`` columns, the rows cut into chunks of C across invocations
                       (U rows in flight), partial sums into a scratch, then ``col4`` over it;
  ``tile<R>``          workgroups of 64 column-quads x R row-lanes, each lane a strided share of
                       a chunk of rows, the R lanes combined in workgroup memory, then ``col4``.

    PYTHONPATH=. python bench/probe_axis_floor.py [--n N] [--m M] [--reps R] [--only axis1|axis0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from raw_wgpu import Raw  # noqa: E402

_HEAD = """
struct P { m: u32, n: u32, chunk: u32, chunks: u32, stride: u32, p0: u32, p1: u32, p2: u32 }
@group(0) @binding(0) var<uniform> p: P;
"""
_BUF = """@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<{o}>;
"""
_SCALAR = """@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
"""


def _gid() -> str:
    return "let g = wid.y * p.stride + wid.x;"


def _acc_sum(u: int, t: str = "vec4<f32>") -> tuple[str, str]:
    decl = "\n".join(f"    var a{k} = {t}(0.0);" for k in range(u))
    total = " + ".join(f"a{k}" for k in range(u))
    return decl, total


# -- axis=1 -------------------------------------------------------------------------------------

def row_wg(w: int, comb: str) -> str:
    """One workgroup of w per row; vec4 loads a workgroup apart."""
    if comb == "sg":
        combine = f"""    let s = subgroupAdd(v);
    if (sl == 0u) {{ tile[si] = s; }}
    workgroupBarrier();
    if (lid == 0u) {{
        var t = 0.0;
        for (var k = 0u; k < sn; k++) {{ t += tile[k]; }}
        out[g] = t;
    }}"""
        builtins = (", @builtin(subgroup_invocation_id) sl: u32, @builtin(subgroup_id) si: u32, "
                    "@builtin(num_subgroups) sn: u32")
    else:
        combine = f"""    tile[lid] = v;
    workgroupBarrier();
    for (var h = {w // 2}u; h > 0u; h = h / 2u) {{
        if (lid < h) {{ tile[lid] += tile[lid + h]; }}
        workgroupBarrier();
    }}
    if (lid == 0u) {{ out[g] = tile[0]; }}"""
        builtins = ""
    return _HEAD + _BUF.format(o="f32") + f"""
var<workgroup> tile: array<f32, {w}>;
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) lid: u32{builtins}) {{
    {_gid()}
    if (g >= p.m) {{ return; }}
    let q = p.n / 4u;
    let base = g * q;
    var a = vec4<f32>(0.0);
    for (var i = lid; i < q; i += {w}u) {{ a += x4[base + i]; }}
    let v = a.x + a.y + a.z + a.w;
{combine}
}}
"""


def row_sg(w: int, u: int) -> str:
    """One subgroup per row; U vec4 loads in flight per lane; subgroupAdd."""
    decl, total = _acc_sum(u)
    body = "\n".join(f"            a{k} += x4[base + i + {k}u * sz];" for k in range(u))
    return _HEAD + _BUF.format(o="f32") + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(subgroup_invocation_id) sl: u32,
        @builtin(subgroup_id) si: u32, @builtin(num_subgroups) sn: u32,
        @builtin(subgroup_size) sz: u32) {{
    {_gid()}
    let row = g * sn + si;
    if (row >= p.m) {{ return; }}
    let q = p.n / 4u;
    let base = row * q;
{decl}
    var i = sl;
    let whole = q - q % ({u}u * sz);
    loop {{
        if (i >= whole) {{ break; }}
{body}
        i += {u}u * sz;
    }}
    for (; i < q; i += sz) {{ a0 += x4[base + i]; }}
    let a = {total};
    let s = subgroupAdd(a.x + a.y + a.z + a.w);
    if (sl == 0u) {{ out[row] = s; }}
}}
"""


def row_multi(r: int) -> str:
    """r rows per workgroup of 256 (256 / r threads per row), a tree per row."""
    t = 256 // r
    return _HEAD + _BUF.format(o="f32") + f"""
var<workgroup> tile: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let k = lid / {t}u;
    let j = lid % {t}u;
    let row = g * {r}u + k;
    let q = p.n / 4u;
    var a = vec4<f32>(0.0);
    if (row < p.m) {{
        let base = row * q;
        for (var i = j; i < q; i += {t}u) {{ a += x4[base + i]; }}
    }}
    tile[lid] = a.x + a.y + a.z + a.w;
    workgroupBarrier();
    for (var h = {t // 2}u; h > 0u; h = h / 2u) {{
        if (j < h) {{ tile[lid] += tile[lid + h]; }}
        workgroupBarrier();
    }}
    if (j == 0u && row < p.m) {{ out[row] = tile[lid]; }}
}}
"""


def row_thread(w: int, u: int) -> str:
    """One invocation per row, U accumulators."""
    decl, total = _acc_sum(u)
    body = "\n".join(f"        a{k} += x4[base + i + {k}u];" for k in range(u))
    return _HEAD + _BUF.format(o="f32") + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let row = g * {w}u + lid;
    if (row >= p.m) {{ return; }}
    let q = p.n / 4u;
    let base = row * q;
{decl}
    var i = 0u;
    let whole = q - q % {u}u;
    loop {{
        if (i >= whole) {{ break; }}
{body}
        i += {u}u;
    }}
    for (; i < q; i++) {{ a0 += x4[base + i]; }}
    let a = {total};
    out[row] = a.x + a.y + a.z + a.w;
}}
"""


def row_thread_mat(w: int) -> str:
    """One invocation per row, 64-byte loads (``mat4x4<f32>``, n % 16 == 0)."""
    return _HEAD + """@group(0) @binding(1) var<storage, read> x16: array<mat4x4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
""" + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let row = g * {w}u + lid;
    if (row >= p.m) {{ return; }}
    let q = p.n / 16u;
    let base = row * q;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    for (var i = 0u; i < q; i++) {{
        let v = x16[base + i];
        a += v[0] + v[1];
        b += v[2] + v[3];
    }}
    let s = a + b;
    out[row] = s.x + s.y + s.z + s.w;
}}
"""


def col_mat(w: int) -> str:
    """Invocation per sixteen columns (``mat4x4<f32>`` loads) walking every row."""
    return _HEAD + """@group(0) @binding(1) var<storage, read> x16: array<mat4x4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<mat4x4<f32>>;
""" + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let q = p.n / 16u;
    let t = g * {w}u + lid;
    if (t >= q) {{ return; }}
    var a = mat4x4<f32>();
    for (var r = 0u; r < p.m; r++) {{ a += x16[r * q + t]; }}
    out[t] = a;
}}
"""


def row_uniform() -> str:
    """One workgroup of one invocation per row: every address depends on the workgroup only."""
    return _HEAD + _BUF.format(o="f32") + f"""
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {{
    {_gid()}
    if (g >= p.m) {{ return; }}
    let q = p.n / 4u;
    let base = g * q;
    var a = vec4<f32>(0.0);
    for (var i = 0u; i < q; i++) {{ a += x4[base + i]; }}
    out[g] = a.x + a.y + a.z + a.w;
}}
"""


# -- axis=0 -------------------------------------------------------------------------------------

def col_scalar(w: int) -> str:
    return _HEAD + _SCALAR + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let c = g * {w}u + lid;
    if (c >= p.n) {{ return; }}
    var a = 0.0;
    for (var r = 0u; r < p.m; r++) {{ a += x[r * p.n + c]; }}
    out[c] = a;
}}
"""


def col4(w: int) -> str:
    """Invocation per four columns over rows [chunk * k, ...): p.chunk rows of p.m (chunks == 1:
    all); its partial to out[k * n/4 + c] (the second pass of split reads that scratch)."""
    return _HEAD + _BUF.format(o="vec4<f32>") + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let q = p.n / 4u;
    let t = g * {w}u + lid;
    if (t >= q) {{ return; }}
    var a = vec4<f32>(0.0);
    for (var r = 0u; r < p.m; r++) {{ a += x4[r * q + t]; }}
    out[t] = a;
}}
"""


def col4_split(w: int, u: int) -> str:
    """Invocation t: column quad t % q, chunk t / q of p.chunk rows; U rows in flight."""
    decl, total = _acc_sum(u)
    body = "\n".join(f"        a{k} += x4[(r + {k}u) * q + c];" for k in range(u))
    return _HEAD + _BUF.format(o="vec4<f32>") + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let q = p.n / 4u;
    let t = g * {w}u + lid;
    if (t >= q * p.chunks) {{ return; }}
    let k = t / q;
    let c = t - k * q;
    let r0 = k * p.chunk;
    let r1 = min(r0 + p.chunk, p.m);
{decl}
    var r = r0;
    loop {{
        if (r + {u}u > r1) {{ break; }}
{body}
        r += {u}u;
    }}
    for (; r < r1; r++) {{ a0 += x4[r * q + c]; }}
    out[t] = {total};
}}
"""


def col16_split(w: int, lanes: int) -> str:
    """Invocation t: ``lanes`` neighbouring vec4 column quads (4 * lanes columns, contiguous
    in memory) of chunk t / (q / lanes) of p.chunk rows (p.chunks == 1: every row)."""
    decl = "\n".join(f"    var a{k} = vec4<f32>(0.0);" for k in range(lanes))
    body = "\n".join(f"        a{k} += x4[r * q + c + {k}u];" for k in range(lanes))
    store = "\n".join(f"    out[k * q + c + {k}u] = a{k};" for k in range(lanes))
    return _HEAD + _BUF.format(o="vec4<f32>") + f"""
@compute @workgroup_size({w})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    {_gid()}
    let q = p.n / 4u;
    let per = q / {lanes}u;
    let t = g * {w}u + lid;
    if (t >= per * p.chunks) {{ return; }}
    let k = t / per;
    let c = (t - k * per) * {lanes}u;
    let r1 = min((k + 1u) * p.chunk, p.m);
{decl}
    for (var r = k * p.chunk; r < r1; r++) {{
{body}
    }}
{store}
}}
"""


def col4_tile(r: int) -> str:
    """Workgroups of 64 column quads x r row lanes over one chunk of p.chunk rows; the lanes
    combined in workgroup memory; the chunk's partial to out[k * q + c]."""
    return _HEAD + _BUF.format(o="vec4<f32>") + f"""
var<workgroup> tile: array<vec4<f32>, {64 * r}>;
@compute @workgroup_size(64, {r})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
    let q = p.n / 4u;
    let groups = (q + 63u) / 64u;
    let g = wid.y * p.stride + wid.x;
    let k = g / groups;
    let c = (g - k * groups) * 64u + lid.x;
    var a = vec4<f32>(0.0);
    if (c < q && k < p.chunks) {{
        let r1 = min((k + 1u) * p.chunk, p.m);
        for (var row = k * p.chunk + lid.y; row < r1; row += {r}u) {{ a += x4[row * q + c]; }}
    }}
    tile[lid.y * 64u + lid.x] = a;
    workgroupBarrier();
    if (lid.y == 0u && c < q && k < p.chunks) {{
        var s = tile[lid.x];
        for (var j = 1u; j < {r}u; j++) {{ s += tile[j * 64u + lid.x]; }}
        out[k * q + c] = s;
    }}
}}
"""


# -- running ------------------------------------------------------------------------------------

class Probe:
    def __init__(self, raw: Raw, x: np.ndarray, sg: bool):
        self.raw, self.x, self.sg = raw, x, sg
        self.m, self.n = x.shape
        self.src = raw.storage(x.nbytes)
        raw.upload(self.src, x)
        self.out = raw.storage(4 * max(self.m, self.n))
        self.stage = raw.staging(4 * max(self.m, self.n))
        self.scratch: dict = {}

    def params(self, m, n, chunk=0, chunks=1, stride=0):
        return self.raw.uniform(np.array([m, n, chunk, chunks, stride, 0, 0, 0],
                                         np.uint32).tobytes())

    def dispatch_of(self, wgsl, buffers, groups, m, n, chunk=0, chunks=1):
        gx, gy = self.raw.groups(groups, 1)
        pipe = self.raw.pipeline(wgsl)
        u = self.params(m, n, chunk, chunks, gx)
        return pipe, self.raw.bind_group(pipe, [u] + buffers), gx, gy

    def scratch_buf(self, nbytes):
        if nbytes not in self.scratch:
            self.scratch[nbytes] = self.raw.storage(nbytes)
        return self.scratch[nbytes]

    def once(self, passes, count: int, times: int = 1):
        """Record ``passes`` ([(pipe, bg, gx, gy)]) ``times`` times, copy the result out, wait
        and map it: (seconds, result)."""
        raw = self.raw
        t0 = time.perf_counter()
        enc = raw.device.create_command_encoder()
        for _ in range(times):
            for pipe, bg, gx, gy in passes:
                cp = enc.begin_compute_pass()
                cp.set_pipeline(pipe)
                cp.set_bind_group(0, bg)
                cp.dispatch_workgroups(gx, gy, 1)
                cp.end()
        enc.copy_buffer_to_buffer(self.out, 0, self.stage, 0, 4 * count)
        raw.queue.submit([enc.finish()])
        got = raw.map_read(self.stage, 4 * count, np.float32)
        return time.perf_counter() - t0, got


def axis1_variants(sg: bool, cpu: bool) -> dict:
    v = {}
    for w in ((64, 256) if not cpu else (64,)):
        v[f"wg{w}-tree"] = ("wg", row_wg(w, "tree"))
        if sg:
            v[f"wg{w}-sg"] = ("wg", row_wg(w, "sg"))
    if sg:
        for w in ((64, 256) if not cpu else (64,)):
            for u in (1, 2, 4):
                v[f"sg{w}-u{u}"] = ("sg", row_sg(w, u), w)
    for r in ((4, 8) if not cpu else (8,)):
        v[f"multi{r}"] = ("multi", row_multi(r), r)
    for w in ((64, 256) if not cpu else (8, 64)):
        for u in (1, 4):
            v[f"thr{w}-u{u}"] = ("thr", row_thread(w, u), w)
        v[f"thrm{w}"] = ("thr", row_thread_mat(w), w)
    v["uni"] = ("uni", row_uniform())
    return v


def axis0_variants(cpu: bool) -> dict:
    w = 64 if cpu else 256
    v = {f"col{w}": ("col", col_scalar(w), w)}
    for w in ((64, 256) if not cpu else (8, 64)):
        v[f"col4-{w}"] = ("col4", col4(w), w)
        v[f"colm-{w}"] = ("colm", col_mat(w), w)
    chunks = (32, 64, 128) if not cpu else (256, 512)
    for c in chunks:
        for u in (1, 4):
            v[f"split{c}-u{u}"] = ("split", col4_split(256 if not cpu else 64, u), c)
    for w in ((8, 64) if cpu else (64, 256)):
        for lanes in (2, 4):
            for c in ((128, 512, 0) if cpu else (64, 0)):
                v[f"c{4 * lanes}x{w}-r{c or 'all'}"] = ("c16", col16_split(w, lanes), w, lanes, c)
    if not cpu:
        for r in (4, 8):
            v[f"tile{r}"] = ("tile", col4_tile(r), r)
    return v


def passes_of(pr: Probe, kind, spec, sg_size: int):
    m, n, raw = pr.m, pr.n, pr.raw
    if kind == "wg":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], m, m, n)], m
    if kind == "sg":
        per = spec[2] // sg_size
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-m // per), m, n)], m
    if kind == "multi":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-m // spec[2]), m, n)], m
    if kind == "thr":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-m // spec[2]), m, n)], m
    if kind == "uni":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], m, m, n)], m
    if kind == "col":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-n // spec[2]), m, n)], n
    if kind == "col4":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-n // 4 // spec[2]), m, n)], n
    if kind == "colm":
        return [pr.dispatch_of(spec[1], [pr.src, pr.out], -(-n // 16 // spec[2]), m, n)], n
    q = n // 4
    if kind == "c16":
        w, lanes, chunk = spec[2], spec[3], spec[4] or m
        chunks = -(-m // chunk)
        dst = pr.out if chunks == 1 else pr.scratch_buf(16 * q * chunks)
        first = pr.dispatch_of(spec[1], [pr.src, dst], -(-q // lanes * chunks // w), m, n,
                               chunk, chunks)
        if chunks == 1:
            return [first], n
        second = pr.dispatch_of(col4(64), [dst, pr.out], -(-q // 64), chunks, n)
        return [first, second], n
    if kind == "split":
        chunk = spec[2]
        chunks = -(-m // chunk)
        w = 256 if not raw_is_cpu(raw) else 64
        scratch = pr.scratch_buf(16 * q * chunks)
        first = pr.dispatch_of(spec[1], [pr.src, scratch], -(-q * chunks // w), m, n,
                               chunk, chunks)
    else:                                        # tile: chunks of 8 * r rows per lane set
        r = spec[2]
        chunk = max(r * 16, 8 * r)
        chunks = -(-m // chunk)
        scratch = pr.scratch_buf(16 * q * chunks)
        first = pr.dispatch_of(spec[1], [pr.src, scratch], -(-q // 64) * chunks, m, n,
                               chunk, chunks)
    second = pr.dispatch_of(col4(64), [scratch, pr.out], -(-q // 64), chunks, n)
    return [first, second], n


def raw_is_cpu(raw: Raw) -> bool:
    return raw.info["adapter_type"] == "CPU" or "llvmpipe" in raw.info["device"].lower()


def torch_ms(x: np.ndarray, reps: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    t = torch.from_numpy(x).cuda()
    res = {}
    for axis in (1, 0):
        torch.sum(t, dim=axis)
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            torch.sum(t, dim=axis).cpu()
            ts.append(time.perf_counter() - t0)
        res[axis] = statistics.median(ts) * 1e3
    return res


def main(argv=None) -> int:
    raw = Raw(features=("subgroup",))
    cpu = raw_is_cpu(raw)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2048 if cpu else 8192)
    ap.add_argument("--m", type=int, default=None)
    ap.add_argument("--reps", type=int, default=7 if cpu else 15)
    ap.add_argument("--only", choices=("axis1", "axis0"), default=None)
    args = ap.parse_args(argv)
    n, m = args.n, args.m or args.n
    sg = "subgroup" in raw.features
    x = np.random.default_rng(26).random((m, n), dtype=np.float32)
    pr = Probe(raw, x, sg)
    sg_size = int(raw.adapter.limits.get("min-subgroup-size", 0) or 0) or (8 if cpu else 32)
    print(f"device: {raw.info['device']} ({raw.info['adapter_type']}); {m} x {n} float32 "
          f"({x.nbytes / 1e6:.0f} MB); subgroups {'yes' if sg else 'no'} (size {sg_size}); "
          f"median of {args.reps}")
    peers = {1: statistics.median(_times(lambda: x.sum(axis=1), args.reps)),
             0: statistics.median(_times(lambda: x.sum(axis=0), args.reps))}
    tpeer = torch_ms(x, args.reps)
    summary = []
    for axis in (1, 0):
        if args.only and args.only != f"axis{axis}":
            continue
        variants = axis1_variants(sg, cpu) if axis == 1 else axis0_variants(cpu)
        want = x.astype(np.float64).sum(axis=axis)
        bound = 2 * x.shape[axis] * 2.0**-24 * np.abs(x.astype(np.float64)).sum(axis=axis) + 1e-3
        runs = {}
        for name, spec in variants.items():
            try:
                passes, count = passes_of(pr, spec[0], spec, sg_size)
                _, got = pr.once(passes, count)
            except Exception as exc:                       # a variant the driver refuses
                print(f"  axis={axis} {name:14s} failed: {type(exc).__name__}: {exc}"[:200])
                continue
            ok = bool(np.all(np.abs(got.astype(np.float64) - want) <= bound))
            runs[name] = (passes, count, ok, [], [])
        # rounds: every variant once per round, in an order rotating each round (a change of
        # the machine's load falls on all alike); a call and 8 passes in one submission
        names = list(runs)
        for r in range(args.reps):
            for name in names[r % len(names):] + names[:r % len(names)]:
                passes, count, _, ones, eights = runs[name]
                ones.append(pr.once(passes, count)[0] * 1e3)
                eights.append(pr.once(passes, count, 8)[0] * 1e3)
        rows = []
        for name, (_, _, ok, ones, eights) in runs.items():
            call = statistics.median(ones)
            kern = (min(eights) - min(ones)) / 7
            rows.append((call, max(kern, 1e-6), name, ok, min(ones)))
        rows.sort()
        print(f"axis={axis}: numpy {peers[axis]:.3f} ms" +
              (f", torch {tpeer[axis]:.3f} ms (with .cpu())" if axis in tpeer else ""))
        for call, kern, name, ok, best in rows:
            extra = f"  {peers[axis] / call:5.2f}x numpy"
            if axis in tpeer:
                extra += f"  {tpeer[axis] / call:5.2f}x torch"
            print(f"  {name:14s} call {call:8.3f} ms (min {best:7.3f})  kernel {kern:8.3f} ms "
                  f"({x.nbytes / kern / 1e6:7.1f} GB/s){extra}{'' if ok else '  WRONG'}")
        good = [r for r in rows if r[3]]
        if good:
            best = min(good, key=lambda r: r[1])
            summary.append(f"fastest axis={axis}: {good[0][2]} (call {good[0][0]:.3f} ms, "
                           f"{peers[axis] / good[0][0]:.2f}x numpy"
                           + (f", {tpeer[axis] / good[0][0]:.2f}x torch" if axis in tpeer else "")
                           + f"), {best[2]} (kernel {best[1]:.3f} ms)")
            print("  " + summary[-1])
    for line in summary:
        print(line)
    return 0


def _times(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return ts


if __name__ == "__main__":
    sys.exit(main())
