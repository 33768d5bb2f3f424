"""Statements and the driver: a kernel's Python AST -> typed IR (``ir.Kernel``).

One ``visit_<Node>`` method per supported statement (``exprs.py`` has the expressions); any
other statement raises "construct X is not supported in kernels" at its node. Types of
unannotated locals are inferred by repeating the translation until they stop widening
(bool < int < float): each pass that changes anything widens some local, so the passes are
bounded by ``inference_bound``; annotated locals keep their type.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import CThreadsGPUError, GpuKernelError, GpuKernelTypeError
from . import ir, printing, unsupported
from .exprs import BINOPS, ExprMixin
from .functions import DeviceFunction, FuncSpec, FunctionSet, placeholder_lists
from .program import BoundsCheck
from .scope import KernelScope, build_scope
from .source import KernelSource
from .tuple_calls import TupleMixin
from .tuple_types import is_tuple
from .types import LATTICE_HEIGHT, NARROW, ListType, Widths, assignable, is_float, join
from .vectors import (VecReturn, VecValue, kernel_params, result_registers, vector_locals,
                      vector_params)
from .vectypes import VecType
from .rng import RngValue, rng_counters_out, rng_locals, rng_params, rng_registers
from .struct_locals import (StructCallMixin, StructLocalMixin, StructReturn, struct_locals,
                            struct_params, struct_return_of)
from .structtypes import StructType
from .structs import StructValue
from .visit import Visitor


def inference_bound(nlocals: int) -> int:
    """Passes after which the types of ``nlocals`` inferred locals have settled: a pass that
    changes anything widens a local by one step, a local widens at most ``LATTICE_HEIGHT``
    times (unknown -> bool -> int -> float), and one more pass sees no change."""
    return LATTICE_HEIGHT * nlocals + 1


class Progress:
    """Where the compiler is, so that an unexpected failure can name the kernel's line."""

    def __init__(self, lenient: bool = False):
        self.src: KernelSource | None = None
        self.lineno: int | None = None
        # a compilation for widths at which a literal does not fit, of a kernel valid at
        # others: such errors are collected here (the launches at these widths raise the
        # first) instead of raised (``compile_kernel``)
        self.lenient = lenient
        self.deferred: list = []


@dataclass(frozen=True)
class Translation:
    kernel: ir.Kernel
    checks: tuple                # of BoundsCheck, by id
    src: KernelSource
    annotated: tuple = ()        # ((name, annotation type), ...) of the parameters as written


#: ``Translator.returns`` of a kernel (device functions: their result type or None)
KERNEL = "kernel"


def translate(fn, boundscheck: bool = True, progress: Progress | None = None,
              widths: Widths = NARROW) -> Translation:
    """Translate ``fn`` to typed IR, inferring the types of its unannotated locals, and the
    device functions it calls after it (``Kernel.functions``); plain float and int mean
    ``widths``."""
    progress = progress if progress is not None else Progress()
    scope = build_scope(fn, boundscheck, widths=widths)
    functions = FunctionSet()
    tr, body = _infer(scope, progress, functions, KERNEL, 0)
    checks = list(tr.checks)
    specs = translate_functions(tr.calls, functions, boundscheck, progress, checks, widths)
    src = progress.src = scope.src
    uses = set(tr.uses)
    for spec in specs:
        uses |= spec.uses
    if any(lst.shared_size is not None for lst in scope.lists.values()):
        uses.add("shared")
    kernel = _kernel_ir(scope, tr, body, uses, specs)
    return Translation(kernel, tuple(checks), src, scope.annotated)


def check_function(func, boundscheck: bool = True) -> None:
    """Check a device function on its own (its list parameters standing for themselves) and
    the functions it calls; raises located errors (``GpuUnresolvedName`` for a call of a name
    not defined yet)."""
    try:
        _check_function_at(func, boundscheck, NARROW)
    except GpuKernelError as exc:
        # a literal beyond a 32-bit plain float or int: the function may serve 64-bit
        # launches, where it fits (the 32-bit launches of its kernels raise the error)
        if not getattr(exc, "width_dependent", False):
            raise
        try:
            _check_function_at(func, boundscheck, Widths("float64", "int64"))
        except CThreadsGPUError:
            raise exc from None


def _check_function_at(func, boundscheck: bool, widths: Widths) -> None:
    functions = FunctionSet()
    root = functions.request(func, placeholder_lists(func, widths))
    translate_functions([(root, func.src.tree, func.src)], functions, boundscheck,
                        Progress(), [], widths)


def translate_functions(calls, functions: FunctionSet, boundscheck: bool,
                        progress: Progress, checks: list, widths: Widths = NARROW) -> tuple:
    """Translate the specialisations ``calls`` ask for (``(Request, node, caller source)``) and
    those they call, depth first; callees come before their callers in the result. Their
    bounds checks are appended to ``checks`` (ids continue the kernel's)."""
    done: dict = {}
    order: list = []

    def visit(req, node, caller_src, stack):
        if any(r.func is req.func for r in stack):
            names = " -> ".join(r.func.name for r in stack[[r.func for r in stack].index(
                req.func):]) + f" -> {req.func.name}"
            caller_src.error(node, f"recursive call of device function {req.func.name} "
                             f"({names}); GPUs have no call stack, so device functions cannot "
                             "call themselves, directly or through others",
                             "write the recursion as a loop", cls=GpuKernelError)
        if req.ident in done:
            return
        spec = _translate_function(req, boundscheck, progress, functions, checks, widths)
        for callee, call_node, src in req.calls:
            visit(callee, call_node, src, stack + [req])
        uses = set(spec.uses)
        for callee, _, _ in req.calls:
            uses |= done[callee.ident].uses
        spec = FuncSpec(spec.ident, spec.func, spec.params, spec.returns, spec.body,
                        frozenset(uses), spec.src, spec.registers)
        done[req.ident] = spec
        order.append(spec)

    for req, node, src in calls:
        visit(req, node, src, [])
    return tuple(order)


def _translate_function(req, boundscheck, progress, functions, checks, widths) -> FuncSpec:
    func = req.func
    saved = progress.src
    scope = build_scope(func.fn, boundscheck, func=func, list_refs=req.lists, widths=widths)
    progress.src = scope.src
    returns = func.signature.returns
    vector = isinstance(returns, (VecType, StructType))
    if vector:                      # written into private registers, read by the caller
        ty = returns.concrete(widths)
        returns = struct_return_of(req.ident, ty, widths.float) if isinstance(
            ty, StructType) else VecReturn(ty, result_registers(req.ident, ty))
    else:
        returns = widths.concrete(returns) if returns is not None else None
    tr, body = _infer(scope, progress, functions, returns, len(checks))
    device_returns = returns.flat() if is_tuple(returns) else returns   # vectors: components
    progress.src = saved
    checks.extend(tr.checks)
    req.calls[:] = tr.calls
    if returns is not None and not _always_returns(body, ir.Return if vector else
                                                   ir.ReturnValue):
        last = func.src.tree.body[-1]
        func.src.error(last, f"device function {func.name} may reach its end without "
                       f"returning a {returns} (Python would return None)",
                       f"end every path of the function with 'return <{returns} value>'",
                       cls=GpuKernelTypeError)
    uses = set(tr.uses)
    named = tuple((n, scope.scalar[n].ident, t) for n, t, _ in scope.params
                  if not isinstance(t, ListType))
    params = rng_params(vector_params(scope, tr, struct_params(scope, tr, named)))
    counters = rng_registers(req.ident, named)      # Random parameters (rng.py)
    body = rng_counters_out(body, counters, scope.src.loc(scope.src.tree))
    kernel = _kernel_ir(scope, tr, body, uses, ())
    registers = (returns.typed if isinstance(returns, StructReturn) else tuple(
        (r, returns.ty.elem) for r in returns.registers)) if vector else ()
    registers += tuple((r, "uint32") for r, _ in counters)
    return FuncSpec(req.ident, func, params, None if vector else device_returns, kernel,
                    frozenset(uses), scope.src, registers)


def _always_returns(stmts, kind=ir.ReturnValue) -> bool:
    """True when every path through ``stmts`` ends in ``return value`` (``kind``: the
    statement it ends with: a vector result's is a plain return after its registers)."""
    for s in stmts:
        if isinstance(s, kind):
            return True
        if isinstance(s, ir.If) and s.orelse and _always_returns(s.body, kind) and \
                _always_returns(s.orelse, kind):
            return True
    return False


def _infer(scope: KernelScope, progress: Progress, functions: FunctionSet, returns,
           check_base: int):
    """Translation passes until the inferred local types settle: (last Translator, body)."""
    src = progress.src = scope.src
    types = dict(scope.fixed)
    for name in scope.decl.for_targets:
        types.setdefault(name, scope.widths.int)
    bound = inference_bound(sum(1 for name in scope.scalar if name not in types))
    for _ in range(bound):
        tr = Translator(scope, types, progress, functions, returns, check_base)
        try:
            body = tr.block(src.tree.body, top=True)
        except (SyntaxError, TypeError):
            if tr.widened:
                continue
            raise
        if not tr.widened:
            progress.deferred.extend(tr.deferred)
            return tr, body
    still = ", ".join(sorted(tr.widened))
    src.error(src.tree, f"the types of the locals did not settle after {bound} passes of "
              f"type inference (still widening: {still})",
              "annotate these locals (v: float = ...) and report the kernel to the "
              "cthreads developers", cls=GpuKernelError)


def _kernel_ir(scope, tr, body, uses, specs) -> ir.Kernel:
    locals_ = tuple(ir.Local(name, local.ident, tr.local_type(name), local.param)
                    for name, local in scope.scalar.items()
                    if tr.vec_type_of(name) is None and tr.struct_local(name) is None)
    locals_ = rng_locals(scope, tr, locals_ + vector_locals(scope, tr) + struct_locals(scope, tr))
    params, idents = kernel_params(scope, tr)       # a vec3 parameter: one per component
    return ir.Kernel(scope.src.name, params, idents,
                     locals_ + tuple(tr.hidden), tuple(scope.lists.values()), tuple(body),
                     frozenset(uses), tuple(specs))


class Translator(TupleMixin, StructLocalMixin, StructCallMixin, ExprMixin, Visitor):
    """One inference pass: statements here, expressions in ``ExprMixin``. The scope is shared
    and fixed; ``types`` (inferred local types) is shared between passes and only widens."""

    def __init__(self, scope: KernelScope, types: dict, progress: Progress,
                 functions: FunctionSet | None = None, returns=KERNEL, check_base: int = 0):
        self.scope = scope
        self.src = scope.src
        self.types = types
        self.progress = progress
        self.functions = functions if functions is not None else FunctionSet()
        self.returns = returns               # KERNEL, or a device function's result type
        self.check_base = check_base         # ids of this body's checks start here
        self.calls: list = []                # (functions.Request, call node, self.src)
        self.widened: set[str] = set()       # locals whose type this pass widened
        self.deferred: list = []             # errors of the widths (Progress.lenient)
        self.checks: list[BoundsCheck] = []
        self.uses: set[str] = set()
        self.hidden: list[ir.Local] = []
        self.loop_targets: list[str] = []
        self.pending: list = []     # statements hoisted before the current one (vectors.py)
        self.lazy = 0               # > 0 inside operands Python may not evaluate

    def local_type(self, name):
        ty = self.types.get(name)
        return ty if ty is not None else self.scope.widths.int

    def new_check(self, node, lst: ir.ListRef, dim: int = 0):
        if not self.scope.boundscheck:
            return None
        cid = self.check_base + len(self.checks)
        loc = self.src.loc(node)
        vec = lst.vec if dim == lst.ndim - 1 else 0       # list[vec3]: the flat index
        if self.returns is KERNEL:
            self.checks.append(BoundsCheck(cid, loc.lineno, self.src.source_of(loc.lineno),
                                           lst.pyname, dim=dim, ndim=lst.ndim, vec=vec))
        else:
            target = node
            while isinstance(target, ast.Subscript):
                target = target.value
            name = target.id if isinstance(target, ast.Name) else lst.pyname
            self.checks.append(BoundsCheck(cid, loc.lineno, self.src.source_of(loc.lineno),
                                           name, self.src.filename, self.src.name, dim,
                                           lst.ndim, vec))
        return cid

    def hidden_local(self, ty):
        ident = f"ct_s{len(self.hidden)}"
        self.hidden.append(ir.Local(ident, ident, ty))
        return ident

    # -- blocks and statements -------------------------------------------------------------
    def block(self, stmts, top=False) -> list:
        out = []
        for k, stmt in enumerate(stmts):
            if top and k == 0 and isinstance(stmt, ast.Expr) and isinstance(
                    stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                continue            # docstring
            self.progress.lineno = self.src.abs_line(stmt.lineno)
            outer, self.pending = self.pending, []
            result = self.stmt(stmt)
            out.extend(self.pending)              # hoisted calls (a device function's vector)
            self.pending = outer
            if result is None:
                continue
            out.extend(result if isinstance(result, list) else [result])
        return out

    def stmt(self, node):
        if type(node).__name__ not in self._visitors:
            what, hint = unsupported.STATEMENTS.get(type(node).__name__, (
                f"construct '{type(node).__name__}'", None))
            self.src.error(node, f"{what} is not supported in kernels", hint)
        return self.visit(node)

    def visit_Pass(self, node):
        return None

    def visit_Import(self, node):
        return None

    visit_ImportFrom = visit_Import

    def visit_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant):
            return None
        if isinstance(v, ast.Call):
            obj = self.scope.resolve(v.func)
            callee = self.scope.callee(obj)
            if isinstance(obj, DeviceFunction):
                return ir.ExprStmt(self.src.loc(node), self.device_call(obj, v, statement=True))
            if callee is not None and callee.kind == "barrier":
                if self.returns is not KERNEL:
                    self.src.error(v, "barriers belong in kernels, not in device functions",
                                   "call __sync_threads() in the kernel, between the calls "
                                   "of the device function", cls=GpuKernelTypeError)
                if v.args or v.keywords:
                    self.src.error(v, "the barrier takes no arguments", "write __sync_threads()",
                                   cls=GpuKernelTypeError)
                self.uses.add("barrier")
                return ir.Barrier(self.src.loc(node))
            if obj is print or obj is breakpoint:          # codegen/printing.py
                return printing.statement(self, obj, v)
        return ir.ExprStmt(self.src.loc(node), self.not_vector(self.expr(v), v))

    def assign_scalar(self, target: ast.Name, value: ir.Expr, node) -> ir.Stmt:
        name = target.id
        if name in self.scope.lists:
            self.src.error(target, f"list '{name}' cannot be reassigned",
                           f"write elements instead: {name}[i] = value", cls=GpuKernelTypeError)
        if isinstance(value, StructValue) or self.struct_target(name):     # struct_locals.py
            return self.struct_assign(target, value, node)
        if isinstance(value, VecValue) or self.vec_is_scalar_target(name):
            return self.vec_assign(target, value, node)
        if isinstance(value, RngValue) or self.rng_type_of(name) is not None:
            return self.rng_assign(target, value, node)
        local = self.scope.scalar[name]
        declared = self.scope.fixed.get(name)
        if name in self.scope.decl.for_targets and declared is None:
            declared = self.scope.widths.int
        if declared is not None:
            if not assignable(value.ty, declared):
                kind = "parameter" if local.param else (
                    "loop variable" if name in self.scope.decl.for_targets else "local")
                self.src.error(node, f"cannot assign a {value.ty} value to {kind} '{name}' "
                               f"of type {declared}",
                               f"convert explicitly, e.g. {declared}(...), or use a new local "
                               f"of type {value.ty}", cls=GpuKernelTypeError)
            ty = declared
        else:
            old = self.types.get(name)
            ty = join(old, value.ty)
            if ty != old:
                self.types[name] = ty
                self.widened.add(name)
        return ir.Assign(self.src.loc(node), local.ident, self.conv(value, ty))

    def store(self, target: ast.Subscript, value: ir.Expr, node, aug_op=None) -> ir.Stmt:
        if self.shape_of(target) is not None:
            self.src.error(target, "a list's shape cannot be assigned",
                           "lists keep their shape on the device", cls=GpuKernelTypeError)
        vector = self.vec_store(target, value, node, aug_op)
        if vector is not None:
            return vector
        value = self.not_vector(value, getattr(node, "value", node))
        lst, indexes, checks = self.element(target, "written")
        index, check = indexes[0], checks[0]
        more, more_checks = tuple(indexes[1:]), tuple(checks[1:])
        loc = self.src.loc(node)
        if aug_op is not None:
            old = ir.Load(lst.elem, loc, lst, index, check, more, more_checks)
            result = self.binary(aug_op, old, value, node)
            self._check_elem(lst, result.ty, getattr(node, "value", node))
            return ir.Store(loc, lst, index, result.right, check, result.op, result.left.ty,
                            more, more_checks)
        self._check_elem(lst, value.ty, getattr(node, "value", node))
        return ir.Store(loc, lst, index, self.conv(value, lst.elem), check, more=more,
                        more_checks=more_checks)

    def _check_elem(self, lst, ty, node):
        if not assignable(ty, lst.elem):
            self.src.error(node, f"cannot store a {ty} value into '{lst.pyname}', a "
                           f"list[{lst.elem}]", f"convert explicitly, e.g. {lst.elem}(...)",
                           cls=GpuKernelTypeError)

    def visit_Assign(self, node):
        targets = node.targets
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple):
            return self.tuple_assign(targets[0], node)
        value = self.expr(node.value)
        out = []
        if len(targets) > 1 and isinstance(value, VecValue):
            self.src.error(node, "a vector is assigned to one target at a time",
                           "write a = vec3(...) and then b = a", cls=GpuKernelTypeError)
        if len(targets) > 1 and not isinstance(value, (ir.Const, ir.Var)):
            tmp = self.hidden_local(value.ty)
            out.append(ir.Assign(self.src.loc(node), tmp, value))
            value = ir.Var(value.ty, value.loc, tmp)
        for t in targets:
            stmt = self.assign_to(t, value, node)
            out.extend(stmt if isinstance(stmt, list) else [stmt])   # a vector: one a component
        return out

    def assign_to(self, t, value, node):
        if isinstance(t, ast.Name):
            return self.assign_scalar(t, value, node)
        if isinstance(t, ast.Subscript):
            return self.store(t, value, node)
        if isinstance(t, ast.Attribute):
            vector = self.vec_store(t, value, node)
            if vector is not None:
                return vector
            self.src.error(t, "attributes cannot be assigned in kernels",
                           "assign to locals or list elements")
        self.src.error(t, "this assignment target is not supported in kernels",
                       "assign to a local name or a list element")

    def tuple_assign(self, target, node):
        unpacked = self.unpack_call(target, node)        # a, b = f(x): tuple_calls.py
        if unpacked is not None:
            return unpacked
        if not isinstance(node.value, ast.Tuple) or len(node.value.elts) != len(target.elts):
            self.src.error(node, "tuple assignment needs a tuple of the same length on the "
                           "right ('a, b = b, a')", "assign each value separately")
        out, temps = [], []
        for elt in node.value.elts:
            v = self.not_vector(self.expr(elt), elt)
            tmp = self.hidden_local(v.ty)
            out.append(ir.Assign(self.src.loc(node), tmp, v))
            temps.append(ir.Var(v.ty, v.loc, tmp))
        for t, v in zip(target.elts, temps):
            out.append(self.assign_to(t, v, node))
        return out

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            self.src.error(node.target, "only plain names can be declared with an annotation",
                           "write 'v: float = ...' for a local, or 'x[i] = ...' for a list "
                           "element")
        name = node.target.id
        if name in self.scope.lists and self.scope.lists[name].shared_size is not None:
            if node not in self.scope.shared_nodes.values():
                self.src.error(node, "shared arrays are declared at the top level of the kernel "
                               "body, outside loops and branches",
                               "move the shared(...) declaration to the start of the kernel")
            return None
        if node.value is None:
            return None
        return self.assign_scalar(node.target, self.expr(node.value), node)

    def visit_AugAssign(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            self.src.error(node, "the '@=' operator is not supported in kernels")
        value = self.expr(node.value)
        t = node.target
        if isinstance(t, ast.Name):
            if t.id in self.scope.lists:
                self.src.error(t, f"list '{t.id}' cannot be reassigned",
                               f"update elements: {t.id}[i] += value", cls=GpuKernelTypeError)
            current = self.expr(t)
            return self.assign_scalar(t, self.binary(op, current, value, node), node)
        if isinstance(t, ast.Subscript):
            return self.store(t, value, node, aug_op=op)
        if isinstance(t, ast.Attribute):
            vector = self.vec_store(t, value, node, aug_op=op)
            if vector is not None:
                return vector
        return self.assign_to(t, value, node)

    def visit_If(self, node):
        test = self.truthy(self.expr(node.test))
        return ir.If(self.src.loc(node), test, tuple(self.block(node.body)),
                     tuple(self.block(node.orelse)))

    def visit_While(self, node):
        if node.orelse:
            self.src.error(node.orelse[0], "'while ... else' is not supported in kernels",
                           "use a flag local set before 'break' and test it after the loop")
        test = self.truthy(self.lazy_expr(node.test))
        return ir.While(self.src.loc(node), test, tuple(self.block(node.body)))

    def visit_For(self, node):
        if node.orelse:
            self.src.error(node.orelse[0], "'for ... else' is not supported in kernels",
                           "use a flag local set before 'break' and test it after the loop")
        if not isinstance(node.target, ast.Name):
            self.src.error(node.target, "the for-loop target must be a single name",
                           "write 'for k in range(...)'")
        name = node.target.id
        it = node.iter
        obj = self.scope.resolve(it.func) if isinstance(it, ast.Call) else None
        if obj is not range:
            if isinstance(it, ast.Name) and it.id in self.scope.lists:
                self.src.error(it, f"iterating over a list ('for {name} in {it.id}') is not "
                               f"supported in kernels",
                               f"write 'for k in range(len({it.id})):' and read {it.id}[k]")
            self.src.error(it, "kernels can only loop over range(...)",
                           "write 'for k in range(stop)', 'range(start, stop)' or "
                           "'range(start, stop, step)'")
        if it.keywords or not 1 <= len(it.args) <= 3:
            self.src.error(it, "range() takes 1 to 3 positional arguments",
                           cls=GpuKernelTypeError)
        if name in self.loop_targets:
            self.src.error(node.target, f"'{name}' is already the target of an enclosing for "
                           f"loop", "use a different name for the inner loop variable")
        loop_ty = self.scope.fixed.get(name) or self.scope.widths.int
        if loop_ty not in ("int", "int64"):
            self.src.error(node.target, f"the loop variable '{name}' is declared {loop_ty}; "
                           "range() loops count with int32 or int64 values",
                           "use a new int local for the loop variable")
        args = []
        for a in it.args:
            e = self.expr(a)
            if is_float(e.ty):
                self.src.error(a, "range() arguments must be int, got a float expression",
                               "convert with int(...)", cls=GpuKernelTypeError)
            self.refuse_complex(a, "range", (e,))
            if e.ty in ("int64", "uint32") and loop_ty == "int" and \
                    not isinstance(e, ir.Const):
                self.src.error(a, f"range() argument of type {e.ty} in a loop whose variable "
                               f"'{name}' is an int32 (plain int in this launch): the bounds "
                               "would be cut to 32 bits",
                               "convert the argument with int32(...) where it fits, or count "
                               "with an int32 loop and compute the int64 value from it "
                               "(v: int64 = lo + k * step)", cls=GpuKernelTypeError)
            args.append(self.conv(e, loop_ty))
        loc = self.src.loc(it)
        if len(args) == 1:
            args = [ir.Const(loop_ty, loc, 0), args[0]]
        if len(args) == 2:
            args.append(ir.Const(loop_ty, loc, 1))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            self.src.error(it.args[2], "range() step must not be zero", cls=GpuKernelTypeError)
        self.types.setdefault(name, loop_ty)
        self.loop_targets.append(name)
        try:
            body = self.block(node.body)
        finally:
            self.loop_targets.pop()
        return ir.ForRange(self.src.loc(node), self.scope.scalar[name].ident, args[0], args[1],
                           args[2], tuple(body))

    def visit_Break(self, node):
        return ir.Break(self.src.loc(node))

    def visit_Continue(self, node):
        return ir.Continue(self.src.loc(node))

    def visit_Return(self, node):
        bare = node.value is None or (isinstance(node.value, ast.Constant)
                                      and node.value.value is None)
        if self.returns is KERNEL:
            if not bare:
                self.src.error(node.value, "kernels cannot return a value",
                               "store the result into a list parameter and write a bare "
                               "'return'")
            return ir.Return(self.src.loc(node))
        name = self.src.name
        if self.returns is None:
            if not bare:
                self.src.error(node.value, f"device function {name} is annotated '-> None' "
                               "but returns a value",
                               "annotate the result type (-> float, int or bool) or write a "
                               "bare 'return'", cls=GpuKernelTypeError)
            return ir.Return(self.src.loc(node))
        if not bare and is_tuple(self.returns):
            return self.tuple_return(node)
        if isinstance(node.value, ast.Tuple):
            self.scalar_tuple_return(node)
        if bare:
            self.src.error(node, f"device function {name} returns a {self.returns}, but this "
                           "'return' has no value", f"write 'return <{self.returns} value>'",
                           cls=GpuKernelTypeError)
        value = self.expr(node.value)
        if isinstance(self.returns, StructReturn):
            return self.struct_return(value, node)
        if isinstance(self.returns, VecReturn):
            return self.vec_return(value, node)
        if not assignable(value.ty, self.returns):
            self.src.error(node.value, f"device function {name} returns a {self.returns}, "
                           f"not a {value.ty}", f"convert explicitly, e.g. "
                           f"{self.returns}(...), or change the result annotation",
                           cls=GpuKernelTypeError)
        return ir.ReturnValue(self.src.loc(node), self.conv(value, self.returns))
