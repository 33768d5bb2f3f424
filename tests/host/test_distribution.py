"""``python -m cthreads.gpu info``: the distribution that provides ``import cthreads`` and the
warning when another one (PyPI's ``cthreads`` / ``cthreads-gpu``, or a former install under the
old name) is installed too. Installed distributions are faked as dist-info folders in a
temporary site folder; nothing is installed."""

from __future__ import annotations

import json
from pathlib import Path

import cthreads
from cthreads import diagnostics


def _dist(site: Path, name: str, version: str, files=(), direct_url=None, top_level=None):
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = [*files, f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(f if "," in f else f + ",," for f in record) + "\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level + "\n")
    for f in files:
        path = site / f
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


def _lines(site: Path, package_dir: Path) -> list[str]:
    found = diagnostics.providers([str(site)], str(package_dir))
    return diagnostics.distribution_lines(found, str(package_dir))


def test_the_imported_distribution_is_named_and_no_warning_when_alone(tmp_path):
    site = tmp_path / "site"
    _dist(site, "cthreads-wgpu", "0.3.0", ["cthreads/__init__.py", "cthreads/gpu.py"])
    _dist(site, "numpy", "2.0.0", ["numpy/__init__.py"])
    lines = _lines(site, site / "cthreads")
    assert lines == [f"distribution cthreads-wgpu 0.3.0 ({site / 'cthreads'})"]


def test_an_original_package_installed_too_is_warned_about_with_the_fix(tmp_path):
    site, other = tmp_path / "site", tmp_path / "other-site"
    _dist(site, "cthreads-wgpu", "0.3.0", ["cthreads/__init__.py"])
    _dist(other, "cthreads-gpu", "0.2.1", ["cthreads/__init__.py", "cthreads/_native.so"])
    _dist(other, "cthreads", "0.2.1", [], top_level="cthreads")
    found = diagnostics.providers([str(site), str(other)], str(site / "cthreads"))
    lines = diagnostics.distribution_lines(found, str(site / "cthreads"))
    assert lines[0] == f"distribution cthreads-wgpu 0.3.0 ({site / 'cthreads'})"
    assert len(lines) == 3, lines
    gpu, cpu = sorted(lines[1:], key=lambda l: "cthreads-gpu" not in l)
    assert gpu.startswith("warning: cthreads-gpu 0.2.1 (")
    assert "the original project's GPU package" in gpu and gpu.endswith("pip uninstall cthreads-gpu")
    assert "warning: cthreads 0.2.1" in cpu and "the original project's CPU package" in cpu
    assert "provides the import name 'cthreads'" in cpu


def test_two_distributions_sharing_one_folder_get_a_reinstall_in_the_fix(tmp_path):
    """pip installed both into one site folder: uninstalling the other removes files of ours."""
    site = tmp_path / "site"
    _dist(site, "cthreads-gpu", "0.2.1", ["cthreads/__init__.py"])
    _dist(site, "cthreads-wgpu", "0.3.0", ["cthreads/__init__.py", "cthreads/gpu.py"])
    lines = _lines(site, site / "cthreads")
    assert lines[0].startswith("distribution cthreads-wgpu 0.3.0")   # ours named first
    assert lines[1].startswith("warning: cthreads-gpu 0.2.1")
    assert lines[1].endswith("pip uninstall cthreads-gpu, then pip install --force-reinstall "
                             "--no-deps cthreads-wgpu")


def test_editable_installs_and_the_former_name(tmp_path):
    """An editable install lists no package files: its source tree (direct_url.json) counts.
    The project's own former name (cthreads 0.3) is told apart from PyPI's cthreads."""
    tree, old_tree, site = tmp_path / "checkout", tmp_path / "old-checkout", tmp_path / "site"
    for t in (tree, old_tree):
        (t / "cthreads").mkdir(parents=True)
        (t / "cthreads" / "__init__.py").touch()
    _dist(site, "cthreads-wgpu", "0.3.0", ["_cthreads_wgpu.pth"],
          direct_url={"url": tree.as_uri(), "dir_info": {"editable": True}})
    _dist(site, "cthreads", "0.3.0", ["_editable_impl_cthreads.pth"],
          direct_url={"url": old_tree.as_uri(), "dir_info": {"editable": True}})
    _dist(site, "unrelated", "1.0", ["x.pth"],
          direct_url={"url": (tmp_path / "nowhere").as_uri(), "dir_info": {"editable": True}})
    lines = _lines(site, tree / "cthreads")
    assert lines[0] == f"distribution cthreads-wgpu 0.3.0 ({tree / 'cthreads'})"
    assert len(lines) == 2 and lines[1].startswith(
        f"warning: cthreads 0.3.0 ({old_tree / 'cthreads'}) is installed too: this project "
        "under its former distribution name (now cthreads-wgpu)")
    assert lines[1].endswith("pip uninstall cthreads")


def test_a_source_tree_on_the_path_is_said_to_be_no_distribution(tmp_path):
    site = tmp_path / "site"
    _dist(site, "cthreads-gpu", "0.2.1", ["cthreads/__init__.py"])
    here = tmp_path / "src" / "cthreads"
    lines = _lines(site, here)
    assert lines[0] == (f"distribution none: cthreads is imported from {here}, which no "
                        "installed distribution provides (a source tree on PYTHONPATH)")
    assert lines[1].startswith("warning: cthreads-gpu 0.2.1") and len(lines) == 2


def test_info_names_what_this_interpreter_really_imports():
    """The info path on the real metadata: the line names the distribution whose files are the
    imported package (cthreads-wgpu when installed), or says none provides it."""
    lines = diagnostics._versions()
    here = str(Path(cthreads.__file__).resolve().parent)
    found = [p for p in diagnostics.providers() if p.imported]
    [line] = [l for l in lines if l.startswith("distribution ")]
    if found:
        assert line.startswith(f"distribution {found[0].name} ")
        assert found[0].name == diagnostics.DISTRIBUTION
    else:
        assert here in line and line.startswith("distribution none")
    assert lines[0] == f"cthreads     {cthreads.__version__}"
