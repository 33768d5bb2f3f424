"""Float constants that reach a kernel's arithmetic through a name, hidden from the driver.

The drivers' compilers simplify float arithmetic as if NaN, infinities and -0.0 did not exist
(``x * 0.0 -> 0.0``, ``x + 0.0 -> x``, ``x - x * 1.0 -> 0.0``, ``0.0 / x -> 0.0``).
``wgsl.fold_guard`` hides the literal operands of those shapes; a constant the driver can see
through a name is as dangerous: a local set to it (``t = 0.0``, the components of
``vec3(0.0, -9.8, 0.0)``, an augmented assignment's start ``s = 0.0; s += x``), a device
function's parameter given it (the driver inlines the call) or its constant result (a tuple
result's members too), a complex constant (``z = 0j``). Such a
value enters the shader hidden (``ct_enter_f(0.0)``: one integer xor with a zero the driver
cannot see, where the value is stored, not where it is used), so the arithmetic on it keeps
IEEE's (and Python's) results. Constants elsewhere (comparisons, list indexes, loop bounds,
int values) stay visible: their folds are exact.
"""

from __future__ import annotations

from . import ir
from .types import elem


#: the helper hiding a constant that enters a name, per float type (library/literal_entry.wgsl)
ENTER = {"float": "ct_enter_f", "float64": "ct_enter_d",
         "complex": "ct_center_f", "complex128": "ct_center_d"}


def _const_tree(e: ir.Expr) -> bool:
    return not any(x.RUNTIME for x in ir.walk_expr(e))


def hides(e: ir.Expr) -> bool:
    """True when ``e``, a value stored into a local or parameter (or returned), is a float or
    complex constant to hide (with ``ENTER[e.ty]``). Every constant, not only the fold-prone
    ones (+-0.0, +-1.0, inf, NaN): the driver computes with the others too (``t = 2.0;
    w = t - 2.0`` is a zero it sees)."""
    return e.ty in ENTER and _const_tree(e)


def _literal(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.Const)


def _one_literal(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.Const) and not isinstance(e.value, bool) and abs(e.value) == 1


def _int_value(e: ir.Expr) -> bool:
    """An int (or bool) converted to a float that the driver may know (``m = 0; x * m``, a
    loop's counter once unrolled, ``n - n``): made of locals and literals only. An int read
    from a list or made of the thread's index or a list's length stays visible."""
    if not isinstance(e, ir.Cast) or elem(e.operand.ty).kind in "fc" or \
            _const_tree(e.operand):
        return False
    return not any(x.MEMORY or isinstance(x, (ir.Special, ir.Len))
                   for x in ir.walk_expr(e.operand))


def operand_folds(e: ir.Binary) -> tuple:
    """More operands of a float ``+ - * /`` for ``wgsl.fold_guard`` to hide: a constant
    expression that is not a literal (``x * min(1.0, 0.0)``: WGSL evaluates it, the driver
    sees the zero), the ``1.0`` of ``x * 1.0`` (``x - x * 1.0`` became ``0.0``), an int
    converted to a float (``m = 0; x * m``) and a zero dividend (``0.0 / x`` became ``0.0``
    for a NaN or zero ``x``)."""
    hide = []
    for side, x in (("left", e.left), ("right", e.right)):
        if e.op in ("add", "sub", "mul") and (_const_tree(x) and not _literal(x) or
                                              _int_value(x)):
            hide.append(side)
        elif e.op == "mul" and _one_literal(x):
            hide.append(side)
    if e.op == "truediv" and _int_value(e.left):
        hide.append("left")
    if e.op == "truediv" and _const_tree(e.left) and not _const_tree(e.right):
        left = e.left
        while isinstance(left, ir.Cast):
            left = left.operand
        if not isinstance(left, ir.Const) or left.value == 0:
            hide.append("left")
    return tuple(hide)
