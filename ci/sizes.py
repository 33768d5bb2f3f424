"""Size and layering budgets of the ``cthreads`` package, checked in CI (tests/host/test_budgets.py).

Fails (exit 1, one line per problem) when
- a module is over ``MODULE_LINES`` lines or a function over ``FUNCTION_LINES`` lines, unless
  ``OVER_BUDGET`` lists it with its reason (an entry that is back within budget fails too, so
  the table stays the list of today's exceptions);
- the modules import each other in a cycle (imports inside functions count);
- a module imports something its folder may not (``MAY_IMPORT``: what each folder may import
  besides its own modules; ``__init__``'s docstring of each folder says the same in its
  "May import:" line, and the two must agree).

Usage: ``python ci/sizes.py`` (check) or ``python ci/sizes.py --list`` (every module and function
over budget, listed or not, with its length).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "cthreads"

MODULE_LINES = 600
FUNCTION_LINES = 60

#: "path" (a module) or "path::Qualified.name" (a function) -> why it may be over budget
OVER_BUDGET: dict[str, str] = {
    # modules
    "cthreads/codegen/wgsl.py":
        "the IR -> WGSL emitter, one visit method per IR node; the per-type columns (wgsl.py's "
        "type tables) are to move into ElemType rows",
    # functions
    "cthreads/codegen/__init__.py::_compile":
        "the pass pipeline and the variant fields of KernelProgram in one place; shrinks when "
        "Variant and KernelProgram.render(variant) replace the eager renders",
    "cthreads/codegen/__init__.py::_render":
        "renders each entry form (flat, N-D, coarsened, four-lane, CPU loop report); goes with "
        "KernelProgram.render(variant)",
    "cthreads/backend/native/header_cache.py::import_native_ffi":
        "one guarded sequence around wgpu-py's import (cffi's parser patched, the cache read or "
        "written, the parser restored); not split yet",
    "cthreads/backend/native/header_cache.py::write_build_entry":
        "the install-time build of the shipped entry, run once in a child process",
    "cthreads/dask.py::map_blocks":
        "argument checks and the per-block task graph of the dask entry point; not split yet",
    "cthreads/codegen/scope.py::build_scope":
        "one pass over a kernel's names (parameters, globals, closures, builtins) with the "
        "error text of each case",
    "cthreads/codegen/vectorize.py::vectorize":
        "the four-lane rewrite of an element-wise kernel, one case per IR node kind",
}

#: folder (or leaf module) -> what its modules may import besides the folder's own modules.
#: A module outside every entry (the package root's user objects) may import anything.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "cthreads.errors": (),
    "cthreads.config": ("cthreads.errors",),
    "cthreads.lang": ("cthreads.errors",),
    "cthreads.sync": ("cthreads.lang",),
    "cthreads.codegen": ("cthreads.errors", "cthreads.config", "cthreads.lang", "cthreads.sync"),
    "cthreads.backend": ("cthreads.errors", "cthreads.config"),
    "cthreads.backend.native": ("cthreads.errors", "cthreads.config", "cthreads.backend"),
    "cthreads.runtime": ("cthreads.errors", "cthreads.config", "cthreads.lang",
                         "cthreads.codegen", "cthreads.backend"),
}


# -- reading the package -------------------------------------------------------------------------

def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def over_budget(root: Path = ROOT) -> dict[str, int]:
    """Every module and function over its budget -> its length in lines."""
    found = {}
    for path in modules(root).values():
        text = path.read_text(encoding="utf-8")
        rel = _rel(path, root)
        lines = len(text.splitlines())
        if lines > MODULE_LINES:
            found[rel] = lines
        for name, node in _functions(ast.parse(text, str(path))):
            length = node.end_lineno - node.lineno + 1
            if length > FUNCTION_LINES:
                found[f"{rel}::{name}"] = length
    return found


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in the file)."""
    mods = modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for module, path in mods.items():
        is_package = path.name == "__init__.py"
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _target(module, is_package, node)
                names = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                hit = known(name) if name.split(".")[0] == PACKAGE else None
                # a module naming its own package (``from . import x`` of a name defined in
                # __init__) does not depend on it in the sense of layering
                if hit and hit != module and not module.startswith(hit + "."):
                    out.add(hit)
        edges[module] = out
    return edges


# -- the checks ----------------------------------------------------------------------------------

def size_problems(root: Path = ROOT) -> list[str]:
    found = over_budget(root)
    problems = []
    for key, length in sorted(found.items()):
        if key not in OVER_BUDGET:
            kind = "function" if "::" in key else "module"
            limit = FUNCTION_LINES if "::" in key else MODULE_LINES
            problems.append(f"{key}: {kind} of {length} lines, over the budget of {limit}; "
                            f"split it, or list it in OVER_BUDGET (ci/sizes.py) with its reason")
    for key in sorted(set(OVER_BUDGET) - set(found)):
        problems.append(f"{key}: listed in OVER_BUDGET but within budget (or gone): "
                        f"remove its entry")
    return problems


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> str | None:
    """The ``MAY_IMPORT`` entry that governs ``module`` (the longest that contains it)."""
    best = None
    for layer in MAY_IMPORT:
        if module == layer or module.startswith(layer + "."):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def _inside(module: str, place: str) -> bool:
    return module == place or module.startswith(place + ".")


def layering_problems(edges: dict[str, set[str]]) -> list[str]:
    problems = []
    for module in sorted(edges):
        layer = layer_of(module)
        if layer is None:
            continue
        for target in sorted(edges[module]):
            allowed = (layer, *MAY_IMPORT[layer])
            if not any(_inside(target, place) for place in allowed):
                problems.append(f"{module} imports {target}: {layer} may import only "
                                f"{', '.join(MAY_IMPORT[layer]) or 'nothing of cthreads'}")
    return problems


def declared(init: Path) -> tuple[str, ...] | None:
    """The ``cthreads.*`` names of the "May import:" paragraph of a folder's docstring, leaving
    out remarks in parentheses and what follows a "never"; None when there is no such line."""
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    match = re.search(r"May import:(.*?)(?:\n\s*\n|$)", doc, re.S)
    if match is None:
        return None
    text = re.sub(r"\([^()]*\)", "", match.group(1))
    text = re.split(r"\bnever\b", text, maxsplit=1, flags=re.I)[0]
    return tuple(sorted(set(re.findall(r"``(cthreads(?:\.\w+)*)``", text))))


def docstring_problems(root: Path = ROOT) -> list[str]:
    problems = []
    for layer, allowed in MAY_IMPORT.items():
        init = root / Path(*layer.split(".")) / "__init__.py"
        if not init.exists():
            continue                          # a leaf module: its rule lives in the table only
        said = declared(init)
        rel = _rel(init, root)
        if said is None:
            problems.append(f"{rel}: its docstring has no 'May import:' line "
                            f"(ci/sizes.py says: {', '.join(allowed)})")
        elif said != tuple(sorted(allowed)):
            problems.append(f"{rel}: 'May import:' names {', '.join(said) or 'nothing'}, "
                            f"ci/sizes.py's MAY_IMPORT {', '.join(sorted(allowed)) or 'nothing'}")
    return problems


def problems(root: Path = ROOT) -> list[str]:
    edges = imports(root)
    found = size_problems(root)
    found += [f"import cycle: {' <-> '.join(c)}" for c in cycles(edges)]
    found += layering_problems(edges)
    found += docstring_problems(root)
    return found


def main(argv: list[str]) -> int:
    if "--list" in argv:
        for key, length in sorted(over_budget().items(), key=lambda kv: -kv[1]):
            mark = "" if key in OVER_BUDGET else "   (not listed)"
            print(f"{length:5d}  {key}{mark}")
        return 0
    found = problems()
    for line in found:
        print(line)
    edges = imports()
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} internal imports, "
          f"{len(OVER_BUDGET)} listed over budget, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
