"""ci/sizes.py, the size and layering budgets of the package, run as a test so that CI fails on
a module over 600 lines, a function over 60 (unless listed with a reason), an import cycle or an
import a folder's rules forbid."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sizes():
    spec = importlib.util.spec_from_file_location("ci_sizes", ROOT / "ci" / "sizes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_sizes"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("ci_sizes", None)


def test_the_package_is_within_its_budgets(sizes):
    assert sizes.problems() == []


def test_every_listed_exception_gives_a_reason(sizes):
    for key, reason in sizes.OVER_BUDGET.items():
        assert len(reason.split()) >= 5, key


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_package(root: Path) -> None:
    """A package shaped like cthreads: errors, config, lang/, backend/, runtime/."""
    write(root, "cthreads/__init__.py", '"""root"""\n')
    write(root, "cthreads/errors.py", '"""errors"""\n')
    write(root, "cthreads/config.py", "from .errors import x\n")
    write(root, "cthreads/sync.py", "from .lang import y\n")
    write(root, "cthreads/lang/__init__.py", '"""What a kernel names.\n\nMay import: '
          '``cthreads.errors`` only (remark ``cthreads.codegen``).\n"""\n')
    write(root, "cthreads/codegen/__init__.py", '"""Compiler.\n\nMay import: ``cthreads.errors``, '
          '``cthreads.config``, ``cthreads.lang`` and ``cthreads.sync``; never '
          '``cthreads.backend``.\n"""\n')
    write(root, "cthreads/backend/__init__.py", '"""wgpu.\n\nMay import: ``cthreads.errors``, '
          '``cthreads.config`` and its own modules; never ``cthreads.codegen``.\n"""\n')
    write(root, "cthreads/backend/native/__init__.py", '"""native.\n\nMay import: '
          '``cthreads.errors``, ``cthreads.config`` and ``cthreads.backend``.\n"""\n')
    write(root, "cthreads/runtime/__init__.py", '"""host side.\n\nMay import: ``cthreads.errors``, '
          '``cthreads.config``, ``cthreads.lang``, ``cthreads.codegen`` (tables, never passes) '
          'and ``cthreads.backend``.\nNever the root.\n"""\n')


def test_a_clean_fake_package_passes(sizes, tmp_path):
    fake_package(tmp_path)
    saved = dict(sizes.OVER_BUDGET)
    sizes.OVER_BUDGET.clear()
    try:
        assert sizes.problems(tmp_path) == []
    finally:
        sizes.OVER_BUDGET.update(saved)


@pytest.fixture
def unlisted(sizes):
    saved = dict(sizes.OVER_BUDGET)
    sizes.OVER_BUDGET.clear()
    yield sizes.OVER_BUDGET
    sizes.OVER_BUDGET.update(saved)


def test_a_long_function_fails_unless_listed(sizes, tmp_path, unlisted):
    fake_package(tmp_path)
    body = "".join(f"        x{i} = {i}\n" for i in range(60))         # def line + 60: 61
    write(tmp_path, "cthreads/lang/big.py", "class C:\n    def f(self):\n" + body)
    found = sizes.problems(tmp_path)
    assert found == ["cthreads/lang/big.py::C.f: function of 61 lines, over the budget of 60; "
                     "split it, or list it in OVER_BUDGET (ci/sizes.py) with its reason"]
    unlisted["cthreads/lang/big.py::C.f"] = "a reason given in the table"
    assert sizes.problems(tmp_path) == []


def test_a_long_module_fails_and_a_stale_entry_fails(sizes, tmp_path, unlisted):
    fake_package(tmp_path)
    write(tmp_path, "cthreads/lang/long.py", "x = 1\n" * 601)
    assert sizes.problems(tmp_path)[0].startswith(
        "cthreads/lang/long.py: module of 601 lines, over the budget of 600")
    unlisted["cthreads/lang/long.py"] = "a reason given in the table"
    unlisted["cthreads/lang/gone.py"] = "a module that was split since"
    assert sizes.problems(tmp_path) == [
        "cthreads/lang/gone.py: listed in OVER_BUDGET but within budget (or gone): remove its "
        "entry"]


def test_an_upward_import_fails(sizes, tmp_path, unlisted):
    fake_package(tmp_path)
    write(tmp_path, "cthreads/kernel.py", '"""a user object"""\n')
    write(tmp_path, "cthreads/backend/dispatch.py", "def f():\n    from ..kernel import k\n")
    write(tmp_path, "cthreads/backend/native/enc.py", "from .. import dispatch\n")   # allowed
    assert sizes.problems(tmp_path) == [
        "cthreads.backend.dispatch imports cthreads.kernel: cthreads.backend may import only "
        "cthreads.errors, cthreads.config"]


def test_an_import_cycle_fails(sizes, tmp_path, unlisted):
    fake_package(tmp_path)
    write(tmp_path, "cthreads/a.py", "from . import b\n")
    write(tmp_path, "cthreads/b.py", "def f():\n    import cthreads.a\n")
    assert sizes.problems(tmp_path) == ["import cycle: cthreads.a <-> cthreads.b"]


def test_docstrings_and_table_must_agree(sizes, tmp_path, unlisted):
    fake_package(tmp_path)
    write(tmp_path, "cthreads/lang/__init__.py", '"""What a kernel names.\n\nMay import: '
          '``cthreads.errors`` and ``cthreads.config``.\n"""\n')
    write(tmp_path, "cthreads/codegen/__init__.py", '"""Compiler, no rule line."""\n')
    assert sizes.problems(tmp_path) == [
        "cthreads/lang/__init__.py: 'May import:' names cthreads.config, cthreads.errors, "
        "ci/sizes.py's MAY_IMPORT cthreads.errors",
        "cthreads/codegen/__init__.py: its docstring has no 'May import:' line (ci/sizes.py "
        "says: cthreads.errors, cthreads.config, cthreads.lang, cthreads.sync)"]
