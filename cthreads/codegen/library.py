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
checks every header against the text). Templates (``*.wgsl.in``, ``template``) are WGSL with
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


def _record(lines: list, source: str) -> Helper:
    name = lines[0][len(_HELPER):].strip()
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
    text = "\n".join(lines[k:]).rstrip("\n").rstrip()
    return Helper(name, text, _words(fields.get("requires", "")),
                  _words(fields.get("features", "")), loops, fields.get("form", ""), source)


def parse(text: str, source: str = "") -> list:
    """The helpers of one file's ``text``, in file order."""
    out, current = [], None
    for line in text.split("\n"):
        if line.startswith(_HELPER):
            if current is not None:
                out.append(_record(current, source))
            current = [line]
        elif current is not None:
            current.append(line)
    if current is not None:
        out.append(_record(current, source))
    return out


@functools.cache
def _load() -> tuple:
    """(helpers by name, alternative forms by (form, name)), every file read once."""
    helpers: dict = {}
    forms: dict = {}
    for path in sorted(FOLDER.glob("*.wgsl")):
        for rec in parse(path.read_text(encoding="utf-8"), path.name):
            table, key = (forms, (rec.form, rec.name)) if rec.form else (helpers, rec.name)
            if key in table:
                raise RuntimeError(f"WGSL helper {rec.name} defined twice ({table[key].source}, "
                                   f"{path.name})")
            table[key] = rec
    return helpers, forms


def helpers() -> dict:
    """Every helper by name (the table itself: do not change it)."""
    return _load()[0]


def get(name: str) -> Helper:
    """The helper ``name``; KeyError when the library has none of that name."""
    return _load()[0][name]


def has(name: str) -> bool:
    return name in _load()[0]


def form(form_name: str, name: str) -> Helper:
    """The alternative form ``form_name`` of helper ``name`` (KeyError when there is none)."""
    return _load()[1][(form_name, name)]


def forms(form_name: str) -> dict:
    """Helper name -> its ``form_name`` form, for every helper that has one."""
    return {name: rec for (f, name), rec in _load()[1].items() if f == form_name}


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
