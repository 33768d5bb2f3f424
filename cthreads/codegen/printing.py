"""``print(...)`` in kernels and device functions: the call -> a print site plus its values.

At compile time a call is split into literal text and value slots (``PrintSite``): string
literals, the literal parts of f-strings, ``sep=`` and ``end=`` become text; each ``{expr}`` /
``{expr:spec}`` / ``{expr!r}`` and each argument that is not a literal becomes a slot, whose
format spec is checked here with Python's own ``format`` on a value of the slot's type (so
``{x:d}`` of a float is refused as Python refuses it). The IR statement ``ir.Print`` carries
the site and the slots' scalar values (a vector: its components).

On the device (``emit``) a print appends one record to the print buffer (``declarations``):
an atomic word cursor reserves the record, which holds the thread's (x, y, z), its sequence
number within the thread, the site and the values' 32-bit words (so records of one kernel
differ in size, and lie one after another from word 0); a second counter counts every
print, and a record past the buffer's end is counted, not written (the cursor only grows, so
the records written are exactly those below the first that did not fit: a third word, the
largest end of a written record, says where they stop). The host
(``runtime/printing.py``) sorts the records by thread and sequence and formats them with
Python's ``format``. Kernels without ``print`` declare nothing of this (their WGSL is
unchanged).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass

from ..errors import GpuKernelError, GpuKernelTypeError
from ..lang import vectors as pyvec
from . import ir

#: words of a record before the values: thread x, y, z, sequence number, site
HEADER_WORDS = 5
#: the IR ``uses`` mark of a kernel (or device function) that prints
USES = "print"
#: the WGSL names of the print buffer and the invocation's private state
BUFFER, THREAD, SEQ = "ct_print", "ct_ptid", "ct_pseq"


@dataclass(frozen=True)
class Slot:
    """One value of a print: its element type row ('float', 'int64', ...; for a vector the
    components' row), its spec and conversion ('' / 'r' / 's' / 'a'), and for a vector the
    Python class name ('vec3')."""
    elem: str
    spec: str = ""
    conv: str = ""
    vec: str = ""
    n: int = 1                  # components (vectors)

    @property
    def words(self) -> int:
        per = {"float64": 2, "int64": 2, "complex": 2, "complex128": 4}.get(self.elem, 1)
        return per * self.n


@dataclass(frozen=True)
class PrintSite:
    """A print call: ``pieces`` are literal strings and slot numbers (ints), in output order
    (``sep`` and ``end`` already written in as text)."""
    ident: int
    pieces: tuple
    slots: tuple
    lineno: int = 0

    @property
    def words(self) -> int:
        return sum(s.words for s in self.slots)


_CONVERSIONS = {-1: "", 115: "s", 114: "r", 97: "a"}


def _sample(slot: Slot):
    """A Python value of the slot's type, to check its spec with ``format``."""
    if slot.vec:
        return pyvec.VECTOR_TYPES[slot.vec](*([0] * slot.n))
    if slot.elem == "bool":
        return True
    if slot.elem.startswith("complex"):
        return 1j
    return 0.5 if "float" in slot.elem else 1


def _apply(value, conv: str):
    return {"": value, "s": str, "r": repr, "a": ascii}[conv](value) if conv else value


class PrintTranslator:
    """The frontend's side of one ``print(...)`` call (``tr``: the ``Translator``)."""

    def __init__(self, tr, call: ast.Call):
        self.tr = tr
        self.src = tr.src
        self.call = call
        self.pieces: list = []
        self.slots: list = []
        self.values: list = []

    def error(self, node, message: str, hint: str):
        self.src.error(node, message, hint, cls=GpuKernelTypeError)

    def text(self, node, what: str) -> str:
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
            return node.value
        self.error(node, f"print({what}=...) must be a string literal in a kernel",
                   f"write {what}=' ' (a literal): the text is fixed when the kernel compiles")

    def translate(self) -> ir.Print:
        call = self.call
        sep, end = " ", "\n"
        for kw in call.keywords:
            if kw.arg == "sep":
                sep = self.text(kw.value, "sep")
                sep = " " if sep is None else sep
            elif kw.arg == "end":
                end = self.text(kw.value, "end")
                end = "\n" if end is None else end
            elif kw.arg == "flush":
                if not isinstance(kw.value, ast.Constant) or not isinstance(kw.value.value, bool):
                    self.error(kw.value, "print(flush=...) must be True or False in a kernel",
                               "drop flush=: the lines are written at join()")
            elif kw.arg == "file":
                self.error(kw, "print(file=...) is not supported in kernels: a kernel's lines "
                           "go to sys.stdout when the launch is joined",
                           "drop file=; redirect sys.stdout around join() to capture them")
            else:
                self.error(kw, f"print() has no keyword {kw.arg!r} in kernels",
                           "kernels' print takes sep=, end= and flush=")
        for k, arg in enumerate(call.args):
            if k:
                self.pieces.append(sep)
            self.argument(arg)
        self.pieces.append(end)
        pieces = _merge(self.pieces)
        # idents count per compilation (the translation's Progress), so the WGSL of a kernel
        # does not depend on what was compiled before it
        ids = self.tr.progress.__dict__.setdefault("print_ids", itertools.count())
        site = PrintSite(next(ids), pieces, tuple(self.slots),
                         self.src.abs_line(call.lineno))
        self.tr.uses.add(USES)
        return ir.Print(self.src.loc(call), values=tuple(self.values), site=site)

    def argument(self, node):
        if isinstance(node, ast.Starred):
            self.error(node, "print(*args) is not supported in kernels",
                       "pass the values one by one")
        if isinstance(node, ast.Constant) and not isinstance(node.value, bytes):
            self.pieces.append(str(node.value))        # Python's own text of a literal
            return
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                if isinstance(part, ast.Constant):
                    self.pieces.append(part.value)
                else:
                    self.formatted(part)
            return
        self.slot(node, "", "", node)

    def formatted(self, part: ast.FormattedValue):
        spec = ""
        if part.format_spec is not None:
            if not all(isinstance(v, ast.Constant) for v in part.format_spec.values):
                self.error(part.format_spec, "a format spec with {...} inside is not "
                           "supported in kernels", "write the width and precision as "
                           "literals, e.g. {x:8.3f}")
            spec = "".join(v.value for v in part.format_spec.values)
        conv = _CONVERSIONS.get(part.conversion, "")
        self.slot(part.value, spec, conv, part)

    def slot(self, node, spec: str, conv: str, where):
        tr = self.tr
        value = tr.expr(node)
        comps = getattr(value, "comps", None)
        if comps is not None:                                  # a vector (VecValue)
            vty = value.ty
            name = f"{'i' if vty.is_int else ''}vec{vty.n}"
            slot = Slot(vty.elem, spec, conv, name, vty.n)
            values = tuple(comps)
        else:
            if not isinstance(value.ty, str) or value.ty == "none":
                self.error(node, "print() takes numbers, bools and vectors in kernels, not "
                           f"{'a tuple' if not isinstance(value.ty, str) else 'None'}",
                           "print the members one by one")
            slot = Slot(value.ty, spec, conv)
            values = (value,)
        try:
            format(_apply(_sample(slot), conv), spec)
        except (ValueError, TypeError) as exc:
            self.error(where, f"format spec {spec!r} does not apply to a {slot.vec or slot.elem} "
                       f"value: {exc}", "use a spec Python accepts for the value, e.g. {x:d} "
                       "or {x:x} for ints, {x:.3f} {x:e} {x:g} for floats")
        self.pieces.append(len(self.slots))
        self.slots.append(slot)
        self.values.extend(values)


def _merge(pieces: list) -> tuple:
    """Adjacent literal strings joined; empty ones dropped."""
    out: list = []
    for p in pieces:
        if isinstance(p, str):
            if not p:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += p
                continue
        out.append(p)
    return tuple(out)


def statement(tr, obj, call: ast.Call):
    """The IR of a ``print(...)`` statement (``obj`` is print), located errors for what
    kernels lack; or for ``breakpoint()`` nothing: the located error that every device launch
    raises is kept on the compilation's Progress (``breakpoint_error``), ``simulate`` and
    plain-Python calls stop there as Python does."""
    if obj is print:
        return PrintTranslator(tr, call).translate()
    found = tr.progress.__dict__.setdefault("breakpoints", [])
    if not found:
        try:
            tr.src.error(call, "breakpoint() stops only the plain-Python run of a kernel: a "
                         "launch on the device cannot stop in the debugger",
                         "run it with kernel.simulate(...) (or call the kernel as a "
                         "function) to stop there, or remove the breakpoint() to launch it; "
                         "print(...) works on the device")
        except GpuKernelError as exc:
            found.append(exc)
    return None


def breakpoint_error(progress):
    """The located error of a kernel's first ``breakpoint()``, or None."""
    found = progress.__dict__.get("breakpoints")
    return found[0] if found else None


# ------------------------------------------------------------------------------- the device
def prints(kernel) -> bool:
    return USES in kernel.uses


def sites(kernel) -> tuple:
    """The kernel's print sites (its body's and its device functions'), by ident."""
    found = {s.site.ident: s.site for body in ir.all_bodies(kernel)
             for s in ir.walk_stmts(body) if isinstance(s, ir.Print)}
    return tuple(found[k] for k in sorted(found))


def features(kernel) -> tuple:
    """The device features the kernel's prints need beyond their values' own: float64 values
    go to the buffer through their 64-bit integer bits."""
    wide = any(slot.elem in ("float64", "complex128") for site in sites(kernel)
               for slot in site.slots)
    return ("shader-int64",) if wide else ()


def declarations(binding: int) -> list:
    """The print buffer and the invocation's thread id and sequence number."""
    return ["struct CtPrint {", "    n: atomic<u32>,", "    count: atomic<u32>,",
            "    end: atomic<u32>,", "    w: array<u32>,", "}",
            f"@group(0) @binding({binding}) var<storage, read_write> {BUFFER}: CtPrint;",
            f"var<private> {THREAD}: vec3<u32>;", f"var<private> {SEQ}: u32;"]


def start_line(nd) -> str:
    """The body's first line: the thread whose records follow."""
    yz = "u32(ct_gidy), u32(ct_gidz)" if nd else "0u, 0u"
    return f"{THREAD} = vec3<u32>(u32(ct_gidx), {yz});"


def _words(text: str, ty: str) -> list:
    """WGSL u32 expressions of the words of value ``text`` (a let name) of type ``ty``."""
    if ty in ("float", "int"):
        return [f"bitcast<u32>({text})"]
    if ty == "uint32":
        return [text]
    if ty == "bool":
        return [f"select(0u, 1u, {text})"]
    if ty == "int64":
        return [f"u32({text} & 0xffffffffli)", f"u32(({text} >> 32u) & 0xffffffffli)"]
    if ty == "float64":
        bits = f"bitcast<u64>({text})"
        return [f"u32({bits} & 0xfffffffflu)", f"u32({bits} >> 32u)"]
    if ty == "complex":
        return [f"bitcast<u32>({text}.x)", f"bitcast<u32>({text}.y)"]
    if ty == "complex128":
        return _words(f"{text}.x", "float64") + _words(f"{text}.y", "float64")
    raise TypeError(f"print of a {ty} value")


def emit(em, s: ir.Print) -> None:
    """The WGSL of one print statement (``em``: the emitter). The values are evaluated
    whether or not the record fits, as Python evaluates print's arguments."""
    words = []
    for e in s.values:
        text = em.expr(e)
        if not isinstance(e, (ir.Const, ir.Var)):
            name = em.temp()
            em.line(f"let {name} = {text};")
            text = name
        words += _words(text, e.ty)
    size = HEADER_WORDS + len(words)
    base = em.temp("ct_pb")
    room = em.temp("ct_pr")
    em.line(f"atomicAdd(&{BUFFER}.count, 1u);")
    # a full buffer's cursor stops growing (it cannot wrap around past 2**32 words)
    em.line(f"let {room}: u32 = arrayLength(&{BUFFER}.w);")
    em.line(f"if (atomicLoad(&{BUFFER}.n) < {room}) {{")
    em.line(f"    let {base}: u32 = atomicAdd(&{BUFFER}.n, {size}u);")
    em.line(f"    if ({base} + {size}u <= {room}) {{")
    head = [f"{THREAD}.x", f"{THREAD}.y", f"{THREAD}.z", SEQ, f"{s.site.ident}u"]
    for k, w in enumerate(head + words):
        em.line(f"        {BUFFER}.w[{base} + {k}u] = {w};")
    em.line(f"        atomicMax(&{BUFFER}.end, {base} + {size}u);")
    em.line("    }")
    em.line("}")
    em.line(f"{SEQ} = {SEQ} + 1u;")


__all__ = ["HEADER_WORDS", "PrintSite", "Slot", "breakpoint_error", "declarations", "emit",
           "features", "prints", "sites", "start_line", "statement"]
