"""``python -m cthreads.gpu info``: what cthreads sees on this machine, in plain text."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from . import __version__, config
from .backend import device as _device
from .errors import CThreadsGPUError

KEY_LIMITS = ("max-storage-buffer-binding-size", "max-buffer-size",
              "max-compute-workgroup-storage-size", "max-compute-workgroups-per-dimension",
              "max-compute-invocations-per-workgroup", "max-storage-buffers-per-shader-stage")


#: this project's distribution name (the import name is ``cthreads``)
DISTRIBUTION = "cthreads-wgpu"
#: the package that ``import cthreads`` imports
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Provider:
    """An installed distribution that provides the import name ``cthreads``."""
    name: str
    version: str
    location: str        # where its ``cthreads`` package is (or its source tree, if editable)
    imported: bool       # whether ``import cthreads`` imports this one


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)


def _provider(dist, package_dir: str) -> Provider | None:
    """``dist`` as a provider of ``cthreads`` (None when it provides another import name): by
    its files (``cthreads/...``), its ``top_level.txt``, or, for an editable install, the
    source tree its ``direct_url.json`` names."""
    name, version = dist.metadata["Name"], dist.version
    files = [f for f in (dist.files or ()) if f.parts and f.parts[0] == "cthreads"]
    top = (dist.read_text("top_level.txt") or "").split()
    if files or "cthreads" in top:
        init = next((f for f in files if f.parts[1:] == ("__init__.py",)), None)
        where = os.path.dirname(str(dist.locate_file(init))) if init else \
            str(dist.locate_file("cthreads"))
        return Provider(name, version, where, _same(where, package_dir))
    try:
        url = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return None
    if url.get("dir_info", {}).get("editable") and url.get("url", "").startswith("file:"):
        where = os.path.join(unquote(urlparse(url["url"]).path), "cthreads")
        if os.path.isfile(os.path.join(where, "__init__.py")):
            return Provider(name, version, where, _same(where, package_dir))
    return None


def providers(path: list[str] | None = None, package_dir: str = PACKAGE_DIR) -> list[Provider]:
    """Every installed distribution on ``path`` (default ``sys.path``) that provides the import
    name ``cthreads`` (what ``importlib.metadata.packages_distributions()`` maps it to, plus
    editable installs, whose files lie in their source tree)."""
    from importlib import metadata  # noqa: PLC0415
    found, seen = [], set()
    for dist in metadata.distributions(path=sys.path if path is None else path):
        try:
            p = _provider(dist, package_dir)
        except Exception:                      # a broken dist-info folder: not ours to judge
            continue
        key = (p.name.lower().replace("_", "-"), p.location) if p else None
        if p and key not in seen:
            seen.add(key)
            found.append(p)
    return found


def _describe(p: Provider) -> str:
    name = p.name.lower().replace("_", "-")
    if name == "cthreads-gpu":
        return "the original project's GPU package (PyPI's cthreads-gpu)"
    if name == "cthreads" and p.version.split(".")[:2] in (["0", "1"], ["0", "2"]):
        return "the original project's CPU package (PyPI's cthreads)"
    if name == "cthreads":
        return f"this project under its former distribution name (now {DISTRIBUTION})"
    return "another install of the same import name"


def distribution_lines(found: list[Provider], package_dir: str = PACKAGE_DIR) -> list[str]:
    """What ``info`` says about the distributions providing ``cthreads``: which one is
    imported, and a warning for each other one (the original project's ``cthreads`` and
    ``cthreads-gpu`` share the import name: only one can be installed)."""
    mine = sorted((p for p in found if p.imported), key=lambda p: p.name != DISTRIBUTION)
    if mine:
        p = mine[0]
        lines = [f"distribution {p.name} {p.version} ({p.location})"]
    else:
        lines = [f"distribution none: cthreads is imported from {package_dir}, which no "
                 "installed distribution provides (a source tree on PYTHONPATH)"]
    for p in found:
        if mine and p is mine[0]:
            continue
        fix = f"pip uninstall {p.name}"
        if mine and _same(p.location, mine[0].location):
            # their files share one folder: uninstalling one removes files of the other
            fix += f", then pip install --force-reinstall --no-deps {mine[0].name}"
        lines.append(f"warning: {p.name} {p.version} ({p.location}) is installed too: "
                     f"{_describe(p)}, which also provides the import name 'cthreads'. "
                     f"Install only one of them: {fix}")
    return lines


def _versions() -> list[str]:
    lines = [f"cthreads     {__version__}"]
    try:
        lines += distribution_lines(providers())
    except Exception as exc:                   # the report goes on without it
        lines.append(f"distribution ? ({type(exc).__name__}: {exc})")
    lines += [
             f"python       {platform.python_version()} ({sys.executable})",
             f"os           {platform.platform()}"]
    try:
        wgpu = _device.import_wgpu()
        lines.append(f"wgpu         {wgpu.__version__}")
        try:
            from wgpu.backends.wgpu_native import __version__ as native  # noqa: PLC0415
            lines.append(f"wgpu-native  {native}")
        except Exception:
            lines.append("wgpu-native  ?")
    except CThreadsGPUError as exc:
        lines.append(f"wgpu         not importable: {exc}")
    loader = _device.find_vulkan_loader()
    lines.append(f"vulkan       {loader or 'no loader library found'}")
    return lines


def _settings(settings: config.Config) -> list[str]:
    """The settings in force (``cthreads/config.py``), one line per environment variable."""
    plain = {
        "adapter": lambda v: v or "(unset: the best-ranked adapter type)",
        "workgroup_size": lambda v: "(unset: the device's pick)" if v is None else str(v),
        "coarsen": lambda v: "(unset: the runtime's pick)" if v is None else str(v),
        "vec": lambda v: "1" if v else "0",
        "batch": lambda v: "1" if v else "0",
        "native_encoder": lambda v: "1" if v else "0",
        "device_memory": lambda v: "(unset: no limit)" if v is None else f"{v:,} bytes",
        "cache_dir": str,
        "hide_features": lambda v: ", ".join(v) if v else "(unset: none hidden)",
        "device_copies": lambda v: "1 (unset)" if v == 1 else f"{v} (each adapter {v} times)",
        "full_traceback": lambda v: "1" if v else "0",
        "dump_wgsl": lambda v: v or "(unset: no dump)",
        "axis_reduce": lambda v: v or "(unset: r3 on CPU drivers, r2 on GPUs)",
        "sort_form": lambda v: v or "(unset: 8-bit digits on GPUs, 4-bit on CPU drivers)",
        "scan": lambda v: v or "(unset: the fast form on GPUs)",
        "check_form": lambda v: v if v != "branch" else "branch (unset or branch)",
        "launch_path": lambda v: v or "(unset: repeated launches keep their bind groups)",
        "matmul_cpu": lambda v: v or "(unset: the lanes form on CPU drivers)",
        "reduce_form": lambda v: v or "(unset: one pass on GPUs)",
        "scratch": lambda v: v or "(unset: pending scratch back to the pool)",
        "keep_fed": lambda v: v or "(unset: heavy GPU dispatches gather while one runs)",
        "index_form": lambda v: v or "(unset: N-D row lengths read once per invocation)",
    }
    problems = settings.problems()
    lines = ["settings:"]
    for name, var in config.VARIABLES.items():
        try:
            text = plain[name](getattr(settings, name))
        except CThreadsGPUError:
            text = "NOT ACCEPTED (below)"
        lines.append(f"  {var:24s} {text}")
    return lines + [f"  error: {p}" for p in problems]


def report() -> tuple[list[str], bool]:
    """(lines to print, whether a usable device exists and the settings are all accepted)."""
    settings = config.current()
    settings_ok = not settings.problems()
    lines = _versions() + [""] + _settings(settings)
    t0 = time.perf_counter()
    try:
        vulkan, all_adapters = _device.enumerate_vulkan_adapters()
    except CThreadsGPUError as exc:
        lines += ["", f"no usable device: {exc}"]
        return lines, False
    lines += ["", "adapters:"]
    for a in all_adapters:
        i = _device.AdapterInfo.of(a)
        lines.append(f"  - {i.name} [{i.backend}, {i.adapter_type}] {i.driver}")
    if not vulkan:
        lines += ["", "no Vulkan adapter. " + _device.INSTALL_HINT]
        return lines, False
    try:
        listed = [_device.AdapterInfo.of(a) for a in _device.device_list()]
        default = _device.default_index()
    except CThreadsGPUError as exc:
        lines += ["", f"no usable device: {exc}"]
        return lines, False
    lines += ["", "devices (use_device(index) / gpu(..., device=index)):"]
    for k, i in enumerate(listed):
        mark = "  (the default)" if k == default else ""
        lines.append(f"  {k}: {i.name} [{i.adapter_type}]{mark}")
    try:
        ctx = _device.get_context()
    except CThreadsGPUError as exc:
        lines += ["", f"no usable device: {exc}"]
        return lines, False
    took = time.perf_counter() - t0
    lines += ["", f"chosen: {ctx.name} [{ctx.info.backend}, {ctx.info.adapter_type}]"
                  f" (device ready in {took:.2f} s)", "limits:"]
    for key in KEY_LIMITS:
        if key in ctx.limits:
            lines.append(f"  {key:40s} {int(ctx.limits[key]):,}")
    lines.append("features: " + ", ".join(sorted(ctx.features)))
    if not settings_ok:
        return lines, False
    from .runtime.variants import describe_launches  # noqa: PLC0415
    lines += ["launches:"] + describe_launches(ctx)
    return lines, True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in ([], ["info"]):
        print("usage: python -m cthreads.gpu info", file=sys.stderr)
        return 2
    lines, ok = report()
    print("\n".join(lines))
    return 0 if ok else 1
