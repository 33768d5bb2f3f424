"""Resident lists and the launch lock: the state that arenas, launches and jobs share.

``launch_lock`` serialises launches, joins, arena transfers and ``shutdown()`` across Python
threads. The registry maps every list bound in a live arena to its ``Slot`` (by identity: the
same object, checked, not only its id); a launch whose argument is a bound list binds the slot's
device buffer instead of uploading it (``Slot.check_for`` and ``Slot.take``). Bound numpy arrays
are also kept by the owner of their memory, so that an argument sharing memory with one (a
reshape, a slice) is found without reading an element: ``shared_slot`` gives the slot a whole
reshape stands for, and raises for any other overlap, whose host memory may be stale. ``download_slots``
copies resident buffers back into their lists (``GpuArena.sync()``, and the join of a launch
that wrote resident lists), reading the status of the kernels that wrote them in the same map.

Lock order: ``launch_lock`` before ``registry_lock`` (shutdown holds the launch lock when its
hook takes the registry lock). Both are module attributes replaced in a forked child: read them
as ``residency.launch_lock``, never import the names.
"""

from __future__ import annotations

import threading
import weakref

from . import convert, nested
from .backend import device as _device
from .codegen.types import elem as elem_type
from .errors import GpuInvalidArgument, GpuUseAfterDestroy
from .readback import Readback

#: serialises launches, joins and arena transfers across Python threads
launch_lock = threading.RLock()
#: guards the registry and the arenas' slots
registry_lock = threading.RLock()
#: id(list) -> Slot for every bound list of every live arena
_resident: dict[int, "Slot"] = {}
#: id(memory owner) -> the slots of the bound numpy arrays whose memory it owns (``owner``):
#: an argument that is not itself bound is looked for here only while it is not empty (read
#: as ``residency.bound_owners``; cleared in place, never replaced)
bound_owners: dict[int, list] = {}
#: id(inner list) -> (slot, that list) for the rows (and rows of rows) of bound nested lists
_rows: dict[int, tuple] = {}
#: id(slot) -> slot for every bound Python list (not numpy arrays; as ``bound_owners``)
bound_lists: dict[int, "Slot"] = {}


class Slot:
    """One list bound in an arena: its device buffer and what launches did with it."""

    __slots__ = ("name", "target", "elem", "length", "dims", "count", "pooled", "arena_ref",
                 "written", "used", "writers", "queue", "rows", "__weakref__")

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
        checked as the kernel's ``param`` by ``convert.check_container``)."""
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
            rt.queue.upload(self.pooled, convert.pack(self.target, param.elem, "arena list"))
        self.used = True
        if param.written or param.atomic:
            self.written = True
            self.writers.add(rt)
        return self.pooled


def list_dims(value) -> tuple:
    """The shape of a bound list: an N-D array's or nested list's, else (length,)."""
    if convert.is_ndarray(value):
        return value.shape             # a tuple of ints already
    if nested.is_nested(value):
        return nested.shape(value, nested.depth(value), "list")
    return (len(value),)


def lookup(value) -> "Slot | None":
    """The resident slot of ``value`` (by identity), or None."""
    slot = _resident.get(id(value))
    if slot is not None and slot.target is value:
        return slot
    return None


def register(slot: Slot) -> None:
    """``slot.target`` is now resident (registry lock held)."""
    _resident[id(slot.target)] = slot
    if convert.is_ndarray(slot.target):
        bound_owners.setdefault(id(owner(slot.target)), []).append(slot)
    else:
        bound_lists[id(slot)] = slot
        if len(slot.dims) > 1:
            slot.rows = tuple(inner_lists(slot.target))
            for row in slot.rows:
                _rows[id(row)] = (slot, row)


def forget(slot: Slot) -> None:
    """``slot.target`` is no longer resident (registry lock held)."""
    if _resident.get(id(slot.target)) is slot:
        del _resident[id(slot.target)]
    bound_lists.pop(id(slot), None)
    for row in slot.rows:
        if _rows.get(id(row), (None,))[0] is slot:
            del _rows[id(row)]
    slot.rows = ()
    if convert.is_ndarray(slot.target):
        key = id(owner(slot.target))
        slots = [s for s in bound_owners.get(key, ()) if s is not slot]
        if slots:
            bound_owners[key] = slots
        else:
            bound_owners.pop(key, None)


# -- arguments that share memory with a bound array --------------------------------------------

def owner(array):
    """The object that owns ``array``'s memory: the end of its chain of bases (numpy arrays
    that own no data, and memoryviews, point further). Two arrays that share memory have the
    same owner (views, reshapes, slices, ``np.frombuffer`` of one buffer)."""
    obj = array
    while True:
        # (an object of another kind with a ``base`` only makes the owner coarser: overlaps
        # are decided by byte addresses, ``_extent``)
        base = obj.obj if isinstance(obj, memoryview) else getattr(obj, "base", None)
        if base is None:
            return obj
        obj = base


def _extent(array) -> tuple[int, int]:
    """The byte addresses [lo, hi) that ``array``'s elements occupy (from its data pointer,
    shape and strides: no element is looked at)."""
    lo = hi = array.__array_interface__["data"][0]
    for dim, stride in zip(array.shape, array.strides):
        if stride < 0:
            lo += stride * (dim - 1)
        else:
            hi += stride * (dim - 1)
    return lo, hi + array.itemsize


def arrays_bound() -> bool:
    """Whether any live arena holds a numpy array (the only case ``shared_slot`` can find)."""
    return bool(bound_owners)


def shared_slot(value, where: str) -> "Slot | None":
    """For a numpy array that is not itself bound: the slot of the bound array that covers
    exactly the same memory with the same dtype (a reshape or ravel of the whole array, C
    order), whose device copy then stands for it; None when it shares no memory with a bound
    array. Any other overlap (a slice, a strided or transposed view, another dtype, an array
    the bound one is a part of) raises ``GpuInvalidArgument``: its host memory may be older
    than the device copy, and results written through it would miss that copy."""
    if not bound_owners.get(id(owner(value))):
        return None                           # the common case: memory of no bound array
    for slot in overlapping(value):
        target = slot.target
        if _extent(value) == _extent(target) and value.dtype == target.dtype and \
                value.flags.c_contiguous and value.size == target.size:
            return slot
        raise view_error(slot, value, where)
    return None


def overlapping(value) -> list:
    """The slots of the bound numpy arrays whose memory overlaps ``value``'s (a numpy array),
    by their owner and byte extents."""
    slots = bound_owners.get(id(owner(value)))
    if not slots or value.size == 0:
        return []
    lo, hi = _extent(value)
    return [slot for slot in slots if slot.target.size and
            _overlap((lo, hi), _extent(slot.target))]


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def arrays_overlap(x, y) -> bool:
    """Whether two numpy arrays share memory (by owner and byte extents)."""
    return x.size > 0 and y.size > 0 and owner(x) is owner(y) and \
        _overlap(_extent(x), _extent(y))


def inner_lists(value: list):
    """Every list inside a nested list (its rows, their rows, ...), depth first."""
    for row in value:
        if isinstance(row, list):
            yield row
            yield from inner_lists(row)


def lists_bound() -> bool:
    """Whether any live arena holds a Python list (``check_list_parts`` can find something)."""
    return bool(bound_lists)


def check_list_parts(value: list, where: str, allow: "Slot | None" = None) -> None:
    """Raise ``GpuInvalidArgument`` when a Python list argument that is not itself bound is a
    row of a bound nested list, or (a nested list) holds a bound list or such a row: its host
    elements may be older than the device copy. Looks at ``value``'s inner lists only (a
    nested argument is flattened element by element anyway). ``allow``: a slot being re-bound
    (its parts are its own)."""
    hit = _rows.get(id(value))
    if hit is not None and hit[1] is value and hit[0] is not allow:
        raise _part_error(hit[0], where, "is a row of")
    if value and isinstance(value[0], list):
        for row in inner_lists(value):
            slot = lookup(row)
            hit = _rows.get(id(row))
            if slot is None and hit is not None and hit[1] is row:
                slot = hit[0]
            if slot is not None and slot is not allow:
                raise _part_error(slot, where, "holds a row that is, or is part of,")


def _part_error(slot: Slot, where: str, what: str) -> GpuInvalidArgument:
    return GpuInvalidArgument(
        f"{where} {what} the list bound as arena slot {slot.name!r}. The bound list's current "
        "values are on the device (its host lists are only updated by join() or "
        "GpuArena.sync()), so this argument could read stale data, and what a kernel wrote "
        f"into it would miss the device copy. Pass the bound list itself and index the part "
        f"inside the kernel, or call arena.sync({slot.name!r}) and pass a copy "
        "(copy.deepcopy(rows) or list(row)), or release the arena first")


def view_error(slot: Slot, value, where: str) -> GpuInvalidArgument:
    """The error for an argument that overlaps the bound array of ``slot`` without being it
    (or all of it)."""
    target = slot.target
    if value.dtype != target.dtype:
        what = f"a {value.dtype} view of it"
    elif value.size < target.size:
        what = f"a part of it ({value.size:,} of its {target.size:,} elements)"
    elif value.size > target.size:
        what = f"an array it is a part of ({value.size:,} elements, it has {target.size:,})"
    else:
        what = "a view of it in another element order"
    return GpuInvalidArgument(
        f"{where} shares memory with the numpy array of shape {tuple(target.shape)} bound as "
        f"arena slot {slot.name!r}: it is {what}. The bound array's current values are on the "
        "device (its host memory is only updated by join() or GpuArena.sync()), so this "
        "argument could read stale data, and what a kernel wrote through it would miss the "
        f"device copy. Pass the bound array itself (a reshape or ravel of the whole array "
        f"also works) and index the part inside the kernel, or call arena.sync({slot.name!r}) "
        "and pass a copy (arr[...].copy()), or release the arena first")


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
        bound_owners.clear()
        _rows.clear()
        bound_lists.clear()


_device.on_shutdown(_invalidate_all)


def _forget_after_fork() -> None:
    """In a forked child: new locks (another thread of the parent may have held them); resident
    buffers belong to the parent's device (forgotten, never released; arenas then raise
    GpuUseAfterDestroy)."""
    global launch_lock, registry_lock
    launch_lock = threading.RLock()
    registry_lock = threading.RLock()
    _resident.clear()
    bound_owners.clear()
    _rows.clear()
    bound_lists.clear()


_device.on_fork_child(_forget_after_fork)
