"""Uniformity: keep workgroup barriers in uniform control flow.

WGSL requires every invocation of a workgroup to reach each ``workgroupBarrier()``. Kernels
written like CUDA code (``if i >= n: return`` and then ``__sync_threads()``) break that rule, so
for kernels with barriers the emitter turns returns into a ``ct_live`` flag. For that to be
correct, invocations that have "returned" must still walk the same barriers, which means they
must keep computing every *uniform* local (a value equal across the workgroup, such as a tree
reduction's stride) and take the same loop trips.

This module finds the uniform locals (a fixed point: a local is uniform when every assignment
to it has a uniform value and happens in uniform control flow), checks that every barrier sits
in uniform control flow, and tells the emitter which statements are *region* statements:
those that must run in every invocation (they contain a barrier, assign a uniform local, or
leave an enclosing uniform loop).
"""

from __future__ import annotations

from . import ir
from .visit import Visitor

UNIFORM_SPECIALS = ("BlockIdx", "BlockDim", "GridDim")


class Uniformity(Visitor):
    """Walks: ``flow_*`` (which locals stay uniform), ``exit_*`` (divergent loop exits),
    ``barriers_*`` (barrier placement), ``region_*`` (what the emitter asks)."""

    def __init__(self, kernel: ir.Kernel, src):
        self.kernel = kernel
        self.src = src
        self.has_barrier = any(isinstance(s, ir.Barrier) for s in ir.walk_stmts(kernel.body))
        self.uniform = {loc.ident for loc in kernel.locals}
        if self.has_barrier:
            self._fixed_point()
            self._check_barriers(kernel.body, None)

    # -- expressions -----------------------------------------------------------------------
    def expr_uniform(self, e: ir.Expr) -> bool:
        for sub in ir.walk_expr(e):
            if sub.MEMORY:
                return False
            if isinstance(sub, ir.Var) and sub.ident not in self.uniform:
                return False
            if isinstance(sub, ir.Special) and sub.name not in UNIFORM_SPECIALS:
                return False
        return True

    # -- the fixed point -------------------------------------------------------------------
    def _fixed_point(self):
        while True:
            before = set(self.uniform)
            self._walk(self.kernel.body, True)
            if self.uniform == before:
                return

    def _walk(self, stmts, cf: bool):
        for s in stmts:
            self.dispatch("flow", s, cf)

    def flow_Assign(self, s, cf):
        if not (cf and self.expr_uniform(s.value)):
            self.uniform.discard(s.ident)

    def flow_If(self, s, cf):
        inner = cf and self.expr_uniform(s.test)
        self._walk(s.body, inner)
        self._walk(s.orelse, inner)

    def flow_While(self, s, cf):
        inner = cf and self.expr_uniform(s.test) and not self.divergent_exit(s.body)
        self._walk(s.body, inner)

    def flow_ForRange(self, s, cf):
        inner = (cf and all(self.expr_uniform(e) for e in (s.start, s.stop, s.step))
                 and not self.divergent_exit(s.body))
        if not inner:
            self.uniform.discard(s.ident)
        self._walk(s.body, inner)

    def flow_default(self, s, cf):
        pass

    def divergent_exit(self, stmts, cond_uniform=True) -> bool:
        """Does a break/continue of this loop level sit under a non-uniform condition?"""
        return any(self.dispatch("exit", s, cond_uniform) for s in stmts)

    def exit_Break(self, s, cond_uniform) -> bool:
        return not cond_uniform

    exit_Continue = exit_Break

    def exit_If(self, s, cond_uniform) -> bool:
        u = cond_uniform and self.expr_uniform(s.test)
        return self.divergent_exit(s.body, u) or self.divergent_exit(s.orelse, u)

    def exit_default(self, s, cond_uniform) -> bool:
        return False

    # -- barrier placement -----------------------------------------------------------------
    def _check_barriers(self, stmts, why):
        for s in stmts:
            self.dispatch("barriers", s, why)

    def barriers_Barrier(self, s, why):
        if why is not None:
            self.src.error(
                s.loc, f"barrier in non-uniform control flow: not every thread of the "
                f"workgroup reaches it ({why})",
                "every thread of a workgroup must reach each barrier: move it out of "
                "branches and loops whose condition depends on GlobalIdx/ThreadIdx or list "
                "values (an early 'if i >= n: return' before it is fine)")

    def barriers_If(self, s, why):
        if why is None and not self.expr_uniform(s.test):
            why = f"the condition on line {s.loc.lineno} differs between threads"
        self._check_barriers(s.body, why)
        self._check_barriers(s.orelse, why)

    def barriers_While(self, s, why):
        if why is None:
            heads = [s.test] if isinstance(s, ir.While) else [s.start, s.stop, s.step]
            if not all(self.expr_uniform(e) for e in heads):
                why = f"the loop on line {s.loc.lineno} runs a different number of " \
                    f"times in different threads"
            elif self.divergent_exit(s.body):
                why = f"the loop on line {s.loc.lineno} has a break or continue that " \
                    f"depends on the thread"
        self._check_barriers(s.body, why)

    barriers_ForRange = barriers_While

    def barriers_default(self, s, why):
        pass

    # -- what the emitter asks -------------------------------------------------------------
    def is_region(self, s: ir.Stmt, loop_level: bool = True) -> bool:
        """Must ``s`` run in every invocation (it has a barrier, sets a uniform local, or
        leaves the enclosing loop)?"""
        return self.dispatch("region", s, loop_level)

    def region_Barrier(self, s, loop_level) -> bool:
        return True

    def region_Assign(self, s, loop_level) -> bool:
        return s.ident in self.uniform

    def region_Break(self, s, loop_level) -> bool:
        return loop_level

    region_Continue = region_Break

    def region_If(self, s, loop_level) -> bool:
        return any(self.is_region(c, loop_level) for c in s.body + s.orelse)

    def region_While(self, s, loop_level) -> bool:
        if isinstance(s, ir.ForRange) and s.ident in self.uniform:
            return True
        return any(self.is_region(c, False) for c in s.body)

    region_ForRange = region_While

    def region_default(self, s, loop_level) -> bool:
        return False
