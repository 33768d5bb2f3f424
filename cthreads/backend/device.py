"""The Vulkan devices of the process: adapter choice, limits, features, lifecycle.

Nothing here runs at import: ``wgpu`` itself is imported on first use, so ``import cthreads``
stays light. Each device is created once, lazily, under a lock, and ``shutdown()`` drops them
all so the next use starts afresh.

Vulkan is pinned: the wgpu instance is created with the Vulkan backend only (which also skips the
slow probing of wgpu's OpenGL/EGL backend), and any adapter whose ``backend_type`` is not Vulkan
is ignored. A real GPU is preferred over a CPU driver; ``CTHREADS_ADAPTER=<substring>`` picks an
adapter by name.

Several devices: ``device_list()`` numbers the adapters (GPUs before CPU drivers, in wgpu's
order within a kind; ``CTHREADS_DEVICE_COPIES`` repeats each, a test hook), and the context
variable ``selection`` holds the index the calling thread or asyncio task chose
(``use_device``; None for the default device, the one ``CTHREADS_ADAPTER`` or the ranking
picks). ``get_context()`` returns the selected device, created on first use; the default one
is also kept in ``_context`` so that the path without a selection stays one attribute read.
A device loss drops every device (as ``shutdown()`` does): objects made on any of them then
raise ``GpuUseAfterDestroy`` and the next use starts afresh.

Raw wgpu errors are mapped to ours in ``faults``; a forked child forgets the parent's devices
through ``forking``.
"""

from __future__ import annotations

import contextvars
import ctypes
import logging
import os
import sys
import threading
from dataclasses import dataclass, field

from .. import config
from ..errors import (GpuInvalidArgument, VulkanInitFailed, VulkanLoaderNotFound, VulkanNoDevice,
                      VulkanNotBuiltError)
from . import forking
from .faults import LogWatcher, device_error, lost_error
from .forking import on_fork_child  # noqa: F401 - re-exported: modules above register here

#: Features requested when the adapter has them (later parts of the library use them;
#: "shader-int64-atomic-all-ops": atomics on int64 lists, which need "shader-int64" too;
#: "timestamp-query-inside-passes": timed jobs share a compute pass, backend/timing.py).
WANTED_FEATURES = ("shader-f64", "shader-int64", "shader-float32-atomic", "timestamp-query",
                   "subgroup", "pipeline-cache", "shader-int64-atomic-all-ops",
                   "timestamp-query-inside-passes")

#: Limits raised to the adapter's own values (WebGPU defaults are far below what devices allow).
WANTED_LIMITS = ("max-storage-buffer-binding-size", "max-buffer-size",
                 "max-compute-workgroup-storage-size", "max-storage-buffers-per-shader-stage",
                 "max-compute-workgroups-per-dimension", "max-compute-invocations-per-workgroup",
                 "max-compute-workgroup-size-x", "max-uniform-buffer-binding-size",
                 "max-bind-groups", "max-bindings-per-bind-group",
                 "max-dynamic-uniform-buffers-per-pipeline-layout",
                 "min-storage-buffer-offset-alignment")

_ADAPTER_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}

INSTALL_HINT = (
    "On Debian/Ubuntu install a Vulkan driver with: apt-get install libvulkan1 mesa-vulkan-drivers "
    "(lavapipe, a CPU driver, works without a GPU); on other systems install your GPU vendor's "
    "Vulkan driver. `python -m cthreads.gpu info` shows what cthreads can see.")

_lock = threading.RLock()
_context: "DeviceContext | None" = None     # the default device (no selection), when up
_contexts: dict = {}      # index in device_list() -> DeviceContext, every device that is up
_listed: tuple | None = None     # (CTHREADS_DEVICE_COPIES, [adapter, ...]) of device_list()
#: the index into device_list() this thread / asyncio task selected (use_device), or None
selection: contextvars.ContextVar = contextvars.ContextVar("cthreads_device", default=None)
_generation = 0           # bumped by shutdown(); lets caches and arenas notice a new device
_wgpu = None              # the imported wgpu module
_instance_configured = False


@dataclass
class AdapterInfo:
    name: str
    backend: str
    adapter_type: str
    vendor: str
    driver: str

    @classmethod
    def of(cls, adapter) -> "AdapterInfo":
        info = adapter.info
        return cls(name=str(info.get("device", "?")), backend=str(info.get("backend_type", "?")),
                   adapter_type=str(info.get("adapter_type", "?")),
                   vendor=str(info.get("vendor", "")),
                   driver=str(info.get("driver", "") or info.get("description", "")))


@dataclass
class DeviceContext:
    """Everything the rest of the backend needs from the device."""

    adapter: object
    device: object
    queue: object
    info: AdapterInfo
    limits: dict
    features: frozenset
    generation: int
    lost: str | None = None                    # reason, once the device is lost
    errors: list = field(default_factory=list)  # uncaptured errors not yet reported
    index: int = 0                             # its place in device_list()
    dq: object = None                          # its DeviceQueue (backend.get_queue)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def label(self) -> str:
        """``device 1 ('NVIDIA H200')``: how messages name a device among several."""
        return f"device {self.index} ({self.name!r})"

    @property
    def is_cpu(self) -> bool:
        return self.info.adapter_type == "CPU"

    @property
    def fma_rounds_once(self) -> bool:
        """Whether the shader compiler computes a float32 ``fma`` with one rounding. Vulkan
        lets it round the product and the sum apart; CPU drivers do (lavapipe's LLVM code
        rounds twice), GPU drivers fuse (NVIDIA's). Kernels get it as the pipeline constant
        ``ct_fused_f32`` (codegen/float_ops.py): the exact division helpers use one fma
        where it holds and Dekker's product where it does not."""
        return not self.is_cpu

    @property
    def exact_f32_in_f64(self) -> bool:
        """Whether the fma-free float32 helpers run in float64 (codegen/float_ops.py):
        on devices whose fma rounds twice and that have ``shader-f64`` (CPU drivers, where a
        float64 division costs what a float32 one does; measured: ``bench/f32_division.py``)."""
        return not self.fma_rounds_once and not self.missing(["shader-f64"])

    def limit(self, key: str) -> int:
        return int(self.limits[key])

    def missing(self, features) -> list:
        """The ``features`` the device lacks, or that CTHREADS_HIDE_FEATURES hides."""
        hidden = config.current().hide_features
        return [f for f in features if f not in self.features or f in hidden]

    def check_alive(self) -> None:
        """Raise the pending device-level error (loss or an uncaptured error), if any."""
        if self.lost is not None:
            raise lost_error(self, self.lost)
        if self.errors:
            msg = self.errors.pop(0)
            self.errors.clear()
            raise device_error(self, msg, "running submitted work")


def default_context() -> "DeviceContext | None":
    """The default device (the one used without a ``use_device`` selection) when it is up,
    else None; never creates one (``get_context`` does)."""
    return _context


def _watched() -> "DeviceContext | None":
    """The device a wgpu log record is charged to: the caller's selected one, else the
    default (a record does not say which device it is about; a loss drops them all)."""
    slot = selection.get()
    return _context if slot is None else _contexts.get(slot, _context)


_watcher = LogWatcher(_watched)


def import_wgpu():
    """Import wgpu (once), mapping a missing or broken install to ``VulkanNotBuiltError``."""
    global _wgpu
    if _wgpu is not None:
        return _wgpu
    try:
        import wgpu  # noqa: PLC0415 - deliberately lazy
    except Exception as exc:  # ImportError, or a broken native library
        raise VulkanNotBuiltError(
            f"the GPU dependency wgpu cannot be imported ({exc}); install it with "
            "`pip install wgpu` (or reinstall cthreads: `pip install cthreads`)") from None
    _wgpu = wgpu
    return wgpu


def _loader_names() -> list[str]:
    if sys.platform.startswith("win"):
        return ["vulkan-1.dll"]
    if sys.platform == "darwin":
        return ["libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib"]
    return ["libvulkan.so.1", "libvulkan.so"]


def find_vulkan_loader() -> str | None:
    """Path or name of a loadable Vulkan loader library, or None."""
    names = _loader_names()
    for name in names:
        try:
            ctypes.CDLL(name)
        except OSError:
            continue
        return name
    from ctypes.util import find_library  # noqa: PLC0415 - slow import, rarely needed
    found = find_library("vulkan")
    if found:
        try:
            ctypes.CDLL(found)
            return found
        except OSError:
            pass
    return None


def _configure_instance(wgpu) -> None:
    """Create the wgpu instance with the Vulkan backend only (once per process)."""
    global _instance_configured
    if _instance_configured:
        return
    try:
        from .native.header_cache import import_native_ffi, speed_up_type_parsing  # noqa: PLC0415
        speed_up_type_parsing(import_native_ffi().ffi)
    except Exception:
        pass
    try:
        from wgpu.backends.wgpu_native import extras  # noqa: PLC0415
        extras.set_instance_extras(backends=["Vulkan"])
    except Exception:
        # The instance already exists (another library used wgpu first) or the API moved:
        # adapters of other backends are then filtered out below instead.
        pass
    _instance_configured = True
    wgpu_logger = logging.getLogger("wgpu")
    if _watcher not in wgpu_logger.handlers:
        wgpu_logger.addHandler(_watcher)


def enumerate_vulkan_adapters() -> tuple[list, list]:
    """(Vulkan adapters, all adapters) visible to wgpu, after the loader checks."""
    wgpu = import_wgpu()
    if find_vulkan_loader() is None:
        raise VulkanLoaderNotFound(
            "no Vulkan loader library (libvulkan) could be loaded. " + INSTALL_HINT)
    _configure_instance(wgpu)
    try:
        with _QuietWayland():
            adapters = list(wgpu.gpu.enumerate_adapters_sync())
    except Exception as exc:
        raise VulkanNoDevice(f"listing Vulkan adapters failed ({exc}). " + INSTALL_HINT) from None
    vulkan = [a for a in adapters if str(a.info.get("backend_type", "")) == "Vulkan"]
    return vulkan, adapters


def choose_adapter(adapters: list):
    """Pick the adapter: ``CTHREADS_ADAPTER`` substring, else the best-ranked type."""
    if not adapters:
        raise VulkanNoDevice("no Vulkan adapter found. " + INSTALL_HINT)
    wanted = config.current().adapter
    if wanted:
        matches = [a for a in adapters if wanted.lower() in AdapterInfo.of(a).name.lower()]
        if not matches:
            names = ", ".join(repr(AdapterInfo.of(a).name) for a in adapters)
            raise VulkanNoDevice(
                f"CTHREADS_ADAPTER={wanted!r} matches no Vulkan adapter; available: {names}. "
                "Set it to a part of one of these names, or unset it")
        adapters = matches
    return min(adapters, key=lambda a: _ADAPTER_RANK.get(AdapterInfo.of(a).adapter_type, 9))


class _QuietWayland:
    """Keep Mesa's Vulkan drivers from printing "XDG_RUNTIME_DIR is invalid or not set".

    On a machine without a desktop session (CI, containers, servers) libwayland prints that
    line several times while the driver probes for a display we never use. With the variable
    pointing at a folder that does not exist the probe fails the same way, silently. Only
    applied when the variable is unset, and only while the device is being created.
    """

    def __enter__(self):
        self.set = sys.platform.startswith("linux") and "XDG_RUNTIME_DIR" not in os.environ
        if self.set:
            os.environ["XDG_RUNTIME_DIR"] = f"/nonexistent/cthreads-{os.getpid()}"
        return self

    def __exit__(self, *exc):
        if self.set:
            os.environ.pop("XDG_RUNTIME_DIR", None)


def order_adapters(adapters: list) -> list:
    """``adapters`` in cthreads' numbering: GPUs before CPU drivers (stable within a kind)."""
    return sorted(adapters, key=lambda a: _ADAPTER_RANK.get(AdapterInfo.of(a).adapter_type, 9))


def device_list() -> list:
    """The adapters ``devices()`` numbers, each ``CTHREADS_DEVICE_COPIES`` times (listed once
    per process, again after ``shutdown()`` or a change of that setting)."""
    copies = config.current().device_copies
    listed = _listed
    if listed is not None and listed[0] == copies:
        return listed[1]
    return _list_locked(copies)


def _list_locked(copies: int) -> list:
    global _listed
    with _lock:
        if _listed is None or _listed[0] != copies:
            with _QuietWayland():
                vulkan, _ = enumerate_vulkan_adapters()
            if not vulkan:
                raise VulkanNoDevice("no Vulkan adapter found. " + INSTALL_HINT)
            _listed = (copies, [a for a in order_adapters(vulkan) for _ in range(copies)])
        return _listed[1]


def default_index() -> int:
    """The index in ``device_list()`` of the default device (``choose_adapter``'s pick)."""
    adapters = device_list()
    return adapters.index(choose_adapter(adapters))


def resolve(sel) -> int | None:
    """The index in ``device_list()`` that ``sel`` means: an index, a case-insensitive part of
    a name (the first match), or None (the default device). GpuInvalidArgument otherwise."""
    if sel is None:
        return None
    if isinstance(sel, bool) or not isinstance(sel, (int, str)):
        raise GpuInvalidArgument(
            f"use_device / device=: expects an index into devices() or a part of a device's "
            f"name, got {sel!r}")
    names = [AdapterInfo.of(a).name for a in device_list()]
    listing = ", ".join(f"{k}: {n!r}" for k, n in enumerate(names))
    if isinstance(sel, int):
        if 0 <= sel < len(names):
            return sel
        raise GpuInvalidArgument(
            f"device {sel}: there is no such device; devices() lists {len(names)} "
            f"({listing}). Pick an index below {len(names)}")
    for k, name in enumerate(names):
        if sel.lower() in name.lower():
            return k
    raise GpuInvalidArgument(
        f"device {sel!r} matches no device; devices() lists {listing}. Give an index or a "
        "part of one of these names")


def _create_context(index: int) -> DeviceContext:
    with _QuietWayland():
        return _create_context_quietly(index)


def _create_context_quietly(index: int) -> DeviceContext:
    adapter = device_list()[index]
    features = [f for f in WANTED_FEATURES if f in adapter.features]
    limits = {k: adapter.limits[k] for k in WANTED_LIMITS if k in adapter.limits}
    try:
        device = adapter.request_device_sync(required_features=features, required_limits=limits,
                                             label=f"cthreads-{index}")
    except Exception as exc:
        raise VulkanInitFailed(
            f"creating the Vulkan device on {AdapterInfo.of(adapter).name!r} failed ({exc}). "
            "Update the Vulkan driver, or pick another adapter with CTHREADS_ADAPTER") from None
    return DeviceContext(adapter=adapter, device=device, queue=device.queue,
                         info=AdapterInfo.of(adapter), limits=dict(device.limits),
                         features=frozenset(str(f) for f in device.features),
                         generation=_generation, index=index)


def get_context() -> DeviceContext:
    """The device of the caller's selection (``use_device``; else the default device), created
    on first call (raises the mapped error on failure).

    A device found lost drops every device first (as ``shutdown()`` does, without waiting on
    them), so the next use after a loss runs on new devices.
    """
    slot = selection.get()
    if slot is None:
        ctx = _context
    else:
        ctx = _contexts.get(slot)
    if ctx is not None and ctx.lost is None:
        return ctx
    return _get_context_locked(slot)


def _get_context_locked(slot: int | None) -> DeviceContext:
    global _context
    with _lock:
        if any(c.lost is not None for c in _contexts.values()):
            _retire_all()
        if slot is None and _context is not None:
            return _context
        try:
            default = default_index()
            index = default if slot is None else slot
            ctx = _contexts.get(index)
            if ctx is None:
                ctx = _contexts[index] = _create_context(index)
        except VulkanInitFailed as exc:
            if forking.forked():
                raise VulkanInitFailed(
                    "cthreads cannot start a Vulkan device in this process: it was forked "
                    "(os.fork, or multiprocessing's 'fork' start method) from a process "
                    "whose device was up, and the driver refuses a device in a forked "
                    "process. Start worker processes with the 'spawn' or 'forkserver' "
                    "method (multiprocessing.get_context('spawn')), or fork before the "
                    f"first launch. ({exc})") from None
            raise
        if index == default:
            _context = ctx
        return ctx


def open_contexts() -> list:
    """The devices that are up (never creates one), in ``device_list()`` order."""
    return [_contexts[k] for k in sorted(_contexts)]


def is_lost() -> bool:
    """Whether a device that is up was lost (never creates one)."""
    return any(c.lost is not None for c in list(_contexts.values()))


def current_name() -> str | None:
    """The selected device's name if it is up, else None. Never creates a device."""
    slot = selection.get()
    ctx = _context if slot is None else _contexts.get(slot)
    return None if ctx is None else ctx.name


def generation() -> int:
    return _generation


_shutdown_hooks: list = []


def on_shutdown(hook) -> None:
    """Register a callable run (device still alive) before a device is dropped.

    It gets the DeviceContext (None when no device is up), once per device; after a loss
    ``ctx.lost`` may be set and the hook must not wait on a device whose ``lost`` is set."""
    _shutdown_hooks.append(hook)


def _retire_all() -> list:
    """Run the shutdown hooks for every device and forget them all (lock held); the next use
    creates devices anew. Returns the contexts retired."""
    global _context, _generation, _listed
    retired = open_contexts()
    for ctx in retired or [None]:
        for hook in list(_shutdown_hooks):
            try:
                hook(ctx)
            except Exception:  # pragma: no cover - shutdown must always finish
                pass
    _generation += 1
    _context = None
    _contexts.clear()
    _listed = None
    return retired


def shutdown() -> None:
    """Release every device and cache; the next use creates new devices."""
    with _lock:
        for ctx in _retire_all():
            if ctx.lost is None:
                try:
                    ctx.device._poll_wait()  # let submitted work finish before anything goes
                except Exception:
                    pass
                try:
                    ctx.device.destroy()
                except Exception:
                    pass


def _forget_device_after_fork() -> None:
    """In a forked child (see ``forking``): forget the parent's devices without calling wgpu."""
    global _lock, _context, _generation, _instance_configured, _listed
    _lock = threading.RLock()
    if _wgpu is None:           # wgpu never imported: nothing was inherited
        return
    forking.disarm_inherited_wgpu_objects()
    forking.forsake(_context, list(_contexts.values()), _listed)
    _context = None
    _contexts.clear()
    _listed = None
    _generation += 1
    _instance_configured = False


on_fork_child(_forget_device_after_fork)     # first: the other modules' hooks come after it
