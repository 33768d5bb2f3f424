"""A kernel's scope: what its names mean, fixed before any statement is translated.

``KernelScope`` holds the signature, the declarations the pre-pass found, the lists (parameters
and shared arrays), the scalar locals with their declared types, the imports and the table of
callable objects. It does not change while the translator runs its inference passes; callable
kernel-side functions (device functions) join it here.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass

from ..errors import GpuKernelTypeError
from . import ir
from .builtins import Callee, function_table, wgsl_ident
from .checks import Declarations, check_signature, collect_declarations, declared_type
from .functions import DeviceFunction, closure_lookup
from .source import KernelSource
from .types import MISSING, NARROW, ListType, Widths, resolve_annotation
from .vectypes import VecType

_ALLOWED_IMPORTS = ("math", "cthreads", "cthreads.gpu", "cthreads.sync", "cthreads.lang.indexes",
                    "cthreads.lang.intrinsics")


def resolve_object(node, locals_, imports: dict, lookup):
    """The Python object an expression names (globals/closure/imports); None for a kernel
    local (a name in ``locals_``) or anything that is not a name or attribute."""
    if isinstance(node, ast.Name):
        if node.id in locals_:
            return None
        if node.id in imports:
            return imports[node.id]
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        base = resolve_object(node.value, locals_, imports, lookup)
        if base is None or isinstance(base, MISSING):
            return base
        return getattr(base, node.attr, MISSING())
    return None


@dataclass(frozen=True)
class KernelScope:
    src: KernelSource
    boundscheck: bool
    lookup: object               # name -> global/closure/builtin object
    functions: dict              # id(callable object) -> builtins.Callee
    imports: dict                # name bound by an import in the kernel -> object
    params: tuple                # ((name, type, node), ...) in order
    decl: Declarations
    lists: dict                  # name -> ir.ListRef (parameters, then shared arrays)
    scalar: dict                 # name -> ir.Local (parameters and locals; ty = declared)
    fixed: dict                  # name -> declared type (parameters and annotated locals)
    shared_nodes: dict           # shared array name -> its declaring statement
    widths: Widths = NARROW      # what plain float and int mean here
    annotated: tuple = ()        # ((name, annotation type), ...) of the parameters as written

    def resolve(self, node):
        """The Python object an expression names (globals/closure/imports), or None."""
        return resolve_object(node, _Names(self.scalar, self.lists), self.imports, self.lookup)

    def callee(self, obj) -> Callee | None:
        return self.functions.get(id(obj)) if obj is not None else None


class _Names:
    """Membership in either of two dicts, without building their union."""
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __contains__(self, name):
        return name in self.a or name in self.b


def concrete_type(ty, widths: Widths):
    """An annotation type (name or ListType of one) as the compiler's type for ``widths``."""
    if isinstance(ty, (ListType, VecType)):
        return ty.with_elem(widths.concrete(ty.elem))
    return widths.concrete(ty)


def build_scope(fn, boundscheck: bool = True, func=None, list_refs: tuple = (),
                widths: Widths = NARROW) -> KernelScope:
    """Read ``fn``'s signature and declarations; raise located errors for bad ones. For a
    device function (``func``, a ``functions.DeviceFunction``), ``list_refs`` are the caller's
    lists its list parameters stand for. ``widths``: what plain float and int mean."""
    if func is not None:
        src, lookup = func.src, func.lookup
        params = [(n, t, node) for (n, t), node in zip(func.signature.params,
                                                         func.signature.nodes)]
    else:
        src = KernelSource(fn)
        lookup = closure_lookup(fn)
        params = check_signature(src, lookup)
    annotated = tuple((n, t) for n, t, _ in params)
    params = [(n, concrete_type(t, widths), node) for n, t, node in params]
    functions = function_table()
    decl = collect_declarations(src, {p[0] for p in params})
    imports = {name: None for name in decl.imported}
    _bind_imports(src, imports)
    atomic = _atomic_lists(src, params, decl, imports, lookup, functions)
    lists, scalar, fixed = {}, {}, {}
    given = iter(list_refs)
    for name, ty, _ in params:
        if isinstance(ty, ListType) and func is not None:
            lists[name] = next(given)
        elif isinstance(ty, ListType):
            lists[name] = ir.ListRef(name, wgsl_ident(name), ty.elem, None, name in atomic,
                                     ty.ndim, ty.vec, ty.mat, ty.struct)
        else:
            fixed[name] = ty
            scalar[name] = ir.Local(name, wgsl_ident(name), ty, param=True)

    def resolve(node):
        return resolve_object(node, _Names(scalar, lists), imports, lookup)

    shared_nodes = _shared_decls(src, decl, lists, atomic, resolve, lookup, functions,
                                 func is not None, widths)
    for name, nodes in decl.annotations.items():
        if name in lists:
            lst = lists[name]
            if lst.shared_size is not None and len(nodes) == 1:
                continue
            what = "list parameter" if lst.shared_size is None else "shared array"
            src.error(nodes[-1], f"'{name}' is already a {what} of the kernel",
                      "use a new name for the local", cls=GpuKernelTypeError)
        if name in fixed:
            src.error(nodes[0], f"'{name}' is already a parameter of the kernel",
                      "parameters keep their annotated type; use a new name for the local",
                      cls=GpuKernelTypeError)
        ty = concrete_type(declared_type(src, name, nodes, lookup), widths)
        if isinstance(ty, ListType) and isinstance(nodes[0].value, ast.Call) and \
                _kind(functions, resolve(nodes[0].value.func)) == "shared":
            src.error(nodes[0], "shared arrays are declared at the top level of the kernel "
                      "body, outside loops and branches",
                      "move the shared(...) declaration to the start of the kernel")
        if isinstance(ty, ListType) and isinstance(nodes[0].value, ast.Call) and \
                isinstance(nodes[0].value.func, ast.Name) and \
                nodes[0].value.func.id == "shared" and \
                isinstance(resolve(nodes[0].value.func), (MISSING, type(None))):
            src.error(nodes[0], "'shared' is not defined in the kernel's module",
                      "import it: from cthreads.gpu import shared", cls=GpuKernelTypeError)
        if isinstance(ty, ListType):
            src.error(nodes[0], f"list local '{name}' must be declared with shared(size)",
                      f"write '{name}: {ty} = shared(64)' at the top of the kernel, or pass "
                      f"the list as a parameter", cls=GpuKernelTypeError)
        fixed[name] = ty
    for name in list(decl.assigned) + list(decl.for_targets):
        if name in lists and name not in shared_nodes:
            src.error(decl.assigned.get(name, decl.for_targets.get(name)),
                      f"list parameter '{name}' cannot be reassigned",
                      f"write elements instead: {name}[i] = value", cls=GpuKernelTypeError)
        if name not in scalar and name not in lists:
            scalar[name] = ir.Local(name, wgsl_ident(name), fixed.get(name))
    return KernelScope(src, boundscheck, lookup, functions, imports, tuple(params), decl, lists,
                       scalar, fixed, shared_nodes, widths, annotated)


def _kind(functions, obj):
    row = functions.get(id(obj)) if obj is not None else None
    return row.kind if row is not None else None


def _bind_imports(src, imports):
    for stmt in ast.walk(src.tree):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name not in _ALLOWED_IMPORTS:
                    _bad_import(src, stmt, alias.name)
                mod = importlib.import_module(alias.name)
                if alias.asname:
                    imports[alias.asname] = mod
                else:
                    imports[alias.name.split(".")[0]] = importlib.import_module(
                        alias.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level or stmt.module not in _ALLOWED_IMPORTS:
                _bad_import(src, stmt, stmt.module or ".")
            mod = importlib.import_module(stmt.module)
            for alias in stmt.names:
                obj = getattr(mod, alias.name, MISSING())
                if alias.name == "*" or isinstance(obj, MISSING):
                    src.error(stmt, f"cannot import '{alias.name}' from {stmt.module} "
                              f"in a kernel", "import the names you use explicitly")
                imports[alias.asname or alias.name] = obj


def _bad_import(src, node, name):
    src.error(node, f"importing '{name}' inside a kernel is not supported",
              "kernels may import math and cthreads names; import other modules at "
              "module level (kernels cannot use them anyway)")


def _atomic_lists(src, params, decl, imports, lookup, functions) -> set:
    """Names of the lists passed to atomic_* anywhere in the body, or passed to a device
    function that uses that parameter atomically."""
    names = set()
    locals_ = {p[0] for p in params}
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call) and node.args:
            obj = resolve_object(node.func, locals_, imports, lookup) if not (
                isinstance(node.func, ast.Name) and node.func.id in decl.assigned) else None
            first = node.args[0]
            while isinstance(first, (ast.Subscript, ast.Attribute)):    # h[i], p[i].inner
                first = first.value
            if _kind(functions, obj) == "atomic" and isinstance(first, ast.Name):
                names.add(first.id)
            elif isinstance(obj, DeviceFunction):
                inner = obj.atomic_params()
                for (pname, _), arg in zip(obj.signature.params, node.args):
                    if pname in inner and isinstance(arg, ast.Name):
                        names.add(arg.id)
    return names


def _shared_decls(src, decl, lists, atomic, resolve, lookup, functions, in_func,
                  widths) -> dict:
    """Add the shared arrays declared at the top of the body to ``lists``."""
    found = {}
    for stmt in src.tree.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.value, ast.Call)):
            continue
        if _kind(functions, resolve(stmt.value.func)) != "shared":
            continue
        if in_func:
            src.error(stmt, "shared arrays are declared in kernels, not in device functions",
                      "declare the shared array at the top of the kernel and pass it to the "
                      "device function as a list argument", cls=GpuKernelTypeError)
        if not isinstance(stmt.target, ast.Name):
            src.error(stmt.target, "shared(size) must be assigned to a plain name")
        name = stmt.target.id
        try:
            ty = resolve_annotation(stmt.annotation, lookup)
        except Exception:
            ty = None
        if not isinstance(ty, ListType) or ty.ndim != 1:
            src.error(stmt.annotation, "a shared array is annotated list[float], "
                      "list[int], list[bool] or list[vec3] ... (one dimension)",
                      f"write '{name}: list[float] = shared(64)' (index a 2-D tile as "
                      "t[y * width + x])", cls=GpuKernelTypeError)
        if name in found or name in lists or len(decl.annotations[name]) > 1:
            src.error(stmt, f"'{name}' is declared more than once",
                      "declare each shared array once, with a new name")
        call = stmt.value
        if call.keywords or len(call.args) != 1:
            src.error(call, "shared() takes exactly one argument, the size",
                      "write shared(64)", cls=GpuKernelTypeError)
        size = _const_size(src, decl, call.args[0], resolve)
        # a shared list[vec3]: a flat array of 3 * size components (codegen/vectors.py)
        lists[name] = ir.ListRef(name, wgsl_ident(name), widths.concrete(ty.elem),
                                 size * max(ty.vec, 1), name in atomic, 1, ty.vec,
                                 struct=ty.struct)      # a shared list[Particle]: its words
        found[name] = stmt
    return found


def _const_size(src, decl, node, resolve) -> int:
    value = None
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, (ast.Name, ast.Attribute)):
        if isinstance(node, ast.Name) and node.id in decl.assigned:
            value = None
        else:
            value = resolve(node)
    if type(value) is not int or value < 1 or value > 2**24:
        src.error(node, "the size of a shared array must be a positive int literal or "
                  "module-level int constant",
                  "write shared(64) or shared(TILE) with TILE = 64 at module level")
    return value
