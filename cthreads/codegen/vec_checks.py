"""One bounds check per ``list[vecN]`` element access instead of one per component.

The frontend scalarises ``d = p[j] - q`` into one statement per component, each loading flat
index ``N * j + k`` under the same bounds check (one check per subscript in the source,
``vectors.py``). Component ``k`` is in range exactly when element ``j`` is (the flat length is
N times the element count), so when every access of that check runs in a run of consecutive
straight-line statements (assignments, stores), unconditionally (never in an ``and``/``or``
operand or an ``x if c else y`` branch), with the same element index and nothing between them
assigning a local of that index, the last of them checks for all: an out-of-range element is
reported the same (the check's id, the element index), and the unchecked component accesses
before it read nothing past the buffer (WGSL's accesses are bounded) and store nothing (the
launch's results are not written back when a check failed).

Kernels without ``list[vecN]`` lists are returned unchanged.
"""

from __future__ import annotations

import dataclasses

from . import ir
from .wgsl import same_value

_PLAIN = (ir.Assign, ir.Store, ir.ExprStmt)


def share_checks(kernel: ir.Kernel) -> ir.Kernel:
    """``kernel`` with the redundant component checks of its list[vecN] accesses dropped."""
    if not any(ref.vec for ref in kernel.lists):
        return kernel
    totals: dict = {}
    for s in ir.walk_stmts(kernel.body):
        for node in _accesses(s, eager_only=False):
            totals[node.check] = totals.get(node.check, 0) + 1
    drop: set = set()
    _block(kernel.body, totals, drop)
    if not drop:
        return kernel
    return dataclasses.replace(kernel, body=tuple(_strip_stmt(s, drop) for s in kernel.body))


def _accesses(s: ir.Stmt, eager_only: bool = True) -> list:
    """The checked accesses of statement ``s`` (its own expressions, not nested blocks), in
    evaluation order; ``eager_only``: only those that always run when ``s`` does."""
    out: list = []
    for e in s.children():
        _walk(e, out, eager_only)
    if isinstance(s, ir.Store) and s.check is not None:
        out.append(s)
    return out


def _walk(e, out: list, eager_only: bool) -> None:
    if isinstance(e, ir.BoolOp) and eager_only:
        _walk(e.left, out, eager_only)           # the right operand may not run
        return
    if isinstance(e, ir.IfExp) and eager_only:
        _walk(e.test, out, eager_only)
        return
    for c in e.children():
        _walk(c, out, eager_only)
    if isinstance(e, (ir.Load, ir.Atomic)) and e.check is not None:
        out.append(e)


def _block(stmts, totals: dict, drop: set) -> None:
    run: list = []
    for s in stmts:
        if isinstance(s, _PLAIN):
            run.append(s)
            continue
        _run(run, totals, drop)
        run = []
        for body in s.bodies():
            _block(body, totals, drop)
    _run(run, totals, drop)


def _element(node):
    """(list, element index expression) of a 1-D list[vecN] access at ``N * j + k``."""
    lst, index = node.lst, node.index
    if not lst.vec or lst.ndim != 1 or node.more or isinstance(node, ir.Atomic):
        return None
    if isinstance(index, ir.Binary) and index.op == "add" and isinstance(index.right, ir.Const):
        index = index.left
    if isinstance(index, ir.Binary) and index.op == "mul" and isinstance(index.right, ir.Const) \
            and index.right.value == lst.vec:
        return lst, index.left
    return None


def _run(run: list, totals: dict, drop: set) -> None:
    """Checks of ``run`` (consecutive plain statements) whose every access is here."""
    seen: dict = {}                 # check -> [(statement position, access)]
    for pos, s in enumerate(run):
        for node in _accesses(s):
            seen.setdefault(node.check, []).append((pos, node))
    for check, found in seen.items():
        if len(found) < 2 or len(found) != totals.get(check):
            continue
        elems = [_element(node) for _, node in found]
        if any(e is None for e in elems):
            continue
        lst, index = elems[0]
        if any(e[0] != lst or not same_value(e[1], index) for e in elems):
            continue
        names = {x.ident for x in ir.walk_expr(index) if isinstance(x, ir.Var)}
        first, last = found[0][0], found[-1][0]
        if any(isinstance(s, ir.Assign) and s.ident in names for s in run[first:last]):
            continue                # the index changes between the components
        # (one node object may stand at several places, length_sq(p[j]): the last one's
        # keeps its check at each of them)
        keep = id(found[-1][1])
        drop.update(id(node) for _, node in found if id(node) != keep)


def _strip_expr(e, drop: set):
    changes = {}
    for name in e.EXPRS:
        sub = getattr(e, name)
        if sub is not None:
            new = _strip_expr(sub, drop)
            if new is not sub:
                changes[name] = new
    for name in e.EXPR_SEQS:
        subs = getattr(e, name)
        new = tuple(_strip_expr(x, drop) for x in subs)
        if any(a is not b for a, b in zip(new, subs)):
            changes[name] = new
    if id(e) in drop:
        changes["check"] = None
    return dataclasses.replace(e, **changes) if changes else e


def _strip_stmt(s, drop: set):
    changes = {}
    for name in s.EXPRS:
        sub = getattr(s, name)
        if sub is not None:
            new = _strip_expr(sub, drop)
            if new is not sub:
                changes[name] = new
    for name in s.EXPR_SEQS:
        subs = getattr(s, name)
        new = tuple(_strip_expr(x, drop) for x in subs)
        if any(a is not b for a, b in zip(new, subs)):
            changes[name] = new
    for name in s.BODIES:
        body = getattr(s, name)
        new = tuple(_strip_stmt(x, drop) for x in body)
        if any(a is not b for a, b in zip(new, body)):
            changes[name] = new
    if id(s) in drop:
        changes["check"] = None
    return dataclasses.replace(s, **changes) if changes else s
