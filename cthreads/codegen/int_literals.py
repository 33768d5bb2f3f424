"""Python's values of int literal arithmetic, for the expression translator (``exprs.py``):
an operation on two int literals folded as Python computes it, and ``2**63``-style literal
expressions read before their type is chosen. (Moved out of exprs.py for its line budget.)"""

from __future__ import annotations

import ast


def _fold_int(op: str, a: int, b: int) -> int | None:
    """Python's value of ``a <op> b`` for ints of at most 64 bits, or None (not an arithmetic
    operator, or one Python would raise for). Powers and left shifts whose value needs more
    than 64 bits give 2**64 (a value beyond 64 bits) without computing it."""
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op in ("floordiv", "mod"):
        if b == 0:
            return None
        return a // b if op == "floordiv" else a % b
    if op in ("pow", "lshift", "rshift") and b < 0:
        return None
    if op == "pow":
        if a in (0, 1, -1):
            return a ** min(b, 2 + b % 2)      # 0**0 == 1; (-1)**b by the parity of b
        return 2**64 if b > 64 else a ** b     # |a| >= 2: beyond 64 bits past 64
    if op == "lshift":
        return 0 if a == 0 else 2**64 if b > 64 else a << b
    if op == "rshift":
        return a >> min(b, 64)                 # a fits in 64 bits: 64 gives 0 or -1
    return None


def _int_literal_value(node) -> int | None:
    """The Python value of ``2**63``-style int literal arithmetic (+ - * ** <<), or None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if not isinstance(node, ast.BinOp) or \
            type(node.op) not in (ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.LShift):
        return None
    a, b = _int_literal_value(node.left), _int_literal_value(node.right)
    if a is None or b is None or isinstance(node.op, (ast.Pow, ast.LShift)) and \
            not 0 <= b <= 64 or abs(a) > 2**64 or abs(b) > 2**64:
        return None
    return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.Pow: a ** b if b >= 0 else 0,
            ast.LShift: a << b}[type(node.op)]
