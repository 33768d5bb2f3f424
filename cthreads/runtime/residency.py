"""Resident lists and the launch lock: the state that arenas, launches and jobs share.

``launch_lock`` serialises launches, joins, arena transfers and ``shutdown()`` across Python
threads. The registry maps every list bound in a live arena to its ``Slot`` (by identity: the
same object, checked, not only its id); a launch whose argument is a bound list binds the slot's
device buffer instead of uploading it (``Slot.check_for`` and ``Slot.take``); ``sharing.py``
finds the arguments that share memory with a bound list without being it. ``download_slots``
copies resident buffers back into their lists (``GpuArena.sync()``, and the join of a launch
that wrote resident lists), reading the status of the kernels that wrote them in the same map.

Lock order: ``launch_lock`` before ``registry_lock`` (shutdown holds the launch lock when its
hook takes the registry lock). Both are module attributes replaced in a forked child: read them
as ``residency.launch_lock``, never import the names.
"""

from __future__ import annotations

import threading
import weakref

from . import args, nested, sharing
from ..backend import device as _device
from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from .readback import Readback

#: serialises launches, joins and arena transfers across Python threads
launch_lock = threading.RLock()
#: guards the registry and the arenas' slots
registry_lock = threading.RLock()
#: id(list) -> Slot for every bound list of every live arena
_resident: dict[int, "Slot"] = sharing.resident


class Slot:
    """One list bound in an arena: its device buffer and what launches did with it."""

    __slots__ = ("name", "target", "elem", "length", "dims", "count", "pooled", "arena_ref",
                 "written", "used", "writers", "queue", "rows", "__weakref__")

    offset = 0                    # bound from the buffer's start (a GpuArray view's is not)

    def __init__(self, name, target, elem, pooled, arena, queue):
        self.name = name
        self.target = target
        self.elem = elem
        self.length = len(target)
        self.dims = list_dims(target)  # the shape of an N-D array or nested list; (length,)
        self.count = nested.count(self.dims)
        self.pooled = pooled
        self.arena_ref = weakref.ref(arena)
        self.written = False      # a kernel may have changed the device copy since last sync
        self.used = False         # some launch has used the device copy
        self.writers = set()      # kernel runtimes that wrote it since the last sync
        self.queue = queue        # the DeviceQueue of the device holding it
        self.rows = ()            # a nested list's inner lists, as registered

    def other_device(self, ctx, where: str) -> GpuInvalidArgument:
        """The error for a launch on device ``ctx`` that passes this list, resident on
        another device."""
        return GpuInvalidArgument(
            f"{where}: this list is bound as arena slot {self.name!r} on "
            f"{self.queue.ctx.label}, but the launch runs on {ctx.label}; an arena belongs to "
            "the device it was created on. Launch on that device (use_device / device=), or "
            "pass a copy of the list (or bind it in an arena created on this device)")

    @property
    def nbytes(self) -> int:
        return elem_type(self.elem).size * self.count

    def check_for(self, param, value, where: str) -> None:
        """Raise unless this slot can stand for ``value`` as the kernel's ``param`` (host
        checks of a launch, before anything is submitted)."""
        if len(value) != self.length:
            raise GpuInvalidArgument(
                f"{where}: the list bound as arena slot {self.name!r} changed length from "
                f"{self.length} to {len(value)}; re-bind it after resizing")
        if len(self.dims) != param.ndim:
            raise GpuInvalidArgument(
                f"{where}: the list bound as arena slot {self.name!r} has {len(self.dims)} "
                f"dimension(s) {self.dims}, but the kernel declares {param.ndim}; bind a "
                f"{param.ndim}-D list or array")
        if self.dims != list_dims(value):
            raise GpuInvalidArgument(
                f"{where}: the list bound as arena slot {self.name!r} changed shape from "
                f"{self.dims} to {list_dims(value)}; re-bind it after reshaping")
        if self.pooled is None:
            raise GpuInvalidArgument(f"{where}: the arena holding this list was released "
                                     "or the device was shut down; bind it again")
        if self.elem != param.elem and not (self.elem == "int" and param.elem == "float"
                                            and not self.used):
            raise GpuInvalidArgument(
                f"{where}: the list bound as arena slot {self.name!r} holds {self.elem} "
                f"elements but the kernel declares list[{param.elem}]; bind a list of "
                f"{param.elem} values")

    def check_view_for(self, param, where: str) -> None:
        """Raise unless this slot's device copy can stand for a reshape of its array (already
        checked as the kernel's ``param`` by its ``args.SharedView`` handler)."""
        if self.pooled is None:
            raise GpuInvalidArgument(f"{where}: the arena holding the array it is a reshape of "
                                     "was released or the device was shut down; bind it again")
        if self.elem != param.elem:
            raise GpuInvalidArgument(
                f"{where} is a reshape of the array bound as arena slot {self.name!r}, whose "
                f"device copy holds {self.elem} elements, but the kernel declares "
                f"list[{param.elem}]; pass an array of {param.elem} values")

    def take(self, rt, param):
        """The slot's buffer for a launch of ``rt`` (launch lock held): an int list first used
        as float is re-uploaded; a kernel that may write it is recorded. Raises
        GpuUseAfterDestroy when shutdown() released it meanwhile."""
        if self.pooled is None:
            raise GpuUseAfterDestroy(
                f"{rt.program.name}() parameter {param.name!r}: cthreads.gpu.shutdown() "
                "released the arena holding this list while the launch was being "
                "prepared; nothing was submitted. Create a new GpuArena and bind it")
        if self.elem != param.elem:            # an int list first used as float: re-upload
            self.elem = param.elem
            rt.queue.upload(self.pooled, args.pack(self.target, param.elem, "arena list"))
        self.used = True
        if param.written or param.atomic:
            self.written = True
            self.writers.add(rt)
        return self.pooled


def list_dims(value) -> tuple:
    """The shape of a bound list: an N-D array's or nested list's, else (length,)."""
    return args.dims(value)


lookup = sharing.lookup             # the resident slot of a value (by identity), or None


def register(slot: Slot) -> None:
    """``slot.target`` is now resident (registry lock held)."""
    _resident[id(slot.target)] = slot
    sharing.note_bound(slot)


def forget(slot: Slot) -> None:
    """``slot.target`` is no longer resident (registry lock held)."""
    if _resident.get(id(slot.target)) is slot:
        del _resident[id(slot.target)]
    sharing.note_unbound(slot)


def download_slots(slots, runtimes=()) -> None:
    """Copy resident buffers back into their lists (arena.sync, join of resident lists), on
    their device (the slots and ``runtimes`` of one call are on one device).

    The status of every kernel that wrote these slots (and of ``runtimes``) is read in the
    same map; a failed bounds check raises before any list is written.
    """
    if not slots and not runtimes:
        return
    queue = slots[0].queue if slots else runtimes[0].queue
    last = max((rt.last_launch for s in slots for rt in s.writers), default=0)
    if last and all(s.pooled is not None for s in slots):   # wait with the launch lock free
        queue.wait(last)
    with launch_lock:
        readback = Readback()
        for s in slots:
            if s.pooled is None:
                raise GpuUseAfterDestroy(
                    f"arena slot {s.name!r}: cthreads.gpu.shutdown() released the device before "
                    "the kernel's results in this resident list were downloaded; they are "
                    "lost. Call join() or GpuArena.sync() before shutdown()")
            readback.add_list(s.pooled.buffer, s.target, s.nbytes, s.elem,
                              f"the list bound as arena slot {s.name!r}")
            for rt in s.writers:
                if rt.unchecked:
                    readback.add_status(rt)
        for rt in runtimes:
            readback.add_status(rt)
        if not readback:
            return
        copies = readback.copies(queue.pool)
        seq = queue.submit_copies(copies)
        readback.finish(queue, seq)
        # only once the lists hold the device's data: after a failed bounds check nothing was
        # written back, and a later sync() must still download what the other launches changed
        for s in slots:
            s.written = False
            s.writers.clear()


def _invalidate_all(ctx) -> None:
    """shutdown(): forget every resident buffer (arenas then raise GpuUseAfterDestroy)."""
    with registry_lock:
        for slot in list(_resident.values()):
            slot.pooled = None
        _resident.clear()
        sharing.clear()


_device.on_shutdown(_invalidate_all)


def _forget_after_fork() -> None:
    """In a forked child: new locks (another thread of the parent may have held them); resident
    buffers belong to the parent's device (forgotten, never released; arenas then raise
    GpuUseAfterDestroy)."""
    global launch_lock, registry_lock
    launch_lock = threading.RLock()
    registry_lock = threading.RLock()
    _resident.clear()
    sharing.clear()


_device.on_fork_child(_forget_after_fork)
