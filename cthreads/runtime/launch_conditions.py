"""The launch-time conditions of computed-index proofs (codegen/range_proofs.py), as one
Python function per kernel and device rules.

``compile_conditions(conditions, scalar_pos, list_pos)`` turns the kernel's conditions (made
once, at decoration) into a function ``test(scalars, lengths, dims) -> bool`` that the runtime
calls once per launch: one generated expression, parameter values read by position and turned
into Python ints (no overflow: a product of two large int32 values stays exact), list sizes from
the shapes. ``variants.choose`` runs the check-free variant only when it returns True.
"""

from __future__ import annotations


def _source(e, scalar_pos: dict, list_pos: dict, leaves: dict) -> str:
    tag = e[0]
    if tag == "c":
        return repr(int(e[1]))
    if tag in ("p", "len"):
        name = leaves.get(e)
        if name is None:
            name = leaves[e] = f"v{len(leaves)}"
        return name
    a = _source(e[1], scalar_pos, list_pos, leaves)
    b = _source(e[2], scalar_pos, list_pos, leaves)
    if tag in ("min", "max"):
        return f"{tag}({a}, {b})"
    if tag in ("+", "-", "*", "//", "<="):
        return f"({a} {tag} {b})"
    raise ValueError(f"unknown launch condition node {e!r}")


def _leaf(e, scalar_pos: dict, list_pos: dict) -> str:
    if e[0] == "p":
        return f"int(s[{scalar_pos[e[1]]}])"
    k, dim = list_pos[e[1]], int(e[2])
    return f"_size(L, D, {k}, {dim})"


def _size(lengths, dims, k: int, dim: int) -> int:
    """The size of list ``k`` along ``dim`` (its length for a 1-D list)."""
    shape = dims[k] if dims is not None else None
    if shape is None:
        return int(lengths[k]) if dim == 0 else 1
    return int(shape[dim])


def compile_conditions(conditions: tuple, scalar_pos: dict, list_pos: dict):
    """``test(scalars, lengths, dims)``: True when every condition holds (None: no
    conditions)."""
    if not conditions:
        return None
    leaves: dict = {}
    body = " and ".join(_source(c, scalar_pos, list_pos, leaves) for c in conditions)
    lines = ["def test(s, L, D):"]
    lines += [f"    {name} = {_leaf(e, scalar_pos, list_pos)}" for e, name in leaves.items()]
    lines.append(f"    return {body}")
    scope = {"_size": _size, "min": min, "max": max, "int": int}
    exec(compile("\n".join(lines), "<cthreads launch conditions>", "exec"), scope)  # noqa: S102
    test = scope["test"]
    test.source = "\n".join(lines)
    return test
