"""Arguments that share memory with a list bound in a ``GpuArena`` without being it.

A bound list's current values are on the device; its host memory is only updated by a join or
``GpuArena.sync()``. An argument that is not the bound object but shares its memory (a reshape,
ravel or slice of a bound numpy array; a row of a bound nested list) must never be uploaded
from that host memory, nor have results written into it behind the device copy's back:

* a numpy array covering exactly the bound array's memory, with its dtype, in C order (a
  reshape or ravel of the whole array) stands for the bound array: ``shared_slot`` returns its
  slot, whose device buffer the launch (or reduction) binds;
* any other overlap (a slice, a strided or transposed view, another dtype over the same bytes,
  an array the bound one is a part of) raises ``GpuInvalidArgument`` naming the slot;
* a row of a bound nested list, or a nested list holding a bound list or such a row as a row,
  raises likewise (``check_list_parts``).

``residency.register`` / ``forget`` keep the registries here (``note_bound``, ``note_unbound``):
bound arrays by the owner of their memory (the end of their chain of bases), bound Python lists
and the inner lists of bound nested lists by identity. The checks compare owners and byte
ranges (a data pointer, the shape and strides), never elements, and a launch only makes them
while the registries are not empty: it reads ``sharing.bound_arrays`` and
``sharing.bound_lists`` (cleared in place, never replaced).
"""

from __future__ import annotations

from . import convert
from ..errors import GpuInvalidArgument

#: id(list) -> Slot for every bound list of every live arena (``lookup``; ``residency.py``
#: registers and forgets)
resident: dict[int, object] = {}
#: id(memory owner) -> the slots of the bound numpy arrays whose memory it owns (``owner``)
bound_arrays: dict[int, list] = {}
#: id(list) -> (slot, the list) for every bound Python list
bound_lists: dict[int, tuple] = {}
#: id(inner list) -> (slot, that list) for the rows (and rows of rows) of bound nested lists
_rows: dict[int, tuple] = {}


# -- the registries (residency.py, registry lock held) -----------------------------------------

def lookup(value):
    """The resident slot of ``value`` (by identity), or None."""
    slot = resident.get(id(value))
    if slot is not None and slot.target is value:
        return slot
    return None


def note_bound(slot) -> None:
    """``slot.target`` was bound."""
    target = slot.target
    if convert.is_ndarray(target):
        bound_arrays.setdefault(id(owner(target)), []).append(slot)
        return
    bound_lists[id(target)] = (slot, target)
    if len(slot.dims) > 1:
        slot.rows = tuple(inner_lists(target))
        for row in slot.rows:
            _rows[id(row)] = (slot, row)


def note_unbound(slot) -> None:
    """``slot.target`` is no longer bound."""
    target = slot.target
    if convert.is_ndarray(target):
        key = id(owner(target))
        slots = [s for s in bound_arrays.get(key, ()) if s is not slot]
        if slots:
            bound_arrays[key] = slots
        else:
            bound_arrays.pop(key, None)
        return
    if bound_lists.get(id(target), (None,))[0] is slot:
        del bound_lists[id(target)]
    for row in slot.rows:
        if _rows.get(id(row), (None,))[0] is slot:
            del _rows[id(row)]
    slot.rows = ()


def clear() -> None:
    """Every arena is gone (``shutdown()``, a forked child)."""
    bound_arrays.clear()
    bound_lists.clear()
    _rows.clear()


# -- numpy arrays --------------------------------------------------------------------------------

def owner(array):
    """The object that owns ``array``'s memory: the end of its chain of bases (numpy arrays
    that own no data, and memoryviews, point further). Arrays that share memory have the same
    owner (views, reshapes, slices, ``np.frombuffer`` of one buffer)."""
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


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def overlapping(value) -> list:
    """The slots of the bound numpy arrays whose memory overlaps ``value``'s (an array)."""
    slots = bound_arrays.get(id(owner(value)))
    if not slots or value.size == 0:
        return []
    extent = _extent(value)
    return [slot for slot in slots if slot.target.size and
            _overlap(extent, _extent(slot.target))]


def arrays_overlap(x, y) -> bool:
    """Whether two numpy arrays share memory (by owner and byte extents)."""
    return x.size > 0 and y.size > 0 and owner(x) is owner(y) and \
        _overlap(_extent(x), _extent(y))


def shared_slot(value, where: str):
    """For a numpy array that is not itself bound: the slot of the bound array that it covers
    exactly (see the module docstring), or None when it shares memory with no bound array;
    any other overlap raises ``GpuInvalidArgument``."""
    if not bound_arrays.get(id(owner(value))):
        return None                           # the common case: memory of no bound array
    for slot in overlapping(value):
        target = slot.target
        if value.dtype == target.dtype and value.size == target.size and \
                value.flags.c_contiguous and _extent(value) == _extent(target):
            return slot
        raise view_error(slot, value, where)
    return None


def view_error(slot, value, where: str) -> GpuInvalidArgument:
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
        "device copy. Pass the bound array itself (a reshape or ravel of the whole array "
        f"also works) and index the part inside the kernel, or call arena.sync({slot.name!r}) "
        "and pass a copy (arr[...].copy()), or release the arena first")


# -- Python lists ----------------------------------------------------------------------------------

def inner_lists(value: list):
    """Every list inside a nested list (its rows, their rows, ...), depth first."""
    for row in value:
        if isinstance(row, list):
            yield row
            yield from inner_lists(row)


def _bound_list(row):
    """The slot of ``row`` when it is a bound list or a row of one, else None."""
    for table in (bound_lists, _rows):
        hit = table.get(id(row))
        if hit is not None and hit[1] is row:
            return hit[0]
    return None


def check_list_parts(value: list, where: str, allow=None) -> None:
    """Raise ``GpuInvalidArgument`` when a list argument that is not itself bound is a row of
    a bound nested list, or (a nested list) holds a bound list or such a row: its host
    elements may be older than the device copy. Looks at ``value``'s inner lists only (a
    nested argument is flattened element by element anyway). ``allow``: a slot being re-bound
    (its parts are its own)."""
    hit = _rows.get(id(value))
    if hit is not None and hit[1] is value and hit[0] is not allow:
        raise _part_error(hit[0], where, "is a row of")
    if value and isinstance(value[0], list):
        for row in inner_lists(value):
            slot = _bound_list(row)
            if slot is not None and slot is not allow:
                raise _part_error(slot, where, "holds a row that is, or is part of,")


def _part_error(slot, where: str, what: str) -> GpuInvalidArgument:
    return GpuInvalidArgument(
        f"{where} {what} the list bound as arena slot {slot.name!r}. The bound list's current "
        "values are on the device (its host lists are only updated by join() or "
        "GpuArena.sync()), so this argument could read stale data, and what a kernel wrote "
        "into it would miss the device copy. Pass the bound list itself and index the part "
        f"inside the kernel, or call arena.sync({slot.name!r}) and pass a copy "
        "(copy.deepcopy(rows) or list(row)), or release the arena first")
