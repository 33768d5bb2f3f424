"""Packaging: the wheel and sdist build and pass ``twine check``; the wheel (distribution
``cthreads-wgpu``, import name ``cthreads``) holds the licence, ``py.typed`` and the start-up
entry its build hook made; installed into a fresh virtual environment, it runs an example from
outside the source tree, its first process parses no C, and ``info`` names it; the promised
Python version is the one the code needs and CI tests."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def _need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        pytest.fail(f"{module} is missing: install the test extra (pip install -e '.[test]', "
                    "which `make test` does)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and, built from it, the wheel (``python -m build``)."""
    for module in ("build", "twine", "hatchling", "packaging"):
        _need(module)
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the build backend of the test extra, so no download is needed
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT])
    return out


def _requirements(metadata: str) -> set[str]:
    """The wheel's run-time requirements (not those of extras), normalised."""
    from packaging.requirements import Requirement
    return {str(Requirement(line.split(":", 1)[1].strip())) for line in metadata.splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line}


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def test_wheel_and_sdist_pass_twine_check(dist):
    wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(dist)
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *wheels, *sdists])
    assert out.stdout.count("PASSED") == 2, out.stdout
    with zipfile.ZipFile(wheels[0]) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "cthreads/gpu.py" in names and "cthreads/backend/device.py" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", ".venv"))]
    assert "cthreads/py.typed" in names
    # the WGSL library (codegen/library.py reads its files at run time)
    library = {f"cthreads/codegen/library/{p.name}"
               for p in (ROOT / "cthreads" / "codegen" / "library").iterdir()}
    assert library and library <= set(names), sorted(library - set(names))
    [licence] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert "Name: cthreads-wgpu\n" in meta and "License-Expression: MIT\n" in meta
    assert wheels[0].name.startswith("cthreads_wgpu-")
    with tarfile.open(sdists[0]) as t:
        in_sdist = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"LICENSE", "CHANGELOG.md", "hatch_build.py", "pyproject.toml"} <= in_sdist
    assert not [n for n in in_sdist if "/shipped/cffi-decls-" in n]     # a checkout's own
    assert f"Requires-Python: {_project()['requires-python']}" in meta
    from packaging.requirements import Requirement
    assert _requirements(meta) == {str(Requirement(d)) for d in _project()["dependencies"]}


def test_wheel_ships_the_start_up_entry_of_this_environment(dist):
    """The build hook put one parse of wgpu.h in the wheel, named by its key and with the digest
    the loader checks (that a fresh install uses it: the next test)."""
    wheel = next(dist.glob("*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entries = [n for n in names if re.fullmatch(
            r"cthreads/backend/shipped/cffi-decls-[0-9a-f]{32}\.json", n)]
        assert len(entries) == 1, names
        data = z.read(entries[0])
        digest = z.read(entries[0][:-len(".json")] + ".sha256").decode().strip()
    assert hashlib.sha256(data).hexdigest() == digest
    assert json.loads(data)["key"] == entries[0].rsplit("-", 1)[1][:-len(".json")]


def test_a_wheel_build_without_a_usable_wgpu_leaves_the_entry_out_with_a_warning(tmp_path):
    """Where the start-up entry cannot be built (here wgpu cannot be imported), the wheel is
    still built, without it (a first start then parses and caches as before)."""
    for module in ("build", "hatchling"):
        _need(module)
    fake = tmp_path / "fake"
    (fake / "wgpu").mkdir(parents=True)
    (fake / "wgpu" / "__init__.py").write_text("raise ImportError('no wgpu in this build')\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(fake))
    res = _run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", out,
                ROOT], env=env)
    assert "cthreads: no start-up entry in this wheel" in res.stdout + res.stderr
    with zipfile.ZipFile(next(out.glob("*.whl"))) as z:
        names = z.namelist()
    assert "cthreads/gpu.py" in names and "cthreads/py.typed" in names
    assert not [n for n in names if "shipped/cffi-decls-" in n], names


def test_installed_wheel_runs_an_example_in_a_fresh_venv(dist, tmp_path, device_name):
    """The wheel goes into a new venv (created without pip; this interpreter's pip installs into
    it). Its dependencies are not downloaded again: a .pth file points at the folders this test
    run imports wgpu and numpy from, and the wheel's declared requirements are checked to be
    met by those. cthreads itself comes from the wheel only."""
    from importlib import metadata

    from packaging.requirements import Requirement

    wheel = next(dist.glob("*.whl"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index",
          "--disable-pip-version-check", "-q", wheel])

    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
    reqs = [Requirement(r) for r in _requirements(meta.decode())]
    assert {r.name for r in reqs} >= {"wgpu", "numpy"}
    dep_dirs = set()
    for r in reqs:                                       # each met by what is installed here
        dist_ = metadata.distribution(r.name)
        assert r.specifier.contains(dist_.version, prereleases=True), (r, dist_.version)
        dep_dirs.add(str(Path(dist_.locate_file("")).resolve()))
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "_deps_from_test_run.pth").write_text("\n".join(sorted(dep_dirs)) + "\n")

    work = tmp_path / "work"                             # outside the source tree
    work.mkdir()
    (work / "numpy_saxpy.py").write_text((ROOT / "examples" / "numpy_saxpy.py").read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    where = _run([py, "-c", "import cthreads, sys; print(cthreads.__file__); "
                  "print(cthreads.__version__)"], cwd=work, env=env).stdout.split()
    assert Path(where[0]).resolve().is_relative_to(site.resolve()), where
    assert wheel.name.startswith(f"cthreads_wgpu-{where[1]}-")
    out = _run([py, "numpy_saxpy.py", "5000"], cwd=work, env=env)
    assert "saxpy on float32 arrays of 5,000 elements" in out.stdout
    assert out.stdout.count("(OK)") == 2, out.stdout            # checked against float64 there
    assert "float32 x beside float64 y refused: " in out.stdout and "NOT REFUSED" not in out.stdout

    # a first process with new, empty cache folders parses no C: the wheel's entry is used
    fresh = tmp_path / "fresh-cache"
    env_fresh = dict(env, CTHREADS_CACHE_DIR=str(fresh / "cthreads"), XDG_CACHE_HOME=str(fresh),
                     MESA_SHADER_CACHE_DIR=str(fresh / "mesa"))
    out = _run([py, "-c", COUNT_HEADER_PARSES], cwd=work, env=env_fresh)
    assert out.stdout.split()[-1] == "header-parses=0", out.stdout

    # info names the distribution that provides the import (the test run's own cthreads, if
    # its dependency folders hold one, may be warned about: it is another install)
    out = subprocess.run([py, "-m", "cthreads.gpu", "info"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=120)
    line = next(l for l in out.stdout.splitlines() if l.startswith("distribution "))
    assert line.startswith(f"distribution cthreads-wgpu {where[1]} ("), out.stdout
    assert Path(line.split(" (", 1)[1].rstrip(")")).resolve() == (site / "cthreads").resolve()
    assert not [l for l in out.stdout.splitlines()
                if l.startswith("warning: ") and str(venv) in l], out.stdout


#: run in the wheel's venv: how many times wgpu.h (the one C source over 10,000 characters) is
#: parsed on the way to a device
COUNT_HEADER_PARSES = """
from cffi import cparser
parse, big = cparser.Parser.parse, []
def counting(self, csource, *args, **kwargs):
    if len(csource) >= 10_000:
        big.append(len(csource))
    return parse(self, csource, *args, **kwargs)
cparser.Parser.parse = counting
import cthreads.gpu as g
g.init()
print(f"header-parses={len(big)}")
"""


# -- the promised Python version ------------------------------------------------------------

#: APIs new in Python 3.11 that the package would need (name: where to look for it)
PY311 = [r"\.add_note\(", r"\bimport tomllib\b", r"\bExceptionGroup\b", r"\bexcept\*",
         r"\bmath\.exp2\(", r"\bmath\.cbrt\(", r"\basyncio\.TaskGroup\b", r"\bdatetime\.UTC\b"]


def _min_python() -> tuple[int, int]:
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)", _project()["requires-python"].strip())
    assert m, "requires-python should be a plain lower bound, '>=3.X'"
    return int(m[1]), int(m[2])


def test_promised_python_is_what_the_code_needs_and_ci_runs():
    lowest = _min_python()
    assert lowest <= sys.version_info[:2]                       # the suite runs on it
    used = sorted({pat for f in (ROOT / "cthreads").rglob("*.py")
                   for pat in PY311 if re.search(pat, f.read_text())})
    if used:
        assert lowest >= (3, 11), f"the package uses {used} (Python 3.11+)"
    setup = (ROOT / "ci" / "setup.sh").read_text()
    want = f"{lowest[0]}.{lowest[1]}"
    assert f"sys.version_info < ({lowest[0]}, {lowest[1]})" in setup
    assert f"needs Python {want} or newer" in setup and f"install Python {want} or newer" in setup
