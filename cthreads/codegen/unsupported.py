"""What kernels cannot contain, with the message and hint each construct gets.

Read by the pre-pass (``checks``), which rejects the constructs that mean nothing in a kernel
before any translation, and by the translator (``frontend``/``exprs``) for any node it has no
``visit_`` method for.
"""

from __future__ import annotations

_NO_EXCEPTIONS = "kernels cannot raise; write a flag into a list and check it after join()"

STATEMENTS = {
    "Try": ("'try'", "kernels cannot catch exceptions; test the condition with 'if'"),
    "TryStar": ("'try'", "kernels cannot catch exceptions; test the condition with 'if'"),
    "With": ("'with'", "kernels have no context managers; remove the 'with'"),
    "AsyncWith": ("'async with'", "kernels are not coroutines"),
    "AsyncFor": ("'async for'", "use 'for k in range(...)'"),
    "ClassDef": ("class definitions", "define classes outside the kernel"),
    "FunctionDef": ("nested 'def'", "define helpers outside and inline their code; kernels "
                    "cannot call Python functions"),
    "AsyncFunctionDef": ("nested 'async def'", "kernels cannot call Python functions"),
    "Assert": ("'assert'", _NO_EXCEPTIONS),
    "Raise": ("'raise'", _NO_EXCEPTIONS),
    "Delete": ("'del'", "kernel locals and lists cannot be deleted"),
    "Match": ("'match'", "use if/elif/else"),
}

EXPRESSIONS = {
    "ListComp": ("list comprehensions", "write a for loop over range(...) that stores into a "
                 "list parameter"),
    "SetComp": ("set comprehensions", "write a for loop over range(...)"),
    "DictComp": ("dict comprehensions", "write a for loop over range(...)"),
    "GeneratorExp": ("generator expressions", "write a for loop over range(...)"),
    "Lambda": ("lambda", "write the expression inline"),
    "Tuple": ("tuples", "use separate scalar locals"),
    "List": ("list literals", "pass a list parameter, or declare shared(size) memory"),
    "Dict": ("dicts", "use list parameters indexed by int"),
    "Set": ("sets", "use list parameters indexed by int"),
    "JoinedStr": ("f-strings", "kernels cannot build strings; write values into a list"),
    "Await": ("await", "kernels are not coroutines"),
    "Yield": ("yield", "kernels are not generators; write results into a list parameter"),
    "YieldFrom": ("yield from", "write results into a list parameter"),
    "Starred": ("*unpacking", "pass arguments one by one"),
    "NamedExpr": ("the walrus operator ':='", "assign in a separate statement"),
    "Slice": ("slices", "index one element at a time: x[i]"),
}

#: rejected by the pre-pass wherever they appear, in source order
REJECT_EARLY = frozenset({
    "ListComp", "SetComp", "DictComp", "GeneratorExp", "Lambda", "Await", "Yield", "YieldFrom",
    "ClassDef", "FunctionDef", "AsyncFunctionDef", "Try", "TryStar", "With", "AsyncWith",
    "Assert", "Raise", "Delete", "Match", "NamedExpr"})
