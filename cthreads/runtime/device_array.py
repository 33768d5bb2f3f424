"""The device side of a ``GpuArray``: its pooled buffer, its writers and its transfers.

A ``DeviceSlot`` is what a launch binds for a ``GpuArray`` argument. It has the interface of an
arena's ``residency.Slot`` that ``KernelRuntime.plan``, ``GpuJob.join`` and the reducer use
(``take``, ``other_device``, ``queue``, ``pooled``, ``elem``, ``writers``, ``written``), with
one difference: ``written`` stays False, so a join never downloads it; ``download`` does, when
``GpuArray.numpy()`` asks. Transfers go through the device's queue, which keeps program order:
an upload into a buffer a pending dispatch binds submits that dispatch first, and a download
or a device copy is submitted after every pending dispatch.

A view (``DeviceSlot.view``: reshape, ravel, row slices) is a slot on its array's buffer that
starts ``offset`` bytes in and shares the array's writer set, so ``numpy()`` of either waits for
a launch that wrote the other; it never gives the buffer back (its ``GpuArray`` keeps the
array's alive). Transfers use its byte range; launches and reductions bind it from ``offset``
when the device can (``check_offset``). A view of an array split into parts covers all of it
(reshape, ravel).

A zero-size array has no buffer (``pooled`` None and ``count`` 0): wgpu-native aborts on
zero-size bindings, so the argument handler refuses it as it refuses empty lists.

An array past the storage-binding limit is split (``parts.py``): ``parts`` holds its pooled
buffers, each of ``part_elems`` elements but the last; ``pooled`` is ``parts[0]``. An array that
fits one binding has ``parts == (pooled,)`` and ``part_elems == count``. Transfers and device
copies go part by part, in stream order.

``shutdown()`` forgets every slot's buffer (``pooled`` None, ``dead`` True): later uses raise
``GpuUseAfterDestroy`` before any wgpu call.
"""

from __future__ import annotations

import weakref

from . import convert, parts as _parts
from . import residency
from ..backend import device as _device
from ..codegen.types import DTYPE_ROWS
from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from .readback import Readback

#: the dtypes a GpuArray holds, in the order messages name them
SUPPORTED = ("float32", "float64", "int32", "int64", "uint32", "bool", "complex64", "complex128")

#: every live slot, forgotten at shutdown and in a forked child
_live: "weakref.WeakSet[DeviceSlot]" = weakref.WeakSet()


def elem_of(dtype, where: str) -> str:
    """The element type of numpy dtype ``dtype``, or GpuInvalidArgument naming the supported."""
    np = convert._np()
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = repr(dtype)
    row = DTYPE_ROWS.get(name)
    if row is None:
        if name.startswith("complex"):
            # never advise astype(np.float32) here: it would drop the imaginary part silently
            fix = "convert first (a.astype(np.complex128), which keeps every value)"
        else:
            fix = "convert first (e.g. a.astype(np.float32))"
        raise GpuInvalidArgument(
            f"{where}: dtype {name} is not supported; a GpuArray holds "
            f"{', '.join(SUPPORTED)}: {fix}")
    return row


class DeviceSlot:
    """One GpuArray's device memory (see the module docstring)."""

    __slots__ = ("name", "target", "elem", "length", "dims", "count", "pooled", "parts",
                 "part_elems", "queue", "written", "used", "writers", "rows", "generation",
                 "dead", "offset", "base", "checked", "__weakref__")

    def __init__(self, queue, elem: str, shape: tuple, pooled, parts: tuple | None = None,
                 part_elems: int | None = None):
        self.name = "GpuArray"
        self.target = None        # never a caller's list: joins do not download it
        self.elem = elem
        self.dims = shape
        self.length = shape[0] if shape else 1
        self.count = 1
        for d in shape:
            self.count *= d
        self.pooled = pooled
        self.parts = parts if parts is not None else (() if pooled is None else (pooled,))
        self.part_elems = self.count if part_elems is None else part_elems
        self.queue = queue
        self.written = False      # stays False: nothing is downloaded at join
        self.used = False
        self.writers = set()      # kernel runtimes that wrote it, status not yet read
        self.rows = ()
        self.generation = _device.generation()
        self.dead = False
        self.offset = 0           # bytes into ``pooled`` where a view starts
        self.base = None          # a view: the slot whose buffer it shares (never released)
        # passed the launch checks of args.Device once (what relaunch.py's repeat asks)
        self.checked = False
        _live.add(self)

    def view(self, shape: tuple, start: int) -> "DeviceSlot":
        """A slot of ``shape`` sharing this buffer from element ``start`` on (one writer set:
        a launch writing either is waited for by both)."""
        root = self.base if self.base is not None else self
        if start and len(root.parts) > 1:
            # an array split across several buffers (past the binding limit): a view from
            # inside it would need the addressing of the parts
            raise GpuInvalidArgument(
                f"a view starting at element {start:,} of a GpuArray of shape {self.dims} "
                "held in several device buffers (it is past the storage-binding limit) is not "
                "supported yet; views of such arrays start at its first element (reshape, "
                "ravel, d[:k]); use a kernel that copies the rows into a new array")
        new = DeviceSlot(self.queue, self.elem, shape, self.pooled)
        if len(root.parts) > 1:        # a view from element 0 of a split array: its parts
            held = -(-new.count // root.part_elems)
            if held > 1:
                new.parts, new.part_elems = root.parts[:held], root.part_elems
        new.offset = self.offset + start * elem_type(self.elem).size
        new.base = root
        new.writers = root.writers
        new.generation = self.generation
        return new

    def check_offset(self, value, where: str) -> None:
        """Raise unless the device can bind this view from its offset: a storage binding
        starts at a multiple of min-storage-buffer-offset-alignment (32 bytes on lavapipe).
        (A view elsewhere would need the compiler to add its element offset to each index.)"""
        align = self.queue.pool.offset_alignment()
        if self.offset % align == 0:
            return
        size = elem_type(self.elem).size
        step = align // size if align % size == 0 else align
        start = self.offset // size
        raise GpuInvalidArgument(
            f"{where} is a GpuArray view of shape {value.shape} and dtype {value.dtype} that "
            f"starts at element {start:,} of its array (byte {self.offset:,}); "
            f"{self.queue.ctx.name!r} binds memory only from multiples of {align} bytes (its "
            "min-storage-buffer-offset-alignment), so kernels and f.reduce take views that "
            f"start at a multiple of {step:,} {value.dtype} elements. Pass view.copy() (a "
            "device copy) if the kernel only reads it; if it writes it, pass the whole array "
            "and the start index as a scalar")

    @property
    def nbytes(self) -> int:
        return elem_type(self.elem).size * self.count

    @property
    def split(self) -> tuple | None:
        """(parts, shift) when the array is split across bindings, else None."""
        return _parts.split_key(self.part_elems, self.count)

    def part_nbytes(self) -> list[int]:
        """The bytes of each part (all ``part_elems`` elements but the last)."""
        size = elem_type(self.elem).size
        return [n * size for n in _parts.counts(self.count, self.part_elems)]

    def check_live(self, what: str) -> None:
        """GpuUseAfterDestroy when the device this array lived on is gone."""
        if self.dead or self.generation != _device.generation():
            self.dead = True
            self.pooled = None
            self.parts = ()
            raise GpuUseAfterDestroy(
                f"{what}: the device this GpuArray lived on is gone (cthreads.gpu.shutdown(), "
                "a lost device, or fork()); its data is lost. Create the array again "
                "(to_device(host_copy))")

    def other_device(self, ctx, where: str) -> GpuInvalidArgument:
        return GpuInvalidArgument(
            f"{where}: this GpuArray lives on {self.queue.ctx.label}, but the launch runs on "
            f"{ctx.label}; an array belongs to its device. Launch on that device (use_device "
            "/ device=), or move it: to_device(arr.numpy(), device=...)")

    def take(self, rt, param):
        """The buffer for a launch of ``rt`` (launch lock held); a writer is recorded."""
        if self.pooled is None or self.dead:
            raise GpuUseAfterDestroy(
                f"{rt.program.name}() parameter {param.name!r}: the device this GpuArray "
                "lived on was shut down; nothing was submitted")
        self.used = True
        if param.written or param.atomic:
            self.writers.add(rt)
        return self.pooled

    def release(self) -> None:
        """The buffers go back to their pool (garbage collection of the array)."""
        held, self.parts, self.pooled = self.parts, (), None
        if self.base is not None:      # a view: its array's slot gives the buffers back
            return
        if held and not self.dead and \
                self.generation == _device.generation() and not _device.is_lost():
            try:
                for pooled in held:
                    self.queue.pool.release(pooled)
            except Exception:      # the device is going: the buffers are simply dropped
                pass


def allocate(queue, elem: str, shape: tuple, data=None, where: str = "GpuArray",
             part_elems: int | None = None) -> DeviceSlot:
    """A new slot of ``shape`` on ``queue``'s device, holding ``data`` (device bytes) if given;
    split into parts past the storage-binding limit (``part_elems``: those of another array,
    for a copy). More elements than a kernel can index raise GpuInvalidArgument, more memory
    than the device can give VulkanOutOfMemory, both before anything is allocated."""
    size = elem_type(elem).size
    count = 1
    for d in shape:
        count *= d
    if count == 0:
        return DeviceSlot(queue, elem, shape, None)
    _parts.check_count(count, where, shape)
    pool = queue.pool
    if part_elems is None:
        part_elems = _parts.part_elems_for(count, size, pool.binding_bytes())
    if part_elems >= count:
        pooled = pool.acquire(count * size) if data is None else queue.upload_new(data)
        return DeviceSlot(queue, elem, shape, pooled)
    pool.check_room(count * size, f"{where}, a {' x '.join(map(str, shape))} array of "
                    f"{count:,} elements,")
    sizes = [n * size for n in _parts.counts(count, part_elems)]
    slices = None if data is None else _parts.byte_slices(data, count, part_elems, size)
    held = []
    try:
        for k, nbytes in enumerate(sizes):
            held.append(pool.acquire(nbytes) if slices is None else queue.upload_new(slices[k]))
    except BaseException:
        for pooled in held:
            pool.release(pooled)
        raise
    return DeviceSlot(queue, elem, shape, held[0], tuple(held), part_elems)


def upload(slot: DeviceSlot, data) -> None:
    """Write device bytes ``data`` into the slot (after the pending work that binds it)."""
    if slot.count:
        with residency.launch_lock:
            slot.check_live("GpuArray.set")
            if len(slot.parts) == 1:
                slot.queue.upload(slot.pooled, data, slot.offset)
                return
            size = elem_type(slot.elem).size        # split: views start at element 0
            for pooled, piece in zip(slot.parts, _parts.byte_slices(data, slot.count,
                                                                   slot.part_elems, size)):
                slot.queue.upload(pooled, piece)


def download(slot: DeviceSlot, out) -> None:
    """Copy the slot into numpy array ``out`` (C-contiguous, its shape): the pending work is
    submitted first, then the copy; this waits for the work that writes the slot (the queue
    runs in order), reads its writers' bounds-check status and raises their error first."""
    slot.check_live("GpuArray.numpy")
    if not slot.count:
        return
    queue = slot.queue
    with residency.launch_lock:    # a copy: another thread's launch may add a writer
        writers = list(slot.writers)
    last = max((rt.last_launch for rt in writers), default=0)
    if last:
        queue.wait(last)           # with the launch lock free, as arena downloads do
    with residency.launch_lock:
        slot.check_live("GpuArray.numpy")
        flat = out.reshape(-1)
        start = 0
        for group in _download_groups(slot, queue.ctx.limit("max-buffer-size")):
            readback = Readback()
            nbytes = sum(n for _, n in group)
            target = out if len(group) == len(slot.parts) else \
                flat[start:start + nbytes // elem_type(slot.elem).size]
            source = group[0][0].buffer if len(slot.parts) == 1 else \
                tuple((p.buffer, n) for p, n in group)
            readback.add_list(source, target, nbytes, slot.elem, "a GpuArray",
                              slot.offset if len(slot.parts) == 1 else 0, fresh=True)
            for rt in slot.writers:
                if rt.unchecked:
                    readback.add_status(rt)
            seq = queue.submit_copies(readback.copies(queue.pool))
            readback.finish(queue, seq)
            slot.writers.clear()
            start += nbytes // elem_type(slot.elem).size


def _download_groups(slot: DeviceSlot, limit: int) -> list:
    """The slot's (part, bytes) in groups of at most ``limit`` bytes (one staging buffer
    each; one group unless the array is larger than a buffer may be)."""
    groups, total = [[]], 0
    for pooled, nbytes in zip(slot.parts, slot.part_nbytes()):
        if groups[-1] and total + nbytes > limit:
            groups.append([])
            total = 0
        groups[-1].append((pooled, nbytes))
        total += nbytes
    return groups


def device_copy(slot: DeviceSlot) -> DeviceSlot:
    """A new slot holding a device copy of ``slot`` (after the pending work)."""
    slot.check_live("GpuArray.copy")
    with residency.launch_lock:
        slot.check_live("GpuArray.copy")
        new = allocate(slot.queue, slot.elem, slot.dims, where="GpuArray.copy()",
                       part_elems=slot.part_elems)
        if slot.count:
            if len(slot.parts) == 1:
                slot.queue.submit_copies([(slot.pooled.buffer, slot.offset, new.pooled.buffer,
                                           0, slot.nbytes)])
            else:
                slot.queue.submit_copies([(src.buffer, 0, dst.buffer, 0, n) for src, dst, n in
                                          zip(slot.parts, new.parts, slot.part_nbytes())])
        new.writers = set(slot.writers)   # their bounds checks are reported by the copy too
        return new


def concatenate(slots: list, shape: tuple) -> DeviceSlot:
    """A new slot of ``shape`` holding ``slots`` one after the other in C order (arrays joined
    along their first axis), by device copies after the pending work; the slots share one
    queue and element type."""
    first = slots[0]
    with residency.launch_lock:
        for s in slots:
            s.check_live("concatenate")
        new = allocate(first.queue, first.elem, shape, where="concatenate()")
        if len(new.parts) > 1 or any(len(s.parts) > 1 for s in slots):
            return _concatenate_parts(slots, new)
        copies, at = [], 0
        for s in slots:
            if s.count:
                # a view starts ``offset`` bytes into its buffer
                copies.append((s.pooled.buffer, s.offset, new.pooled.buffer, at, s.nbytes))
            at += s.nbytes
            new.writers |= s.writers   # their bounds checks are reported by the copy too
        if copies:
            first.queue.submit_copies(copies)
        return new


def _concatenate_parts(slots: list, new: DeviceSlot) -> DeviceSlot:
    """``concatenate`` where the arrays are split into parts: each part of ``new`` copied from
    the byte ranges of the sources it covers (launch lock held)."""
    copies = []
    dst_sizes = new.part_nbytes()
    k, room = 0, dst_sizes[0]
    for s in slots:
        if not s.count:
            continue
        for src, n in zip(s.parts, s.part_nbytes()):
            src_at = s.offset if len(s.parts) == 1 else 0
            while n:
                step = min(n, room)
                copies.append((src.buffer, src_at, new.parts[k].buffer,
                               dst_sizes[k] - room, step))
                src_at += step
                n -= step
                room -= step
                if not room and k + 1 < len(new.parts):
                    k, room = k + 1, dst_sizes[k + 1]
        new.writers |= s.writers
    if copies:
        slots[0].queue.submit_copies(copies)
    return new


def _forget_all(ctx=None) -> None:
    for slot in list(_live):
        slot.dead = True
        slot.pooled = None
        slot.parts = ()


_device.on_shutdown(_forget_all)
_device.on_fork_child(_forget_all)


__all__ = ["DeviceSlot", "SUPPORTED", "allocate", "concatenate", "device_copy", "download",
           "elem_of", "upload"]
