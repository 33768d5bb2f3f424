"""Shader modules and compute pipelines, cached by WGSL text and binding layout.

The bind-group layout is explicit (not ``layout="auto"``): binding 0 is the uniform block, then
storage buffers, read-only or read-write as the compiler decided. An explicit layout lets one
bind group serve every launch with the same buffers, and keeps unused bindings valid.

The cache holds its pipelines weakly: a kernel's runtime keeps the pipelines it uses, and when
the kernel is collected they go with it (a compiled pipeline holds a few hundred KB of driver
code on lavapipe). Errors that are not the shader's fault (a lost device, no memory) are mapped
to the library's errors here, never reported as a compiler bug.
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref
from dataclasses import dataclass

from .. import config
from .device import DeviceContext, import_wgpu
from .faults import device_error, is_lost_message, is_out_of_memory_message
from .forking import on_fork_child

#: Binding kinds understood by ``make_pipeline``.
UNIFORM, READ, READ_WRITE = "uniform", "read", "read_write"


class ShaderCompileError(Exception):
    """WGSL rejected by the driver's compiler; ``wgsl_line`` is the first line it blamed."""

    def __init__(self, message: str, wgsl_line: int | None):
        super().__init__(message)
        self.wgsl_line = wgsl_line


@dataclass
class Pipeline:
    pipeline: object
    layout: object            # the bind-group layout (bind groups for the pipeline use it)


_cache: "weakref.WeakValueDictionary[tuple, Pipeline]" = weakref.WeakValueDictionary()
_cache_lock = threading.Lock()
_cache_generation = -1


def _layout_entries(wgpu, bindings) -> list[dict]:
    entries = []
    for binding, kind in bindings:
        btype = {UNIFORM: wgpu.BufferBindingType.uniform,
                 READ: wgpu.BufferBindingType.read_only_storage,
                 READ_WRITE: wgpu.BufferBindingType.storage}[kind]
        entries.append({"binding": binding, "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": btype}})
    return entries


_LINE_RE = re.compile(r":(\d+):\d+")


def _first_wgsl_line(message: str) -> int | None:
    m = _LINE_RE.search(message)
    return int(m.group(1)) if m else None


def make_bind_group_layout(ctx: DeviceContext, bindings: tuple):
    """The bind-group layout for ``bindings`` ((binding, kind), ...)."""
    wgpu = import_wgpu()
    try:
        return ctx.device.create_bind_group_layout(entries=_layout_entries(wgpu, bindings))
    except Exception as exc:
        raise device_error(ctx, exc, "creating a bind-group layout") from None


def _shader_module(device, wgsl: str, label: str, bounds_checks: bool = True):
    """The shader module for ``wgsl``, made with naga's bounds checks but without its forced
    loop bounding where this wgpu build offers that (wgpu-native's "trusted" creation).

    The bounds checks stay: they are what keeps an unchecked access (``boundscheck=False``, or
    an index the proofs cleared) inside its buffer. The loop bounding (an extra 64-bit counter
    tested in every loop iteration, against a bound no kernel reaches) is dropped: it slows
    loop-heavy kernels down on GPUs (docs/performance.md, "Loops without naga's counter").
    ``bounds_checks=False`` (``config.shader_bounds_checks``, a measurement switch) drops the
    bounds checks too.
    A build without the entry point gets wgpu-py's public call, with both checks; so do CPU
    drivers, where the loops' detection of lavapipe's iteration cap was measured with the
    counter in place (without it a cut loop went unreported in tests/device/test_loop_cap.py).
    """
    try:
        from wgpu.backends.wgpu_native import _api
        create = _api.libf.wgpuDeviceCreateShaderModuleTrusted
        checks = _api.lib.WGPUShaderRuntimeChecks_BoundsChecks if bounds_checks else \
            _api.lib.WGPUShaderRuntimeChecks_None
    except (ImportError, AttributeError):
        return device.create_shader_module(code=wgsl, label=label)
    ffi, lib = _api.ffi, _api.lib
    source = _api.new_struct_p("WGPUShaderSourceWGSL *", code=_api.to_c_string_view(wgsl))
    source[0].chain.next = ffi.NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = _api.new_struct_p(
        "WGPUShaderModuleDescriptor *",
        nextInChain=ffi.cast("WGPUChainedStruct *", source), label=_api.to_c_string_view(label))
    handle = create(device._internal, descriptor, checks)
    if handle == ffi.NULL:
        raise RuntimeError("Shader module creation failed")
    return _api.GPUShaderModule(label, handle, device)


#: pipeline-overridable constants a shader may declare -> the device property that sets it
DEVICE_CONSTANTS = {"ct_fused_f32": "fma_rounds_once"}


def device_constants(ctx: DeviceContext, names) -> tuple:
    """(name, value) pairs for ``make_pipeline``: each of ``names`` (constants a shader
    declares, from ``DEVICE_CONSTANTS``) set from the device's property, decided once per
    device."""
    return tuple((name, bool(getattr(ctx, DEVICE_CONSTANTS[name]))) for name in names)


def make_pipeline(ctx: DeviceContext, wgsl: str, entry_point: str, bindings: tuple,
                  layout=None, constants: tuple = ()) -> Pipeline:
    """The compute pipeline for ``wgsl`` (cached per device: ``ctx.index`` is in the key, and
    a new generation of devices clears the cache); ShaderCompileError if invalid.

    ``layout``: a bind-group layout to share (from another Pipeline of the same bindings), so
    that bind groups serve both pipelines. ``constants``: (name, value) pairs for the WGSL's
    pipeline-overridable constants (``override``), each one the module declares.
    """
    global _cache_generation
    settings = config.current()
    trusted = settings.trusted_shaders_on_cpu or not ctx.is_cpu
    checks = settings.shader_bounds_checks
    key = (hashlib.sha256(wgsl.encode()).hexdigest(), entry_point, bindings, id(layout),
           ctx.index, tuple(constants), trusted, checks)
    with _cache_lock:
        if _cache_generation != ctx.generation:
            _cache.clear()
            _cache_generation = ctx.generation
        hit = _cache.get(key)
    if hit is not None:
        return hit
    wgpu = import_wgpu()
    device = ctx.device
    try:
        module = _shader_module(device, wgsl, entry_point, checks) if trusted else \
            device.create_shader_module(code=wgsl, label=entry_point)
        bgl = layout if layout is not None else \
            device.create_bind_group_layout(entries=_layout_entries(wgpu, bindings))
        pipeline_layout = device.create_pipeline_layout(bind_group_layouts=[bgl])
        pipeline = device.create_compute_pipeline(
            layout=pipeline_layout, compute={"module": module, "entry_point": entry_point,
                                             "constants": dict(constants)})
    except Exception as exc:
        msg = str(exc)
        if is_lost_message(msg) or is_out_of_memory_message(msg) or isinstance(exc, MemoryError):
            raise device_error(ctx, exc, f"compiling the pipeline of {entry_point}") from None
        raise ShaderCompileError(msg, _first_wgsl_line(msg)) from None
    result = Pipeline(pipeline, bgl)
    with _cache_lock:
        _cache[key] = result
    return result


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _forget_after_fork() -> None:
    """In a forked child: the cached pipelines belong to the parent's device."""
    global _cache_lock, _cache
    _cache_lock = threading.Lock()
    _cache = weakref.WeakValueDictionary()


on_fork_child(_forget_after_fork)
