"""Statements and the driver: a kernel's Python AST -> typed IR (``ir.Kernel``).

One ``st_<Node>`` method per supported statement; anything else raises "construct X is not
supported in kernels" at its node. Types of unannotated locals are inferred by repeating the
translation until they stop widening (bool < int < float); annotated locals keep their type.
"""

from __future__ import annotations

import ast
import importlib

from ..errors import GpuKernelTypeError
from .program import BoundsCheck
from . import ir
from .builtins import function_table, wgsl_ident
from .checks import check_signature, collect_declarations, declared_type
from .exprs import BINOPS, ExprMixin
from .source import KernelSource
from .types import MISSING, ListType, builtin_lookup, join, resolve_annotation

_ALLOWED_IMPORTS = ("math", "cthreads", "cthreads.gpu", "cthreads.sync", "cthreads.indexes",
                    "cthreads.intrinsics")

_UNSUPPORTED_STMT = {
    "Try": ("'try'", "kernels cannot catch exceptions; test the condition with 'if'"),
    "TryStar": ("'try'", "kernels cannot catch exceptions; test the condition with 'if'"),
    "With": ("'with'", "kernels have no context managers; remove the 'with'"),
    "AsyncWith": ("'async with'", "kernels are not coroutines"),
    "AsyncFor": ("'async for'", "use 'for k in range(...)'"),
    "ClassDef": ("class definitions", "define classes outside the kernel"),
    "FunctionDef": ("nested 'def'", "define helpers outside and inline their code; kernels "
                    "cannot call Python functions"),
    "AsyncFunctionDef": ("nested 'async def'", "kernels cannot call Python functions"),
    "Assert": ("'assert'", "kernels cannot raise; write a flag into a list and check it after "
               "join()"),
    "Raise": ("'raise'", "kernels cannot raise; write a flag into a list and check it after "
              "join()"),
    "Delete": ("'del'", "kernel locals and lists cannot be deleted"),
    "Match": ("'match'", "use if/elif/else"),
}


class Frontend(ExprMixin):
    def __init__(self, fn, boundscheck: bool = True):
        self.src = KernelSource(fn)
        self.boundscheck = boundscheck
        code = fn.__code__
        closure = {}
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
        self.imports = {}
        self.lookup = builtin_lookup(fn.__globals__, closure)
        self.ftable = function_table()

    # -- names -----------------------------------------------------------------------------
    def resolve(self, node):
        """The Python object an expression names (globals/closure/imports), or None."""
        if isinstance(node, ast.Name):
            if node.id in self.scalar or node.id in self.lists:
                return None
            if node.id in self.imports:
                return self.imports[node.id]
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is None or isinstance(base, MISSING):
                return base
            return getattr(base, node.attr, MISSING())
        return None

    def local_type(self, name):
        ty = self.types.get(name)
        return ty if ty is not None else "int"

    def new_check(self, node, lst: ir.ListRef):
        if not self.boundscheck:
            return None
        cid = len(self.checks)
        loc = self.src.loc(node)
        self.checks.append(BoundsCheck(cid, loc.lineno, self.src.source_of(loc.lineno),
                                       lst.pyname))
        return cid

    def hidden_local(self, ty):
        ident = f"ct_s{len(self.hidden)}"
        self.hidden.append(ir.Local(ident, ident, ty))
        return ident

    # -- driver ----------------------------------------------------------------------------
    def translate(self) -> ir.Kernel:
        src = self.src
        self.scalar, self.lists = {}, {}
        params = check_signature(src, self.lookup)
        self.params = params
        decl = collect_declarations(src, {p[0] for p in params})
        self.decl = decl
        for name, node in decl.imported.items():
            self.imports[name] = None
        self._bind_imports()
        atomic = self._atomic_lists(params)
        fixed = {}
        for k, (name, ty, _) in enumerate(params):
            if isinstance(ty, ListType):
                self.lists[name] = ir.ListRef(name, wgsl_ident(name), ty.elem, None,
                                              name in atomic)
            else:
                fixed[name] = ty
                self.scalar[name] = ir.Local(name, wgsl_ident(name), ty, param=True)
        self.shared_nodes = self._shared_decls(atomic)
        for name, nodes in decl.annotations.items():
            if name in self.lists:
                lst = self.lists[name]
                if lst.shared_size is not None and len(nodes) == 1:
                    continue
                what = "list parameter" if lst.shared_size is None else "shared array"
                src.error(nodes[-1], f"'{name}' is already a {what} of the kernel",
                          "use a new name for the local", cls=GpuKernelTypeError)
            if name in fixed:
                src.error(nodes[0], f"'{name}' is already a parameter of the kernel",
                          "parameters keep their annotated type; use a new name for the local",
                          cls=GpuKernelTypeError)
            ty = declared_type(src, name, nodes, self.lookup)
            if isinstance(ty, ListType) and isinstance(nodes[0].value, ast.Call) and \
                    self.ftable.get(id(self.resolve(nodes[0].value.func))) == ("shared",):
                src.error(nodes[0], "shared arrays are declared at the top level of the kernel "
                          "body, outside loops and branches",
                          "move the shared(...) declaration to the start of the kernel")
            if isinstance(ty, ListType):
                src.error(nodes[0], f"list local '{name}' must be declared with shared(size)",
                          f"write '{name}: {ty} = shared(64)' at the top of the kernel, or pass "
                          f"the list as a parameter", cls=GpuKernelTypeError)
            fixed[name] = ty
        for name in list(decl.assigned) + list(decl.for_targets):
            if name in self.lists and name not in self.shared_nodes:
                src.error(decl.assigned.get(name, decl.for_targets.get(name)),
                          f"list parameter '{name}' cannot be reassigned",
                          f"write elements instead: {name}[i] = value", cls=GpuKernelTypeError)
            if name not in self.scalar and name not in self.lists:
                self.scalar[name] = ir.Local(name, wgsl_ident(name), fixed.get(name))
        self.fixed = fixed
        self.types = dict(fixed)
        for name in decl.for_targets:
            self.types.setdefault(name, "int")
        for _ in range(6):
            self.changed = False
            self.checks, self.uses, self.hidden, self.loop_targets = [], set(), [], []
            try:
                body = self.block(src.tree.body, top=True)
            except (SyntaxError, TypeError):
                if self.changed:
                    continue
                raise
            if not self.changed:
                break
        locals_ = []
        for name, local in self.scalar.items():
            locals_.append(ir.Local(name, local.ident, self.local_type(name), local.param))
        if any(lst.shared_size is not None for lst in self.lists.values()):
            self.uses.add("shared")
        return ir.Kernel(src.name, tuple((n, t) for n, t, _ in params),
                         tuple(wgsl_ident(n) for n, _, _ in params),
                         tuple(locals_) + tuple(self.hidden), tuple(self.lists.values()),
                         tuple(body), frozenset(self.uses))

    def _bind_imports(self):
        for stmt in ast.walk(self.src.tree):
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name not in _ALLOWED_IMPORTS:
                        self._bad_import(stmt, alias.name)
                    mod = importlib.import_module(alias.name)
                    if alias.asname:
                        self.imports[alias.asname] = mod
                    else:
                        self.imports[alias.name.split(".")[0]] = importlib.import_module(
                            alias.name.split(".")[0])
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.level or stmt.module not in _ALLOWED_IMPORTS:
                    self._bad_import(stmt, stmt.module or ".")
                mod = importlib.import_module(stmt.module)
                for alias in stmt.names:
                    obj = getattr(mod, alias.name, MISSING())
                    if alias.name == "*" or isinstance(obj, MISSING):
                        self.src.error(stmt, f"cannot import '{alias.name}' from {stmt.module} "
                                       f"in a kernel", "import the names you use explicitly")
                    self.imports[alias.asname or alias.name] = obj

    def _bad_import(self, node, name):
        self.src.error(node, f"importing '{name}' inside a kernel is not supported",
                       "kernels may import math and cthreads names; import other modules at "
                       "module level (kernels cannot use them anyway)")

    def _atomic_lists(self, params) -> set:
        self.scalar, self.lists = {p[0]: None for p in params if not isinstance(p[1], ListType)}, \
            {p[0]: None for p in params if isinstance(p[1], ListType)}
        names = set()
        for node in ast.walk(self.src.tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
                obj = self.resolve(node.func) if not (
                    isinstance(node.func, ast.Name) and node.func.id in self.decl.assigned) \
                    else None
                kind = self.ftable.get(id(obj)) if obj is not None else None
                if kind is not None and kind[0] == "atomic":
                    names.add(node.args[0].id)
        self.scalar, self.lists = {}, {}
        return names

    def _shared_decls(self, atomic) -> dict:
        found = {}
        for stmt in self.src.tree.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.value, ast.Call)):
                continue
            obj = self.resolve(stmt.value.func)
            if obj is None or self.ftable.get(id(obj)) != ("shared",):
                continue
            if not isinstance(stmt.target, ast.Name):
                self.src.error(stmt.target, "shared(size) must be assigned to a plain name")
            name = stmt.target.id
            try:
                ty = resolve_annotation(stmt.annotation, self.lookup)
            except Exception:
                ty = None
            if not isinstance(ty, ListType):
                self.src.error(stmt.annotation, "a shared array is annotated list[float], "
                               "list[int] or list[bool]",
                               f"write '{name}: list[float] = shared(64)'",
                               cls=GpuKernelTypeError)
            if name in found or name in self.lists or len(self.decl.annotations[name]) > 1:
                self.src.error(stmt, f"'{name}' is declared more than once",
                               "declare each shared array once, with a new name")
            call = stmt.value
            if call.keywords or len(call.args) != 1:
                self.src.error(call, "shared() takes exactly one argument, the size",
                               "write shared(64)", cls=GpuKernelTypeError)
            size = self._const_size(call.args[0])
            self.lists[name] = ir.ListRef(name, wgsl_ident(name), ty.elem, size, name in atomic)
            found[name] = stmt
        return found

    def _const_size(self, node) -> int:
        value = None
        if isinstance(node, ast.Constant):
            value = node.value
        elif isinstance(node, (ast.Name, ast.Attribute)):
            if isinstance(node, ast.Name) and node.id in self.decl.assigned:
                value = None
            else:
                value = self.resolve(node)
        if type(value) is not int or value < 1 or value > 2**24:
            self.src.error(node, "the size of a shared array must be a positive int literal or "
                           "module-level int constant",
                           "write shared(64) or shared(TILE) with TILE = 64 at module level")
        return value

    # -- blocks and statements -------------------------------------------------------------
    def block(self, stmts, top=False) -> list:
        out = []
        for k, stmt in enumerate(stmts):
            if top and k == 0 and isinstance(stmt, ast.Expr) and isinstance(
                    stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                continue            # docstring
            method = getattr(self, "st_" + type(stmt).__name__, None)
            if method is None:
                what, hint = _UNSUPPORTED_STMT.get(type(stmt).__name__, (
                    f"construct '{type(stmt).__name__}'", None))
                self.src.error(stmt, f"{what} is not supported in kernels", hint)
            result = method(stmt) if not isinstance(stmt, ast.AnnAssign) else method(stmt, top)
            if result is None:
                continue
            out.extend(result if isinstance(result, list) else [result])
        return out

    def st_Pass(self, node):
        return None

    def st_Import(self, node):
        return None

    st_ImportFrom = st_Import

    def st_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant):
            return None
        if isinstance(v, ast.Call):
            obj = self.resolve(v.func)
            kind = self.ftable.get(id(obj)) if obj is not None else None
            if kind == ("barrier",):
                if v.args or v.keywords:
                    self.src.error(v, "the barrier takes no arguments", "write __sync_threads()",
                                   cls=GpuKernelTypeError)
                self.uses.add("barrier")
                return ir.Barrier(self.src.loc(node))
        return ir.ExprStmt(self.src.loc(node), self.expr(v))

    def assign_scalar(self, target: ast.Name, value: ir.Expr, node) -> ir.Stmt:
        name = target.id
        if name in self.lists:
            self.src.error(target, f"list '{name}' cannot be reassigned",
                           f"write elements instead: {name}[i] = value", cls=GpuKernelTypeError)
        local = self.scalar[name]
        declared = self.fixed.get(name)
        if name in self.decl.for_targets and declared is None:
            declared = "int"
        if declared is not None:
            ok = value.ty == declared or (declared == "float" and value.ty in ("int", "bool")) \
                or (declared == "int" and value.ty == "bool")
            if not ok:
                kind = "parameter" if local.param else (
                    "loop variable" if name in self.decl.for_targets else "local")
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
                self.changed = True
        return ir.Assign(self.src.loc(node), local.ident, self.conv(value, ty))

    def store(self, target: ast.Subscript, value: ir.Expr, node, aug_op=None) -> ir.Stmt:
        lst = self.list_of(target.value, "written")
        index = self.index_expr(target.slice, lst)
        loc = self.src.loc(node)
        check = self.new_check(target, lst)
        if aug_op is not None:
            result = self.binary(aug_op, ir.Load(lst.elem, loc, lst, index, check), value, node)
            self._check_elem(lst, result.ty, getattr(node, "value", node))
            return ir.Store(loc, lst, index, result.right, check, result.op, result.left.ty)
        self._check_elem(lst, value.ty, getattr(node, "value", node))
        return ir.Store(loc, lst, index, self.conv(value, lst.elem), check)

    def _check_elem(self, lst, ty, node):
        ok = ty == lst.elem or (lst.elem == "float" and ty in ("int", "bool")) or (
            lst.elem == "int" and ty == "bool")
        if not ok:
            self.src.error(node, f"cannot store a {ty} value into '{lst.pyname}', a "
                           f"list[{lst.elem}]", f"convert explicitly, e.g. {lst.elem}(...)",
                           cls=GpuKernelTypeError)

    def st_Assign(self, node):
        targets = node.targets
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple):
            return self.tuple_assign(targets[0], node)
        value = self.expr(node.value)
        out = []
        if len(targets) > 1 and not isinstance(value, (ir.Const, ir.Var)):
            tmp = self.hidden_local(value.ty)
            out.append(ir.Assign(self.src.loc(node), tmp, value))
            value = ir.Var(value.ty, value.loc, tmp)
        for t in targets:
            out.append(self.assign_to(t, value, node))
        return out

    def assign_to(self, t, value, node):
        if isinstance(t, ast.Name):
            return self.assign_scalar(t, value, node)
        if isinstance(t, ast.Subscript):
            return self.store(t, value, node)
        if isinstance(t, ast.Attribute):
            self.src.error(t, "attributes cannot be assigned in kernels",
                           "assign to locals or list elements")
        self.src.error(t, f"this assignment target is not supported in kernels",
                       "assign to a local name or a list element")

    def tuple_assign(self, target, node):
        if not isinstance(node.value, ast.Tuple) or len(node.value.elts) != len(target.elts):
            self.src.error(node, "tuple assignment needs a tuple of the same length on the "
                           "right ('a, b = b, a')", "assign each value separately")
        out, temps = [], []
        for elt in node.value.elts:
            v = self.expr(elt)
            tmp = self.hidden_local(v.ty)
            out.append(ir.Assign(self.src.loc(node), tmp, v))
            temps.append(ir.Var(v.ty, v.loc, tmp))
        for t, v in zip(target.elts, temps):
            out.append(self.assign_to(t, v, node))
        return out

    def st_AnnAssign(self, node, top=False):
        if not isinstance(node.target, ast.Name):
            self.src.error(node.target, "only plain names can be declared with an annotation",
                           "write 'v: float = ...' for a local, or 'x[i] = ...' for a list "
                           "element")
        name = node.target.id
        if name in self.lists and self.lists[name].shared_size is not None:
            if not top or node not in self.shared_nodes.values():
                self.src.error(node, "shared arrays are declared at the top level of the kernel "
                               "body, outside loops and branches",
                               "move the shared(...) declaration to the start of the kernel")
            return None
        if node.value is None:
            return None
        return self.assign_scalar(node.target, self.expr(node.value), node)

    def st_AugAssign(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            self.src.error(node, "the '@=' operator is not supported in kernels")
        value = self.expr(node.value)
        t = node.target
        if isinstance(t, ast.Name):
            if t.id in self.lists:
                self.src.error(t, f"list '{t.id}' cannot be reassigned",
                               f"update elements: {t.id}[i] += value", cls=GpuKernelTypeError)
            current = self.expr(t)
            return self.assign_scalar(t, self.binary(op, current, value, node), node)
        if isinstance(t, ast.Subscript):
            return self.store(t, value, node, aug_op=op)
        return self.assign_to(t, value, node)

    def st_If(self, node):
        test = self.truthy(self.expr(node.test))
        return ir.If(self.src.loc(node), test, tuple(self.block(node.body)),
                     tuple(self.block(node.orelse)))

    def st_While(self, node):
        if node.orelse:
            self.src.error(node.orelse[0], "'while ... else' is not supported in kernels",
                           "use a flag local set before 'break' and test it after the loop")
        test = self.truthy(self.expr(node.test))
        return ir.While(self.src.loc(node), test, tuple(self.block(node.body)))

    def st_For(self, node):
        if node.orelse:
            self.src.error(node.orelse[0], "'for ... else' is not supported in kernels",
                           "use a flag local set before 'break' and test it after the loop")
        if not isinstance(node.target, ast.Name):
            self.src.error(node.target, "the for-loop target must be a single name",
                           "write 'for k in range(...)'")
        name = node.target.id
        it = node.iter
        obj = self.resolve(it.func) if isinstance(it, ast.Call) else None
        if obj is not range:
            if isinstance(it, ast.Name) and it.id in self.lists:
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
        args = []
        for a in it.args:
            e = self.expr(a)
            if e.ty == "float":
                self.src.error(a, "range() arguments must be int, got a float expression",
                               "convert with int(...)", cls=GpuKernelTypeError)
            args.append(self.conv(e, "int"))
        loc = self.src.loc(it)
        if len(args) == 1:
            args = [ir.Const("int", loc, 0), args[0]]
        if len(args) == 2:
            args.append(ir.Const("int", loc, 1))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            self.src.error(it.args[2], "range() step must not be zero", cls=GpuKernelTypeError)
        self.types.setdefault(name, "int")
        self.loop_targets.append(name)
        try:
            body = self.block(node.body)
        finally:
            self.loop_targets.pop()
        return ir.ForRange(self.src.loc(node), self.scalar[name].ident, args[0], args[1],
                           args[2], tuple(body))

    def st_Break(self, node):
        return ir.Break(self.src.loc(node))

    def st_Continue(self, node):
        return ir.Continue(self.src.loc(node))

    def st_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant)
                                           and node.value.value is None):
            self.src.error(node.value, "kernels cannot return a value",
                           "store the result into a list parameter and write a bare 'return'")
        return ir.Return(self.src.loc(node))

    # -- atomics ---------------------------------------------------------------------------
    def atomic_call(self, op, node, text):
        want = 4 if op == "compare_exchange" else 3
        self.nargs(node, text, (want,))
        lst = self.list_of(node.args[0], "used atomically")
        if lst.elem == "bool" or (lst.elem == "float" and op != "add"):
            self.src.error(node, f"{text}() on a list[{lst.elem}] is not supported",
                           "atomics work on list[int] (all operations) and list[float] "
                           "(atomic_add only)", cls=GpuKernelTypeError)
        if lst.elem == "float" and lst.shared_size is not None:
            self.src.error(node, f"{text}() on a shared list[float] is not supported (devices "
                           "offer float atomics on storage lists only)",
                           "accumulate into a shared list[int] of scaled values, or tree-reduce "
                           "the shared array with barriers and atomic_add the result into a "
                           "list[float] parameter", cls=GpuKernelTypeError)
        if lst.elem == "float":
            self.uses.add("float_atomic")
        self.uses.add("atomic")
        index = self.index_expr(node.args[1], lst)
        args = []
        for a in node.args[2:]:
            e = self.expr(a)
            if lst.elem == "int" and e.ty == "float":
                self.src.error(a, f"{text}() on list[int] '{lst.pyname}' needs an int value, "
                               f"got a float", "convert with int(...)", cls=GpuKernelTypeError)
            args.append(self.conv(e, lst.elem))
        return ir.Atomic(lst.elem, self.src.loc(node), op, lst, index, tuple(args),
                         self.new_check(node, lst))
