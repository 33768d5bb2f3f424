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

from .types import elem as elem_type

ENTRY_POINT = "ct_reduce"
VARIANTS = ("subgroup", "shared")

#: byte size of the uniform block (six u32 fields, the init value, padding to 16 bytes)
UNIFORM_SIZE = 32


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


def uniform_bytes(shape: PassShape, ty: str, init=None) -> bytes:
    """The ``CtUniforms`` bytes of one pass (``init``: the Python value folded in first by the
    last pass, or None)."""
    row = elem_type(ty)
    head = struct.pack("<6I", shape.count, shape.quads, shape.tail, shape.items, shape.groups,
                       0 if init is None else 1)
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


#: whether an operation's WGSL has loops (``loop {``, ``while (``, ``for (``)
_LOOP_RE = re.compile(r"\b(loop\s*\{|while\s*\(|for\s*\()")


@functools.lru_cache(maxsize=256)
def has_loops(text: str) -> bool:
    """Whether WGSL ``text`` may contain a loop (comments included: a false yes only costs
    speed)."""
    return _LOOP_RE.search(text) is not None


PROBE = """fn ct_loop_probe() {
    let two = 2u + ct_zero();
    var n: u32 = 0u;
    loop {
        n = n + 1u;
        if (n >= two) { break; }
    }
    if (n < 2u) { ct_status[0] = 1u; }
}"""


def reduction_wgsl(fn: str, ty: str, text: str, variant: str, size: int,
                   unroll: int = 1, probe: bool = False) -> str:
    """The WGSL of a reduction pass for the binary function ``fn`` (``fn(a: T, b: T) -> T``,
    declared with its helpers in ``text``) over element type ``ty``; ``variant`` is one of
    ``VARIANTS``; ``size`` threads per workgroup (a power of two, and for the subgroup variant a
    multiple of the subgroup size); ``probe``: with the loop check of CPU drivers."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown reduction variant {variant!r}")
    if size & (size - 1) or size < 1:
        raise ValueError(f"workgroup size {size} is not a power of two")
    row = elem_type(ty)
    t, s = row.wgsl, row.storage
    load = row.load.format("v")
    store = row.store.format("v")
    init = "(" + row.from_uniform.format("ct_u.ct_init") + ")"
    head = [
        f"// cthreads reduction: {fn} over {ty} ({variant} variant, {size} threads)",
        "struct CtUniforms {",
        "    ct_threads: u32,",
        "    ct_quads: u32,",
        "    ct_tail: u32,",
        "    ct_items: u32,",
        "    ct_groups: u32,",
        "    ct_has_init: u32,",
        f"    ct_init: {row.uniform},",
        "}",
        "@group(0) @binding(0) var<uniform> ct_u: CtUniforms;",
        f"@group(0) @binding(1) var<storage, read> ct_src4: array<vec4<{s}>>;",
        f"@group(0) @binding(2) var<storage, read> ct_src: array<{s}>;",
        f"@group(0) @binding(3) var<storage, read_write> ct_dst: array<{s}>;",
        f"var<workgroup> ct_tile: array<{s}, {size}>;",
        f"var<workgroup> ct_ok: array<u32, {size}>;",
        "",
        "var<private> ct_zp: u32;",
        "fn ct_zero() -> u32 { return ct_zp; }",
        "",
    ]
    if probe:
        head += ["@group(0) @binding(4) var<storage, read_write> ct_status: array<u32>;",
                 PROBE, ""]
    head += [
        text.strip("\n"),
        "",
        f"fn ct_load(v: {s}) -> {t} {{ return {load}; }}",
        f"fn ct_store(v: {t}) -> {s} {{ return {store}; }}",
        f"fn ct_quad(q: vec4<{s}>) -> {t} {{",
        f"    return {fn}({fn}(ct_load(q.x), ct_load(q.y)), {fn}(ct_load(q.z), ct_load(q.w)));",
        "}",
    ]
    if variant == "subgroup":
        head += [
            f"struct CtPart {{ v: {t}, ok: bool }}",
            "// every lane ends with the combined value of the subgroup's lanes that hold one",
            f"fn ct_subgroup(v0: {t}, ok0: bool, size: u32) -> CtPart {{",
            "    var v = v0;",
            "    var ok = ok0;",
            "    for (var d: u32 = 1u; d < size; d = d * 2u) {",
            "        let other = ct_load(subgroupShuffleXor(ct_store(v), d));",
            "        let other_ok = subgroupShuffleXor(select(0u, 1u, ok), d) != 0u;",
            "        if (other_ok) {",
            f"            if (ok) {{ v = {fn}(v, other); }} else {{ v = other; }}",
            "            ok = true;",
            "        }",
            "    }",
            "    return CtPart(v, ok);",
            "}",
        ]
        builtins = ("@builtin(local_invocation_index) lid: u32,\n"
                    "        @builtin(subgroup_size) sg_size: u32, "
                    "@builtin(subgroup_invocation_id) sg_lane: u32,\n"
                    "        @builtin(subgroup_id) sg_id: u32, "
                    "@builtin(num_subgroups) sg_count: u32")
    else:
        builtins = "@builtin(local_invocation_index) lid: u32"
    body = [
        "",
        f"@compute @workgroup_size({size})",
        f"fn {ENTRY_POINT}(@builtin(workgroup_id) wid: vec3<u32>, "
        "@builtin(num_workgroups) nwg: vec3<u32>,",
        f"        {builtins}) {{",
    ]
    # the zero the driver's compiler cannot see (ct_zero): bit 31 of a dispatch size or of the
    # pass's count, never set; lavapipe folds uniforms' values, NVIDIA's driver the dispatch
    # size's bound, neither both (codegen/loop_entry.py)
    body.append("    ct_zp = (nwg.z >> 31u) | (ct_u.ct_threads >> 31u);")
    if probe and "ct_opq" in text:
        # the operation's loops with an early exit (codegen/loop_entry.py): on CPU drivers
        # their entry values are hidden behind a zero the compiler cannot see; elsewhere
        # ct_opq is never written, a zero the compiler folds
        body.append("    ct_opq = nwg.z >> 31u;")
    body += [
        "    let g = wid.y * nwg.x + wid.x;",
        "    if (g >= ct_u.ct_groups) { return; }",
        f"    let stride = ct_u.ct_groups * {size}u;",
        f"    let first = g * {size}u + lid;",
        f"    var acc: {t};",
        "    var ok = false;",
        "    if (first < ct_u.ct_quads) {",
        "        acc = ct_quad(ct_src4[first]);",
        "        ok = true;",
        "        var i = first + stride;",
    ]
    body += _unrolled_loop(fn, unroll)
    body += [
        "    }",
        "    if (first < ct_u.ct_tail) {",
        "        let left = ct_load(ct_src[4u * ct_u.ct_quads + first]);",
        f"        if (ok) {{ acc = {fn}(acc, left); }} else {{ acc = left; }}",
        "        ok = true;",
        "    }",
    ]
    if variant == "subgroup":
        body += [
            "    let part = ct_subgroup(acc, ok, sg_size);",
            "    if (sg_lane == 0u) {",
            "        ct_tile[sg_id] = ct_store(part.v);",
            "        ct_ok[sg_id] = select(0u, 1u, part.ok);",
            "    }",
            "    workgroupBarrier();",
            "    // every subgroup folds the subgroups' values (one pass when they fit its lanes)",
            f"    var acc2: {t};",
            "    var ok2 = false;",
            "    for (var j0: u32 = 0u; j0 < sg_count; j0 = j0 + sg_size) {",
            "        let j = j0 + sg_lane;",
            "        if (j < sg_count && ct_ok[j] != 0u) {",
            "            let other = ct_load(ct_tile[j]);",
            f"            if (ok2) {{ acc2 = {fn}(acc2, other); }} else {{ acc2 = other; }}",
            "            ok2 = true;",
            "        }",
            "    }",
            "    let total = ct_subgroup(acc2, ok2, sg_size);",
            "    var result = total.v;",
        ]
    else:
        body += [
            "    ct_tile[lid] = ct_store(acc);",
            "    ct_ok[lid] = select(0u, 1u, ok);",
            "    workgroupBarrier();",
            f"    for (var h: u32 = {size // 2}u; h > 0u; h = h / 2u) {{",
            "        if (lid < h && ct_ok[lid + h] != 0u) {",
            "            let other = ct_load(ct_tile[lid + h]);",
            "            if (ct_ok[lid] != 0u) {",
            f"                ct_tile[lid] = ct_store({fn}(ct_load(ct_tile[lid]), other));",
            "            } else {",
            "                ct_tile[lid] = ct_store(other);",
            "                ct_ok[lid] = 1u;",
            "            }",
            "        }",
            "        workgroupBarrier();",
            "    }",
            "    var result = ct_load(ct_tile[0]);",
        ]
    body += [
        "    if (lid == 0u) {",
        f"        if (ct_u.ct_has_init != 0u) {{ result = {fn}({init}, result); }}",
        "        ct_dst[g] = ct_store(result);",
        "    }",
    ]
    if probe:
        body.append("    ct_loop_probe();")
    body += ["}", ""]
    return "\n".join(head + body)


__all__ = ["ENTRY_POINT", "has_loops", "UNIFORM_SIZE", "VARIANTS", "PassShape", "plan_passes",
           "reduction_wgsl", "uniform_bytes"]
