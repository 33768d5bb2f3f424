"""Struct results that are the caller's own object in Python: ``return q`` of a parameter.

In Python a device function that returns its struct parameter ``q`` (``return q``,
``return q, d``, ``return a if c else b``) returns the caller's object itself, so after
``s = f(p[i])`` a field assignment ``s.mass = ...`` would change ``p[i]`` too, where the device
changes a copy. ``returned_params`` says which results of a device function may be one of its
struct parameters; ``struct_locals.struct_no_alias`` refuses such a binding when a field of
the name is assigned, with the copy ``Particle(f(...))`` as the fix.
"""

from __future__ import annotations

import ast

from .structtypes import StructType


def _param_names(node, params: frozenset) -> bool:
    if isinstance(node, ast.IfExp):
        return _param_names(node.body, params) or _param_names(node.orelse, params)
    return isinstance(node, ast.Name) and node.id in params


def returned_params(func) -> frozenset:
    """The result positions (0 for a single result, k for member k of a tuple) at which
    ``func`` may return one of its struct parameters."""
    hit = getattr(func, "_ct_returned_params", None)
    if hit is not None:
        return hit
    params = frozenset(n for n, t in func.signature.params if isinstance(t, StructType))
    found = set()
    if params:
        for node in ast.walk(func.src.tree):
            if not isinstance(node, ast.Return) or node.value is None:
                continue
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found.update(k for k, v in enumerate(values) if _param_names(v, params))
    func._ct_returned_params = frozenset(found)
    return func._ct_returned_params


def aliased_call(tr, stmt, name: str):
    """The device function whose call ``stmt`` binds to ``name`` a struct that may be a
    parameter of it (``s = f(q)``, ``s, d = f(q)``), or None."""
    from .functions import DeviceFunction  # noqa: PLC0415
    value = stmt.value
    if not isinstance(value, ast.Call):
        return None
    func = tr.scope.resolve(value.func)
    if not isinstance(func, DeviceFunction):
        return None
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    positions = returned_params(func)
    for t in targets:
        if isinstance(t, ast.Name) and t.id == name and 0 in positions:
            return func
        if isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == name and
                                            k in positions for k, e in enumerate(t.elts)):
            return func
    return None


__all__ = ["aliased_call", "returned_params"]
