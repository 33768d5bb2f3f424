"""Loops with an early exit, as CPU drivers must see them: their entry values hidden.

lavapipe (Mesa 22.3's shader compiler) miscompiles a loop that has a second exit -- a
``break`` or a ``return`` inside it -- when the values the loop starts from are constants it
can see: it computes the trip count from them wrongly and runs the body fewer times than it
should, silently (``w = 0; while w < 4: w += 1; ...; if w == 0: break`` ran once; ``for k in
range(4): ...; if k + 1 == 0: break`` ran once). With the ``return`` in a kernel's loop, the
loop probe (``entry.PROBE_FN``) caught it and the launch failed with a loop-limit error.

The loop-reporting variant that CPU drivers run (``Variant.loop_report``) therefore writes, before
each loop with an early exit, every local the loop assigns as itself combined with a zero the
compiler cannot see (``ct_opq``: bit 31 of ``num_workgroups.z`` or-ed with bit 31 of the
launch's count, set at the entry point's start: lavapipe folds the launch's uniforms into loop
conditions, NVIDIA's driver knows the dispatch size's bound, neither sees through both), and
starts a ``for`` loop's counter at that zero. Values are unchanged (an integer XOR with 0, a
``select`` that keeps the value); the compiler no longer knows them at the loop's entry, so it
keeps the loop as written. GPUs run the variant without it (no cost there). A reduction's
operation (``compile_operation``) has one text for every device: its loops are written with
``ct_opq``, which the reduction shader sets on CPU drivers only; elsewhere it is a private
variable never written, a zero the compiler folds away.
"""

from __future__ import annotations

from . import ir

#: the helper that declares the hidden zero; the entry point sets it (``ENTRY_LINE``)
OPAQUE = "ct_opq"
DECLARATION = f"var<private> {OPAQUE}: u32;"
# Bit 31 of a dispatch size and of the launch's count (both below 2**31), or-ed: each driver
# folds one of them (lavapipe inlines the values of uniforms; NVIDIA's knows num_workgroups is
# below 65,536), neither both
ENTRY_LINE = f"    {OPAQUE} = (ct_nwg.z >> 31u) | (ct_u.{{count}} >> 31u);"
#: the entry point's first line, after which ``ENTRY_LINE`` goes
ENTRY_MARK = "        @builtin(local_invocation_id) ct_lid: vec3<u32>) {"

_HIDE = {"int": "bitcast<i32>(bitcast<u32>({0}) ^ ct_opq)",
         "uint32": "({0} ^ ct_opq)",
         "int64": "({0} ^ i64(ct_opq))",
         "bool": "({0} != (ct_opq != 0u))",
         "float": "select({0}, -{0}, ct_opq != 0u)",
         "float64": "select({0}, -{0}, ct_opq != 0u)"}


def exits_early(body) -> bool:
    """True when ``body`` (a loop's statements) leaves its loop other than by the loop's test:
    a ``break`` of this loop, or a ``return`` anywhere inside."""
    for s in body:
        if isinstance(s, (ir.Return, ir.ReturnValue)):
            return True
        if isinstance(s, ir.Break):
            return True
        if isinstance(s, (ir.While, ir.ForRange)):
            if any(isinstance(t, (ir.Return, ir.ReturnValue)) for t in ir.walk_stmts(s.body)):
                return True
            continue
        if any(exits_early(b) for b in s.bodies()):
            return True
    return False


def assigned(body) -> list[str]:
    """The locals ``body`` assigns (loop variables of inner loops included), sorted."""
    names = set()
    for s in ir.walk_stmts(list(body)):
        if isinstance(s, (ir.Assign, ir.ForRange)):
            names.add(s.ident)
    return sorted(names)


def hidden(ident: str, ty: str) -> str:
    """``ident`` of type ``ty``, combined with the hidden zero (the same value)."""
    return _HIDE[ty].format(ident)


def add_entry_line(lines: list, pylines: list, count: str) -> None:
    """Set the hidden zero at the start of the entry point (``lines``/``pylines`` of a shader
    whose code uses it; ``count``: the uniform's count field, ``ct_threads`` or
    ``ct_groups``)."""
    k = lines.index(ENTRY_MARK) + 1
    lines.insert(k, ENTRY_LINE.format(count=count))
    pylines.insert(k, 0)


__all__ = ["DECLARATION", "OPAQUE", "add_entry_line", "assigned", "exits_early", "hidden"]
