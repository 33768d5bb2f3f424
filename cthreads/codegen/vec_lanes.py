"""Element-wise ``list[vecN]`` kernels as element-wise kernels over their flat components, so
that they get the four-lane variant of scalar kernels (``vectorize.py``).

The frontend scalarises vectors (``vectors.py``): ``y[i] = a * x[i] + y[i]`` over ``list[vec3]``
becomes three statements, component ``k`` reading and writing flat index ``3 * i + k``. When
every statement of the guarded straight-line body

* accesses only ``list[vecN]`` lists (one ``N`` for all, 1-D) at flat indexes ``N * i + k`` of
  one component ``k``, and reads only locals that statements of that component assign (or
  *shared* locals: assigned once, from parameters, literals and other shared locals), and
* the statements of each component are the same program up to the component: the same nodes,
  their locals renamed one to one, only leaves (parameters, literals, shared locals) different,

the body *is* one element-wise program over the flat index ``f = N * i + k`` and guard
``N * g``, each differing leaf a ``Pick`` of the component ``f % N``. The statements of
different components touch different memory and different locals, so running each
component's statements together (lane by lane) means what the Python body means. Any other
body returns None (the kernel keeps its scalar form).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from . import ir


@dataclass(frozen=True)
class Pick(ir.Expr):
    """The leaf of component ``f % N`` of a flat index ``f``: ``leaves[f % N]``."""
    EXPR_SEQS = ("leaves",)
    RUNTIME = True                  # chosen per lane at run time (never constant-folded)
    leaves: tuple = ()


class _No(Exception):
    pass


def _component(index: ir.Expr, i: str, width: int):
    """``k`` when ``index`` is the frontend's flat index ``width * i + k`` (vectors.py)."""
    k = 0
    if isinstance(index, ir.Binary) and index.op == "add" and isinstance(index.right, ir.Const):
        k, index = index.right.value, index.left
    if isinstance(index, ir.Binary) and index.op == "mul" and isinstance(index.left, ir.Var) \
            and index.left.ident == i and isinstance(index.right, ir.Const) \
            and index.right.value == width and isinstance(k, int) and 0 <= k < width:
        return k
    raise _No


def _accesses(s: ir.Stmt):
    out = [(s.lst, s.index, s.more)] if isinstance(s, ir.Store) else []
    for e in s.children():
        out += [(x.lst, x.index, x.more) for x in ir.walk_expr(e) if isinstance(x, ir.Load)]
    return out


def _reads(s: ir.Stmt) -> set:
    return {x.ident for e in s.children() for x in ir.walk_expr(e) if isinstance(x, ir.Var)}


def flatten(straight: list, index: str, locals_: dict):
    """(N, the statements over the flat index ``index``) for a body of the form above, or
    None."""
    try:
        return _flatten(straight, index, locals_)
    except _No:
        return None


def _flatten(straight, index, locals_):
    refs = [a for s in straight for a in _accesses(s)]
    widths = {lst.vec for lst, _, _ in refs}
    if len(widths) != 1 or 0 in widths or any(lst.ndim != 1 or more for lst, _, more in refs):
        raise _No
    width = widths.pop()
    assigned = [s.ident for s in straight if isinstance(s, ir.Assign)]
    shared, owner = set(), {}
    groups = [[] for _ in range(width)]
    prefix = []
    for s in straight:
        if not isinstance(s, (ir.Assign, ir.Store)):
            raise _No
        reads = _reads(s) - {index}
        comps = {_component(ix, index, width) for _, ix, _ in _accesses(s)}
        if not comps and isinstance(s, ir.Assign) and assigned.count(s.ident) == 1 and \
                all(locals_[r].param or r in shared for r in reads):
            shared.add(s.ident)
            prefix.append(s)
            continue
        if len(comps) != 1:
            raise _No                   # no list access, or components mixed (a swizzle)
        k = comps.pop()
        touched = reads | ({s.ident} if isinstance(s, ir.Assign) else set())
        for name in touched:
            if name in shared or locals_[name].param:
                continue
            if owner.setdefault(name, k) != k:
                raise _No               # a local shared between components
        groups[k].append(s)
    if any(len(g) != len(groups[0]) for g in groups) or not groups[0]:
        raise _No
    merge = _Merge(index, width, locals_, shared)
    return width, prefix + [merge.node(list(same)) for same in zip(*groups)]


class _Merge:
    """One node from the ``width`` nodes of the components (their same place)."""

    def __init__(self, index: str, width: int, locals_: dict, shared: set):
        self.index = index
        self.width = width
        self.locals = locals_
        self.shared = shared
        self.rename: list[dict] = [{} for _ in range(width)]   # comp k's local -> comp 0's
        self.taken: set = set()

    def leaf(self, e) -> bool:
        return isinstance(e, ir.Const) or (isinstance(e, ir.Var) and (
            self.locals[e.ident].param or e.ident in self.shared))

    def ident(self, names: list) -> str:
        """Comp 0's name for the components' locals ``names`` (renamed one to one)."""
        first = names[0]
        if first in self.shared or self.locals[first].param:
            if any(n != first for n in names):
                raise _No
            return first
        for k, name in enumerate(names):
            known = self.rename[k].get(name)
            if known is None:
                if k == 0 and name in self.taken:
                    raise _No
                self.rename[k][name] = first
                self.taken.add(first) if k == 0 else None
            elif known != first:
                raise _No
        return first

    def node(self, nodes: list):
        first = nodes[0]
        if any(type(n) is not type(first) for n in nodes):
            raise _No
        if isinstance(first, ir.Expr):
            if any(n.ty != first.ty for n in nodes):
                raise _No
            if all(self.leaf(n) for n in nodes) and len({_key(n) for n in nodes}) > 1:
                return Pick(first.ty, first.loc, tuple(nodes))
        changes = {}
        for f in dataclasses.fields(first):
            values = [getattr(n, f.name) for n in nodes]
            v0 = values[0]
            if f.name in ("loc", "check", "more_checks"):
                continue
            if f.name == "index" and isinstance(first, (ir.Load, ir.Store)):
                changes["index"] = ir.Var(v0.ty, v0.loc, self.index)
            elif f.name == "ident" and isinstance(first, (ir.Var, ir.Assign)):
                changes["ident"] = self.ident(values)
            elif isinstance(v0, ir._Node):
                changes[f.name] = self.node(values)
            elif isinstance(v0, tuple) and any(isinstance(x, ir._Node) for x in v0):
                if any(len(v) != len(v0) for v in values):
                    raise _No
                changes[f.name] = tuple(self.node(list(xs)) for xs in zip(*values))
            elif any(v != v0 for v in values):
                raise _No
        return dataclasses.replace(first, **changes)


def _key(e):
    return ("c", type(e.value).__name__, repr(e.value)) if isinstance(e, ir.Const) \
        else ("v", e.ident)
