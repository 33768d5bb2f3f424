"""The device side of ``func.accumulate(values, axis=None)`` (``cthreads/accumulate.py`` checks
the operation): the inclusive scan of an array by an operation's WGSL (``OpSource``), in the
reduce-then-scan steps of ``codegen/scan.py``.

``run_scan`` checks everything on the host first (the element kind, ``axis``, the size), then
queues the steps on the device queue: a list or numpy array is uploaded into a pooled buffer; a
GpuArray, or an array bound in an arena, is read in its device buffer (the queue keeps
submission order, so launches that wrote it run first). The result is a new device slot
(``device_array.allocate``) for a GpuArray input, which stays on the device (nothing is read
back, no wait), else a numpy array read back once. With the loop probe on (an operation with
loops, on a CPU driver) its status word is read back too, and a fired probe raises
``GpuDeviceError`` instead of returning a cut result.

Per device a ``_Scanner`` keeps the compiled pipelines (per operation, element type and probe:
repeated calls compile nothing), one uniform buffer per step of a scan, and a small cache of
bind groups. Flat scans of data past one storage binding (a split GpuArray, or more bytes than
``BufferPool.binding_bytes()``) run in parts (``scan_parts.py``); along an axis such data is
refused with ``GpuInvalidArgument``. The steps themselves are ``scan_steps.py``'s.
"""

from __future__ import annotations

import hashlib
import weakref

from . import args, convert, device_array, residency, scan_lookback
from .. import config
from ..backend import device as _device
from .per_device import PerDevice
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import READ, READ_WRITE, UNIFORM, make_bind_group_layout
from ..codegen import scan as codegen
from ..codegen.types import ELEM_TYPES
from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from .device_program import Pipelines, StatusWords, internal_error
from .reducer import _check_slot, _slot_of, array_kind
from .scan_parts import submit_parts
from .scan_steps import STATUS_BYTES, dispatch_steps, loop_error, readback_for, steps

#: (threads per workgroup, elements per thread) on GPUs and CPU drivers; with the loop probe
#: (an operation with loops on a CPU driver) fewer elements per thread, so fewer calls
SHAPE_GPU, SHAPE_CPU, SHAPE_CPU_LOOPS = (256, 16), (64, 16), (64, 2)
#: the fast form's shape (``FORM``): 8,192 elements a block, so the totals of up to 64M elements
#: are one block (three dispatches), the threads' totals scanned by subgroup shuffles where the
#: device has subgroups and the storage type is 32-bit
SHAPE_FAST = (256, 32)
#: ``CTHREADS_SCAN`` (``config.scan``, read once, at the first scan; ``form()``): ``old`` the
#: Hillis-Steele form of SHAPE_GPU / SHAPE_CPU everywhere, ``new`` the fast form everywhere
#: (but with the loop probe), ``lookback`` the one-pass look-back form where it applies
#: (``scan_lookback.usable``: on CPU drivers only for a few tiles; opt-in: its H200 test run
#: did not finish, docs/performance.md), else the fast form; "": the fast form on GPUs and
#: the old form on CPU drivers (tests set ``FORM``)
FORM: str | None = None


def form() -> str:
    """``FORM``, read from the settings the first time."""
    global FORM
    if FORM is None:
        FORM = config.current().scan
    return FORM
BIND_GROUP_CACHE = 32
PIPELINE_CACHE = 64

_BINDINGS = ((0, UNIFORM), (1, READ), (2, READ), (3, READ_WRITE))
_PROBE_BINDINGS = _BINDINGS + ((4, READ_WRITE),)



class _Scanner:
    """What scans need on one device."""

    def __init__(self):
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        self.layouts = {False: make_bind_group_layout(self.ctx, _BINDINGS),
                        True: make_bind_group_layout(self.ctx, _PROBE_BINDINGS)}
        self.status = None
        self.pipelines = Pipelines(self.ctx, PIPELINE_CACHE)
        self.uniforms: list = []
        self.bind_groups = BindGroupCache(self.queue.pool, BIND_GROUP_CACHE)

    def fast(self, probe: bool) -> bool:
        """Whether the fast form runs (``FORM``; never with the loop probe)."""
        if probe or form() == "old":
            return False
        return form() in ("new", "lookback") or not self.ctx.is_cpu

    def shape(self, probe: bool) -> tuple:
        if self.fast(probe):
            return SHAPE_FAST
        if not self.ctx.is_cpu:
            return SHAPE_GPU
        return SHAPE_CPU_LOOPS if probe else SHAPE_CPU

    def subgroup(self, op, probe: bool) -> bool:
        """Whether the fast form's subgroup scan runs (32-bit storage, the device's feature)."""
        return (self.fast(probe) and "subgroup" in self.ctx.features
                and elem_type(op.ty).size == 4)

    def pipeline(self, op, probe: bool, name: str, quad: int | None = None):
        """``quad``: None for the scalar shader of both modes, else the groups-of-four
        shader of mode ``quad`` (``codegen.scan_wgsl``)."""
        size, per = self.shape(probe)
        sub = quad != "lines" and self.subgroup(op, probe)
        key = (op.fn, hashlib.sha256(op.text.encode()).hexdigest(), op.ty, probe, quad, size,
               per, sub)
        pipe = self.pipelines.get(key)
        if pipe is not None:
            return pipe
        wgsl = codegen.scan_wgsl(op.fn, op.ty, op.text, size, per, probe, op.opaque, quad, sub)
        return self.pipelines.compile(
            key, wgsl, codegen.ENTRY_POINT, _PROBE_BINDINGS if probe else _BINDINGS,
            self.layouts[probe], op.overrides,
            lambda exc, text: internal_error(f"the scan shader of {name}",
                                             "function's source", exc, text))

    def uniform(self, step: int):
        while len(self.uniforms) <= step:
            buf = self.queue.pool.acquire(codegen.UNIFORM_SIZE, "uniform")
            weakref.finalize(buf, self.queue.forget_uniform, buf.buffer)
            self.uniforms.append(buf)
        return self.uniforms[step]

    def status_word(self):
        if self.status is None:
            self.status = StatusWords(self.queue, STATUS_BYTES)
        return self.status

    def bind_group(self, uniform, src, src_bytes, src_offset, carry, carry_bytes, dst,
                   dst_bytes, probe):
        key = (id(uniform), id(src), src_bytes, src_offset, id(carry), carry_bytes, id(dst),
               dst_bytes, probe)
        bg = self.bind_groups.get(key)
        if bg is not None:
            return bg
        entries = [(0, uniform.buffer, codegen.UNIFORM_SIZE),
                   (1, src.buffer, src_bytes, src_offset), (2, carry.buffer, carry_bytes),
                   (3, dst.buffer, dst_bytes)]
        if probe:
            entries.append((4, self.status.buffer, STATUS_BYTES))
        bg = self.queue.bind_group(self.layouts[probe], entries)
        self.bind_groups.put(key, bg, (uniform, src, carry, dst))
        return bg


_STATE = PerDevice(_Scanner)
_scanner_now = _STATE.now   # the scans' state on the caller's device


# -- host checks -----------------------------------------------------------------------------

def _axis(axis, ndim: int, where: str):
    """``axis`` as a non-negative int, or None (the flattened array)."""
    if axis is None:
        return None
    np = convert._np()
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{where}: axis must be an int or None, got "
                        f"{convert._type_name(axis)}; pass one axis (a scan runs along one)")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, f"{where}: axis")
    return axis % ndim


def _host_array(values, ty: str, where: str):
    """A list or numpy array as a C-contiguous numpy array of ``ty``'s dtype (a copy only when
    needed; the caller's data is never written)."""
    np = convert._np()
    want = elem_type(ty).array_dtype
    if convert.is_ndarray(values):
        kind = array_kind(values)
        if kind != ty:
            raise GpuInvalidArgument(
                f"{where} is a numpy array of dtype {values.dtype}, but the operation scans "
                f"{ty} values ({want} arrays): "
                f"{convert.dtype_fix(values.dtype, (want,))}; or accumulate with an operation "
                f"declared on {kind or 'float, int or bool'} values")
        return np.ascontiguousarray(values)
    try:
        host = np.asarray(values)
    except ValueError as exc:
        raise GpuInvalidArgument(f"{where}: a ragged list ({exc}); pass a list of numbers "
                                 "or a rectangular nested list") from None
    row = elem_type(ty)
    ok = {"b": "b", "i": "biu", "u": "bu", "f": "biuf", "c": "biufc"}[row.kind]
    if host.size and host.dtype.kind not in ok:
        raise GpuInvalidArgument(
            f"{where} holds {host.dtype} values, but the operation scans {ty} values; pass "
            f"{row.python.__name__} values, or accumulate with an operation on them")
    try:
        return np.asarray(values, dtype=want)
    except OverflowError as exc:
        raise GpuInvalidArgument(f"{where}: {exc}; pass values that fit {want}") from None


# -- the scan --------------------------------------------------------------------------------

def _input(values, ty: str, where: str):
    """(resident slot or None, host array or None, shape) of the values to scan."""
    slot = _slot_of(values, ty, where)
    host = None
    if slot is not None:
        if slot.target is not None:
            _check_slot(slot, values, ty, where)
            shape = tuple(values.shape) if convert.is_ndarray(values) else tuple(slot.dims)
        else:
            shape = tuple(slot.dims)
    elif convert.is_ndarray(values) or isinstance(values, (list, tuple)):
        host = _host_array(values, ty, where)
        shape = host.shape
    else:
        raise TypeError(f"{where} expects a list, a numpy array, a GpuArray or a list bound in "
                        f"a GpuArena, got {convert._type_name(values)}; pass a list or array")
    return slot, host, shape


def run_scan(op, values, axis=None, name: str | None = None):
    """The inclusive scan of ``values`` by ``op`` along ``axis``: ``("device", slot, shape)``
    for a GpuArray input (a new ``DeviceSlot``), else ``("host", array)``."""
    np = convert._np()
    name = name or op.fn
    ty = op.ty
    where = f"{name}.accumulate() argument 'values'"
    if ty not in ELEM_TYPES:
        raise GpuInvalidArgument(f"{name}.accumulate(): {ty} values cannot be scanned on this "
                                 "version's devices")
    slot, host, shape = _input(values, ty, where)
    ax = _axis(axis, len(shape), f"{name}.accumulate()")
    n = 1
    for d in shape:
        n *= d
    out_shape = (n,) if ax is None else shape
    device = slot is not None and slot.target is None
    if n == 0:
        if device:
            return "device", device_array.allocate(slot.queue, ty, out_shape), out_shape
        return "host", np.empty(out_shape, dtype=elem_type(ty).array_dtype)
    sc = _scanner_now()
    missing = [f for f in op.features if f not in sc.ctx.features]
    if missing:
        raise GpuInvalidArgument(f"{name}.accumulate(): the operation needs the device "
                                 f"feature(s) {', '.join(missing)}, which {sc.ctx.name!r} "
                                 "lacks")
    size = elem_type(ty).size
    split = n * size > sc.queue.pool.binding_bytes() or (
        slot is not None and len(getattr(slot, "parts", ())) > 1)
    if split and ax is not None and len(shape) > 1:
        raise GpuInvalidArgument(
            f"{where}: {n:,} elements ({n * size:,} bytes) are more than one storage binding "
            f"of {sc.ctx.name!r} holds ({sc.queue.pool.binding_bytes():,} bytes); scans of "
            "such data along an axis are not supported yet (flat scans are: axis=None): scan "
            "slices of at most that size, or move the axis last and scan the flat rows")
    if ax is None or len(shape) == 1:
        length, inner, lines = n, 1, 1
    else:
        length = shape[ax]
        inner = 1
        for d in shape[ax + 1:]:
            inner *= d
        lines = n // length
    probe = sc.ctx.is_cpu and op.loops
    sc.pipeline(op, probe, name)          # compiled before anything is submitted
    if split:
        return submit_parts(sc, op, probe, ty, slot, host, device, n, where, name)
    return _submit(sc, op, probe, ty, size, slot, host, device, (length, inner, lines),
                   out_shape, where, name)


def _source(sc, slot, host, ty, where, temps):
    """(buffer, byte offset) of the data to scan (launch lock held): ``host`` uploaded into a
    pooled buffer (kept in ``temps``), or the resident slot's buffer, checked to be live and on
    this device."""
    queue = sc.queue
    if sc.generation != _device.generation():
        raise GpuUseAfterDestroy(f"{where}: cthreads.gpu.shutdown() ran meanwhile; nothing "
                                 "was submitted. Call accumulate again")
    if slot is None:
        src = queue.upload_new(memoryview(
            host.astype(elem_type(ty).host_dtype, copy=False).reshape(-1)).cast("B"))
        temps.append(src)
        return src, 0
    if slot.pooled is None:
        raise GpuUseAfterDestroy(f"{where}: the device holding it was shut down; nothing was "
                                 "submitted")
    if slot.queue is not queue:
        raise slot.other_device(sc.ctx, where)
    if slot.elem != ty:       # an arena int list first used as float: as launches do
        slot.elem = ty
        queue.upload(slot.pooled, args.pack(slot.target, ty, where, False))
    slot.used = True
    return slot.pooled, slot.offset


def _submit(sc, op, probe, ty, size, slot, host, device, dims, out_shape, where, name):
    np = convert._np()
    queue = sc.queue
    pool = queue.pool
    temps, out_slot, seq = [], None, None
    n = dims[0] * dims[2]
    try:
        with residency.launch_lock:
            src, src_off = _source(sc, slot, host, ty, where, temps)
            if device:
                out_slot = device_array.allocate(queue, ty, out_shape)
                # the input's writers: the result's numpy() raises their failed bounds check
                out_slot.writers.update(slot.writers)
                dst = out_slot.pooled
            else:
                dst = pool.acquire(n * size)
                temps.append(dst)
            if probe:
                sc.status_word()
            readback, target = readback_for(sc, dst, None if device else out_shape, probe, ty,
                                         slot)
            if scan_lookback.usable(sc, probe, ty, dims, src_off, form()):
                seq = scan_lookback.dispatch(sc, op, name, src, src_off, dst, n, readback)
            else:
                quads = ty in codegen.QUAD_TYPES and sc.shape(probe)[1] % 4 == 0
                todo = steps(pool, sc.shape(probe), src, src_off, dst, *dims, size, temps,
                             quads)
                seq = dispatch_steps(sc, op, probe, name, todo, readback)
        if readback is not None:
            readback.fetch(queue, seq)
            with residency.launch_lock:
                readback.check(seq)
            if not device and not readback.lists[0].direct:
                target.reshape(-1)[:] = np.frombuffer(readback.raw, target.dtype, n)
            fired = probe and readback.raw[readback.lists[-1].offset - readback.base] != 0
            if fired:
                sc.status.reset()
                raise loop_error(sc, name)
    except BaseException:
        if out_slot is not None:
            out_slot.release()
        raise
    finally:
        for buf in reversed(temps):
            pool.release(buf)
    if device:
        return "device", out_slot, out_shape
    if target.dtype != np.dtype(elem_type(ty).array_dtype):      # bools: u32 on the device
        target = target.astype(elem_type(ty).array_dtype)
    return "host", target


__all__ = ["run_scan"]
