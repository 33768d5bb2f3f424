"""WGSL of the one-pass scan with decoupled look-back (``CTHREADS_SCAN`` ``lookback``, the
default on GPUs; ``runtime/scan_lookback.py`` runs it): one dispatch reads each element once
and writes it once (8 bytes an element of float32, against 12 for reduce-then-scan).

The design (after Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled
Look-back", 2016; written here for WGSL's memory model): each workgroup takes a ticket (an
``atomicAdd`` on a counter) and scans tile number ``ticket`` of ``size * per4 * 4`` elements;
it loads the whole tile into registers, scans it (subgroup shuffles in chunks, as
``library/scan_quad_sg.wgsl.in``), publishes the tile's total with the flag AGG, then its
first subgroup walks back over the earlier tiles, a window of one tile a lane per step
(``subgroupMin`` finds the nearest INC and the nearest tile not ready; the ready values before
them are folded by shuffles, earlier tiles on the left: the operation need only be
associative) until it meets a tile flagged INC (its inclusive prefix) or tile 0, publishes its
own inclusive prefix with INC, and every thread writes its elements with the prefix. A window
of 32 tiles a step matters on a GPU: with one tile a step the prefix would move back one tile
per L2 round trip, and the tiles waiting meanwhile would hold their registers idle.

Why it is correct with WGSL's atomics, which are all relaxed (no ordering between two
locations, not even with ``storageBarrier``, which orders only within a workgroup):
the protocol never relies on an order between two locations. A 32-bit value is published as
two atomic words, each holding the scan's epoch (14 bits), the flag (2 bits) and one 16-bit
half of the value, written by one ``atomicStore``. Atomicity per word means a load returns
one whole store's word. A tile's owner stores exactly one AGG value and one INC value in an
epoch, so a reader who finds both words with the current epoch and the same flag holds both
halves of that one value; any other combination (an old epoch, AGG in one word and INC in the
other, a word not written yet) reads as "not ready" and is looked at again. Nothing else
crosses workgroups: the input is read-only, each output element has one writer. The ticket
counter is reset by the workgroup that takes the last ticket (all the others have taken
theirs), so the next dispatch, which the queue orders after this one, starts at 0. Epochs are
1 .. 16383 (``EPOCHS``): the runtime zeroes the words before an epoch number comes round again,
so an old value is never taken for a new one.

Why it cannot hang: Vulkan promises no forward progress between workgroups, so a workgroup
must never wait unboundedly for another. The ticket makes the wait short where workgroups run
concurrently (a tile waits only on tiles whose workgroups started earlier: on NVIDIA GPUs these
are running or done), and a bounded one everywhere: after ``ct_spins`` looks at a tile that is
not ready, the waiting subgroup's lane 0 reads that tile's input and folds its total itself (the
"decoupled fallback" idea), then goes on to the tile before. Each step of the walk therefore
ends, whatever the driver's scheduling; at worst a workgroup reads all the input before it.
Visibility of the other workgroups' stores is not needed for correctness either, only for
speed. Floating-point totals computed by the fallback may round differently from the owner's
(another order of additions), as any parallel scan's do.

Limits: 32-bit storage types (two words hold a value), lines of a multiple of four elements
(loaded as groups of four), one line, subgroups (``size`` a multiple of the subgroup size).
The waiting subgroup's loops count against a CPU driver's loop budget (65,535 passes an
invocation on lavapipe), so the runtime runs this form on CPU drivers only when forced and only
for a few tiles (``runtime/scan_lookback.py``).
"""

from __future__ import annotations

import struct

from . import library
from .scan import SUBGROUP_BUILTINS
from .types import elem as elem_type

#: element types of 32-bit storage that this form scans
LOOKBACK_TYPES = ("bool", "int", "uint32", "float")
#: epoch numbers 1 .. EPOCHS (14 bits of each status word)
EPOCHS = (1 << 14) - 1

_LOAD = """    var v{j}: vec4<{s}>;
    let q{j} = c4 + {j}u * sg_size + sg_lane;
    if (q{j} < e4) {{ v{j} = ct_src4[q{j}]; }}
"""

_ROUND = """    let r{j} = c4 + {j}u * sg_size;
    var px{j}: {t};
    var hx{j} = false;
    if (r{j} < e4) {{
        let d = {fn}({fn}({fn}(ct_load(v{j}.x), ct_load(v{j}.y)), ct_load(v{j}.z)),
                  ct_load(v{j}.w));
        let incl = ct_sgscan(d, sg_lane, sg_size);
        let ex = ct_load(subgroupShuffleUp(ct_store(incl), 1u));
        px{j} = run;
        hx{j} = hrun;
        if (sg_lane > 0u) {{
            if (hrun) {{ px{j} = {fn}(run, ex); }} else {{ px{j} = ex; }}
            hx{j} = true;
        }}
        let tot = ct_load(subgroupShuffle(ct_store(incl), min(e4 - r{j}, sg_size) - 1u));
        if (hrun) {{ run = {fn}(run, tot); }} else {{ run = tot; }}
        hrun = true;
    }}
"""

_STORE = """    if (q{j} < e4) {{
        var p = base;
        var h = hb;
        if (hx{j}) {{
            if (h) {{ p = {fn}(p, px{j}); }} else {{ p = px{j}; }}
            h = true;
        }}
        var a = ct_load(v{j}.x);
        if (h) {{ a = {fn}(p, a); }}
        let b = {fn}(a, ct_load(v{j}.y));
        let c = {fn}(b, ct_load(v{j}.z));
        let d = {fn}(c, ct_load(v{j}.w));
        ct_dst4[q{j}] = vec4<{s}>(ct_store(a), ct_store(b), ct_store(c), ct_store(d));
    }}
"""


def lookback_wgsl(fn: str, ty: str, text: str, size: int, per4: int) -> str:
    """The look-back scan of the binary function ``fn`` (declared with its helpers in
    ``text``) over ``ty`` (``LOOKBACK_TYPES``): ``size`` threads a workgroup, each lane
    ``per4`` groups of four a tile (tiles of ``size * per4 * 4`` elements). Bindings: 0 the
    uniform (``uniform_bytes``), 1 the input as groups of four, 3 the output, 4 the status
    words (``1 + 2 * tiles`` u32s)."""
    if ty not in LOOKBACK_TYPES:
        raise ValueError(f"no look-back scan of {ty} values (32-bit storage only)")
    if size < 1 or per4 < 1:
        raise ValueError(f"look-back shape {size} x {per4} is empty")
    row = elem_type(ty)
    names = dict(fn=fn, s=row.storage, t=row.wgsl)
    per = range(per4)
    return library.template("scan_lookback.wgsl.in").substitute(
        fn=fn, ty=ty, size=size, per4=per4, block4=size * per4, s=row.storage, t=row.wgsl,
        load=row.load.format("v"), store=row.store.format("v"), operation=text.strip("\n"),
        sg_builtins=SUBGROUP_BUILTINS,
        loads="".join(_LOAD.format(j=j, **names) for j in per).rstrip("\n"),
        rounds="".join(_ROUND.format(j=j, **names) for j in per).rstrip("\n"),
        stores="".join(_STORE.format(j=j, **names) for j in per).rstrip("\n"))


def uniform_bytes(length: int, tiles: int, epoch: int, spins: int,
                  agg_only: bool = False) -> bytes:
    """The ``CtLook`` bytes (32, as ``scan.UNIFORM_SIZE``): one dispatch of ``tiles``
    workgroups. Tests' settings: ``spins`` 0, no status taken as ready (every step folds a
    tile's input itself); ``agg_only``, no tile but the first publishes its inclusive prefix
    (every look-back walks to tile 0)."""
    return struct.pack("<8I", length, tiles, epoch, spins, tiles, int(agg_only), 0, 0)


__all__ = ["EPOCHS", "LOOKBACK_TYPES", "lookback_wgsl", "uniform_bytes"]
