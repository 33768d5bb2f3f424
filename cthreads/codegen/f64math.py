"""float64 math in WGSL: Python's ``math`` functions and operators for f64 values.

Vulkan's standard instruction set has 64-bit ``sqrt``, ``floor``, ``ceil``, ``trunc``, ``round``,
``fma``, ``abs``, ``min``, ``max`` but no 64-bit ``sin``, ``exp``, ``log``, ``pow``, ``atan`` ...
(naga accepts WGSL's ``exp(x)`` on an f64 and lavapipe then returns garbage: never emit those).
The library spells them out as WGSL functions built from exact operations only (no float32 step
anywhere): the files ``library/f64_*.wgsl``, every function ``ct_<what>_d``. Each call's
float64 form is the ``f64`` of its ``builtins.MathFn`` row; this module names the operators'
helpers and gives the tests and benchmarks the library's float64 part (the compiler itself
does not import it):

* ``F64_OPS``: Python operator -> helper (``/``, ``//``, ``%``, ``**``).
* ``F64_CALLS``: ``ir.Call.fn`` name -> WGSL format string over f64 arguments ``{0}``, ``{1}``
  (the rows' float64 forms); ``helpers_of`` the helpers a row's form calls.
* ``F64_HELPERS``: helper name -> (the helpers it requires, its WGSL text).
* ``helper_text``: the WGSL of some helpers and everything they require.

The helpers use ``u64`` bit patterns (the device needs ``shader-int64`` as well as
``shader-f64``; their headers say so), and ``ct_hide_d`` (under nearly all of them) calls
``ct_zero()``, the zero each kernel defines from its uniform block. Methods, measured accuracy
and the differences from Python are in docs/float64.md. No loops except in ``ct_fmod_d``
(``%``, ``//`` and ``fmod``) for quotients beyond 2**50.
"""

from __future__ import annotations

import re

from . import library
from .builtins import CALLS

#: Python operator -> the helper giving its meaning on f64 operands
F64_OPS: dict[str, str] = {"truediv": "ct_div_d", "floordiv": "ct_floordiv_d",
                           "mod": "ct_mod_d", "pow": "ct_pow_d"}

#: ``ir.Call.fn`` -> WGSL format string over f64 arguments (``floor``/``ceil``/``trunc``/
#: ``round`` give the f64 result; the caller converts it to its int type)
F64_CALLS: dict[str, str] = {name: row.f64.template for name, row in CALLS.items()
                             if row.f64 is not None}
_FORM_HELPERS = {row.f64.template: row.f64.helpers for row in CALLS.values()
                 if row.f64 is not None}


def helpers_of(template: str) -> tuple[str, ...]:
    """The helpers a float64 WGSL expression calls: a row's declared helpers for a value of
    ``F64_CALLS``, else (an expression the tests write, ``ct_div_d({0}, {1})``) the library
    helpers it names as calls. The compiler never uses this: it reads the rows."""
    if template in _FORM_HELPERS:
        return _FORM_HELPERS[template]
    return tuple(dict.fromkeys(name for name in re.findall(r"\b(ct_[a-z0-9_]+)\(", template)
                               if library.has(name)))


#: helper name -> (the helpers it requires, its WGSL text), the float64 files of the library
F64_HELPERS: dict[str, tuple] = {name: (rec.deps, rec.text)
                                 for name, rec in library.helpers().items()
                                 if rec.source.startswith("f64_")}


def helper_text(names) -> str:
    """The WGSL of ``names`` and everything they depend on, each once, dependencies first."""
    return "\n\n".join(rec.text for rec in library.closure(names))


__all__ = ["F64_CALLS", "F64_HELPERS", "F64_OPS", "helper_text", "helpers_of"]
