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

UNIFORM_SPECIALS = ("BlockIdx", "BlockDim", "GridDim")


class Uniformity:
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
            if isinstance(sub, (ir.Load, ir.Atomic)):
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
            if isinstance(s, ir.Assign):
                if not (cf and self.expr_uniform(s.value)):
                    self.uniform.discard(s.ident)
            elif isinstance(s, ir.If):
                inner = cf and self.expr_uniform(s.test)
                self._walk(s.body, inner)
                self._walk(s.orelse, inner)
            elif isinstance(s, ir.While):
                inner = cf and self.expr_uniform(s.test) and not self.divergent_exit(s.body)
                self._walk(s.body, inner)
            elif isinstance(s, ir.ForRange):
                inner = (cf and all(self.expr_uniform(e) for e in (s.start, s.stop, s.step))
                         and not self.divergent_exit(s.body))
                if not inner:
                    self.uniform.discard(s.ident)
                self._walk(s.body, inner)

    def divergent_exit(self, stmts, cond_uniform=True) -> bool:
        """Does a break/continue of this loop level sit under a non-uniform condition?"""
        for s in stmts:
            if isinstance(s, (ir.Break, ir.Continue)) and not cond_uniform:
                return True
            if isinstance(s, ir.If):
                u = cond_uniform and self.expr_uniform(s.test)
                if self.divergent_exit(s.body, u) or self.divergent_exit(s.orelse, u):
                    return True
        return False

    # -- barrier placement -----------------------------------------------------------------
    def _check_barriers(self, stmts, why):
        for s in stmts:
            if isinstance(s, ir.Barrier) and why is not None:
                self.src.error(
                    s.loc, f"barrier in non-uniform control flow: not every thread of the "
                    f"workgroup reaches it ({why})",
                    "every thread of a workgroup must reach each barrier: move it out of "
                    "branches and loops whose condition depends on GlobalIdx/ThreadIdx or list "
                    "values (an early 'if i >= n: return' before it is fine)")
            elif isinstance(s, ir.If):
                w = why
                if w is None and not self.expr_uniform(s.test):
                    w = f"the condition on line {s.loc.lineno} differs between threads"
                self._check_barriers(s.body, w)
                self._check_barriers(s.orelse, w)
            elif isinstance(s, (ir.While, ir.ForRange)):
                w = why
                if w is None:
                    heads = [s.test] if isinstance(s, ir.While) else [s.start, s.stop, s.step]
                    if not all(self.expr_uniform(e) for e in heads):
                        w = f"the loop on line {s.loc.lineno} runs a different number of " \
                            f"times in different threads"
                    elif self.divergent_exit(s.body):
                        w = f"the loop on line {s.loc.lineno} has a break or continue that " \
                            f"depends on the thread"
                self._check_barriers(s.body, w)

    # -- what the emitter asks -------------------------------------------------------------
    def is_region(self, s: ir.Stmt, loop_level: bool = True) -> bool:
        """Must ``s`` run in every invocation (it has a barrier, sets a uniform local, or
        leaves the enclosing loop)?"""
        if isinstance(s, ir.Barrier):
            return True
        if isinstance(s, ir.Assign):
            return s.ident in self.uniform
        if isinstance(s, (ir.Break, ir.Continue)):
            return loop_level
        if isinstance(s, ir.If):
            return any(self.is_region(c, loop_level) for c in s.body + s.orelse)
        if isinstance(s, (ir.While, ir.ForRange)):
            if isinstance(s, ir.ForRange) and s.ident in self.uniform:
                return True
            return any(self.is_region(c, False) for c in s.body)
        return False
