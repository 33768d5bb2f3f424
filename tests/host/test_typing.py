"""Typing: with ``py.typed``, mypy accepts the documented kernels in their typed form
(``typed_kernels.py``: ``Array2D[float]``, width types, shared arrays, atomics, ``@Gpu.func``,
``@Gpu(...)``), and still reports what is wrong. mypy sees cthreads as an installed package
(through ``PYTHONPATH``, which it reads as site-packages: only a package with ``py.typed``
is used there). Skipped only where mypy is not installed (the test extra has it)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install -e '.[test]')")


def _mypy(tmp_path: Path, source: str | None = None, copy: str | None = None) -> str:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    if copy:
        shutil.copy(HERE / copy, work / copy)
        target = copy
    else:
        (work / "k.py").write_text(source)
        target = "k.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYPY")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir",
                          str(tmp_path / "cache"), "--no-error-summary", "--hide-error-context",
                          "--show-error-codes", target], cwd=work, env=env, capture_output=True,
                         text=True, timeout=300)
    assert "error: " not in out.stderr, out.stderr
    return out.stdout


@needs_mypy
def test_mypy_accepts_the_documented_kernels(tmp_path):
    out = _mypy(tmp_path, copy="typed_kernels.py")
    assert out.strip() == "", out


@needs_mypy
def test_mypy_still_reports_wrong_kernels(tmp_path):
    """What the compiler refuses, mypy reports too; and why the array types exist: on
    ``list[list[float]]`` it refuses ``u[i, j]`` and ``u.shape``."""
    out = _mypy(tmp_path, source="""\
from cthreads.gpu import Array2D, GlobalIdx, Gpu

@Gpu
def lists(u: list[list[float]]) -> None:
    u[GlobalIdx.y, GlobalIdx.x] = 1.0
    n: int = u.shape[0]

@Gpu
def typed(u: Array2D[int], m: Array2D[bool], w: Array2D[float]) -> None:
    u[0, 0] = 0.5
    m[0, 0] = 1
    w[0] = 1.0
    w[0, 0] = "a"
""")
    lines = [l for l in out.splitlines() if ": error: " in l]
    at = {int(l.split(":")[1]) for l in lines}
    assert at == {5, 6, 10, 11, 12, 13}, out
    assert "has no attribute \"shape\"" in out


def test_the_typed_kernels_compute_as_the_documented_ones():
    """The typed file's kernels are the docs' kernels: heat_step (Array2D) run thread by thread
    against numpy, blur_rows' chained indexes too."""
    sys.path.insert(0, str(HERE))
    try:
        import typed_kernels as tk
    finally:
        sys.path.remove(str(HERE))
    rng = np.random.default_rng(5)
    u = rng.random((6, 7))
    v = u.copy()
    tk.heat_step.simulate(7, 6, u, v, threads=(7, 6))
    want = u.copy()
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    want[1:-1, 1:-1] = u[1:-1, 1:-1] + tk.ALPHA * lap
    np.testing.assert_allclose(v, want, rtol=1e-12)
    out = np.zeros_like(u)
    tk.blur_rows.simulate(u, out, threads=(7, 6))
    np.testing.assert_allclose(out[:, 1:-1], (u[:, :-2] + u[:, 1:-1] + u[:, 2:]) / 3.0,
                               rtol=1e-12)
    assert (out[:, [0, -1]] == 0).all()
