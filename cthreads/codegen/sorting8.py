"""WGSL of the 8-bit digit passes of ``sort`` (GPUs' default; ``codegen/sorting.py`` has the
map, rekey and gather kernels and the 4-bit form, ``CTHREADS_SORT=old``).

Per 8-bit digit pass (4 per 32-bit key word):

* ``hist8``: each workgroup counts the 256 digits of its tile (``size * items`` elements,
  coalesced loads) with workgroup-memory atomics into ``hist[digit * groups + group]``;
* the scan of those ``256 * groups`` counts in parallel: ``scan_up`` sums each block of
  ``size * items`` counts (one workgroup each) into ``parts``, ``scan_top`` (one workgroup)
  turns the block sums into their exclusive prefix sums, ``scan_down`` rescans each block
  from its block's start: the exclusive prefix sums, digit-major, so a digit's elements of an
  earlier tile come first;
* ``scatter8``: the tile is loaded (coalesced) into workgroup memory, sorted there stably by
  the 8-bit digit with two 4-bit splits (low nibble, then high nibble; each thread owns
  ``items`` consecutive elements, 16 counters of 16 bits in two vec4<u32>, one workgroup scan
  a split; the tile's words padded, one after every 32, against bank conflicts), each digit's first place in the sorted tile found where the digit changes, then
  stored in the tile's sorted order (neighbouring threads, neighbouring places of a digit:
  coalesced stores) at ``hist[digit, group] + place - first place``. Stable, so the passes
  compose.
"""

from __future__ import annotations

from .sorting import _ARGS, _COUNTERS, _GROUP, _HEAD, one_group_scan, with_count_scan

RADIX_BITS = 8
DIGITS = 256

BINDINGS = {
    "hist8": ((0, "uniform"), (1, "read"), (2, "read_write")),
    "scan_up": ((0, "uniform"), (1, "read"), (2, "read_write")),
    "scan_top": ((0, "uniform"), (1, "read_write")),
    "scan_down": ((0, "uniform"), (1, "read_write"), (2, "read")),
    "scatter8": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read"), (4, "read_write"),
                 (5, "read_write")),
}

_HIST8 = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;
var<workgroup> cnt: array<atomic<u32>, 256>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    for (var d = lid; d < 256u; d = d + SIZEu) { atomicStore(&cnt[d], 0u); }
    workgroupBarrier();
    let start = g * TILEu + lid;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c * SIZEu;
        if (i < u.n) { atomicAdd(&cnt[(keys[i] >> u.shift) & 255u], 1u); }
    }
    workgroupBarrier();
    for (var d = lid; d < 256u; d = d + SIZEu) { hist[d * u.groups + g] = atomicLoad(&cnt[d]); }
}
"""

_SCAN_UP = """@group(0) @binding(1) var<storage, read> hist: array<u32>;
@group(0) @binding(2) var<storage, read_write> parts: array<u32>;
var<workgroup> sums: array<u32, SIZE>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.p6) { return; }
    let total = u.groups * 256u;
    var s = 0u;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let k = g * TILEu + c * SIZEu + lid;
        if (k < total) { s = s + hist[k]; }
    }
    sums[lid] = s;
    for (var off = SIZEu / 2u; off > 0u; off = off / 2u) {
        workgroupBarrier();
        if (lid < off) { sums[lid] = sums[lid] + sums[lid + off]; }
    }
    workgroupBarrier();
    if (lid == 0u) { parts[g] = sums[0]; }
}
"""

_SCAN_TOP = one_group_scan("parts", "u.p6")

_SCAN_DOWN = """@group(0) @binding(1) var<storage, read_write> hist: array<u32>;
@group(0) @binding(2) var<storage, read> parts: array<u32>;
var<workgroup> sums: array<u32, SIZE>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.p6) { return; }
    let total = u.groups * 256u;
    let start = g * TILEu + lid * ITEMSu;
    var s = 0u;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let k = start + c;
        if (k < total) { s = s + hist[k]; }
    }
    sums[lid] = s;
    for (var off = 1u; off < SIZEu; off = off * 2u) {
        workgroupBarrier();
        var other = 0u;
        if (lid >= off) { other = sums[lid - off]; }
        workgroupBarrier();
        sums[lid] = sums[lid] + other;
    }
    workgroupBarrier();
    var run = parts[g] + sums[lid] - s;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let k = start + c;
        if (k < total) {
            let v = hist[k];
            hist[k] = run;
            run = run + v;
        }
    }
}
"""

_SCATTER8 = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> hist: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> idx_out: array<u32>;
var<workgroup> sa: array<vec4<u32>, SIZE>;
var<workgroup> sb: array<vec4<u32>, SIZE>;
var<workgroup> nib: array<u32, 16>;
var<workgroup> offs: array<u32, 256>;
var<workgroup> tstart: array<u32, 256>;
var<workgroup> skeys: array<u32, PADDED>;
var<workgroup> sidx: array<u32, PADDED>;

// a tile place's word in workgroup memory: one pad word after every 32, so that the threads
// of a subgroup reading their runs of ``items`` consecutive places hit distinct banks
fn sp(p: u32) -> u32 { return p + (p >> 5u); }

COUNTERS
@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    for (var d = lid; d < 256u; d = d + SIZEu) { offs[d] = hist[d * u.groups + g]; }
    let base = g * TILEu;
    let count = min(TILEu, u.n - base);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // coalesced loads
        if (p < count) {
            skeys[sp(p)] = keys[base + p];
            sidx[sp(p)] = idx[base + p];
        }
    }
    workgroupBarrier();
    let start = lid * ITEMSu;
    for (var hn = 0u; hn < 2u; hn = hn + 1u) {
        let sh = u.shift + 4u * hn;
        var kk: array<u32, ITEMS>;
        var xx: array<u32, ITEMS>;
        var oa = vec4<u32>(0u);
        var ob = vec4<u32>(0u);
        for (var c = 0u; c < ITEMSu; c = c + 1u) {
            let p = start + c;
            if (p < count) {
                kk[c] = skeys[sp(p)];
                xx[c] = sidx[sp(p)];
                let d = (kk[c] >> sh) & 15u;
                oa = oa + one_a(d);
                ob = ob + one_b(d);
            }
        }
COUNT_SCAN
        if (lid == 0u) {
            let ta = sa[SIZEu - 1u];
            let tb = sb[SIZEu - 1u];
            var run = 0u;
            for (var d = 0u; d < 16u; d = d + 1u) {
                nib[d] = run;
                run = run + field(ta, tb, d);
            }
        }
        workgroupBarrier();
        var ra = sa[lid] - oa;
        var rb = sb[lid] - ob;
        for (var c = 0u; c < ITEMSu; c = c + 1u) {
            if (start + c < count) {
                let d = (kk[c] >> sh) & 15u;
                let at = nib[d] + field(ra, rb, d);
                ra = ra + one_a(d);
                rb = rb + one_b(d);
                skeys[sp(at)] = kk[c];
                sidx[sp(at)] = xx[c];
            }
        }
        workgroupBarrier();
    }
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // each digit's first place in the sorted tile
        if (p < count) {
            let d = (skeys[sp(p)] >> u.shift) & 255u;
            if (p == 0u || ((skeys[sp(p - 1u)] >> u.shift) & 255u) != d) { tstart[d] = p; }
        }
    }
    workgroupBarrier();
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // in the tile's sorted order: coalesced stores
        if (p < count) {
            let key = skeys[sp(p)];
            let d = (key >> u.shift) & 255u;
            let at = offs[d] + p - tstart[d];
            keys_out[at] = key;
            idx_out[at] = sidx[sp(p)];
        }
    }
}
"""

_SCATTER8 = with_count_scan(_SCATTER8, "    ")

_BODIES = {"hist8": _HIST8, "scan_up": _SCAN_UP, "scan_top": _SCAN_TOP,
           "scan_down": _SCAN_DOWN, "scatter8": _SCATTER8}


def kernel_wgsl(name: str, shape: tuple) -> str:
    """The WGSL of one 8-bit-form kernel (entry point ``main``) for ``shape`` (threads,
    elements per thread; at most 256 threads)."""
    size, items = shape
    assert size * items < 1 << 16 and size & (size - 1) == 0 and size <= 256
    body = _BODIES[name]
    for word, value in (("COUNTERS", _COUNTERS), ("ARGS", _ARGS), ("GROUP", _GROUP),
                        ("PADDED", str(size * items + size * items // 32)),
                        ("TILE", str(size * items)), ("ITEMS", str(items)),
                        ("SIZE", str(size))):
        body = body.replace(word, value)
    return _HEAD.format(name=name) + body


def local_bytes(shape: tuple) -> int:
    """Workgroup memory of ``scatter8`` (the tile's keys and indexes, the split scans, the
    digits' offsets and first places)."""
    tile = shape[0] * shape[1]
    return 8 * (tile + tile // 32) + 32 * shape[0] + 4 * (16 + 2 * DIGITS)


def blocks(groups: int, shape: tuple) -> int:
    """Blocks of ``scan_up`` / ``scan_down`` over ``256 * groups`` counts."""
    return -(-groups * DIGITS // (shape[0] * shape[1]))


def scan_passes(groups: int, shape: tuple) -> int:
    """Loop passes of one ``scan_top`` thread."""
    return -(-blocks(groups, shape) // shape[0])


__all__ = ["kernel_wgsl", "BINDINGS", "RADIX_BITS", "DIGITS", "local_bytes", "blocks",
           "scan_passes"]
