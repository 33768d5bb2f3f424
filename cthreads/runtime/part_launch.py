"""Element-wise kernels on split arrays: one dispatch per part instead of split addressing.

A kernel whose four-lane variant exists (``KernelProgram.vec_guard``: ``i = GlobalIdx.x``,
a guard ``i < g`` on an int parameter, every list access ``lst[i]``, no other use of ``i`` or of
int parameters; codegen/vectorize.py) means the same run part by part: index ``i`` of part
``k`` is index ``k * P + i`` of the array. When every list of a 1-D launch is split into parts
of the same ``P`` elements and ``g`` is within every list the kernel accesses, the launch runs
as ``ceil(min(n, g) / P)`` dispatches of the ordinary compiled variants (the four-lane one
where it applies), dispatch ``k`` binding part ``k`` of each list with the guard (and the
count) set to that part's indexes. On CPU drivers this keeps the speed of an unsplit array,
which the per-access ``switch`` of the split addressing (``codegen/split.py``) does not: there
a data-dependent choice of part runs every part's access lane-masked.

Any other launch with split lists runs the split addressing variant.
"""

from __future__ import annotations

from .plan import Binding, LaunchPlan


def eligible(rt, lists: list, split: list) -> int:
    """The common elements per part ``P`` when ``rt``'s launch of ``lists`` (``split``: the
    (parameter, buffers, bytes, elements per part) of its split lists) may run part by part,
    else 0 (the guard is checked in ``plans``); list[vecN] kernels: in vectors of N."""
    prog = rt.program
    if rt.rules.nd is not None or prog.vec_guard is None or len(split) != len(lists):
        return 0
    if prog.count_param is not None and prog.params[prog.count_param].name != prog.vec_guard:
        return 0
    elems = split[0][3]
    if any(s[3] != elems for s in split):
        return 0
    # list[vecN] kernels (KernelProgram.vec_width): parts of whole vectors, counted in them
    if elems % prog.vec_width:
        return 0
    return elems // prog.vec_width


def plans(rt, plan: LaunchPlan, scalars: list, lists: list, n: int, split: list,
          elems: int) -> list | None:
    """The per-part plans of the launch (the first is ``plan`` itself; the others carry only
    their variant, entries and uniform), or None when the guard is past a list the kernel
    accesses (then the split addressing runs and reports it)."""
    prog = rt.program
    guard_at = next(k for k, p in enumerate(prog.scalars) if p.name == prog.vec_guard)
    g = scalars[guard_at]
    accessed = set(prog.vec_lists)
    for a in lists:
        if a.param.name in accessed and g * prog.vec_width > len(a.value):
            return None
    hi = min(g, n)
    if hi <= 0:
        return None
    out = []
    for k in range(-(-hi // elems)):
        count = min(hi - k * elems, elems)
        part_scalars = list(scalars)
        part_scalars[guard_at] = count
        entries = []
        lengths = []
        for p, held, sizes, _ in split:
            j = min(k, len(held) - 1)
            entries.append(Binding(p.binding, held[j], sizes[j]))
            lengths.append(sizes[j] // (sizes[0] // (elems * prog.vec_width)))
        if rt.status is not None:
            entries.append(rt.status_entry)
        sub = plan if k == 0 else LaunchPlan()
        rt.settle_part(sub, part_scalars, lengths, count, entries)
        out.append(sub)
    return out


__all__ = ["eligible", "plans"]
