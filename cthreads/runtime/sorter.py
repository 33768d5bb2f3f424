"""The device side of ``sort``, ``argsort`` and ``sort(keys, values)`` (``cthreads/sort.py``):
a stable LSD radix sort along the last axis, run as the passes of ``codegen/sorting.py``.

``run_sort`` checks everything on the host first (the dtype, the shape, the values' shape, the
size against one storage binding), then, under the launch lock, reads the keys' device copy (a
GpuArray's buffer, an arena slot's, or an upload of a list or numpy array), submits the map
pass, the digit passes (GPUs: 8-bit digits, 4 per 32-bit key word, ``codegen/sorting8.py``;
CPU drivers and ``CTHREADS_SORT=old``: 4-bit digits, 8 per word; each a histogram, a scan, a
scatter) over (key word,
index) pairs ping-ponging between two pairs of buffers, the rekey passes of a 64-bit key's
high word and of the rows, and the gathers that write the results into new device arrays. A
GpuArray input gives GpuArrays (nothing is read back); other inputs are downloaded into numpy
arrays. The caller's data is only read.

Per device a ``_Sorter`` keeps the compiled pipelines (one per kernel, made on first need), a
bind-group layout per kernel and one uniform buffer per dispatch of a sort.
"""

from __future__ import annotations

import weakref
from typing import Any

from . import args, convert, device_array, residency
from .. import config
from . import reducer
from ..backend import device as _device
from .per_device import PerDevice
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import make_bind_group_layout
from ..codegen import sorting as codegen
from ..codegen import sorting8
from ..codegen import sorting_onesweep
from . import sort_onesweep
from ..codegen.types import elem as elem_type
from ..errors import GpuArgumentTypeError, GpuInvalidArgument, GpuUseAfterDestroy
from .device_program import Pipelines, internal_error

#: lavapipe ends an invocation's loops after 65,535 passes together: the scan's loops (two of
#: ``codegen.scan_passes`` each) must stay far below it (never a cut, silently short result)
LOOP_BUDGET = 30000

#: use the local-sort scatter where workgroup memory allows (tests turn it off)
LOCAL_SORT = True

#: bind groups kept a device (a sort of one size uses about 25)
BIND_GROUP_CACHE = 64

#: the form when not None (tests set it), else CTHREADS_SORT (``config.sort_form``), read once
#: a device: "" (8-bit digits on GPUs, 4-bit on CPU drivers; 32-bit keys mapped back), "old"
#: (4-bit digits everywhere), "8bit" (8-bit digits everywhere, where workgroup memory allows),
#: "new" (8-bit everywhere, 32-bit keys mapped back), "onesweep" ("new" with the onesweep
#: passes, ``sort_onesweep.py``); "old" and "8bit" gather keys by index
FORM = None



class _Sorter:
    """What sorts need on one device."""

    def __init__(self):
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        self.layouts = {name: make_bind_group_layout(self.ctx, b)
                        for name, b in {**codegen.BINDINGS, **sorting8.BINDINGS,
                                        **sorting_onesweep.BINDINGS}.items()}
        self.pipelines = Pipelines(self.ctx)
        self.uniforms: list = []
        self.shape = codegen.SHAPE_CPU if self.ctx.is_cpu else codegen.SHAPE_GPU
        room = self.ctx.limit("max-compute-workgroup-storage-size")
        #: the scatter: through a local sort in workgroup memory (coalesced stores) where the
        #: device has room for a tile, else straight from the ranks
        self.scatter = "scatter_local" if LOCAL_SORT and \
            codegen.local_bytes(self.shape) <= room else "scatter"
        #: 8-bit digits (4 passes a key word) where asked and a tile fits workgroup memory
        self.bits = codegen.RADIX_BITS
        self.asked = FORM if FORM is not None else config.current().sort_form
        if self.asked in ("8bit", "new", "onesweep") or (self.asked != "old"
                                                        and not self.ctx.is_cpu):
            size, items = self.shape
            while items > 1 and sorting8.local_bytes((size, items)) > room:
                items //= 2
            if size <= 256 and sorting8.local_bytes((size, items)) <= room:
                self.shape, self.bits, self.scatter = (size, items), 8, "scatter8"
        self.digits = 1 << self.bits
        #: the onesweep passes (``CTHREADS_SORT=onesweep``, where the tile fits with its runs)
        self.sweep = (self.asked == "onesweep" and self.bits == 8
                      and sorting_onesweep.local_bytes(self.shape) <= room)
        #: the sorted 32-bit keys of one row mapped back instead of gathered by index (not
        #: in the forms "old" and "8bit", kept as they were for A/B runs)
        self.unmap = self.asked not in ("old", "8bit")
        #: bind groups of the passes (scratch buffers are reused from sort to sort)
        self.bind_groups = BindGroupCache(self.queue.pool, BIND_GROUP_CACHE)
        self.spare: dict = {}       # bytes -> scratch buffers of the last sort of that size

    def scratch(self, sizes: list) -> list:
        """Scratch buffers of ``sizes`` bytes (launch lock held): the last sort's of those
        sizes, else new from the pool. Only sorts' dispatches on this queue touch them, in
        submission order, so a sort may take them while the previous one is still pending."""
        key = tuple(sizes)
        held = self.spare.pop(key, None)
        if held is None:
            held = []
            try:
                for nbytes in sizes:
                    held.append(self.queue.pool.acquire(nbytes))
            except BaseException:
                for buf in held:
                    self.queue.pool.release(buf)
                raise
        return held

    def keep(self, sizes: list, held: list) -> None:
        """Keep ``held`` for the next sort of ``sizes`` (one set: others go to the pool)."""
        for old in self.spare.values():
            for buf in old:
                self.queue.pool.release(buf)   # (an upload into one waits for its dispatches)
        self.spare = {tuple(sizes): held}

    def pipeline(self, name: str):
        pipe = self.pipelines.get(name)
        if pipe is None:
            module = (sorting8 if name in sorting8.BINDINGS else sorting_onesweep
                      if name in sorting_onesweep.BINDINGS else codegen)
            pipe = self.pipelines.compile(
                name, module.kernel_wgsl(name, self.shape), "main", self.layout_bindings(name),
                self.layouts[name], (),
                lambda exc, text: internal_error(f"the sort kernel {name!r}", "input's dtype",
                                                 exc, text))
        return pipe

    @staticmethod
    def layout_bindings(name: str):
        return (sorting8.BINDINGS.get(name) or sorting_onesweep.BINDINGS.get(name)
                or codegen.BINDINGS[name])

    def form(self) -> str:
        """What runs, in words (bench/sort.py prints it)."""
        return (f"{self.bits}-bit digits, {self.scatter}, workgroups of {self.shape[0]} x "
                f"{self.shape[1]}, keys " + ("mapped back" if self.unmap else "gathered")
                + (", onesweep passes" if self.sweep else ""))

    def scan_loops(self, groups: int) -> int:
        """The longest loop run of one scan thread."""
        if self.bits == 8:
            return sorting8.scan_passes(groups, self.shape)
        return codegen.scan_passes(groups, self.shape)

    def uniform(self, k: int):
        while len(self.uniforms) <= k:
            buf = self.queue.pool.acquire(codegen.UNIFORM_SIZE, "uniform")
            weakref.finalize(buf, self.queue.forget_uniform, buf.buffer)
            self.uniforms.append(buf)
        return self.uniforms[k]


_STATE = PerDevice(_Sorter)
_sorter_now = _STATE.now    # the sorts' state on the caller's device


# -- inputs ----------------------------------------------------------------------------------

class _Input:
    """One argument: ``host`` (a C-contiguous numpy array) or ``slot`` (a device copy), its
    shape and numpy dtype, and whether results go back as GpuArrays (``device``)."""

    def __init__(self, host, slot, shape, dtype, device: bool):
        self.host, self.slot, self.shape, self.dtype, self.device = \
            host, slot, tuple(shape), dtype, device
        self.count = 1
        for d in self.shape:
            self.count *= d


def _any(value) -> Any:
    return value


def resolve(value: Any, where: str, keys: bool) -> _Input:
    """The checked ``_Input`` of a list, numpy array, GpuArray or arena-bound list/array."""
    np = convert._np()
    if isinstance(value, args.DeviceArrayBase):
        value = _any(value)                    # a GpuArray (shape, dtype, _slot)
        slot = value._slot
        slot.check_live(where)
        if len(slot.parts) > 1:
            raise GpuInvalidArgument(
                f"{where}: this GpuArray of shape {value.shape} is held in several device "
                "buffers (it is past the storage-binding limit); sorting such arrays is not "
                "supported yet: sort it in pieces of at most one binding, or on the host "
                "(np.sort(a.numpy(), kind='stable'))")
        if slot.offset and slot.count:
            slot.check_offset(value, where)
        got = _Input(None, slot, value.shape, np.dtype(value.dtype), True)
    else:
        slot = reducer._slot_of(value, "", where)   # (its type: GpuArrays only)
        if slot is not None:
            reducer._check_slot(slot, value, slot.elem, where)
            shape = value.shape if convert.is_ndarray(value) else tuple(slot.dims)
            got = _Input(None, slot, shape, np.dtype(elem_type(slot.elem).array_dtype), False)
        elif convert.is_ndarray(value) or isinstance(value, (list, tuple, int, float,
                                                              np.generic)):
            host = np.asarray(value)        # (other dtypes are refused below by name)
            got = _Input(np.ascontiguousarray(host), None, host.shape, host.dtype, False)
        else:
            raise GpuArgumentTypeError(
                f"{where} expects a list, a numpy array, a GpuArray or an arena-bound list, "
                f"got {convert._type_name(value)}; pass a numpy array (np.asarray(x))")
    if got.dtype.name not in codegen.KEY_MODES:
        what = "keys" if keys else "values"
        raise GpuArgumentTypeError(
            f"{where}: {what} of dtype {got.dtype} cannot be sorted on the device; it sorts "
            "int32, uint32, int64, float32 and float64: convert first (e.g. "
            "x.astype(np.float32) or x.astype(np.int64))")
    if not got.shape:
        raise GpuInvalidArgument(
            f"{where}: a 0-d array (a scalar) has no axis to sort along (numpy raises "
            "AxisError); pass a 1-D or larger array")
    return got


# -- the sort --------------------------------------------------------------------------------

def run_sort(keys, values=None, want: str = "sort"):
    """``want``: "sort" (sorted keys), "argsort" (int64 indexes), "pairs" (keys, values):
    ``[(DeviceSlot, numpy dtype, as a GpuArray), ...]``, one per result."""
    name = "argsort" if want == "argsort" else "sort"
    k = resolve(keys, f"{name}() argument 'keys'" if want == "pairs" else
                f"{name}() argument 'x'", True)
    v = None
    if want == "pairs":
        v = resolve(values, "sort() argument 'values'", False)
        if v.shape != k.shape:
            raise GpuInvalidArgument(
                f"sort(keys, values): values of shape {v.shape} do not match keys of shape "
                f"{k.shape}; pass values of the keys' shape (one value per key)")
    s = _sorter_now()
    n = k.count
    limit = s.queue.pool.binding_bytes()
    if n * 8 > limit:
        raise GpuInvalidArgument(
            f"{name}(): {n:,} elements need buffers of {n * 8:,} bytes, more than one storage "
            f"binding of {s.ctx.name!r} ({limit:,} bytes); sorting arrays past the binding "
            "limit is not supported yet: sort them in pieces, or on the host")
    m = k.shape[-1]
    groups = codegen.tiles(n, s.shape)
    if 2 * s.scan_loops(groups) + 2 * s.shape[1] > LOOP_BUDGET and s.ctx.is_cpu:
        raise GpuInvalidArgument(
            f"{name}(): {n:,} elements would take the scan of this CPU driver past its loop "
            "limit (docs/language.md, \"Long loops on CPU drivers\"); sort fewer elements")
    outs = [(k, "keys")] if want == "sort" else [(None, "index")] if want == "argsort" \
        else [(k, "keys"), (v, "keys")]
    if n == 0:
        results = [_empty(s, inp, want_index=inp is None, like=k) for inp, _ in outs]
    else:
        results = _device_sort(s, k, outs, n, m, groups, name)
    return [(slot, dtype, (inp or k).device) for (slot, dtype), (inp, _) in zip(results, outs)]


def _empty(s, inp, want_index: bool, like):
    np = convert._np()
    dtype = np.dtype("int64") if want_index else inp.dtype
    slot = device_array.allocate(s.queue, device_array.elem_of(dtype, "sort"), like.shape)
    return slot, dtype


def _source(s, inp, owned):
    """(buffer, byte offset) of an input's device copy (a host array uploaded now)."""
    if inp.slot is None:
        pooled = s.queue.upload_new(inp.host.reshape(-1).view("uint8"))
        owned.append(pooled)
        return pooled, 0
    slot = inp.slot
    if slot.pooled is None or (slot.queue is not s.queue):
        raise GpuUseAfterDestroy(
            "sort(): the device holding this array was shut down, or it lives on another "
            "device; nothing was submitted. Copy it to the current device first")
    return slot.pooled, getattr(slot, "offset", 0)


def _device_sort(s, k, outs, n, m, groups, name):
    """Submit the sort of ``n`` keys (``m`` per row) and the gathers of ``outs``; the result
    slots and dtypes (written by the queued work)."""
    queue, pool = s.queue, s.queue.pool
    owned, seq, failed = [], None, False
    try:
        with residency.launch_lock:
            if s.generation != _device.generation():
                raise GpuUseAfterDestroy(f"{name}(): cthreads.gpu.shutdown() ran meanwhile; "
                                         "nothing was submitted. Call it again")
            plan = _Plan(s, k, n, m, groups, owned)
            s.keep(plan.sizes, plan.held)      # queue order protects them from here on
            plan.passes(32 // s.bits)
            if plan.wide:
                plan.rekey(0, 32 // s.bits)
            rows = n // m
            if rows > 1:
                plan.rekey(1, -(-(rows - 1).bit_length() // s.bits))
            results = [plan.gather(inp, name) for inp, _ in outs]
            for j, (kernel, bufs, count, u) in enumerate(plan.steps):
                uni = s.uniform(j)
                entries = [(0, uni.buffer, codegen.UNIFORM_SIZE)]
                for b, (buf, nbytes, off) in enumerate(bufs, 1):
                    entries.append((b, buf.buffer, nbytes, off) if off else
                                   (b, buf.buffer, nbytes))
                # the passes bind the same scratch buffers from sort to sort: kept (not the
                # gathers, which write a new result each time)
                key = (kernel, j, tuple((id(buf), nbytes, off) for buf, nbytes, off in bufs))
                bg = None if kernel == "gather" else s.bind_groups.get(key)
                if bg is None:
                    bg = queue.bind_group(s.layouts[kernel], entries)
                    if kernel != "gather":
                        s.bind_groups.put(key, bg, tuple(buf for buf, _, _ in bufs))
                seq = queue.dispatch(s.pipeline(kernel).pipeline, bg, count, (uni.buffer, u),
                                     (), tuple(buf for buf, _, _ in bufs),
                                     more=j < len(plan.steps) - 1)
        return results
    except BaseException:
        failed = True
        raise
    finally:
        if seq is not None:
            reducer._release_when_done(queue, owned, seq, not failed)
        else:
            for buf in reversed(owned):
                pool.release(buf)


class _Plan:
    """The dispatches of one sort, ``steps``: (kernel, [(buffer, bytes, byte offset)], groups,
    uniform bytes); (key word, index) pairs ping-pong between ``keys_ab`` and ``idx_ab``,
    ``cur`` the side holding the latest."""

    def __init__(self, s, k, n, m, groups, owned):
        self.s, self.k, self.n, self.m, self.groups, self.owned = s, k, n, m, groups, owned
        self.wide = k.dtype.itemsize == 8
        self.src, self.src_off = _source(s, k, owned)
        self.blocks = sorting8.blocks(groups, s.shape) if s.bits == 8 else 0
        self.sizes = [4 * n] * (5 if self.wide else 4) + [4 * s.digits * groups]
        if self.blocks:
            self.sizes.append(4 * self.blocks)
        self.sweep = sort_onesweep.usable(s, groups, LOOP_BUDGET)
        if self.sweep:
            self.sizes.append(4 * sorting_onesweep.look_words(groups))
        self.held = s.scratch(self.sizes)
        self.look = self.held[-1] if self.sweep else None
        nscratch = 5 if self.wide else 4
        scratch, self.hist = self.held[:nscratch], self.held[nscratch]
        self.parts = self.held[nscratch + 1] if self.blocks else None
        self.keys_ab, self.idx_ab = scratch[0:2], scratch[2:4]
        self.hi = scratch[4] if self.wide else scratch[1]   # (unused by 32-bit keys)
        self.flat = -(-n // s.shape[0])
        self.nb = 4 * n
        self.cur = 0
        nb = self.nb
        self.steps = [("map", [(self.src, n * k.dtype.itemsize, self.src_off),
                               (self.keys_ab[0], nb, 0), (self.hi, nb, 0),
                               (self.idx_ab[0], nb, 0)], self.flat,
                       codegen.uniform_bytes(n, m, mode=codegen.KEY_MODES[k.dtype.name]))]

    def passes(self, count: int) -> None:
        """``count`` digit passes (4- or 8-bit) over the current key word, lowest first."""
        if self.sweep:
            sort_onesweep.add_passes(self, count)
            return
        bits = self.s.bits
        nb, hb, groups = self.nb, 4 * self.s.digits * self.groups, self.groups
        for p in range(count):
            a, b = self.cur, 1 - self.cur
            u = codegen.uniform_bytes(self.n, self.m, groups, bits * p, blocks=self.blocks)
            if bits == 8:
                pb, blocks = 4 * self.blocks, self.blocks
                self.steps.append(("hist8", [(self.keys_ab[a], nb, 0), (self.hist, hb, 0)],
                                   groups, u))
                self.steps.append(("scan_up", [(self.hist, hb, 0), (self.parts, pb, 0)],
                                   blocks, u))
                self.steps.append(("scan_top", [(self.parts, pb, 0)], 1, u))
                self.steps.append(("scan_down", [(self.hist, hb, 0), (self.parts, pb, 0)],
                                   blocks, u))
            else:
                self.steps.append(("hist", [(self.keys_ab[a], nb, 0), (self.hist, hb, 0)],
                                   groups, u))
                self.steps.append(("scan", [(self.hist, hb, 0)], 1, u))
            self.steps.append((self.s.scatter, [(self.keys_ab[a], nb, 0), (self.idx_ab[a], nb, 0),
                                           (self.hist, hb, 0), (self.keys_ab[b], nb, 0),
                                           (self.idx_ab[b], nb, 0)], groups, u))
            self.cur = b

    def rekey(self, mode: int, digits: int) -> None:
        """The next key word (mode 0: a 64-bit key's high word, 1: the row), sorted by."""
        a, nb = self.cur, self.nb
        high = self.hi if mode == 0 else self.idx_ab[a]     # (the rows' rekey reads no hi)
        self.steps.append(("rekey", [(self.idx_ab[a], nb, 0), (high, nb, 0),
                                     (self.keys_ab[a], nb, 0)], self.flat,
                           codegen.uniform_bytes(self.n, self.m, mode=mode)))
        self.passes(digits)

    def gather(self, inp, name: str):
        """A new slot of the keys' shape: ``inp``'s elements in sorted order (the keys',
        the values'), or the int64 indexes along the last axis (``inp`` None)."""
        np = convert._np()
        n, k, idx, nb = self.n, self.k, self.idx_ab[self.cur], self.nb
        dtype = np.dtype("int64") if inp is None else inp.dtype
        slot = device_array.allocate(self.s.queue, device_array.elem_of(dtype, name), k.shape,
                                     where=f"{name}()")
        if inp is not None and inp.slot is not None:
            slot.writers = set(inp.slot.writers)    # their bounds checks are read with ours
        out_bytes = n * dtype.itemsize
        keys = (idx, nb, 0)
        mode = codegen.KEY_MODES[k.dtype.name]
        if inp is None:
            bind = (idx, nb, 0)
            u = codegen.uniform_bytes(n, self.m, mode=1)
        elif inp is k and self.s.unmap and mode <= 2 and n == self.m:
            bind = (self.src, out_bytes, self.src_off)
            keys = (self.keys_ab[self.cur], nb, 0)
            u = codegen.uniform_bytes(n, self.m, mode=2 + mode)
        else:
            if inp is k:
                buf, off = self.src, self.src_off
            else:
                buf, off = _source(self.s, inp, self.owned)
            bind = (buf, out_bytes, off)
            u = codegen.uniform_bytes(n, self.m, mode=0, words=dtype.itemsize // 4)
        self.steps.append(("gather", [(idx, nb, 0), bind, (slot.pooled, out_bytes, 0), keys],
                           self.flat, u))
        return slot, dtype


__all__ = ["run_sort", "resolve"]
