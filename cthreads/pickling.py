"""Kernels and device functions that pickle: by reference where they can be imported, else by
value (their source and the names their bodies use).

A kernel or device function defined at the top level of an importable module pickles as a
reference (``module.qualname``), as functions do. One defined in ``__main__``, a notebook, an
``exec`` or a function body pickles by value: its source text (decorator lines left out), the
file and line it came from, its ``@Gpu`` options, and every name its body uses (constants by
value, modules and library objects by reference, the device functions it calls by value or
reference in turn). Compiled pipelines never travel: the receiving process compiles for its own
device on first launch.

Unpickling rebuilds the function with ``exec`` from that source, registered in ``linecache``
under a synthetic file name (``<pickled /path/file.py>``) at its original line numbers, so the
compiler's errors still point at the user's line. A process keeps what it rebuilt by a digest
of the state: the same kernel received again (each Dask task carries it) is the same object,
with its compiled pipelines.
"""

from __future__ import annotations

import ast
import builtins
import dis
import hashlib
import importlib
import linecache
import pickle
import sys
import textwrap
import threading
import types

from .codegen.source import KernelSource

#: modules searched for a library object a by-value body uses (``GlobalIdx``, ``float32``...)
_LIBRARY_MODULES = ("cthreads.gpu", "cthreads.lang.indexes", "cthreads.lang.intrinsics", "cthreads.lang.widths",
                    "math", "numpy")
#: plain values a body may capture, pickled as they are
_PLAIN = (bool, int, float, complex, str, bytes, type(None))

_rebuilt: dict = {}                 # digest -> the kernel or device function rebuilt here
_rebuilt_lock = threading.Lock()


def importable_name(obj) -> str | None:
    """The qualified name under which ``obj`` (a kernel or device function) is found in its
    module, or None when it is not importable (``__main__``, ``exec``, a function body)."""
    fn = obj.fn
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module_name or module_name in ("__main__", "__mp_main__") or not qualname \
            or "<locals>" in qualname:
        return None
    target = sys.modules.get(module_name)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return qualname if target is obj else None


def reduce(obj, cls):
    """``__reduce__`` of a kernel (``cls`` GpuKernel) or device function (GpuFunc)."""
    name = importable_name(obj)
    if name is not None:
        return name                   # pickle saves a reference to module.qualname
    return (rebuild, (cls, _state_of(obj)))


def _options(obj) -> dict:
    """The decorator's options to rebuild ``obj`` with (``@Gpu(log=, boundscheck=)``)."""
    if not hasattr(obj, "boundscheck"):
        return {}
    options = {"log": obj.log, "boundscheck": obj.boundscheck}
    if getattr(obj, "workgroup", None) is not None:
        options["workgroup"] = obj.workgroup
    if getattr(obj, "timed", False):
        options["timed"] = True
    if getattr(obj, "print_limit", 1000) != 1000:
        options["print_limit"] = obj.print_limit
    return options


_making = threading.local()       # the objects whose state is being made (a cycle stops there)


def _state_of(obj) -> dict:
    state = obj._pickle_state
    if state is None:
        state = obj._pickle_state = _state(obj)
    return state


_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")


def _code_names(code) -> set:
    """The global and captured names the bytecode of ``code`` (and of the code nested in it)
    loads; attribute names (``GlobalIdx.x``) are not among them."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _annotation_names(tree) -> set:
    """The names the annotations of a function's parameters, return and annotated
    assignments use (``list[float32]``): the compiler resolves them, the bytecode may not
    load them."""
    exprs = [a.annotation for a in ast.walk(tree) if isinstance(a, ast.arg) and a.annotation]
    exprs += [n.annotation for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)]
    exprs += [n.returns for n in ast.walk(tree)
              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    return {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}


def _library_ref(value):
    """(module, attribute) of a library object, or None."""
    for module_name in _LIBRARY_MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for attr, v in vars(module).items():
            if v is value and not attr.startswith("_"):
                return module_name, attr
    return None


def _captured(fn, tree) -> dict:
    """name -> (how, what) for every global or captured name the body and annotations of
    ``fn`` (parsed: ``tree``) use."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    glb = fn.__globals__
    out = {}
    for name in sorted(_code_names(fn.__code__) | _annotation_names(tree)):
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:
                continue
        elif name in glb:
            value = glb[name]
        else:
            continue              # a builtin, or an attribute name
        if isinstance(value, types.ModuleType):
            out[name] = ("module", value.__name__)
        elif hasattr(value, "_pickle_state") or isinstance(value, _PLAIN):
            out[name] = ("value", value)
        elif (ref := _library_ref(value)) is not None:
            out[name] = ("attr", ref)
        else:
            out[name] = ("value", value)
    return out


def _digest_part(how, what) -> str:
    if how == "value" and hasattr(what, "_pickle_state"):
        name = importable_name(what)
        if name is not None:
            return f"ref:{what.fn.__module__}:{name}"
        if id(what) in getattr(_making, "ids", ()):
            return f"cycle:{what.fn.__qualname__}"
        return "state:" + _state_of(what)["digest"]
    if how == "value":
        try:
            return "pickle:" + hashlib.sha256(pickle.dumps(what)).hexdigest()
        except Exception:
            return f"id:{id(what)}"
    return f"{how}:{what}"


def _state(obj) -> dict:
    """What rebuilds ``obj`` in another process (see the module docstring)."""
    making = _making.__dict__.setdefault("ids", set())
    making.add(id(obj))
    try:
        return _make_state(obj)
    finally:
        making.discard(id(obj))


def _make_state(obj) -> dict:
    fn = obj.fn
    options = _options(obj)
    src = getattr(obj, "src", None) or KernelSource(fn)
    lines = list(src.lines)
    k = 0
    while k < len(lines) and not lines[k].lstrip().startswith(("def ", "async def ")):
        k += 1
    body = textwrap.dedent("".join(lines[k:]))
    first = src.firstlineno + k          # the line of the 'def'
    text = "\n" * (first - 1) + body
    names = _captured(fn, src.tree)
    kind = type(obj).__name__
    parts = [kind, fn.__qualname__, src.filename, text, repr(sorted(options.items()))]
    parts += [f"{n}={_digest_part(*names[n])}" for n in sorted(names)]
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return {"kind": kind, "name": fn.__name__, "qualname": fn.__qualname__,
            "module": getattr(fn, "__module__", None), "filename": src.filename,
            "text": text, "options": dict(options), "names": names, "digest": digest}


def _resolve(how, what):
    if how == "module":
        return importlib.import_module(what)
    if how == "attr":
        return getattr(importlib.import_module(what[0]), what[1])
    return what


def rebuild(cls, state: dict):
    """The kernel or device function of ``state`` (made once per process and digest)."""
    digest = state["digest"]
    hit = _rebuilt.get(digest)
    if hit is not None:
        return hit
    with _rebuilt_lock:
        hit = _rebuilt.get(digest)
        if hit is not None:
            return hit
        filename = f"<pickled {state['filename']}>"
        text = state["text"]
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"__name__": state["module"] or "__cthreads_pickled__",
                     "__builtins__": builtins}
        for name, (how, what) in state["names"].items():
            namespace[name] = _resolve(how, what)
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - the pickled source
        fn = namespace[state["name"]]
        fn.__qualname__ = state["qualname"]
        obj = cls(fn, **state["options"])
        obj._pickle_state = state
        _rebuilt[digest] = obj
        return obj


def refuse(what: str, hint: str):
    """``__reduce__`` of objects that hold device state: a TypeError with a hint."""
    raise TypeError(f"cannot pickle a {what}: it holds device state of this process. {hint}")


__all__ = ["importable_name", "rebuild", "reduce", "refuse"]
