"""Device functions: what ``@Gpu.func`` knows at decoration, and the specialisations a kernel
compiles.

A device function is checked like a kernel (located errors) and compiled into every kernel
that calls it as a WGSL function. WGSL functions cannot take storage buffers as arguments, so a
function with list parameters is specialised per choice of the caller's lists: the body names
the caller's buffers (or shared arrays) directly, and its reads and writes reach them. Scalars
are passed by value, as in Python. Index builtins read inside a function arrive as hidden
parameters (``HIDDEN``). A ``FunctionSet`` collects, for one compilation, the specialisations
that calls ask for; ``frontend.translate`` translates their bodies after the kernel's.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from ..errors import GpuKernelTypeError
from . import ir
from .checks import check_func_signature
from .source import KernelSource
from .types import NARROW, ListType, builtin_lookup

#: index builtins a device function may read -> the hidden WGSL parameters that carry them
#: (in 1-D launches, and in the N-D launch variant)
HIDDEN = {"GlobalIdx": (("ct_gidx", "i32"),), "ThreadIdx": (("ct_lid", "vec3<u32>"),),
          "BlockIdx": (("ct_flat", "u32"),)}
HIDDEN_ND = {"GlobalIdx": (("ct_gidx", "i32"), ("ct_gidy", "i32"), ("ct_gidz", "i32")),
             "ThreadIdx": (("ct_lid", "vec3<u32>"),),
             "BlockIdx": (("ct_bx", "u32"), ("ct_by", "u32"), ("ct_bz", "u32"))}


@dataclass(frozen=True)
class Signature:
    params: tuple            # ((name, type), ...): type a scalar name or ListType
    returns: object          # scalar type name, tuple_types.TupleType, or None
    nodes: tuple             # the parameters' AST nodes (for located errors)


def closure_lookup(fn):
    """The name -> object lookup of ``fn``'s body: its closure cells (read at each lookup, so
    a function defined after ``fn`` in the enclosing scope is found), globals, builtins."""
    code = fn.__code__
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    fallback = builtin_lookup(fn.__globals__, {})

    def lookup(name):
        cell = cells.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                pass
        return fallback(name)
    return lookup


class DeviceFunction:
    """A function kernels call on the device; the base of ``cthreads.func.GpuFunc``.

    Decoration parses the source and checks the signature (located errors); the body is
    checked by ``check()``, which the public class runs at decoration when every function it
    calls already exists."""

    def __init__(self, fn):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise GpuKernelTypeError(
                f"@Gpu.func expects a function defined with 'def', got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.src = KernelSource(fn)
        self.lookup = closure_lookup(fn)
        params, returns = check_func_signature(self.src, self.lookup)
        self.signature = Signature(tuple((n, t) for n, t, _ in params), returns,
                                   tuple(node for _, _, node in params))
        self._atomic: frozenset | None = None

    @property
    def name(self) -> str:
        return self.fn.__name__

    def describe(self) -> str:
        """``name(a: float, xs: list[int]) -> float`` for messages."""
        args = ", ".join(f"{n}: {t}" for n, t in self.signature.params)
        return f"{self.name}({args}) -> {self.signature.returns}"

    def atomic_params(self, _active: frozenset = frozenset()) -> frozenset:
        """Names of the list parameters used with atomic_* here or in functions it calls (the
        caller's list then lives in atomic memory)."""
        if self._atomic is not None:
            return self._atomic
        if id(self) in _active:
            return frozenset()          # recursion: reported as an error when compiled
        from .builtins import function_table  # noqa: PLC0415
        table = function_table()
        lists = {n for n, t in self.signature.params if isinstance(t, ListType)}
        found = set()
        for node in ast.walk(self.src.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name,
                                                                          ast.Attribute))):
                continue
            obj = _resolve(node.func, self.lookup)
            row = table.get(id(obj)) if obj is not None else None
            if row is not None and row.kind == "atomic" and node.args:
                first = node.args[0]
                while isinstance(first, (ast.Subscript, ast.Attribute)):   # h[i], p[i].inner
                    first = first.value
                if isinstance(first, ast.Name) and first.id in lists:
                    found.add(first.id)
            elif isinstance(obj, DeviceFunction):
                inner = obj.atomic_params(_active | {id(self)})
                for (pname, _), arg in zip(obj.signature.params, node.args):
                    if pname in inner and isinstance(arg, ast.Name) and arg.id in lists:
                        found.add(arg.id)
        result = frozenset(found)
        if not _active:
            self._atomic = result
        return result

    def __repr__(self) -> str:
        return f"<GpuFunc {self.fn.__module__}.{self.fn.__qualname__}>"


def _resolve(node, lookup):
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, lookup)
        return getattr(base, node.attr, None) if base is not None else None
    return None


@dataclass
class Request:
    """One specialisation a call asked for: the function and the caller's lists."""
    func: DeviceFunction
    lists: tuple             # ir.ListRef per list parameter, in parameter order
    ident: str               # its WGSL function name
    calls: list = field(default_factory=list)   # (Request, call node, caller source)


@dataclass(frozen=True)
class FuncSpec:
    """A translated specialisation, ready for the emitter."""
    ident: str
    func: DeviceFunction
    params: tuple            # ((WGSL ident, type name), ...) of the scalar parameters
    returns: object          # as Signature.returns, at the compilation's widths
    body: ir.Kernel          # its body as a kernel-shaped IR (locals, lists, statements)
    uses: frozenset          # features used by it and everything it calls
    src: KernelSource
    #: ((WGSL ident, type name), ...) of the private variables a vector result is returned in
    #: (``vectors.result_registers``; ``returns`` is then None)
    registers: tuple = ()

    @property
    def hidden(self) -> tuple:
        """((ident, WGSL type), ...) of the index builtins it needs, in a fixed order."""
        return self.hidden_params(False)

    def hidden_params(self, nd: bool) -> tuple:
        """``hidden`` for the 1-D or the N-D launch variant."""
        table = HIDDEN_ND if nd else HIDDEN
        return tuple(p for name in table if name in self.uses for p in table[name])


class FunctionSet:
    """The specialisations one compilation needs, by (function, caller's lists)."""

    def __init__(self):
        self.requests: dict = {}
        self.order: list = []

    def request(self, func: DeviceFunction, lists: tuple) -> Request:
        key = (id(func), lists)
        req = self.requests.get(key)
        if req is None:
            ident = f"ct_f{len(self.order)}_{_plain(func.name)}"
            req = self.requests[key] = Request(func, lists, ident)
            self.order.append(req)
        return req


@dataclass(frozen=True)
class OpSource:
    """A device function as a binary operation for reductions: WGSL ``fn <fn>(a: T, b: T) ->
    T`` (T: ``types.elem(ty).wgsl``) and everything it calls, in ``text``. The text may call
    ``ct_zero()`` without defining it (a zero the driver cannot see: the shader defines it
    from a uniform count below 2**31)."""
    fn: str
    ty: str
    text: str
    features: tuple = ()
    overrides: tuple = ()     # pipeline constants the text declares (builtins.OVERRIDES)
    loops: bool = False       # the text has a loop (a function's or a library helper's)
    opaque: bool = False      # it declares ct_opq, the zero its early-exit loops hide behind


def _plain(name: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in name)


def placeholder_lists(func: DeviceFunction, widths=NARROW) -> tuple:
    """ListRefs standing for a function's own list parameters (checking it on its own, plain
    float and int meaning ``widths``: ``list[int32]`` is a list of the compiler's 'int')."""
    from .builtins import wgsl_ident  # noqa: PLC0415
    atomic = func.atomic_params()
    return tuple(ir.ListRef(name, wgsl_ident(name), widths.concrete(ty.elem), None,
                            name in atomic, ty.ndim, ty.vec, ty.mat, ty.struct)
                 for name, ty in func.signature.params if isinstance(ty, ListType))


__all__ = ["DeviceFunction", "FuncSpec", "FunctionSet", "HIDDEN", "OpSource", "Request",
           "Signature",
           "placeholder_lists"]
