"""WGSL of the passes behind ``sort`` / ``argsort`` (plain text; nothing here knows wgpu).

A least-significant-digit radix sort of (key word, index) pairs, 4 bits per pass:

* ``map``: each key (32- or 64-bit, read as u32 words) becomes order-preserving unsigned bits
  (ints: the sign bit flipped; floats: the sign bit flipped for positives, every bit for
  negatives; -0.0 as 0.0, which numpy's sort compares equal; every NaN as all ones, after
  +inf), its low word into the key buffer, a 64-bit key's high word into a second buffer,
  and the index buffer gets 0, 1, 2, ...;
* per pass, ``hist``: each workgroup counts the 16 digits of its tile (``size * items``
  elements) into ``hist[digit * groups + group]``; ``scan``: one workgroup turns those counts
  into their exclusive prefix sums (digit-major, so a digit's elements of an earlier tile come
  first); ``scatter``: each thread of a workgroup owns ``items`` consecutive elements of its
  tile and counts their digits, a workgroup scan of those counts (16 counters of 16 bits in
  two vec4<u32>) gives each thread its digits' first places, and the thread writes its
  elements in order at its digits' running places: stable, so the passes compose (one scan
  per tile: CPU drivers pay for every barrier); ``scatter_local``, where the device has the
  workgroup memory for a tile's keys and indexes, first places them in the tile's sorted
  order there, then stores them in that order (neighbouring threads, neighbouring places of
  a digit: coalesced stores, the exchange CUB's radix sorts make);
* ``rekey``: the key buffer gets the next key word: a 64-bit key's high word (``hi[idx]``)
  after the low word's 8 passes, then, for rows of a 2-D+ input, the row ``idx / m`` (the most
  significant digit: rows sort apart and stay in order);
* ``gather``: ``out[i] = src[idx[i]]`` (words per element 1 or 2: keys, values), or the
  argsort result ``idx % m`` as int64 words, or (mode 2 + the map's mode, 32-bit keys of one
  row) the sorted keys mapped back, read in order: only the keys that the map merged (both
  zeros, every NaN) are read at ``src[idx[i]]``, so the rest of the gather's random reads
  become coalesced ones.

The result is read through the sorted indexes (or mapped back where the map is one to one), so keys come back bit for bit (NaN payloads
and the sign of zero kept). Each thread's loops run a fixed, small number of passes except the
scan's, of ``ceil(16 * groups / size)`` (the host checks it against the CPU driver's loop
limit). Every entry point takes the uniform ``SortU`` and flat workgroup numbers folded into
x and y (``g = wid.y * nwg.x + wid.x``).
"""

from __future__ import annotations

import struct

#: (threads per workgroup, elements per thread of a tile) on GPUs and on CPU drivers, where
#: each barrier of a workgroup costs a switch per SIMD batch of its threads (fewer threads,
#: longer runs: 1.3-1.6x faster on lavapipe); a tile (4096 elements) stays below the 16-bit
#: counters' 65,536
SHAPE_GPU, SHAPE_CPU = (256, 16), (64, 64)
RADIX_BITS = 4
DIGITS = 1 << RADIX_BITS
UNIFORM_SIZE = 32

#: kernel name -> its bindings ((binding, kind), ...) with kinds "uniform", "read", "read_write"
BINDINGS = {
    "map": ((0, "uniform"), (1, "read"), (2, "read_write"), (3, "read_write"),
            (4, "read_write")),
    "hist": ((0, "uniform"), (1, "read"), (2, "read_write")),
    "scan": ((0, "uniform"), (1, "read_write")),
    "scatter": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read"), (4, "read_write"),
                (5, "read_write")),
    "scatter_local": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read"), (4, "read_write"),
                      (5, "read_write")),
    "rekey": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read_write")),
    "gather": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read_write"), (4, "read")),
}

#: map modes by key dtype
KEY_MODES = {"uint32": 0, "int32": 1, "float32": 2, "int64": 3, "float64": 4}

_HEAD = """// cthreads sort: {name}
struct SortU {{ n: u32, m: u32, groups: u32, shift: u32, mode: u32, words: u32, p6: u32, p7: u32 }}
@group(0) @binding(0) var<uniform> u: SortU;
"""

_GROUP = "    let g = wid.y * nwg.x + wid.x;\n"
_ARGS = ("@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, "
         "@builtin(local_invocation_index) lid: u32")

_MAP = """@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> hi: array<u32>;
@group(0) @binding(4) var<storage, read_write> idx: array<u32>;

fn flip32(b: u32) -> u32 {
    if ((b & 0x80000000u) != 0u) { return ~b; }
    return b | 0x80000000u;
}

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    let i = g * SIZEu + lid;
    if (i >= u.n) { return; }
    idx[i] = i;
    let mode = u.mode;
    if (mode <= 2u) {
        var b = src[i];
        if (mode == 1u) { b = b ^ 0x80000000u; }
        if (mode == 2u) {
            if ((b & 0x7fffffffu) > 0x7f800000u) { b = 0xffffffffu; }
            else {
                if (b == 0x80000000u) { b = 0u; }
                b = flip32(b);
            }
        }
        keys[i] = b;
        return;
    }
    var lo = src[2u * i];
    var h = src[2u * i + 1u];
    if (mode == 3u) { h = h ^ 0x80000000u; }
    if (mode == 4u) {
        let a = h & 0x7fffffffu;
        if (a > 0x7ff00000u || (a == 0x7ff00000u && lo != 0u)) {
            h = 0xffffffffu;
            lo = 0xffffffffu;
        } else {
            if (h == 0x80000000u && lo == 0u) { h = 0u; }
            if ((h & 0x80000000u) != 0u) { h = ~h; lo = ~lo; } else { h = h | 0x80000000u; }
        }
    }
    keys[i] = lo;
    hi[i] = h;
}
"""

_HIST = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
var<workgroup> sa: array<vec4<u32>, SIZE>;
var<workgroup> sb: array<vec4<u32>, SIZE>;

COUNTERS
@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    let start = g * TILEu + lid;   // (a histogram needs no order: coalesced)
    var oa = vec4<u32>(0u);
    var ob = vec4<u32>(0u);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c * SIZEu;
        if (i < u.n) {
            let d = (keys[i] >> u.shift) & MASKu;
            oa = oa + one_a(d);
            ob = ob + one_b(d);
        }
    }
    sa[lid] = oa;
    sb[lid] = ob;
    for (var off = SIZEu / 2u; off > 0u; off = off / 2u) {
        workgroupBarrier();
        if (lid < off) {
            sa[lid] = sa[lid] + sa[lid + off];
            sb[lid] = sb[lid] + sb[lid + off];
        }
    }
    workgroupBarrier();
    if (lid < DIGITSu && g < u.groups) { hist[lid * u.groups + g] = field(sa[0], sb[0], lid); }
}
"""

def one_group_scan(buf: str, total: str) -> str:
    """An exclusive scan of ``total`` u32 counts of ``buf`` in place by one workgroup: each
    invocation sums its run, the workgroup scans the sums, each run is rewritten."""
    return """@group(0) @binding(1) var<storage, read_write> BUF: array<u32>;
var<workgroup> sums: array<u32, SIZE>;

@compute @workgroup_size(SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    let total = TOTAL;
    let per = (total + SIZEu - 1u) / SIZEu;
    let start = min(lid * per, total);
    let end = min(start + per, total);
    var s = 0u;
    for (var k = start; k < end; k = k + 1u) { s = s + BUF[k]; }
    sums[lid] = s;
    for (var off = 1u; off < SIZEu; off = off * 2u) {
        workgroupBarrier();
        var other = 0u;
        if (lid >= off) { other = sums[lid - off]; }
        workgroupBarrier();
        sums[lid] = sums[lid] + other;
    }
    workgroupBarrier();
    var run = sums[lid] - s;
    for (var k = start; k < end; k = k + 1u) {
        let c = BUF[k];
        BUF[k] = run;
        run = run + c;
    }
}
""".replace("BUF", buf).replace("TOTAL", total)


_SCAN = one_group_scan("hist", "u.groups * DIGITSu")

#: the inclusive scan of each invocation's digit counters (``oa``/``ob``) across the workgroup
#: in ``sa``/``sb`` (Hillis-Steele, two barriers a step), shared by the scatter kernels of
#: both digit widths (``with_count_scan``)
COUNT_SCAN = """    sa[lid] = oa;
    sb[lid] = ob;
    for (var off = 1u; off < SIZEu; off = off * 2u) {
        workgroupBarrier();
        var xa = vec4<u32>(0u);
        var xb = vec4<u32>(0u);
        if (lid >= off) { xa = sa[lid - off]; xb = sb[lid - off]; }
        workgroupBarrier();
        sa[lid] = sa[lid] + xa;
        sb[lid] = sb[lid] + xb;
    }
    workgroupBarrier();
"""


def with_count_scan(template: str, indent: str = "") -> str:
    """``template`` with its ``COUNT_SCAN`` line replaced by ``COUNT_SCAN`` indented by
    ``indent``."""
    text = "".join(indent + line if line.strip() else line
                   for line in COUNT_SCAN.splitlines(True))
    return template.replace("COUNT_SCAN\n", text)


_SCATTER = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> hist: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> idx_out: array<u32>;
var<workgroup> sa: array<vec4<u32>, SIZE>;
var<workgroup> sb: array<vec4<u32>, SIZE>;
var<workgroup> offs: array<u32, DIGITS>;

COUNTERS
@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    if (lid < DIGITSu) { offs[lid] = hist[lid * u.groups + g]; }
    let start = g * TILEu + lid * ITEMSu;
    var oa = vec4<u32>(0u);
    var ob = vec4<u32>(0u);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c;
        if (i < u.n) {
            let d = (keys[i] >> u.shift) & MASKu;
            oa = oa + one_a(d);
            ob = ob + one_b(d);
        }
    }
COUNT_SCAN
    var ra = sa[lid] - oa;
    var rb = sb[lid] - ob;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c;
        if (i < u.n) {
            let key = keys[i];
            let d = (key >> u.shift) & MASKu;
            let at = offs[d] + field(ra, rb, d);
            ra = ra + one_a(d);
            rb = rb + one_b(d);
            keys_out[at] = key;
            idx_out[at] = idx[i];
        }
    }
}
"""

_SCATTER_LOCAL = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> hist: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> idx_out: array<u32>;
var<workgroup> sa: array<vec4<u32>, SIZE>;
var<workgroup> sb: array<vec4<u32>, SIZE>;
var<workgroup> offs: array<u32, DIGITS>;
var<workgroup> tstart: array<u32, DIGITS>;
var<workgroup> skeys: array<u32, TILE>;
var<workgroup> sidx: array<u32, TILE>;

COUNTERS
@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    if (lid < DIGITSu) { offs[lid] = hist[lid * u.groups + g]; }
    let start = g * TILEu + lid * ITEMSu;
    var oa = vec4<u32>(0u);
    var ob = vec4<u32>(0u);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c;
        if (i < u.n) {
            let d = (keys[i] >> u.shift) & MASKu;
            oa = oa + one_a(d);
            ob = ob + one_b(d);
        }
    }
COUNT_SCAN
    if (lid == 0u) {
        let ta = sa[SIZEu - 1u];
        let tb = sb[SIZEu - 1u];
        var run = 0u;
        for (var d = 0u; d < DIGITSu; d = d + 1u) {
            tstart[d] = run;
            run = run + field(ta, tb, d);
        }
    }
    workgroupBarrier();
    var ra = sa[lid] - oa;
    var rb = sb[lid] - ob;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c;
        if (i < u.n) {
            let key = keys[i];
            let d = (key >> u.shift) & MASKu;
            let at = tstart[d] + field(ra, rb, d);
            ra = ra + one_a(d);
            rb = rb + one_b(d);
            skeys[at] = key;
            sidx[at] = idx[i];
        }
    }
    workgroupBarrier();
    let count = min(TILEu, u.n - g * TILEu);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // in the tile's sorted order: coalesced stores
        if (p < count) {
            let key = skeys[p];
            let d = (key >> u.shift) & MASKu;
            let at = offs[d] + p - tstart[d];
            keys_out[at] = key;
            idx_out[at] = sidx[p];
        }
    }
}
"""

_REKEY = """@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read> hi: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    let i = g * SIZEu + lid;
    if (i >= u.n) { return; }
    if (u.mode == 0u) { keys[i] = hi[idx[i]]; } else { keys[i] = idx[i] / u.m; }
}
"""

_GATHER = """@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<storage, read> keys: array<u32>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    let i = g * SIZEu + lid;
    if (i >= u.n) { return; }
    if (u.mode >= 2u) {
        // the sorted 32-bit keys themselves, mapped back (mode 2 + the map's mode); only the
        // keys the map merged (both zeros, every NaN) are read at their input place
        let k = keys[i];
        let km = u.mode - 2u;
        if (km == 2u && (k == 0x80000000u || k == 0xffffffffu)) { dst[i] = src[idx[i]]; return; }
        if (km == 2u) {
            if ((k & 0x80000000u) != 0u) { dst[i] = k & 0x7fffffffu; } else { dst[i] = ~k; }
            return;
        }
        if (km == 1u) { dst[i] = k ^ 0x80000000u; return; }
        dst[i] = k;
        return;
    }
    let j = idx[i];
    if (u.mode == 1u) {
        dst[2u * i] = j % u.m;
        dst[2u * i + 1u] = 0u;
        return;
    }
    if (u.words == 1u) { dst[i] = src[j]; return; }
    dst[2u * i] = src[2u * j];
    dst[2u * i + 1u] = src[2u * j + 1u];
}
"""

_COUNTERS = """// 16 counters of 16 bits in two vec4<u32> (digit d: word d / 2, half d % 2), updated and read
// with selects, no dynamic indexes (CPU drivers vectorize them; GPUs keep them in registers)
fn one_a(d: u32) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u << ((d & 1u) * 16u)),
                  vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(d >> 1u));
}
fn one_b(d: u32) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u << ((d & 1u) * 16u)),
                  vec4<u32>(4u, 5u, 6u, 7u) == vec4<u32>(d >> 1u));
}
fn field(a: vec4<u32>, b: vec4<u32>, d: u32) -> u32 {
    let w = vec4<u32>(d >> 1u);
    let pa = select(vec4<u32>(0u), a, vec4<u32>(0u, 1u, 2u, 3u) == w);
    let pb = select(vec4<u32>(0u), b, vec4<u32>(4u, 5u, 6u, 7u) == w);
    let s = pa + pb;
    return ((s.x + s.y + s.z + s.w) >> ((d & 1u) * 16u)) & 0xffffu;
}

"""

_SCATTER = with_count_scan(_SCATTER)
_SCATTER_LOCAL = with_count_scan(_SCATTER_LOCAL)

_BODIES = {"map": _MAP, "hist": _HIST, "scan": _SCAN, "scatter": _SCATTER, "rekey": _REKEY,
           "gather": _GATHER, "scatter_local": _SCATTER_LOCAL}


def kernel_wgsl(name: str, shape: tuple) -> str:
    """The WGSL of one sort kernel (entry point ``main``) for ``shape`` (threads, elements
    per thread)."""
    size, items = shape
    assert size * items < 1 << 16 and size & (size - 1) == 0
    body = _BODIES[name]
    for word, value in (("COUNTERS", _COUNTERS), ("ARGS", _ARGS), ("GROUP", _GROUP),
                        ("TILE", str(size * items)), ("ITEMS", str(items)), ("SIZE", str(size)), ("DIGITS", str(DIGITS)),
                        ("MASK", str(DIGITS - 1))):
        body = body.replace(word, value)
    return _HEAD.format(name=name) + body


def uniform_bytes(n: int, m: int = 1, groups: int = 0, shift: int = 0, mode: int = 0,
                  words: int = 1, blocks: int = 0) -> bytes:
    return struct.pack("<8I", n, m, groups, shift, mode, words, blocks, 0)


def local_bytes(shape: tuple) -> int:
    """Workgroup memory of ``scatter_local`` (the tile's keys and indexes, the scan, offsets):
    used where the device gives that much, else ``scatter`` stores straight from its ranks."""
    return 8 * shape[0] * shape[1] + 32 * shape[0] + 8 * DIGITS


def scan_passes(groups: int, shape: tuple) -> int:
    """Loop passes of one scan thread (the longest loop of any sort kernel but ``items``)."""
    return -(-groups * DIGITS // shape[0])


def tiles(n: int, shape: tuple) -> int:
    return -(-n // (shape[0] * shape[1]))


__all__ = ["kernel_wgsl", "uniform_bytes", "BINDINGS", "KEY_MODES", "SHAPE_GPU", "SHAPE_CPU",
           "UNIFORM_SIZE", "scan_passes", "tiles", "RADIX_BITS"]
