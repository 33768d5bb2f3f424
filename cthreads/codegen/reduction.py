"""WGSL of the reduction passes behind ``func.reduce`` (plain text; nothing here knows wgpu).

A reduction of ``n`` elements runs as a few passes of one shader. A pass over ``m`` elements
reads them as ``m // 4`` groups of four (one 16-byte load each) plus up to three left over, runs
``groups`` workgroups of ``size`` threads, and writes one partial result per workgroup; the next
pass reduces those partials, until a pass of one workgroup writes the result (``plan_passes``).
In a pass each thread folds the groups of four it owns, one grid apart (coalesced: neighbouring
threads read neighbouring groups), then the workgroup combines its threads' values in a tree:

* ``subgroup`` variant: within each subgroup by shuffles (``subgroupShuffleXor``, halving the
  distance each step; every lane ends with the subgroup's value), the subgroups' values through
  workgroup memory, and those again by shuffles;
* ``shared`` variant (devices without the ``subgroup`` feature): a tree in workgroup memory, with
  a barrier between levels.

The operation is arbitrary (associative and commutative, but with no known identity element),
so every value carries a flag saying whether it holds anything: a thread with no elements, or a
lane past the end, takes no part. Combining follows a fixed tree order for a given ``n``,
device and variant, so float results are reproducible there and may differ from a left-to-right
loop by rounding.

Data past the device's storage-binding limit is reduced in parts of at most one binding each
(``plan_parts``): a first pass per part writes that part's partials at ``ct_base`` in the
partials buffer, then the later passes reduce them all.

Binding layout (group 0): 0 the uniform ``CtUniforms`` (first field ``ct_threads``, the pass's
element count, below 2**31); 1 the pass's input as
``array<vec4<S>>`` (read-only); 2 the same buffer as ``array<S>`` (read-only; the left-over
elements); 3 the partial results ``array<S>`` (read-write). ``S`` is the element type's storage
type. With ``probe`` (an operation with loops, on a CPU driver: llvmpipe ends an invocation's
loops once they made 65,535 passes together, docs/language.md) binding 4 is a ``u32`` status
word: each invocation ends with a loop of two passes whose trip count the compiler cannot see;
when the driver ends it after one, the budget was spent and some loop may have been cut, and the
invocation sets the word to 1.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

from . import library
from .types import elem as elem_type

ENTRY_POINT = "ct_reduce"
VARIANTS = ("subgroup", "shared")

#: byte size of the uniform block (seven u32 fields, the init value at its alignment, padding
#: to 16 bytes)
UNIFORM_SIZE = 48


@dataclass(frozen=True)
class PassShape:
    """One pass: it reads ``count`` elements (``quads`` groups of four, then ``tail`` more) with
    ``groups`` workgroups, each writing one partial result."""
    count: int
    quads: int
    tail: int
    groups: int

    @property
    def items(self) -> int:
        """Threads that have something to read (a group of four, or a left-over element)."""
        return max(self.quads, self.tail)


@functools.lru_cache(maxsize=256)
def plan_passes(n: int, size: int, max_groups: int, min_steps: int, max_steps: int) -> tuple:
    """The passes reducing ``n >= 1`` elements with workgroups of ``size`` threads.

    A pass uses enough workgroups that each thread folds at least ``min_steps`` groups of four
    (so small inputs take one workgroup), at most ``max_groups`` of them unless a thread would
    then fold more than ``max_steps`` (the bound that keeps each invocation's loop passes far
    below a CPU driver's loop limit)."""
    passes = []
    m = n
    while True:
        quads, tail = divmod(m, 4)
        items = max(quads, tail)
        groups = min(-(-items // (size * min_steps)), max_groups)
        groups = max(groups, -(-items // (size * max_steps)), 1)
        passes.append(PassShape(m, quads, tail, groups))
        if groups == 1:
            return tuple(passes)          # cached: a call per reduce() of the same n
        m = groups


@functools.lru_cache(maxsize=256)
def plan_parts(counts: tuple, size: int, max_groups: int, min_steps: int,
               max_steps: int) -> tuple:
    """(first passes, later passes) reducing data held in parts of ``counts`` elements each
    (one part per storage binding; every count >= 1).

    Each part gets the first pass ``plan_passes`` gives it alone, writing its partials after
    those of the parts before it; the later passes reduce all the partials together. One part
    is ``plan_passes(n)`` split after its first pass: the same passes and tree order."""
    firsts = tuple(plan_passes(c, size, max_groups, min_steps, max_steps)[0] for c in counts)
    partials = sum(p.groups for p in firsts)
    if partials == 1:
        return firsts, ()
    return firsts, plan_passes(partials, size, max_groups, min_steps, max_steps)


def uniform_bytes(shape: PassShape, ty: str, init=None, base: int = 0) -> bytes:
    """The ``CtUniforms`` bytes of one pass (``init``: the Python value folded in first by the
    last pass, or None; ``base``: the index of the pass's first partial result in its output,
    nonzero for the first pass of a part after the first, ``plan_parts``)."""
    row = elem_type(ty)
    head = struct.pack("<7I", shape.count, shape.quads, shape.tail, shape.items, shape.groups,
                       0 if init is None else 1, base)
    head += b"\0" * (-len(head) % row.size)          # the init value at its alignment
    if row.kind == "c":                 # complex: (real, imag)
        init = 0j if init is None else complex(init)
        value = struct.pack("<" + row.code, init.real, init.imag)
    else:
        value = struct.pack("<" + row.code, 0 if init is None else init)
    return (head + value).ljust(UNIFORM_SIZE, b"\0")


def _unrolled_loop(op: str, unroll: int) -> list:
    """The body that folds a thread's groups of four after its first: ``unroll`` loads per pass
    of the main loop (fewer loop passes, more loads in flight), then the rest one by one."""
    lines = []
    if unroll > 1:
        lines += [
            "        loop {",
            f"            if (i + {unroll - 1}u * stride >= ct_u.ct_quads) {{ break; }}",
        ]
        for k in range(unroll):
            at = "i" if k == 0 else f"i + {k}u * stride"
            lines.append(f"            acc = {op}(acc, ct_quad(ct_src4[{at}]));")
        lines += [f"            i = i + {unroll}u * stride;", "        }"]
    lines += [
        "        loop {",
        "            if (i >= ct_u.ct_quads) { break; }",
        f"            acc = {op}(acc, ct_quad(ct_src4[i]));",
        "            i = i + stride;",
        "        }",
    ]
    return lines


#: whether an operation's WGSL has loops (``loop {``, ``while (``, ``for (``); an ``OpSource``
#: knows it without reading its text (``OpSource.loops``)
_LOOP_RE = re.compile(r"\b(loop\s*\{|while\s*\(|for\s*\()")


@functools.lru_cache(maxsize=256)
def has_loops(text: str) -> bool:
    """Whether WGSL ``text`` may contain a loop (comments included: a false yes only costs
    speed)."""
    return _LOOP_RE.search(text) is not None


#: the entry point's builtins per variant (the subgroup one reads the subgroup's size and place)
_BUILTINS = {
    "subgroup": ("@builtin(local_invocation_index) lid: u32,\n"
                 "        @builtin(subgroup_size) sg_size: u32, "
                 "@builtin(subgroup_invocation_id) sg_lane: u32,\n"
                 "        @builtin(subgroup_id) sg_id: u32, @builtin(num_subgroups) sg_count: u32"),
    "shared": "@builtin(local_invocation_index) lid: u32",
}


def reduction_wgsl(fn: str, ty: str, text: str, variant: str, size: int,
                   unroll: int = 1, probe: bool = False, opaque: bool | None = None,
                   ticket: bool = False) -> str:
    """The WGSL of a reduction pass for the binary function ``fn`` (``fn(a: T, b: T) -> T``,
    declared with its helpers in ``text``) over element type ``ty``; ``variant`` is one of
    ``VARIANTS``; ``size`` threads per workgroup (a power of two, and for the subgroup variant a
    multiple of the subgroup size); ``probe``: with the loop check of CPU drivers; ``opaque``:
    the operation declares ``ct_opq`` (``OpSource.opaque``; None: looked for in ``text``).

    The text is the template ``library/reduction.wgsl.in``; the variant's combining step is
    ``reduction_<variant>.wgsl.in`` (and, for subgroups, ``reduction_subgroup_fn.wgsl.in``),
    the loop check ``reduction_probe.wgsl.in``.

    ``ticket``: the one-pass form (``reduction_ticket.wgsl.in``; never with ``probe``): binding
    4 is an ``atomic<u32>`` ticket, zero between dispatches, binding 5 the result
    (``array<S>``); each workgroup writes its partial at ``ct_dst[g]`` and the last one to
    take a ticket folds them all into ``ct_out[0]`` (``ct_base`` unused)."""
    if ticket and probe:
        raise ValueError("the one-pass reduction has no loop probe")
    if variant not in VARIANTS:
        raise ValueError(f"unknown reduction variant {variant!r}")
    if size & (size - 1) or size < 1:
        raise ValueError(f"workgroup size {size} is not a power of two")
    row = elem_type(ty)
    # a group of four: a vec4 of scalars; of complex numbers (vec2s), a mat4x2 of their float
    # (the same 32 / 64 bytes as numpy's four complex64 / complex128), its columns the numbers
    quad = f"mat4x2<{row.storage[5:-1]}>" if row.kind == "c" else f"vec4<{row.storage}>"
    parts = ("[0]", "[1]", "[2]", "[3]") if row.kind == "c" else (".x", ".y", ".z", ".w")
    names = dict(fn=fn, ty=ty, variant=variant, size=size, t=row.wgsl, s=row.storage,
                 quad=quad, q0=parts[0], q1=parts[1], q2=parts[2], q3=parts[3],
                 uniform=row.uniform, load=row.load.format("v"), store=row.store.format("v"),
                 init="(" + row.from_uniform.format("ct_u.ct_init") + ")", half=size // 2)
    part = functools.partial(_part, names)
    combine = part(f"reduction_{variant}.wgsl.in").rstrip("\n")
    tail = part("reduction_tail.wgsl.in") if not ticket else \
        library.template("reduction_ticket.wgsl.in").substitute(names, combine=combine)
    return library.template("reduction.wgsl.in").substitute(
        names,
        probe=part("reduction_probe.wgsl.in") if probe else "",
        operation=text.strip("\n"),
        combine_fn=_subgroup_fn(part, row.storage) if variant == "subgroup" else "",
        builtins=_BUILTINS[variant],
        # the operation's loops with an early exit (codegen/loop_entry.py): on CPU drivers
        # their entry values are hidden behind a zero the compiler cannot see; elsewhere
        # ct_opq is never written, a zero the compiler folds
        opq="    ct_opq = nwg.z >> 31u;\n" if probe and (
            "ct_opq" in text if opaque is None else opaque) else "",
        fold="\n".join(_unrolled_loop(fn, unroll)),
        combine=combine, tail=tail,
        ticket_decl=_TICKET_DECL.replace("$s", row.storage) if ticket else "",
        probe_call="    ct_loop_probe();\n" if probe else "")


#: 64-bit storage types the subgroup variant shuffles as two 32-bit halves
WIDE_SHUFFLES = ("f64", "i64")
#: a subgroup shuffle of a 64-bit value: WGSL's take 32-bit values, so an f64 or i64 travels
#: as its two halves (needs shader-int64)
_SHUFFLE_64 = """fn ct_shuffle_xor(v: {s}, d: u32) -> {s} {{
    let u = bitcast<u64>(v);
    let lo = subgroupShuffleXor(u32(u & 0xfffffffflu), d);
    let hi = subgroupShuffleXor(u32(u >> 32u), d);
    return bitcast<{s}>((u64(hi) << 32u) | u64(lo));
}}
"""

#: the one-pass form's ticket (binding 4) and the broadcast of the ticket a workgroup took
_TICKET_DECL = ("@group(0) @binding(4) var<storage, read_write> ct_ticket: array<atomic<u32>>;\n"
                "@group(0) @binding(5) var<storage, read_write> ct_out: array<$s>;\n"
                "var<workgroup> ct_flag: u32;\n")


def _subgroup_fn(part, storage: str) -> str:
    """``reduction_subgroup_fn.wgsl.in`` (shared with the axis reductions), its shuffle of a
    64-bit value (``WIDE_SHUFFLES``) made of two 32-bit ones."""
    text = part("reduction_subgroup_fn.wgsl.in")
    if storage not in WIDE_SHUFFLES:
        return text
    call = "subgroupShuffleXor(ct_store(v), d)"
    if call not in text:
        raise AssertionError("reduction_subgroup_fn.wgsl.in: its value shuffle changed")
    return _SHUFFLE_64.format(s=storage) + text.replace(call, "ct_shuffle_xor(ct_store(v), d)")


def _part(names: dict, template: str) -> str:
    return library.template(template).substitute(names)


__all__ = ["ENTRY_POINT", "has_loops", "UNIFORM_SIZE", "VARIANTS", "PassShape", "plan_parts",
           "plan_passes", "reduction_wgsl", "uniform_bytes"]
