"""WGSL of ``func.reduce(x, axis=...)``: reducing an array seen as (outer, reduced, inner).

The host side (``runtime/axis_reducer.py``) merges the reduced axes into one run of
consecutive axes, so the input is a C-ordered ``(outer, red, inner)`` block and the result is
``(outer, inner)``. Kernels of one template (``library/axis_reduction.wgsl.in``):

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

* ``line4`` (``inner == 1``, ``red % 4 == 0``, aligned): one invocation per row walking it in
  16-byte loads, in row order (CPU drivers' kernel of rows);
* ``rowsg``/``rowsg4`` (``inner == 1``, subgroups, 32-bit types): one subgroup per row (a
  workgroup holds ``size // 32`` rows, its subgroups take them in turn), four loads in flight
  per lane, the lanes combined by shuffles; with ``ct_chunks > 1`` an output is a chunk of
  ``ct_len`` elements of a row (the first pass of few long rows, into an ``(outer, chunks)``
  scratch);
* ``cols4u`` / ``cols16`` (``library/axis_reduction_colsq.wgsl.in``, ``COLSQ``): ``cols4`` with
  four rows loaded per pass and folded in axis order (GPUs), or sixteen outputs per invocation
  from four 16-byte loads a row (CPU drivers).

Two-pass form (``cols`` kernels and ``rowsg``): with ``ct_chunks > 1`` an invocation folds one chunk
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
KINDS = ("rows", "rows4", "cols", "cols4", "line4", "rowsg", "rowsg4", "cols4u", "cols16")
#: the ``colsq`` kernels: (16-byte loads per row, rows per loop pass) of each
COLSQ = {"cols4u": (1, 4), "cols16": (4, 1)}
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
    body = library.template(f"axis_reduction_{_template(kind)}.wgsl.in").substitute(
        names, combine=combine, **_rowsg_names(kind, size), **_colsq_names(kind, fn)
    ).rstrip("\n")
    tile = (f"var<workgroup> ct_tile: array<{row.storage}, {size}>;\n"
            f"var<workgroup> ct_ok: array<u32, {size}>;\n") if rows else ""
    if subgroup:
        tile += _part(names, "reduction_subgroup_fn.wgsl.in")
    if reads_quads(kind):
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


def reads_quads(kind: str) -> bool:
    """Whether ``kind`` reads the input as ``vec4`` too (binding 3)."""
    return kind.endswith("4") or kind in COLSQ


def outputs_per_invocation(kind: str) -> int:
    """How many outputs one invocation of ``kind`` folds (the cols kernels)."""
    if kind in COLSQ:
        return 4 * COLSQ[kind][0]
    return 4 if kind == "cols4" else 1


def _template(kind: str) -> str:
    if kind.startswith("rowsg"):
        return "rowsg"
    return "colsq" if kind in COLSQ else kind


def _colsq_names(kind: str, fn: str) -> dict:
    """The ``colsq`` template's parts: ``quads`` 16-byte loads per row into ``4 * quads``
    accumulators, ``unroll`` rows loaded per pass and folded in order (``f(f(r0, r1), f(r2,
    r3))`` into the accumulator)."""
    if kind not in COLSQ:
        return {}
    quads, unroll = COLSQ[kind]
    lanes = "xyzw"
    acc = [(j, lane) for j in range(quads) for lane in lanes]
    first = [f"        let q{j} = ct_src4[base + r0 * step + {j}u];" for j in range(quads)]
    first += [f"        var a{j}{lane} = ct_load(q{j}.{lane});" for j, lane in acc]
    single = [f"            let s{j} = ct_src4[base + r * step + {j}u];" for j in range(quads)]
    single += [f"            a{j}{lane} = {fn}(a{j}{lane}, ct_load(s{j}.{lane}));"
               for j, lane in acc]
    passes = ""
    if unroll > 1:
        body = ["        loop {", f"            if (r + {unroll - 1}u >= r1) {{ break; }}",
                "            let p = base + r * step;"]
        body += [f"            let v{u}{j} = ct_src4[p + {u}u * step + {j}u];"
                 for u in range(unroll) for j in range(quads)]
        for j, lane in acc:
            terms = [f"ct_load(v{u}{j}.{lane})" for u in range(unroll)]
            while len(terms) > 1:          # neighbours pairwise: the rows' order kept
                terms = [f"{fn}({a}, {b})" for a, b in zip(terms[::2], terms[1::2])] + \
                    (terms[-1:] if len(terms) % 2 else [])
            body.append(f"            a{j}{lane} = {fn}(a{j}{lane}, {terms[0]});")
        body += [f"            r = r + {unroll}u;", "        }"]
        passes = "\n".join(body)
    stores = [f"        ct_dst[e + {k}u] = ct_finish(e + {k}u, a{j}{lane});"
              for k, (j, lane) in enumerate(acc)]
    return dict(cols=4 * quads, quads=quads, unroll=unroll, first="\n".join(first),
                passes=passes, single="\n".join(single), stores="\n".join(stores))


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


__all__ = ["ENTRY_POINT", "KINDS", "UNIFORM_SIZE", "axis_reduction_wgsl",
           "outputs_per_invocation", "reads_quads", "rowsg_rows", "uniform_bytes"]
