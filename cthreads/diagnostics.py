"""``python -m cthreads.gpu info``: what cthreads sees on this machine, in plain text."""

from __future__ import annotations

import platform
import sys
import time

from . import __version__, config
from .backend import device as _device
from .errors import CThreadsGPUError

KEY_LIMITS = ("max-storage-buffer-binding-size", "max-buffer-size",
              "max-compute-workgroup-storage-size", "max-compute-workgroups-per-dimension",
              "max-compute-invocations-per-workgroup", "max-storage-buffers-per-shader-stage")


def _versions() -> list[str]:
    lines = [f"cthreads     {__version__}",
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
    from .runtime import describe_launches  # noqa: PLC0415
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
