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

# ------------------------------------------------------------------- calls kernels cannot make
#: what kernels can call, for the hints below
CALLABLE = ("kernels can call int float bool abs min max len round, math functions "
            "(math.sqrt, math.tanh, math.floor, ...: docs/language.md lists them), atomic_*, "
            "the barrier forms and @Gpu.func device functions")
#: features a later version brings to the device; until then, what to do (update these texts
#: when they land)
NOT_YET = {
    "print": ("print() is not available on the device yet",
              "to debug, run the kernel as plain Python with kernel.simulate(...) (print works "
              "there), or store the values into a list parameter and print them after "
              "join()"),
    "random": ("Python's and numpy's random numbers do not run in kernels",
               "use cthreads.gpu.Random: rng = Random(seed, GlobalIdx.x), then rng.random(), "
               "rng.uniform(a, b), rng.normal(mu, sigma), rng.randint(a, b)"),
}
#: numpy names whose math-module (or builtin) equivalent kernels call
NUMPY_EQUIVALENT = {
    "abs": "abs(x)", "absolute": "abs(x)", "fabs": "math.fabs(x)", "arcsin": "math.asin(x)",
    "arccos": "math.acos(x)", "arctan": "math.atan(x)", "arctan2": "math.atan2(y, x)",
    "arcsinh": "math.asinh(x)", "arccosh": "math.acosh(x)", "arctanh": "math.atanh(x)",
    "power": "x ** y", "float_power": "x ** y", "maximum": "max(a, b)", "fmax": "max(a, b)",
    "minimum": "min(a, b)", "fmin": "min(a, b)", "rint": "round(x)", "round": "round(x)",
    "around": "round(x)", "remainder": "x % y", "mod": "x % y", "floor_divide": "x // y",
    "true_divide": "x / y", "divide": "x / y", "square": "x * x", "deg2rad": "math.radians(x)",
    "rad2deg": "math.degrees(x)",
}
#: numpy reductions over an array, and what a kernel writes instead
NUMPY_REDUCTIONS = {"max": "max", "amax": "max", "nanmax": "max", "min": "min", "amin": "min",
                    "nanmin": "min", "sum": "+", "nansum": "+", "prod": "*", "mean": "+",
                    "average": "+", "dot": "+"}
#: numpy's scalar types, and the kernel's conversions
NUMPY_SCALARS = {"float32": "float32", "float64": "float64", "int32": "int32",
                 "int64": "int64", "uint32": "uint32", "bool_": "bool", "intc": "int32",
                 "double": "float64", "single": "float32"}


def _module_of(obj) -> str:
    owner = getattr(obj, "__self__", None)
    module = getattr(obj, "__module__", None) or ""
    if owner is not None and type(owner).__module__ in ("random", "numpy.random.mtrand",
                                                         "numpy.random._generator"):
        return "random"
    if type(obj).__name__ == "ufunc" or module == "numpy" or module.startswith("numpy."):
        return "numpy.random" if module.startswith("numpy.random") else "numpy"
    return module


#: print() used as a value
PRINT_VALUE = ("print() is a statement in kernels: it has no value to use",
               "call print(...) on a line of its own (its lines are written at join())")


def call_hint(obj, text: str, math_names) -> tuple | None:
    """(message, hint) for a call of ``obj`` (written ``text``) that kernels cannot make and
    that has a precise way out: numpy functions (their math-module equivalent, a loop for
    reductions), the random module, print, builtins such as sum; None for others.
    ``math_names``: the math functions kernels have."""
    if obj is print:          # a print statement is translated (codegen/printing.py)
        return PRINT_VALUE
    module = _module_of(obj)
    if module in ("random", "numpy.random"):
        message, hint = NOT_YET["random"]
        return f"'{text}': {message}", hint
    name = getattr(obj, "__name__", text.rsplit(".", 1)[-1])
    if module != "numpy":
        pass
    elif name in math_names or name in NUMPY_EQUIVALENT:
        write = f"math.{name}(x) (import math)" if name in math_names else \
            NUMPY_EQUIVALENT[name]
        return (f"numpy function '{text}' does not run in kernels",
                f"write {write}: kernels compute one value at a time")
    elif name in NUMPY_REDUCTIONS:
        op = NUMPY_REDUCTIONS[name]
        fold = f"acc = {op}(acc, xs[k])" if op in ("max", "min") else f"acc = acc {op} xs[k]"
        then = "; then divide by len(xs)" if name in ("mean", "average") else ""
        values = f"; {op}(a, b, ...) takes values, not a list" if op in ("max", "min") else ""
        return (f"numpy function '{text}' does not run in kernels",
                f"loop over the list: acc = xs[0], then for k in range(1, len(xs)): {fold}"
                f"{then}{values}; a whole array reduces on the device outside kernels, with "
                "f.reduce(array) of a @Gpu.func f(a, b)")
    elif name in NUMPY_SCALARS:
        kind = NUMPY_SCALARS[name]
        return (f"numpy function '{text}' does not run in kernels",
                "write bool(x)" if kind == "bool" else
                f"write {kind}(x) (from cthreads.gpu import {kind})")
    else:
        return (f"numpy function '{text}' does not run in kernels",
                f"{CALLABLE}; do whole-array numpy work on the host, before or after the "
                "launch")
    if module == "math":
        return (f"math.{name}() is not among the math functions kernels have",
                f"{CALLABLE}; compute it from those, or on the host")
    if module == "builtins" and name in ("sum", "any", "all", "sorted", "reversed", "map",
                                         "filter", "enumerate", "zip"):
        return (f"{name}() is not supported in kernels",
                "loop over the list with 'for k in range(len(xs)):' and read xs[k]; a whole "
                "array reduces on the device outside kernels, with f.reduce(array) of a "
                "@Gpu.func f(a, b)")
    return None
