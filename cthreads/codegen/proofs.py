"""Bounds checks that need not run: accesses whose index is provably in range.

The kernel every tutorial starts with reads and writes ``x[i]`` after ``i: int = GlobalIdx.x``
and ``if i >= n: return``. Such an access is in range whenever ``n <= len(x)``, and that is a
comparison the runtime can make on the host, once per launch, instead of one per access on the
device (on CPU drivers the per-access checks slowed memory-bound kernels badly: see
docs/performance.md, "Shader shape"). This pass
finds the accesses that are safe:

* the index is ``v``, ``v + c`` or ``v - c`` (``c`` a literal) for a local ``v`` assigned
  exactly once, at the top level of the kernel, from ``GlobalIdx.x``, ``.y`` or ``.z`` (never
  negative);
* the access is dominated by guards that bound ``v``: inside ``if v < B:`` (possibly one
  conjunct of an ``and``), or after ``if v >= B: return`` (or ``break`` / ``continue``, or one
  disjunct of an ``or``) earlier in the same statement list, where ``B`` is ``len(lst)``,
  ``lst.shape[d]`` or an ``int`` parameter the kernel never assigns, possibly minus a literal
  (``v >= w - 1``); and, for ``v - c``, a lower guard such as ``if v < 1: return``.

So the 2-D stencil ``if x < 1 or y < 1 or x >= w - 1 or y >= h - 1: return`` followed by
``u[y - 1, x]`` ... ``u[y, x + 1]`` proves every access. ``len(lst)`` (or the shape) of the
accessed list along the access's dimension proves it outright; a parameter ``p`` proves it
when ``p`` is at most the list's size along that dimension at launch. Loop variables of
``for k in range(c, B)`` are bounded locals too, inside the loop. Computed indexes
(``i * n + k``, ``img[y + dy, x]``) are proven by launch-time conditions (range_proofs.py).
The result maps check ids to ``None`` (always safe), the Python name of ``p``, or a frozenset
of conditions.
"""

from __future__ import annotations

from . import ir
from .range_proofs import IndexBounds, const, fold, leaf_of
from .visit import Visitor

#: a comparison with its operands swapped, and negated
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _assign_counts(stmts, counts: dict) -> None:
    for s in stmts:
        if isinstance(s, ir.Assign):
            counts[s.ident] = counts.get(s.ident, 0) + 1
        elif isinstance(s, ir.ForRange):
            counts[s.ident] = counts.get(s.ident, 0) + 2     # a loop variable is never fixed
        for body in s.bodies():
            _assign_counts(body, counts)


class _Prover(Visitor):
    """Walks statements and expressions (``visit_<node>(node, facts)``) with the facts that
    hold there."""

    def __init__(self, kernel: ir.Kernel):
        counts: dict = {}
        _assign_counts(kernel.body, counts)
        self.counts = counts
        self.params = {loc.ident: loc.pyname for loc in kernel.locals
                       if loc.param and loc.ty in ("int", "int64")
                       and counts.get(loc.ident, 0) == 0}
        self.gid: set[str] = set()
        #: locals assigned once, at the top level, from GlobalIdx (never changed after)
        self.fixed: set[str] = set()
        #: locals assigned once, at the top level, an int expression of fixed locals,
        #: parameters and literals (``row: int = y * w``): what they stand for
        self.defs: dict = {}
        self.result: dict[int, str | None] = {}

    # -- guards --------------------------------------------------------------------------
    # A fact is ("upper", v, bound, k): v < bound - k, or ("lower", v, c): v >= c.
    def _bound(self, e):
        """(bound, k) when ``e`` is ``B`` or ``B - k`` (``k`` a literal int), else None."""
        k = 0
        if isinstance(e, ir.Binary) and e.op in ("sub", "add") and \
                isinstance(e.right, ir.Const) and type(e.right.value) is int:
            k = e.right.value if e.op == "sub" else -e.right.value
            e = e.left
        if isinstance(e, ir.Len):
            return ("len", e.lst.pyname, e.dim), k
        if _vec_len(e):             # len(p) of a list[vecN]: its flat length // N
            return ("len", e.left.lst.pyname, e.left.dim), k
        if isinstance(e, ir.Var) and e.ident in self.params:
            return ("param", self.params[e.ident]), k
        if isinstance(e, ir.Const) and type(e.value) is int:
            return ("const", e.value), k
        return None

    def _facts(self, e, truth: bool) -> set:
        """What ``e`` (one comparison) being ``truth`` says about a GlobalIdx local."""
        if not isinstance(e, ir.Compare) or len(e.ops) != 1 or e.ops[0] not in _FLIP:
            return set()
        op = e.ops[0]
        left, right = e.operands
        if not (isinstance(left, ir.Var) and left.ident in self.gid):
            left, right, op = right, left, _FLIP[op]
            if not (isinstance(left, ir.Var) and left.ident in self.gid):
                return set()
        if not truth:
            op = _NEGATE[op]
        v = left.ident
        if op in ("<", "<="):
            bound = self._bound(right)
            if bound is None:
                return set()
            b, k = bound
            return {("upper", v, b, k - 1 if op == "<=" else k)}
        if isinstance(right, ir.Const) and type(right.value) is int:
            return {("lower", v, right.value + 1 if op == ">" else right.value)}
        return set()

    def _true_facts(self, test) -> set:
        if isinstance(test, ir.BoolOp) and test.op == "and":
            return self._true_facts(test.left) | self._true_facts(test.right)
        if isinstance(test, ir.Unary) and test.op == "not":
            return self._false_facts(test.operand)
        return self._facts(test, True)

    def _false_facts(self, test) -> set:
        if isinstance(test, ir.BoolOp) and test.op == "or":
            return self._false_facts(test.left) | self._false_facts(test.right)
        if isinstance(test, ir.Unary) and test.op == "not":
            return self._true_facts(test.operand)
        return self._facts(test, False)

    # -- walk ----------------------------------------------------------------------------
    def block(self, stmts, facts: frozenset, top: bool = False) -> None:
        for s in stmts:
            self.stmt(s, facts)
            if top and isinstance(s, ir.Assign) and self.counts.get(s.ident) == 1:
                if isinstance(s.value, ir.Special) and s.value.name == "GlobalIdx":
                    self.gid.add(s.ident)
                    self.fixed.add(s.ident)
                elif self._fixed_expr(s.value):
                    self.defs[s.ident] = s.value
            # an ``if`` whose body always leaves (it ends in return, break or continue: e.g.
            # ``if x < 1 or x >= w - 1: v[x] = u[x]; return``): after it, its test was false
            if isinstance(s, ir.If) and not s.orelse and s.body and \
                    isinstance(s.body[-1], (ir.Return, ir.Break, ir.Continue)):
                facts = facts | self._false_facts(s.test)

    def _fixed_expr(self, e) -> bool:
        """``e`` is an int expression whose value never changes once computed: of fixed
        locals, their definitions, parameters never assigned and literals."""
        if e.ty != "int":
            return False
        if isinstance(e, ir.Const):
            return type(e.value) is int
        if isinstance(e, ir.Var):
            return e.ident in self.fixed or e.ident in self.defs or e.ident in self.params
        if isinstance(e, ir.Binary) and e.op in ("add", "sub", "mul"):
            return self._fixed_expr(e.left) and self._fixed_expr(e.right)
        if isinstance(e, ir.Call) and e.fn in ("min_i", "max_i") and len(e.args) == 2:
            return all(self._fixed_expr(a) for a in e.args)
        return False

    def stmt(self, s, facts) -> None:
        self.visit(s, facts)

    def visit_If(self, s, facts) -> None:
        self.expr(s.test, facts)
        self.block(s.body, facts | self._true_facts(s.test))
        self.block(s.orelse, facts | self._false_facts(s.test))

    def visit_While(self, s, facts) -> None:
        self.expr(s.test, facts)
        self.block(s.body, facts)

    def visit_ForRange(self, s, facts) -> None:
        for e in (s.start, s.stop, s.step):
            self.expr(e, facts)
        self.block(s.body, facts | self._range_facts(s))

    def _range_facts(self, s) -> frozenset:
        """Inside ``for j in range(c, B)`` or ``range(c, B, t)`` (``c`` and ``t > 0`` literals,
        ``B`` an int parameter the kernel never assigns, ``len(lst)``, ``lst.shape[d]`` or a
        literal, possibly minus a literal; ``j`` assigned by nothing else): ``c <= j < B``.
        ``B`` is evaluated once, when the loop starts, and never changes (parameters that are
        never assigned, list sizes), so the fact holds for every trip of the body. A ``len()``
        bound of the list the access reads proves it outright; another bound, per launch."""
        if self.counts.get(s.ident) != 2 or not (
                isinstance(s.step, ir.Const) and type(s.step.value) is int and
                s.step.value >= 1):
            return frozenset()
        bound = self._bound(s.stop)
        if bound is None:
            return frozenset()
        upper = ("upper", s.ident, bound[0], bound[1])
        if isinstance(s.start, ir.Const) and type(s.start.value) is int:
            if s.start.value >= 0:
                self.gid.add(s.ident)
            return frozenset({upper, ("lower", s.ident, s.start.value)})
        if self._stable_expr(s.start):
            # ``range(i + 1, n)``: the start, evaluated once, of locals that do not change
            # while the loop runs; its interval is the loop variable's lower bound
            return frozenset({upper, ("lower_expr", s.ident, s.start)})
        return frozenset()

    def _stable_expr(self, e) -> bool:
        """``e`` is a fixed expression (``_fixed_expr``) that may also read loop variables no
        statement assigns (those of enclosing loops do not change inside the loop)."""
        if isinstance(e, ir.Var) and e.ty == "int" and self.counts.get(e.ident) == 2:
            return True
        if isinstance(e, ir.Binary) and e.ty == "int" and e.op in ("add", "sub", "mul"):
            return self._stable_expr(e.left) and self._stable_expr(e.right)
        return self._fixed_expr(e)

    def visit_Store(self, s, facts) -> None:
        self.access(s.lst, s.index, s.check, facts)
        for d, (index, check) in enumerate(zip(s.more, s.more_checks), start=1):
            self.access(s.lst, index, check, facts, d)
            self.expr(index, facts)
        self.expr(s.index, facts)
        self.expr(s.value, facts)
        if s.check is not None:
            self.cover(s, s.value)

    def visit_Assign(self, s, facts) -> None:
        self.expr(s.value, facts)

    visit_ExprStmt = visit_Assign

    def access(self, lst, index, check, facts, dim: int = 0) -> None:
        """Prove the check of dimension ``dim`` of an access (a param bound: the runtime then
        compares that param with the list's size along ``dim``: ``BoundsCheck.dim``)."""
        if check is None or lst.shared_size is not None:
            return
        if not self.offset(lst, index, check, facts, dim):
            self.computed(lst, index, check, facts, dim)

    def offset(self, lst, index, check, facts, dim: int) -> bool:
        """Prove an index ``v + c`` by a guard of ``v``: True when proven."""
        if lst.vec and dim == lst.ndim - 1:
            index = _element(index, lst.vec)    # list[vecN]: in range iff its element is
        v, c = _offset(index)
        if v not in self.gid:
            return False
        lower = max([0] + [f[2] for f in facts if f[0] == "lower" and f[1] == v])
        if lower + c < 0:
            return False
        bounds = {f[2] for f in facts if f[0] == "upper" and f[1] == v and c <= f[3]}
        if ("len", lst.pyname, dim) in bounds:
            self.result[check] = None
            return True
        params = sorted(b[1] for b in bounds if b[0] == "param")
        if params:
            self.result[check] = params[0]
            return True
        return False

    def computed(self, lst, index, check, facts, dim: int) -> None:
        """Prove a computed index (``i * n + k``, ``y + dy``): the conditions, evaluated at
        launch, under which it is in range (range_proofs.py); none needed: always."""
        if lst.vec:
            return
        bounds = IndexBounds(lambda v: self._range(v, facts), self.params, self.defs)
        conds = bounds.in_range(index, ("len", lst.pyname, dim))
        if conds is not None:
            self.result[check] = conds or None

    def _range(self, v: str, facts):
        """(lo, hi) expressions of local ``v`` under ``facts``, or None: the largest literal
        lower bound, the smallest of the upper bounds."""
        lows = [f[2] for f in facts if f[0] == "lower" and f[1] == v]
        if v in self.gid:
            lows.append(0)
        highs = sorted({fold("-", leaf_of(f[2]), const(f[3] + 1))
                        for f in facts if f[0] == "upper" and f[1] == v})
        starts = [f[2] for f in facts if f[0] == "lower_expr" and f[1] == v]
        if not highs or not (lows or starts):
            return None
        hi = highs[0]
        for h in highs[1:]:
            hi = fold("min", hi, h)
        if not starts:
            return const(max(lows)), hi
        inner = frozenset(f for f in facts if f[1] != v)      # the start's own locals' facts
        iv = IndexBounds(lambda u: self._range(u, inner), self.params, self.defs) \
            .interval(starts[0])
        if iv is None:
            return None
        lo = iv.lo if not lows else fold("max", iv.lo, const(max(lows)))
        return lo, hi, iv.conds

    def cover(self, store, e) -> None:
        """Loads of ``store``'s own element inside its value need no check of their own: the
        store, which always runs after them, checks the same index of the same list."""
        if isinstance(e, ir.Load) and e.check is not None and e.lst == store.lst and \
                _same_index(e.index, store.index) and len(e.more) == len(store.more) and \
                all(_same_index(a, b) for a, b in zip(e.more, store.more)):
            self.result.setdefault(e.check, None)
            for c in e.more_checks:
                self.result.setdefault(c, None)
        for sub in e.children():
            self.cover(store, sub)

    def expr(self, e, facts) -> None:
        if e is not None:
            self.visit(e, facts)

    def default(self, node, facts) -> None:
        """Expressions: their sub-expressions, under the same facts; other statements: none."""
        for sub in node.children():
            self.visit(sub, facts)

    def visit_Load(self, e, facts) -> None:
        self.access(e.lst, e.index, e.check, facts)
        for d, (index, check) in enumerate(zip(e.more, e.more_checks), start=1):
            self.access(e.lst, index, check, facts, d)
        self.default(e, facts)

    visit_Atomic = visit_Load

    def visit_IfExp(self, e, facts) -> None:
        self.expr(e.test, facts)
        self.expr(e.body, facts | self._true_facts(e.test))
        self.expr(e.orelse, facts | self._false_facts(e.test))

    def visit_BoolOp(self, e, facts) -> None:
        if e.op != "and":
            self.default(e, facts)
            return
        self.expr(e.left, facts)
        self.expr(e.right, facts | self._true_facts(e.left))


def _offset(e) -> tuple:
    """(local ident, c) when ``e`` is ``v``, ``v + c``, ``c + v`` or ``v - c``; else (None, 0)."""
    if e is None:
        return None, 0
    if isinstance(e, ir.Var):
        return e.ident, 0
    if isinstance(e, ir.Binary) and e.op in ("add", "sub"):
        a, b = e.left, e.right
        if isinstance(a, ir.Var) and isinstance(b, ir.Const) and type(b.value) is int:
            return a.ident, b.value if e.op == "add" else -b.value
        if e.op == "add" and isinstance(b, ir.Var) and isinstance(a, ir.Const) and \
                type(a.value) is int:
            return b.ident, a.value
    return None, 0


def _element(e, n: int):
    """The element index ``j`` of the flat index ``j * n + k`` (``0 <= k < n``) of a
    ``list[vecN]`` component (vectors.py); None for any other index."""
    if isinstance(e, ir.Binary) and e.op == "add" and isinstance(e.right, ir.Const) and \
            type(e.right.value) is int and 0 <= e.right.value < n:
        e = e.left
    if isinstance(e, ir.Binary) and e.op == "mul" and isinstance(e.right, ir.Const) and \
            e.right.value == n:
        return e.left
    return None


def _vec_len(e) -> bool:
    """``e`` is ``len(p)`` (or ``p.shape[d]``, last ``d``) of a ``list[vecN]``: the
    frontend's flat length divided by N."""
    return isinstance(e, ir.Binary) and e.op == "floordiv" and isinstance(e.left, ir.Len) \
        and e.left.lst.vec and e.left.dim == e.left.lst.ndim - 1 and \
        isinstance(e.right, ir.Const) and e.right.value == e.left.lst.vec


def _same_index(a, b) -> bool:
    if isinstance(a, ir.Var) and isinstance(b, ir.Var):
        return a.ident == b.ident
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return a.value == b.value and a.ty == b.ty
    return False


def prove_in_range(kernel: ir.Kernel) -> dict:
    """Check id -> None (always in range), the int parameter ``p`` with ``p <= len(list)``,
    or a frozenset of launch-time conditions (range_proofs.py) that prove it when all hold."""
    prover = _Prover(kernel)
    prover.block(kernel.body, frozenset(), top=True)
    return prover.result
