"""WGSL of the onesweep form of the 8-bit sort (``CTHREADS_SORT=onesweep``; opt-in, for A/B
runs on GPUs; ``runtime/sort_onesweep.py`` plans it): per 32-bit key word one histogram pass
for all four digits, then one dispatch a digit instead of five (``hist8``, three scan steps,
``scatter8``), after Adinets and Merrill's "Onesweep" (2022), written here for WGSL.

* ``sweep_clear`` zeroes the status words (``LOOK`` below);
* ``hist_all`` counts the four bytes of every key: per workgroup in workgroup-memory
  atomics, then added into the 1,024 global counts;
* ``gscan``: four threads turn the counts into each byte's exclusive prefix sums (where a
  digit's elements start in the pass's output);
* ``onesweep8`` (one per digit): a workgroup takes a ticket (an atomic counter: the tile is
  the order workgroups started in), loads that tile and sorts it in workgroup memory by the
  digit (``scatter8``'s two 4-bit splits), finds each digit's run in the sorted tile, and one
  thread a digit publishes the tile's count with the flag AGG, looks back over the earlier
  tiles' counts of that digit until a tile flagged INC (the count of all tiles up to it) or
  tile 0, publishes its own INC count, and the tile's keys are stored at the digit's start +
  the earlier tiles' count + the place in the run. Stable, as the passes need.

A status word is one u32: the flag in the top two bits, the count (< 2**30: at most 2**28
keys fit one binding) in the rest, written by one ``atomicStore``: relaxed atomics suffice
(a reader takes a whole word, and the owner writes each flag once). The words are zeroed
before every key word's passes (each digit has its own region, so no epoch is needed). No
wait is unbounded (Vulkan promises no forward progress between workgroups): after ``words``
(the uniform's spins) looks at a tile that is not ready, the thread counts that tile's digit
in the pass's input itself.

``LOOK``, the one status buffer: word d < 4 the ticket counter of digit d (reset by the
workgroup taking the last ticket, so a dispatch run again starts at tile 0 too); from word 4, ``4 * tiles
* 256`` status words (digit-pass major, then tile, then digit); then the 1,024 counts
(``p6`` in the uniform: their first word) and the 1,024 prefix sums (``p6 + 1024``).
"""

from __future__ import annotations

from .sorting import _ARGS, _GROUP, _HEAD
from .sorting8 import _SCATTER8
from .sorting8 import local_bytes as _local_bytes8

BINDINGS = {
    "sweep_clear": ((0, "uniform"), (1, "read_write")),
    "hist_all": ((0, "uniform"), (1, "read"), (2, "read_write")),
    "gscan": ((0, "uniform"), (1, "read_write")),
    "onesweep8": ((0, "uniform"), (1, "read"), (2, "read"), (3, "read_write"),
                  (4, "read_write"), (5, "read_write")),
}


def look_words(tiles: int) -> int:
    """u32 words of the status buffer for ``tiles`` tiles."""
    return 4 + 4 * tiles * 256 + 2048


_CLEAR = """@group(0) @binding(1) var<storage, read_write> look: array<u32>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    let i = g * SIZEu + lid;
    if (i < u.n) { look[i] = 0u; }
}
"""

_HIST_ALL = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> look: array<atomic<u32>>;
var<workgroup> cnt: array<atomic<u32>, 1024>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    for (var d = lid; d < 1024u; d = d + SIZEu) { atomicStore(&cnt[d], 0u); }
    workgroupBarrier();
    let start = g * TILEu + lid;
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let i = start + c * SIZEu;
        if (i < u.n) {
            let k = keys[i];
            atomicAdd(&cnt[k & 255u], 1u);
            atomicAdd(&cnt[256u + ((k >> 8u) & 255u)], 1u);
            atomicAdd(&cnt[512u + ((k >> 16u) & 255u)], 1u);
            atomicAdd(&cnt[768u + (k >> 24u)], 1u);
        }
    }
    workgroupBarrier();
    for (var d = lid; d < 1024u; d = d + SIZEu) {
        let v = atomicLoad(&cnt[d]);
        if (v > 0u) { atomicAdd(&look[u.p6 + d], v); }
    }
}
"""

_GSCAN = """@group(0) @binding(1) var<storage, read_write> look: array<u32>;

@compute @workgroup_size(SIZE)
fn main(ARGS) {
    if (lid < 4u) {
        var run = 0u;
        for (var d = 0u; d < 256u; d = d + 1u) {
            let k = u.p6 + lid * 256u + d;
            let v = look[k];
            look[k + 1024u] = run;
            run = run + v;
        }
    }
}
"""

_SWEEP_HEAD = """@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> idx_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> look: array<atomic<u32>>;
var<workgroup> sa: array<vec4<u32>, SIZE>;
var<workgroup> sb: array<vec4<u32>, SIZE>;
var<workgroup> nib: array<u32, 16>;
var<workgroup> offs: array<u32, 256>;
var<workgroup> tstart: array<u32, 256>;
var<workgroup> tend: array<u32, 256>;
var<workgroup> skeys: array<u32, PADDED>;
var<workgroup> sidx: array<u32, PADDED>;
var<workgroup> tix: u32;

const AGG: u32 = 0x40000000u;
const INC: u32 = 0x80000000u;

fn sp(p: u32) -> u32 { return p + (p >> 5u); }

// the fallback: how many keys of tile j have digit d (read from the pass's input)
fn tile_count(j: u32, d: u32) -> u32 {
    let b = j * TILEu;
    let e = min(b + TILEu, u.n);
    var c = 0u;
    for (var i = b; i < e; i = i + 1u) {
        if (((keys[i] >> u.shift) & 255u) == d) { c = c + 1u; }
    }
    return c;
}

COUNTERS
@compute @workgroup_size(SIZE)
fn main(ARGS) {
GROUP    if (g >= u.groups) { return; }
    if (lid == 0u) {
        let t = atomicAdd(&look[u.mode], 1u);
        if (t + 1u == u.groups) { atomicStore(&look[u.mode], 0u); }   // all took theirs
        tix = t;
    }
    let tile = workgroupUniformLoad(&tix);
    for (var d = lid; d < 256u; d = d + SIZEu) { tstart[d] = 0u; tend[d] = 0u; }
    let base = tile * TILEu;
    let count = min(TILEu, u.n - base);
    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // coalesced loads
        if (p < count) {
            skeys[sp(p)] = keys[base + p];
            sidx[sp(p)] = idx[base + p];
        }
    }
    workgroupBarrier();
"""

_SWEEP_RUNS = """    for (var c = 0u; c < ITEMSu; c = c + 1u) {
        let p = c * SIZEu + lid;           // each digit's run in the sorted tile
        if (p < count) {
            let d = (skeys[sp(p)] >> u.shift) & 255u;
            if (p == 0u || ((skeys[sp(p - 1u)] >> u.shift) & 255u) != d) { tstart[d] = p; }
            if (p + 1u == count || ((skeys[sp(p + 1u)] >> u.shift) & 255u) != d) {
                tend[d] = p + 1u;
            }
        }
    }
    workgroupBarrier();
    // one thread a digit: publish this tile's count, look back, publish the inclusive count
    let region = 4u + u.mode * u.groups * 256u;
    for (var d = lid; d < 256u; d = d + SIZEu) {
        let mine = tend[d] - tstart[d];
        let dstart = atomicLoad(&look[u.p6 + 1024u + u.mode * 256u + d]);
        if (tile == 0u) {
            atomicStore(&look[region + d], INC | mine);
            offs[d] = dstart;
            continue;
        }
        atomicStore(&look[region + tile * 256u + d], AGG | mine);
        var run = 0u;
        var j = tile - 1u;
        var spins = 0u;
        loop {
            var s = 0u;
            // spins 0: nothing taken as ready (the tests' way to run the fallback)
            if (u.words > 0u) { s = atomicLoad(&look[region + j * 256u + d]); }
            var f = s & 0xc0000000u;
            var v = s & 0x3fffffffu;
            if (f == 0u) {
                spins = spins + 1u;
                if (spins <= u.words) { continue; }
                v = tile_count(j, d);
                f = AGG;
            }
            spins = 0u;
            run = run + v;
            if (f == INC || j == 0u) { break; }
            j = j - 1u;
        }
        atomicStore(&look[region + tile * 256u + d], INC | (run + mine));
        offs[d] = dstart + run;
    }
    workgroupBarrier();
"""


def _onesweep_body() -> str:
    split = _SCATTER8.index("    let start = lid * ITEMSu;\n")
    runs = _SCATTER8.index("    for (var c = 0u; c < ITEMSu; c = c + 1u) {\n"
                           "        let p = c * SIZEu + lid;           // each digit's first")
    store = _SCATTER8.index("    for (var c = 0u; c < ITEMSu; c = c + 1u) {\n"
                            "        let p = c * SIZEu + lid;           // in the tile's sorted")
    return _SWEEP_HEAD + _SCATTER8[split:runs] + _SWEEP_RUNS + _SCATTER8[store:]


_BODIES = {"sweep_clear": _CLEAR, "hist_all": _HIST_ALL, "gscan": _GSCAN}


def kernel_wgsl(name: str, shape: tuple) -> str:
    """The WGSL of one onesweep kernel (entry point ``main``) for ``shape`` (threads,
    elements per thread; at most 256 threads, a power of two)."""
    from .sorting import _COUNTERS
    size, items = shape
    assert size * items < 1 << 16 and size & (size - 1) == 0 and size <= 256
    body = _onesweep_body() if name == "onesweep8" else _BODIES[name]
    for word, value in (("COUNTERS", _COUNTERS), ("ARGS", _ARGS), ("GROUP", _GROUP),
                        ("PADDED", str(size * items + size * items // 32)),
                        ("TILE", str(size * items)), ("ITEMS", str(items)),
                        ("SIZE", str(size))):
        body = body.replace(word, value)
    return _HEAD.format(name=name) + body


def local_bytes(shape: tuple) -> int:
    """Workgroup memory of ``onesweep8``: ``scatter8``'s and the digits' run ends."""
    return _local_bytes8(shape) + 4 * 256 + 4


__all__ = ["BINDINGS", "kernel_wgsl", "local_bytes", "look_words"]
