"""Pre-pass checks: the signature, and what the body declares, before any translation.

The signature rules come from the API contract: positional parameters annotated with one of
the six kernel types, ``-> None``, nothing else. The body scan collects the names Python would
treat as locals (anything assigned anywhere in the function), their annotations, and rejects
``global``/``nonlocal`` and bad ``for`` targets early, at the offending node.
"""

from __future__ import annotations

import ast

from ..errors import GpuKernelTypeError
from . import unsupported
from .source import KernelSource
from .tuple_types import resolve_result
from .types import AnnotationError, ListType, resolve_annotation
from .structtypes import StructType
from .vectypes import VecType
from .rngtypes import RngType

_TYPES_HINT = "kernel parameters are int, float, bool, list[int], list[float] or list[bool]"


def _parameters(src: KernelSource, lookup, what: str) -> list:
    """``[(name, type, node)]`` of a kernel's or device function's parameters (``what``:
    'kernel' or 'device function'); located TypeErrors for the forms gpu() cannot pass."""
    fn = src.tree
    args = fn.args
    name = src.name
    if args.vararg is not None:
        src.error(args.vararg, f"{what} {name} takes *{args.vararg.arg}; {what}s take a fixed "
                  f"list of positional parameters", _TYPES_HINT, cls=GpuKernelTypeError)
    if args.kwarg is not None:
        src.error(args.kwarg, f"{what} {name} takes **{args.kwarg.arg}; {what}s take a fixed "
                  f"list of positional parameters", _TYPES_HINT, cls=GpuKernelTypeError)
    if args.kwonlyargs:
        bad = args.kwonlyargs[0]
        src.error(bad, f"{what} {name} has keyword-only parameter '{bad.arg}'; arguments are "
                  f"passed by position only", "remove the '*' so every parameter is positional",
                  cls=GpuKernelTypeError)
    if args.defaults:
        bad = args.defaults[0]
        src.error(bad, f"{what} {name} has a default parameter value; every argument is "
                  f"passed by position and the count is checked, so defaults are not supported",
                  "remove the default and pass the value in every call", cls=GpuKernelTypeError)
    params = []
    for a in list(args.posonlyargs) + list(args.args):
        if a.annotation is None:
            src.error(a, f"parameter '{a.arg}' of {what} {name} has no type annotation",
                      f"write '{a.arg}: int' (or float, bool, list[int], list[float], "
                      f"list[bool])", cls=GpuKernelTypeError)
        try:
            ty = resolve_annotation(a.annotation, lookup)
        except AnnotationError as exc:
            src.error(exc.node, f"parameter '{a.arg}' of {what} {name}: {exc.message}",
                      exc.hint, cls=GpuKernelTypeError)
        refuse_matrix_list_param(src, a, ty, what)
        params.append((a.arg, ty, a))
    return params


def refuse_matrix_list_param(src: KernelSource, a, ty, what: str) -> None:
    """A located error for ``list[mat33]`` parameters of device functions (not supported
    yet; ``list[vec3]`` ones are)."""
    if isinstance(ty, ListType) and getattr(ty, "mat", 0) and what != "kernel":
        src.error(a, f"parameter '{a.arg}' of {what} {src.name}: {ty} parameters of device "
                  "functions are not supported yet", "index the list in the kernel and pass "
                  "the matrix (p[i]) by value", cls=GpuKernelTypeError)


def _returns_none(ret) -> bool:
    return isinstance(ret, ast.Constant) and ret.value in (None, "None")


def check_signature(src: KernelSource, lookup) -> list:
    """Return ``[(name, type, node)]`` for the parameters; raise located TypeErrors."""
    fn = src.tree
    params = _parameters(src, lookup, "kernel")
    for name, ty, node in params:
        if isinstance(ty, RngType):
            src.error(node, f"kernel parameter '{name}' is a Random: a kernel makes its streams "
                      "itself", f"pass the seed (an int) and write {name} = Random(seed, "
                      "GlobalIdx.x) in the kernel", cls=GpuKernelTypeError)
    ret = fn.returns
    if ret is None or not _returns_none(ret):
        where = ret if ret is not None else fn
        what = "has no return annotation" if ret is None else \
            f"is annotated '-> {ast.unparse(ret)}'"
        src.error(where, f"kernel {src.name} {what}; kernels return nothing",
                  "write '-> None' and store results into a list parameter",
                  cls=GpuKernelTypeError)
    return params


def check_func_signature(src: KernelSource, lookup) -> tuple:
    """(parameters as ``check_signature``, the result type or None) of a device function."""
    fn = src.tree
    params = _parameters(src, lookup, "device function")
    ret = fn.returns
    if ret is None:
        src.error(fn, f"device function {src.name} has no return annotation",
                  "write '-> float' (int, bool) for a function that returns a value, or "
                  "'-> None'", cls=GpuKernelTypeError)
    if _returns_none(ret):
        return params, None
    try:
        ty = resolve_result(ret, lookup)        # tuple[...] (tuple_types.py), else None
    except AnnotationError as exc:
        src.error(exc.node, f"the result of device function {src.name}: {exc.message}",
                  exc.hint, cls=GpuKernelTypeError)
    if ty is not None:
        return params, ty
    try:
        ty = resolve_annotation(ret, lookup)
    except AnnotationError as exc:
        src.error(exc.node, f"the result of device function {src.name}: {exc.message}",
                  "annotate the result with int, float, bool or None, or tuple[float, int] "
                  "(a type per value) to return several values", cls=GpuKernelTypeError)
    if not isinstance(ty, (str, VecType, StructType)):
        src.error(ret, f"device function {src.name} returns a list; device functions return "
                  "a scalar or None", "write results into a list parameter and return None",
                  cls=GpuKernelTypeError)
    return params, ty


class Declarations(ast.NodeVisitor):
    """Names assigned in the body, with their annotation nodes and for-target uses."""

    def __init__(self, src: KernelSource, params: set):
        self.src = src
        self.params = params
        self.assigned: dict[str, ast.AST] = {}        # name -> first assigning node
        self.annotations: dict[str, list] = {}        # name -> [AnnAssign nodes]
        self.for_targets: dict[str, ast.AST] = {}
        self.imported: dict[str, ast.AST] = {}

    def generic_visit(self, node):
        """Reject, in source order, constructs that have no meaning in a kernel at all."""
        name = type(node).__name__
        if name in unsupported.REJECT_EARLY:
            table = unsupported.STATEMENTS if name in unsupported.STATEMENTS else \
                unsupported.EXPRESSIONS
            what, hint = table[name]
            verb = "are" if what.endswith("s") and not what.startswith("'") else "is"
            self.src.error(node, f"{what} {verb} not supported in kernels", hint)
        super().generic_visit(node)

    def _target(self, t, node):
        if isinstance(t, ast.Name):
            self.assigned.setdefault(t.id, node)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e, node)

    def visit_Assign(self, node):
        for t in node.targets:
            self._target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if isinstance(node.target, ast.Name):
            self.assigned.setdefault(node.target.id, node)
            self.annotations.setdefault(node.target.id, []).append(node)
        self.generic_visit(node)

    def visit_NamedExpr(self, node):
        self._target(node.target, node)
        self.generic_visit(node)

    def visit_For(self, node):
        if isinstance(node.target, ast.Name):
            self.for_targets.setdefault(node.target.id, node.target)
        self.generic_visit(node)

    def _imports(self, node):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.imported[bound] = node

    visit_Import = _imports
    visit_ImportFrom = _imports

    def visit_Global(self, node):
        self.src.error(node, "'global' is not supported in kernels",
                       "kernels read module-level int/float/bool constants directly and write "
                       "results into list parameters")

    def visit_Nonlocal(self, node):
        self.src.error(node, "'nonlocal' is not supported in kernels",
                       "write results into a list parameter")


def collect_declarations(src: KernelSource, params: set) -> Declarations:
    decl = Declarations(src, params)
    for stmt in src.tree.body:
        decl.visit(stmt)
    for name, target in decl.for_targets.items():
        if name in params:
            src.error(target, f"for-loop target '{name}' is a parameter of the kernel",
                      "use a new name for the loop variable, e.g. 'for k in range(...)'")
        if name in decl.annotations:
            src.error(target, f"for-loop target '{name}' is also declared as a local "
                      f"(line {src.abs_line(decl.annotations[name][0].lineno)})",
                      "use a new name for the loop variable, e.g. 'for k in range(...)'")
    return decl


def declared_type(src: KernelSource, name: str, nodes: list, lookup):
    """The single type of an annotated local; differing annotations are an error."""
    first_ty = None
    first = None
    for node in nodes:
        try:
            ty = resolve_annotation(node.annotation, lookup)
        except AnnotationError as exc:
            src.error(exc.node, f"local '{name}': {exc.message}", exc.hint,
                      cls=GpuKernelTypeError)
        if first_ty is None:
            first_ty, first = ty, node
        elif ty != first_ty:
            src.error(node.annotation, f"local '{name}' is declared '{ty}' here but "
                      f"'{first_ty}' on line {src.abs_line(first.lineno)}",
                      "a local keeps one type for the whole kernel; use another name",
                      cls=GpuKernelTypeError)
    return first_ty


__all__ = ["Declarations", "check_func_signature", "check_signature", "collect_declarations", "declared_type"]
