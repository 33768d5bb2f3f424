"""Launch-time proofs of computed indexes: ``a[i * n + k]``, ``b[k * n + j]``, ``img[y, x + dx]``.

``proofs.py`` proves an index that is one bounded local plus a literal. A matrix product, a
convolution or an N-body loop index their lists with sums of products of such locals (guarded
``GlobalIdx`` locals, ``range`` loop variables) and of ``int`` parameters, and whether such an
index stays in range depends on the launch's parameter values and list sizes. This module turns
an index into a *condition*: an expression over parameter names, list sizes and literals that,
when true at launch, proves the access in range for every thread and every loop trip. The
runtime evaluates it on the host, in Python ints (no overflow), once per launch
(``runtime/launch_conditions.py``), and runs the variant without those checks only when every
condition holds; otherwise the checked variant runs and reports the failure as it always did.

Expressions are nested tuples, hashable and picklable (they travel in ``KernelProgram``):

* ``("c", v)`` a literal int; ``("p", name)`` an int parameter's value (its Python name);
* ``("len", list, dim)`` the size of list parameter ``list`` along ``dim``;
* ``("+", a, b)``, ``("-", a, b)``, ``("*", a, b)``, ``("//", a, b)`` (``b`` a literal >= 1),
  ``("min", a, b)``, ``("max", a, b)``.

A condition is ``("<=", a, b)``: ``a <= b``.

The index's interval is computed bottom-up: a local ``v`` with ``lo <= v <= hi`` (from the
facts of proofs.py) gives ``[lo, hi]``; sums add, differences subtract crosswise, min and max
apply to both ends; ``a % d`` and ``a // d`` need ``a >= 0`` and ``d >= 1``; a product needs both operands non-negative (``lo >= 0``, a condition where
it is not a literal) and gives ``[lo * lo, hi * hi]``. If a local's range is empty at launch the
access does not run, so what the interval claims for it does not matter. Every intermediate
value must fit the device's i32 (conditions too), so the WGSL arithmetic cannot wrap.
"""

from __future__ import annotations

from . import ir

I32_MIN = -(1 << 31)
I32_MAX = (1 << 31) - 1

_OPS = {"add": "+", "sub": "-", "mul": "*"}
_CALLS = {"min_i": "min", "max_i": "max"}


def const(v: int) -> tuple:
    return ("c", v)


def is_const(e) -> bool:
    return e[0] == "c"


def fold(op: str, a: tuple, b: tuple) -> tuple:
    """``a op b`` with literal operands folded, and ``x + 0``, ``x - 0``, ``x * 1`` simplified."""
    if is_const(a) and is_const(b):
        return const(evaluate((op, a, b), None))
    if op in ("+", "-") and is_const(b) and b[1] == 0:
        return a
    if op == "+" and is_const(a) and a[1] == 0:
        return b
    if op == "*" and is_const(b) and b[1] == 1:
        return a
    if op == "*" and is_const(a) and a[1] == 1:
        return b
    if op == "*" and ((is_const(a) and a[1] == 0) or (is_const(b) and b[1] == 0)):
        return const(0)
    return (op, a, b)


def evaluate(e: tuple, env) -> int:
    """The value of expression ``e``; ``env(leaf)`` gives a ``p`` or ``len`` leaf's value."""
    tag = e[0]
    if tag == "c":
        return e[1]
    if tag in ("p", "len"):
        return env(e)
    a, b = evaluate(e[1], env), evaluate(e[2], env)
    if tag == "+":
        return a + b
    if tag == "-":
        return a - b
    if tag == "*":
        return a * b
    if tag == "//":
        return a // b
    if tag == "min":
        return min(a, b)
    if tag == "max":
        return max(a, b)
    raise ValueError(f"unknown range-proof expression {e!r}")


def leaf_of(bound) -> tuple:
    """The expression of a proofs.py bound: ``("len", list, dim)``, ``("param", name)`` or
    ``("const", v)``."""
    if bound[0] == "len":
        return ("len", bound[1], bound[2])
    if bound[0] == "param":
        return ("p", bound[1])
    return const(bound[1])


class Interval:
    """Symbolic bounds of an int expression, with the conditions under which they hold."""

    __slots__ = ("lo", "hi", "conds")

    def __init__(self, lo: tuple, hi: tuple, conds: frozenset = frozenset()):
        self.lo = lo
        self.hi = hi
        self.conds = conds


def _le(a: tuple, b: tuple):
    """The condition ``a <= b``: True or False when both are literals, else the tuple."""
    if is_const(a) and is_const(b):
        return a[1] <= b[1]
    return ("<=", a, b)


def _with(conds: frozenset, *new):
    """``conds`` plus the conditions ``new`` (None when one of them is false outright)."""
    out = set(conds)
    for c in new:
        if c is False:
            return None
        if c is not True:
            out.add(c)
    return frozenset(out)


class IndexBounds:
    """Intervals of the int expressions of one kernel, from its locals' ranges.

    ``var_range(ident)`` gives ``(lo, hi)`` expressions of a bounded local (and the
    conditions they need, where a third item), or None;
    ``params`` maps the idents of the int parameters the kernel never assigns to their
    Python names; ``defs`` the locals that stand for a fixed expression to it."""

    def __init__(self, var_range, params: dict, defs: dict | None = None):
        self.var_range = var_range
        self.params = params
        self.defs = defs or {}

    def interval(self, e) -> Interval | None:
        out = self._interval(e)
        if out is None or isinstance(e, (ir.Const, ir.Var)):
            return out              # (an int literal, parameter or local is an i32 already)
        conds = _with(out.conds, _le(const(I32_MIN), out.lo), _le(out.hi, const(I32_MAX)))
        return None if conds is None else Interval(out.lo, out.hi, conds)

    def _interval(self, e) -> Interval | None:
        if e is None or e.ty != "int":
            return None
        if isinstance(e, ir.Const) and type(e.value) is int:
            return Interval(const(e.value), const(e.value))
        if isinstance(e, ir.Var):
            if e.ident in self.params:
                p = ("p", self.params[e.ident])
                return Interval(p, p)
            r = self.var_range(e.ident)
            if r is None and e.ident in self.defs:    # a fixed local: what it stands for
                return self.interval(self.defs[e.ident])
            return None if r is None else Interval(*r)   # (lo, hi[, conditions])
        if isinstance(e, ir.Binary) and e.op in _OPS:
            a, b = self.interval(e.left), self.interval(e.right)
            if a is None or b is None:
                return None
            conds = a.conds | b.conds
            if e.op == "add":
                return Interval(fold("+", a.lo, b.lo), fold("+", a.hi, b.hi), conds)
            if e.op == "sub":
                return Interval(fold("-", a.lo, b.hi), fold("-", a.hi, b.lo), conds)
            conds = _with(conds, _le(const(0), a.lo), _le(const(0), b.lo))
            if conds is None:
                return None
            return Interval(fold("*", a.lo, b.lo), fold("*", a.hi, b.hi), conds)
        if isinstance(e, ir.Binary) and e.op in ("mod", "floordiv"):
            return self._division(e)
        if isinstance(e, ir.Call) and e.fn in _CALLS and len(e.args) == 2:
            a, b = self.interval(e.args[0]), self.interval(e.args[1])
            if a is None or b is None:
                return None
            op = _CALLS[e.fn]
            return Interval(fold(op, a.lo, b.lo), fold(op, a.hi, b.hi), a.conds | b.conds)
        return None

    def _division(self, e) -> Interval | None:
        """``a % d`` and ``a // d`` for ``a >= 0`` and ``d >= 1`` (Python's and the device's
        results agree there): ``[0, d - 1]``; ``[lo // d, hi // d]``, ``d`` a literal."""
        a, d = self.interval(e.left), self.interval(e.right)
        if a is None or d is None or d.lo != d.hi:
            return None
        if e.op == "floordiv" and not is_const(d.lo):
            return None
        conds = _with(a.conds | d.conds, _le(const(0), a.lo), _le(const(1), d.lo))
        if conds is None:
            return None
        if e.op == "mod":
            return Interval(const(0), fold("-", d.hi, const(1)), conds)
        return Interval(fold("//", a.lo, d.lo), fold("//", a.hi, d.lo), conds)

    def in_range(self, index, size: tuple):
        """The conditions (a frozenset; empty: always) under which ``0 <= index < size``
        holds wherever the access runs, or None when that cannot be shown this way."""
        iv = self.interval(index)
        if iv is None:
            return None
        return _with(iv.conds, _le(const(0), iv.lo), _le(fold("+", iv.hi, const(1)), size))


def describe(e: tuple) -> str:
    """Python-like text of an expression or condition (tests, ``info``)."""
    tag = e[0]
    if tag == "c":
        return str(e[1])
    if tag == "p":
        return e[1]
    if tag == "len":
        return f"{e[1]}.shape[{e[2]}]"
    if tag in ("min", "max"):
        return f"{tag}({describe(e[1])}, {describe(e[2])})"
    return f"({describe(e[1])} {tag} {describe(e[2])})"
