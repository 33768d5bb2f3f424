"""WGSL of ``func.reduce(x, axis=...)``: reducing an array seen as (outer, reduced, inner).

The host side (``runtime/axis_reducer.py``) merges the reduced axes into one run of
consecutive axes, so the input is a C-ordered ``(outer, red, inner)`` block and the result is
``(outer, inner)``. Two kernels of one template (``library/axis_reduction.wgsl.in``):

* ``rows`` (``inner == 1``, the reduced elements contiguous): one workgroup per output row; its
  threads fold the row a workgroup apart (coalesced), then combine in workgroup memory with the
  tree of the whole-array reduction (``reduction_shared.wgsl.in``);
* ``cols`` (``inner > 1``, or rows too short to fill a workgroup): one invocation per output,
  walking the reduced axis ``inner`` elements apart; neighbouring invocations read
  neighbouring elements (coalesced across invocations);
  with ``variant="subgroup"`` the rows kernels combine by subgroup shuffles as the whole-array
  reduction does (``reduction_subgroup.wgsl.in``);
* ``rows4``: ``rows`` reading groups of four (``red % 4 == 0``, as ``cols4`` asks);
* ``cols4`` (``inner % 4 == 0``, not complex, the input 16-byte aligned): ``cols`` with four
  neighbouring outputs per invocation, read as one ``vec4`` per step (binding 3 is the input
  again as ``array<vec4<S>>``); CPU drivers load storage lane by lane, so four values per load
  matter there.

Two-pass form (GPUs, ``cols``/``cols4``): with ``ct_chunks > 1`` an invocation folds one chunk
of ``ct_len`` rows of one output into an ``(outer, chunks, inner)`` scratch buffer, and a second
``cols`` pass folds the chunks per output in axis order (the host plans it).

A dispatch folds the chunk ``[r0, r1)`` of the reduced axis; a later chunk folds into the
earlier chunks' value (``ct_fold``), the last one folds ``init`` in first (``f(init, x)``).
Chunks keep each invocation's loop passes far below a CPU driver's loop limit (the host picks
them). ``probe`` adds the loop check of ``reduction_probe.wgsl.in`` (binding 4).

Binding layout (group 0): 0 the uniform ``CtAxisUniforms``, 1 the input ``array<S>``
(read-only), 2 the output ``array<S>`` (read-write), 3 (``cols4``) the input as
``array<vec4<S>>``, 4 with ``probe`` the status word.
"""

from __future__ import annotations

import struct

from . import library
from .types import elem as elem_type

ENTRY_POINT = "ct_axis_reduce"
KINDS = ("rows", "rows4", "cols", "cols4", "line4", "rowsg", "rowsg4")
#: rows per workgroup of the ``rowsg`` kernels: one per 32 threads (a GPU's subgroup)
ROWSG_THREADS = 32
#: the uniform block: twelve u32 fields, the init value at its alignment, padding to 16 bytes
UNIFORM_SIZE = 64


def uniform_bytes(threads: int, outer: int, red: int, inner: int, r0: int, r1: int,
                  fold: bool, ty: str, init=None, chunks: int = 1, length: int = 0) -> bytes:
    """The ``CtAxisUniforms`` bytes of one dispatch (``init`` None: no init folded;
    ``chunks > 1``: the cols kernels' first pass, ``chunks`` partial results of ``length``
    rows each per output)."""
    row = elem_type(ty)
    head = struct.pack("<12I", threads, outer, red, inner, r0, r1, int(fold),
                       0 if init is None else 1, chunks, length, 0, 0)
    head += b"\0" * (-len(head) % row.size)
    if row.kind == "c":
        init = 0j if init is None else complex(init)
        value = struct.pack("<" + row.code, init.real, init.imag)
    else:
        value = struct.pack("<" + row.code, 0 if init is None else init)
    return (head + value).ljust(UNIFORM_SIZE, b"\0")


#: the subgroup builtins the rows kernels' subgroup combine reads
_SUBGROUP_BUILTINS = (",\n        @builtin(subgroup_size) sg_size: u32, "
                      "@builtin(subgroup_invocation_id) sg_lane: u32,\n"
                      "        @builtin(subgroup_id) sg_id: u32, "
                      "@builtin(num_subgroups) sg_count: u32")


def axis_reduction_wgsl(fn: str, ty: str, text: str, kind: str, size: int,
                        probe: bool = False, opaque: bool | None = None,
                        variant: str = "shared") -> str:
    """The WGSL of an axis reduction by ``fn`` (declared with its helpers in ``text``) over
    ``ty`` elements; ``kind`` one of ``KINDS``; ``size`` threads per workgroup (a power of
    two, for ``variant="subgroup"`` a multiple of the subgroup size); ``probe``/``opaque`` as
    ``reduction.reduction_wgsl``; ``variant``: how the rows kernels combine a workgroup's
    values (``reduction.VARIANTS``: subgroup shuffles, 32-bit types only, or a tree in
    workgroup memory)."""
    if kind not in KINDS:
        raise ValueError(f"unknown axis reduction kind {kind!r}")
    if size & (size - 1) or size < 1:
        raise ValueError(f"workgroup size {size} is not a power of two")
    row = elem_type(ty)
    names = dict(fn=fn, ty=ty, kind=kind, size=size, t=row.wgsl, s=row.storage,
                 uniform=row.uniform, load=row.load.format("v"), store=row.store.format("v"),
                 init="(" + row.from_uniform.format("ct_u.ct_init") + ")", half=size // 2)
    rowsg = kind.startswith("rowsg")
    rows = kind.startswith("rows") and not rowsg
    subgroup = (rows and variant == "subgroup") or rowsg
    if variant not in ("shared", "subgroup"):
        raise ValueError(f"unknown reduction variant {variant!r}")
    combine = _part(names, f"reduction_{variant}.wgsl.in").rstrip("\n") if rows else ""
    body = library.template(f"axis_reduction_{kind.rstrip('4') if rowsg else kind}.wgsl.in"
                            ).substitute(names, combine=combine, **_rowsg_names(kind, size)
                                         ).rstrip("\n")
    tile = (f"var<workgroup> ct_tile: array<{row.storage}, {size}>;\n"
            f"var<workgroup> ct_ok: array<u32, {size}>;\n") if rows else ""
    if subgroup:
        tile += _part(names, "reduction_subgroup_fn.wgsl.in")
    if kind.endswith("4"):
        if row.kind == "c":
            raise ValueError(f"the {kind} kernel does not take complex elements")
        tile += f"@group(0) @binding(3) var<storage, read> ct_src4: array<vec4<{row.storage}>>;\n"
        if not kind.startswith("cols"):
            tile += (f"fn ct_quad(q: vec4<{row.storage}>) -> {row.wgsl} {{\n"
                     f"    return {fn}({fn}(ct_load(q.x), ct_load(q.y)), "
                     f"{fn}(ct_load(q.z), ct_load(q.w)));\n}}\n")
    return library.template("axis_reduction.wgsl.in").substitute(
        names, tile=tile,
        probe=_part(names, "reduction_probe.wgsl.in") if probe else "",
        operation=text.strip("\n"),
        opq="    ct_opq = nwg.z >> 31u;\n" if probe and (
            "ct_opq" in text if opaque is None else opaque) else "",
        body=body, builtins=_SUBGROUP_BUILTINS if subgroup else "",
        probe_call="    ct_loop_probe();\n" if probe else "")


def rowsg_rows(size: int) -> int:
    """Rows per workgroup of the ``rowsg`` kernels of ``size`` threads."""
    return max(1, size // ROWSG_THREADS)


def _rowsg_names(kind: str, size: int) -> dict:
    """The ``rowsg`` template's rows per workgroup, item width and the four items of a pass
    (item ``i`` of the row, ``k`` subgroup widths on)."""
    if not kind.startswith("rowsg"):
        return {}
    quads = kind.endswith("4")
    items = {}
    for k in range(4):
        at = "base + i" + (f" + {k}u * sg_size" if k else "")
        items[f"item{k}"] = f"ct_quad(ct_src4[{at}])" if quads else f"ct_load(ct_src[{at}])"
    return dict(rows=rowsg_rows(size), width=4 if quads else 1, **items)


def _part(names: dict, template: str) -> str:
    return library.template(template).substitute(names)


__all__ = ["ENTRY_POINT", "KINDS", "UNIFORM_SIZE", "axis_reduction_wgsl", "rowsg_rows",
           "uniform_bytes"]
