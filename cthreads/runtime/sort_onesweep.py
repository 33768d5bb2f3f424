"""The onesweep passes of the 8-bit sort (``CTHREADS_SORT=onesweep``, opt-in; the kernels and
their protocol: ``codegen/sorting_onesweep.py``): per key word a clear of the status words,
one histogram of all four digits, its prefix sums, then one ``onesweep8`` dispatch a digit.
``runtime/sorter.py``'s plan calls ``add_passes`` instead of its own passes where ``usable``.

On a CPU driver the look-back threads' loops count against the driver's loop budget (65,535
passes an invocation on lavapipe, which then ends loops silently): the form runs there only
when its worst case (every look folding the earlier tiles' input itself) stays under
``sorter.LOOP_BUDGET``; other sorts take the 8-bit passes.
"""

from __future__ import annotations

from ..codegen import sorting as codegen
from ..codegen import sorting_onesweep as sweep

#: looks at a tile's count that is not ready before the thread counts that tile itself
GPU_SPINS, CPU_SPINS = 4096, 16


def usable(s, groups: int, budget: int) -> bool:
    """Whether this sort (``groups`` tiles) takes the onesweep passes."""
    if not getattr(s, "sweep", False):
        return False
    if not s.ctx.is_cpu:
        return True
    size, items = s.shape
    worst = -(-256 // size) * groups * (CPU_SPINS + 1 + size * items)
    return worst <= budget


def add_passes(plan, count: int) -> None:
    """Append the onesweep steps of ``count`` 8-bit digits of the current key word."""
    s, n, m, groups = plan.s, plan.n, plan.m, plan.groups
    look, lw = plan.look, sweep.look_words(groups)
    lb = 4 * lw
    gh = 4 + 4 * groups * 256
    spins = CPU_SPINS if s.ctx.is_cpu else GPU_SPINS
    plan.steps.append(("sweep_clear", [(look, lb, 0)], -(-lw // s.shape[0]),
                       codegen.uniform_bytes(lw, m)))
    u = codegen.uniform_bytes(n, m, groups, blocks=gh)
    plan.steps.append(("hist_all", [(plan.keys_ab[plan.cur], plan.nb, 0), (look, lb, 0)],
                       groups, u))
    plan.steps.append(("gscan", [(look, lb, 0)], 1, u))
    for p in range(count):
        a, b = plan.cur, 1 - plan.cur
        u = codegen.uniform_bytes(n, m, groups, 8 * p, mode=p, words=spins, blocks=gh)
        plan.steps.append(("onesweep8", [(plan.keys_ab[a], plan.nb, 0),
                                         (plan.idx_ab[a], plan.nb, 0),
                                         (plan.keys_ab[b], plan.nb, 0),
                                         (plan.idx_ab[b], plan.nb, 0), (look, lb, 0)],
                           groups, u))
        plan.cur = b


__all__ = ["CPU_SPINS", "GPU_SPINS", "add_passes", "usable"]
