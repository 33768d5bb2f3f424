"""The WGSL library: the helper functions kept in ``library/*.wgsl``, read once on first use.

Each helper in a file starts with a ``// helper: NAME`` line, followed by its header lines:

* ``// requires: a, b``: the library helpers its text uses, and the names the shader itself
  defines (``SHADER_NAMES``: ``ct_zero``, the zero each shader makes from its uniform block);
* ``// features: shader-f64, shader-int64``: the device features its own text needs;
* ``// loops``: its text has a loop (a CPU driver's loop budget then covers it);
* ``// form: f64``: an alternative text of the helper of that name (``float_ops.device_form``).

Comment lines up to the first line of code are prose; the helper's text runs from there to
the next ``// helper:`` line, trailing blank lines removed. Nothing here decides anything by
reading the WGSL: what a helper needs is what its header says (tests/codegen/test_library.py
checks every header against the text). The float64 library (``f64_*.wgsl``) is read when a
helper the other files lack is first asked for. Templates (``*.wgsl.in``, ``template``) are WGSL with
``$name`` placeholders for ``string.Template``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from string import Template

#: the folder of the .wgsl files (inside the package: the wheel carries them)
FOLDER = Path(__file__).with_name("library")

#: names a helper may require that each shader defines itself, not the library
SHADER_NAMES = frozenset({"ct_zero"})

_HELPER = "// helper:"
_KEYS = ("requires", "features", "form")


@dataclass(frozen=True)
class Helper:
    """One library function (or declaration) and what its header says it needs."""
    name: str
    text: str
    requires: tuple = ()         # library helpers and SHADER_NAMES its text uses
    features: tuple = ()         # device features its own text needs
    loops: bool = False          # its text has a loop
    form: str = ""               # '' (the helper) or the name of an alternative form ('f64')
    source: str = ""             # the file it came from

    @property
    def deps(self) -> tuple:
        """The library helpers it requires (the shader's own names left out)."""
        return tuple(name for name in self.requires if name not in SHADER_NAMES)

    @property
    def needs_zero(self) -> bool:
        """Whether it calls ``ct_zero()``, which the shader must then define."""
        return "ct_zero" in self.requires


def _words(value: str) -> tuple:
    return tuple(w.strip() for w in value.split(",") if w.strip())


def _record(chunk: str, source: str) -> Helper:
    """One helper from the text after its ``// helper:`` marker."""
    lines = chunk.split("\n")
    fields: dict = {}
    loops = False
    k = 1
    while k < len(lines) and lines[k].startswith("//"):
        body = lines[k][2:].strip()
        key, _, value = body.partition(":")
        if body == "loops":
            loops = True
        elif key in _KEYS and value:
            fields[key] = value.strip()
        k += 1
    text = "\n".join(lines[k:]).rstrip()
    return Helper(lines[0].strip(), text, _words(fields.get("requires", "")),
                  _words(fields.get("features", "")), loops, fields.get("form", ""), source)


def parse(text: str, source: str = "") -> list:
    """The helpers of one file's ``text``, in file order (what precedes the first ``// helper:``
    line is the file's own comment)."""
    return [_record(chunk, source) for chunk in ("\n" + text).split("\n" + _HELPER)[1:]]


#: the float64 library's files, read only when a float64 helper is first asked for
_F64_FILES = "f64_*.wgsl"


class _Tables:
    """The helpers by name and the alternative forms by (form, name), filled file by file:
    the float64 library on first use of a helper that the other files lack (alternative
    forms live outside it)."""

    def __init__(self) -> None:
        self.helpers: dict = {}
        self.forms: dict = {}
        self.f64_read = False
        f64 = set(FOLDER.glob(_F64_FILES))
        self._read(p for p in sorted(FOLDER.glob("*.wgsl")) if p not in f64)

    def _read(self, paths) -> None:
        for path in paths:
            for rec in parse(path.read_text(encoding="utf-8"), path.name):
                table, key = (self.forms, (rec.form, rec.name)) if rec.form else \
                    (self.helpers, rec.name)
                if key in table:
                    raise RuntimeError(f"WGSL helper {rec.name} defined twice "
                                       f"({table[key].source}, {path.name})")
                table[key] = rec

    def complete(self) -> "_Tables":
        if not self.f64_read:
            self.f64_read = True
            self._read(sorted(FOLDER.glob(_F64_FILES)))
        return self


@functools.cache
def _load() -> _Tables:
    return _Tables()


def helpers() -> dict:
    """Every helper by name (the table itself: do not change it)."""
    return _load().complete().helpers


def get(name: str) -> Helper:
    """The helper ``name``; KeyError when the library has none of that name."""
    tables = _load()
    rec = tables.helpers.get(name)
    return rec if rec is not None else tables.complete().helpers[name]


def has(name: str) -> bool:
    return name in _load().helpers or name in _load().complete().helpers


def form(form_name: str, name: str) -> Helper:
    """The alternative form ``form_name`` of helper ``name`` (KeyError when there is none)."""
    return _load().forms[(form_name, name)]


def forms(form_name: str) -> dict:
    """Helper name -> its ``form_name`` form, for every helper that has one."""
    return {name: rec for (f, name), rec in _load().forms.items() if f == form_name}


def closure(names) -> list:
    """The helpers ``names`` and every helper they require, each once, dependencies first
    (in the order the headers list them)."""
    out: list = []
    seen: set = set()

    def add(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        rec = get(name)
        for dep in rec.deps:
            add(dep)
        out.append(rec)

    for name in names:
        add(name)
    return out


@functools.cache
def template(name: str) -> Template:
    """The template file ``library/<name>`` (WGSL with ``$name`` placeholders)."""
    return Template((FOLDER / name).read_text(encoding="utf-8"))


__all__ = ["FOLDER", "SHADER_NAMES", "Helper", "closure", "form", "forms", "get", "has",
           "helpers", "parse", "template"]
