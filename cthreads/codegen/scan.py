"""WGSL of the scan passes behind ``func.accumulate`` (plain text; nothing here knows wgpu).

An inclusive scan runs along ``lines`` lines of ``length`` elements each; element ``k`` of line
``l`` sits at ``(l // inner) * length * inner + l % inner + k * inner`` (a C-order array scanned
along one axis: ``inner`` is the product of the axes after it). Each workgroup takes one block
of ``size * per`` consecutive elements of one line; each thread folds its ``per`` consecutive
elements left to right, and the workgroup scans the threads' totals in workgroup memory
(Hillis-Steele, earlier threads always on the left, so the operation need only be associative).

A scan is reduce-then-scan, three steps of one shader (``ct_mode``): mode 0 writes each block's
total (``(lines, blocks)`` totals), the totals are scanned along their lines by the same
procedure (recursively: a line of totals longer than one block takes its own three steps),
then mode 1 scans every block again with the prefix of the blocks before it (binding 2, the
scanned totals) and the threads before it. No step waits for another workgroup, so the design
needs no forward-progress guarantee from the driver (a single-pass decoupled look-back does:
Vulkan gives none, and lavapipe runs workgroups one after another on few threads).

Binding layout (group 0): 0 the uniform ``CtScan``; 1 the input ``array<S>`` (read-only); 2 the
scanned block totals (read-only; the input itself in mode 0 and for one-block lines); 3 the
output ``array<S>`` (the totals in mode 0). With ``probe`` binding 4 is the loop probe's
status word, as in the reduction shader (``codegen/reduction.py``).
"""

from __future__ import annotations

import struct

from . import library
from .types import elem as elem_type

ENTRY_POINT = "ct_scan"

#: element types whose groups of four are a WGSL vec4 (complex values are vec2s already)
QUAD_TYPES = ("bool", "int", "uint32", "float", "int64", "float64")

#: the entry point's extra builtins with ``subgroup`` (``scan_wgsl``)
SUBGROUP_BUILTINS = (",\n        @builtin(subgroup_size) sg_size: u32, "
                     "@builtin(subgroup_invocation_id) sg_lane: u32,\n"
                     "        @builtin(subgroup_id) sg_id: u32")

#: byte size of the uniform block (eight u32 fields)
UNIFORM_SIZE = 32


def blocks(length: int, block: int) -> int:
    """Blocks of ``block`` elements covering a line of ``length >= 1``."""
    return -(-length // block)


def uniform_bytes(length: int, inner: int, nblocks: int, mode: int, groups: int,
                  shift: int = 0) -> bytes:
    """The ``CtScan`` bytes of one step. ``shift`` 1: each line's totals start one entry
    later, after a prefix that the scan of the totals folds in first (a part after the first
    of data split across bindings: its prefix is the previous part's last result)."""
    return struct.pack("<8I", length, inner, nblocks, mode, groups, shift, 0, 0)


def scan_wgsl(fn: str, ty: str, text: str, size: int, per: int, probe: bool = False,
              opaque: bool | None = None, quad: int | None = None,
              subgroup: bool = False) -> str:
    """The WGSL of the scan steps for the binary function ``fn`` (``fn(a: T, b: T) -> T``,
    declared with its helpers in ``text``) over element type ``ty``, ``size`` threads per
    workgroup of ``per`` elements each; ``probe``: with the loop check of CPU drivers;
    ``opaque``: the operation declares ``ct_opq`` (None: looked for in ``text``); ``quad``
    (0: the totals step, 1: the scan step; ``QUAD_TYPES``, ``per`` a multiple of four): the
    step of one mode for lines of a multiple of four elements one after another
    (``inner == 1``), read (and in the scan step written) as groups of four, one 16- or 32-byte
    access each (``library/scan_quad.wgsl.in``); ``"lines"``: one thread per line, scanning
    it in sequence (short lines, or many lines side by side: ``library/scan_lines.wgsl.in``;
    its uniform's third field is the number of lines, its groups ``ceil(lines / size)``);
    ``subgroup``: the threads' totals scanned by subgroup shuffles (``subgroupShuffleUp``, 32-bit
    storage types, ``size`` a multiple of the subgroup size) and the subgroups' totals in
    workgroup memory (two barriers), else by Hillis-Steele in workgroup memory
    (``library/scan_wg_subgroup.wgsl.in`` / ``scan_wg_shared.wgsl.in``); with ``quad`` 0 or 1
    too, each subgroup takes a contiguous chunk of the block in rounds of one group of four a
    lane (coalesced loads and stores), scanned across the lanes by shuffles, the chunk's
    running prefix carried from round to round (``library/scan_quad_sg*.wgsl.in``; needs full
    subgroups: ``size`` a multiple of the subgroup size)."""
    if size < 1 or per < 1:
        raise ValueError(f"scan shape {size} x {per} is empty")
    if quad in (0, 1) and (per % 4 or ty not in QUAD_TYPES):
        raise ValueError(f"no groups-of-four scan of {ty} with {per} elements a thread")
    row = elem_type(ty)
    names = dict(fn=fn, ty=ty, size=size, per=per, per_less=per - 1, block=size * per,
                 t=row.wgsl, s=row.storage, load=row.load.format("v"),
                 store=row.store.format("v"))
    if quad == "lines":
        names["dst"], names["step"] = row.storage, "lines"
        return library.template("scan_lines.wgsl.in").substitute(
            names, probe=_probe(names, probe), operation=text.strip("\n"),
            opq=_opq(text, probe, opaque), probe_call="    ct_loop_probe();\n" if probe else "")
    names["dst"] = row.storage if quad in (None, 0) else f"vec4<{row.storage}>"
    names["step"] = {None: "", 0: "totals", 1: "scan"}[quad]
    names["wgscan"] = library.template(
        "scan_wg_subgroup.wgsl.in" if subgroup else "scan_wg_shared.wgsl.in").substitute(
        names).rstrip("\n")
    names["sg_builtins"] = SUBGROUP_BUILTINS if subgroup else ""
    # with subgroups a thread's place is its subgroup's and lane's, so that the shuffles'
    # lane order is the elements' order whatever the driver's numbering of the invocations
    names["lid_param"] = "ct_lid" if subgroup else "lid"
    names["lid_let"] = "    let lid = sg_id * sg_size + sg_lane;\n" if subgroup else ""
    names["sg_tile"] = f"var<workgroup> ct_sg: array<{row.storage}, {size}>;\n" if subgroup else ""
    if subgroup and quad in (0, 1):         # subgroup chunks, coalesced rounds
        names["per4"] = per // 4
        body = library.template("scan_quad_sg_total.wgsl.in" if quad == 0 else
                                "scan_quad_sg_scan.wgsl.in").substitute(names)
        return library.template("scan_quad_sg.wgsl.in").substitute(
            names, body=body.rstrip("\n"), probe=_probe(names, probe),
            operation=text.strip("\n"), opq=_opq(text, probe, opaque),
            probe_call="    ct_loop_probe();\n" if probe else "")
    body = "" if quad is None else library.template(
        "scan_quad_total.wgsl.in" if quad == 0 else "scan_quad_scan.wgsl.in").substitute(names)
    return library.template("scan.wgsl.in" if quad is None else "scan_quad.wgsl.in").substitute(
        names, body=body.rstrip("\n"),
        probe=_probe(names, probe), operation=text.strip("\n"), opq=_opq(text, probe, opaque),
        probe_call="    ct_loop_probe();\n" if probe else "")


def _probe(names: dict, probe: bool) -> str:
    return library.template("reduction_probe.wgsl.in").substitute(names) if probe else ""


def _opq(text: str, probe: bool, opaque) -> str:
    """The early-exit loops' hidden zero on CPU drivers (as in ``reduction.py``)."""
    return "    ct_opq = nwg.z >> 31u;\n" if probe and (
        "ct_opq" in text if opaque is None else opaque) else ""


__all__ = ["ENTRY_POINT", "QUAD_TYPES", "UNIFORM_SIZE", "blocks", "scan_wgsl", "uniform_bytes"]
