"""Device functions -> WGSL functions (one per specialisation, ``functions.FuncSpec``).

The body is printed by the kernel's emitter (same statements, same list access and bounds
checks, noted in the same private variables and reported when the kernel's invocation ends);
only returns differ: a device function returns its value. Scalar parameters arrive as
``ct_p_<name>`` and are copied into variables, since Python lets a function assign its
parameters; index builtins arrive as the hidden parameters ``functions.HIDDEN`` names.
"""

from __future__ import annotations

from . import ir
from .lists import ListAccess
from .tuple_types import wgsl_type
from .types import elem
from .wgsl import Emitter


class FunctionEmitter(Emitter):
    """The kernel emitter with a device function's returns (no bounds-check report, no loop
    probes: the calling kernel reports and probes)."""

    def __init__(self, spec, lists: ListAccess, specs: dict, progress=None, nd: bool = False,
                 cpu: bool = False):
        super().__init__(spec.body, spec.src, lists, progress, specs=specs)
        self.report = False
        self.nd = nd
        self.hide_loops = cpu           # the kernel's variant for CPU drivers (loop_entry.py)

    def visit_Return(self, s, mode, loops):
        self.line("return;")

    def visit_ReturnValue(self, s, mode, loops):
        self.line(f"return {self.entry(s.value)};")


def function_text(spec, lists: ListAccess, specs: dict, progress=None, nd: bool = False,
                  cpu: bool = False) -> tuple:
    """(the WGSL text of ``spec``, the names of the ``HELPERS`` it uses); ``nd``: for the N-D
    launch variant; ``cpu``: for the kernel's variant for CPU drivers."""
    em = FunctionEmitter(spec, lists, specs, progress, nd, cpu)
    for local in spec.body.locals:
        t = wgsl_type(local.ty)
        if local.param:
            em.line(f"var {local.ident}: {t} = ct_p_{local.ident};")
        else:
            em.line(f"var {local.ident}: {t};")
    em.block(list(spec.body.body), "plain")
    params = [f"ct_p_{ident}: {elem(ty).wgsl}" for ident, ty in spec.params]
    params += [f"{ident}: {ty}" for ident, ty in spec.hidden_params(nd)]
    result = f" -> {wgsl_type(spec.returns)}" if spec.returns is not None else ""
    lines = [f"var<private> {ident}: {elem(ty).wgsl};" for ident, ty in spec.registers]
    lines += [f"// device function {spec.func.fn.__module__}.{spec.func.fn.__qualname__} "
              f"({spec.src.filename}, line {spec.src.firstlineno})",
             f"fn {spec.ident}({', '.join(params)}){result} {{"] + em.lines + ["}"]
    return "\n".join(lines), em.helpers


def has_loops(spec) -> bool:
    return any(isinstance(s, (ir.While, ir.ForRange)) for s in ir.walk_stmts(spec.body.body))


__all__ = ["FunctionEmitter", "function_text", "has_loops"]
