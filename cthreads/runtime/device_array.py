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
when the device can (``check_offset``).

A zero-size array has no buffer (``pooled`` None and ``count`` 0): wgpu-native aborts on
zero-size bindings, so the argument handler refuses it as it refuses empty lists.

``shutdown()`` forgets every slot's buffer (``pooled`` None, ``dead`` True): later uses raise
``GpuUseAfterDestroy`` before any wgpu call.
"""

from __future__ import annotations

import weakref

from . import convert, residency
from ..backend import device as _device
from ..codegen.types import DTYPE_ROWS
from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from .readback import Readback

#: the dtypes a GpuArray holds, in the order messages name them
SUPPORTED = ("float32", "float64", "int32", "int64", "uint32", "bool")

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
            fix = ("complex data is not supported yet (a later version adds it): keep the "
                   "parts as two arrays, np.ascontiguousarray(a.real) and "
                   "np.ascontiguousarray(a.imag)")
        else:
            fix = "convert first (e.g. a.astype(np.float32))"
        raise GpuInvalidArgument(
            f"{where}: dtype {name} is not supported; a GpuArray holds "
            f"{', '.join(SUPPORTED)}: {fix}")
    return row


class DeviceSlot:
    """One GpuArray's device memory (see the module docstring)."""

    __slots__ = ("name", "target", "elem", "length", "dims", "count", "pooled", "queue",
                 "written", "used", "writers", "rows", "generation", "dead", "offset", "base",
                 "checked",
                 "__weakref__")

    def __init__(self, queue, elem: str, shape: tuple, pooled):
        self.name = "GpuArray"
        self.target = None        # never a caller's list: joins do not download it
        self.elem = elem
        self.dims = shape
        self.length = shape[0] if shape else 1
        self.count = 1
        for d in shape:
            self.count *= d
        self.pooled = pooled
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
        root = self.base or self
        if start and len(getattr(root, "parts", None) or ()) > 1:
            # an array split across several buffers (past the binding limit): a view from
            # inside it would need the addressing of the parts
            raise GpuInvalidArgument(
                f"a view starting at element {start:,} of a GpuArray of shape {self.dims} "
                "held in several device buffers (it is past the storage-binding limit) is not "
                "supported yet; views of such arrays start at its first element (reshape, "
                "ravel, d[:k]); use a kernel that copies the rows into a new array")
        new = DeviceSlot(self.queue, self.elem, shape, self.pooled)
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

    def check_live(self, what: str) -> None:
        """GpuUseAfterDestroy when the device this array lived on is gone."""
        if self.dead or self.generation != _device.generation():
            self.dead = True
            self.pooled = None
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
        """The buffer goes back to its pool (garbage collection of the array)."""
        pooled, self.pooled = self.pooled, None
        if self.base is not None:      # a view: its array's slot gives the buffer back
            return
        if pooled is not None and not self.dead and \
                self.generation == _device.generation() and not _device.is_lost():
            try:
                self.queue.pool.release(pooled)
            except Exception:      # the device is going: the buffer is simply dropped
                pass


def allocate(queue, elem: str, shape: tuple, data=None, where: str = "GpuArray") -> DeviceSlot:
    """A new slot of ``shape`` on ``queue``'s device, holding ``data`` (device bytes) if given.
    Arrays past the storage-binding limit raise the limit's error (checked first)."""
    size = elem_type(elem).size
    count = 1
    for d in shape:
        count *= d
    if count == 0:
        return DeviceSlot(queue, elem, shape, None)
    queue.pool.check_size(count * size, f"{where}, a {' x '.join(map(str, shape))} array "
                          f"of {count:,} elements,", size, convert.device_type(elem),
                          "make one GpuArray per part")
    if data is None:
        pooled = queue.pool.acquire(count * size)
    else:
        pooled = queue.upload_new(data)
    return DeviceSlot(queue, elem, shape, pooled)


def upload(slot: DeviceSlot, data) -> None:
    """Write device bytes ``data`` into the slot (after the pending work that binds it)."""
    if slot.count:
        with residency.launch_lock:
            slot.check_live("GpuArray.set")
            slot.queue.upload(slot.pooled, data, slot.offset)


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
        readback = Readback()
        readback.add_list(slot.pooled.buffer, out, slot.nbytes, slot.elem, "a GpuArray",
                          slot.offset, fresh=True)
        for rt in slot.writers:
            if rt.unchecked:
                readback.add_status(rt)
        seq = queue.submit_copies(readback.copies(queue.pool))
        readback.finish(queue, seq)
        slot.writers.clear()


def device_copy(slot: DeviceSlot) -> DeviceSlot:
    """A new slot holding a device copy of ``slot`` (after the pending work)."""
    slot.check_live("GpuArray.copy")
    with residency.launch_lock:
        slot.check_live("GpuArray.copy")
        new = allocate(slot.queue, slot.elem, slot.dims, where="GpuArray.copy()")
        if slot.count:
            slot.queue.submit_copies([(slot.pooled.buffer, slot.offset, new.pooled.buffer, 0,
                                       slot.nbytes)])
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


def _forget_all(ctx=None) -> None:
    for slot in list(_live):
        slot.dead = True
        slot.pooled = None


_device.on_shutdown(_forget_all)
_device.on_fork_child(_forget_all)


__all__ = ["DeviceSlot", "SUPPORTED", "allocate", "concatenate", "device_copy", "download",
           "elem_of", "upload"]
