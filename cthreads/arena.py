"""``GpuArena``: lists that stay on the device across launches.

Residency is by identity plus length: a launch whose argument *is* a bound list (the same object,
same length) uses that list's device buffer instead of uploading it; a numpy argument that shares
memory with a bound array uses its buffer when it is a reshape of the whole array, else raises
(``sharing.shared_slot``), and ``bind`` refuses memory bound in another slot. Buffers come from the
device's pool, so re-binding or re-creating arenas in a loop allocates nothing new. Every misuse
raises ``GpuInvalidArgument`` before anything changes. The slots, the registry of bound lists and
their download live in ``residency.py`` (launches and jobs use them too); an arena owns its
named slots and their buffers. An arena belongs to the device selected when it was created
(``use_device``); a launch on another device that passes one of its lists raises
``GpuInvalidArgument`` naming both.
"""

from __future__ import annotations

from .runtime import args, convert, nested, residency, sharing, struct_args
from . import pickling
from .backend import device as _device
from .backend import get_queue
from .codegen.types import elem as elem_type
from .errors import GpuInvalidArgument, GpuUseAfterDestroy
from .runtime.residency import Slot, lookup


def _retire_lost_device() -> None:
    """A lost device is replaced before an arena looks at it (so that arenas bound on it see it
    gone); outside the arena lock, which the device's shutdown hooks take."""
    if _device.is_lost():
        _device.get_context()


def _check_memory(arena, name: str, value, plans: list, where: str) -> None:
    """Refuse a numpy array that shares memory with one bound in another slot (of any arena)
    or given for another slot of this call: one memory has one device copy."""
    for slot in sharing.overlapping(value):
        if slot.arena_ref() is arena and slot.name == name:
            continue                       # this slot, re-bound: its old copy goes
        owner = "this arena" if slot.arena_ref() is arena else "another arena"
        raise GpuInvalidArgument(
            f"{where}: this array shares memory with the array bound as {slot.name!r} in "
            f"{owner} (a view, reshape or slice of one, or one that contains it); memory can "
            "live in one slot only, else one slot's device copy would go stale: bind a copy "
            "(arr.copy()), or bind the whole array once and index it in the kernel")
    for other, value2, _, _ in plans:
        if convert.is_ndarray(value2) and sharing.arrays_overlap(value, value2):
            raise GpuInvalidArgument(
                f"{where}: this array shares memory with the one given for {other!r}; memory "
                "can live in one slot only: bind a copy (arr.copy()) for one of them")


def _check_rows(name: str, value: list, plans: list, where: str) -> None:
    """Refuse a list given in one bind call both whole and as a row of another one's."""
    for other, value2, _, _ in plans:
        if not isinstance(value2, list):
            continue
        for outer, inner in ((value2, value), (value, value2)):
            if outer and isinstance(outer[0], list) and \
                    any(row is inner for row in sharing.inner_lists(outer)):
                raise GpuInvalidArgument(
                    f"{where}: one of this list and the one given for {other!r} is a row of "
                    "the other; a list can live in one slot only: bind a copy for one of them")


class GpuArena:
    """A set of named lists kept on the device: ``with GpuArena() as a: a.bind(x=x)``."""

    def __init__(self):
        self._slots: dict[str, Slot] = {}
        self._released = False
        self._generation: int | None = None
        self._selection = _device.selection.get()   # the device chosen when it was created
        self._queue = None                           # that device's queue, from the first bind

    # -- helpers -----------------------------------------------------------------------------

    def _check_usable(self, action: str) -> None:
        if self._released:
            raise GpuInvalidArgument(f"GpuArena.{action}() after release(); create a new "
                                     "GpuArena to keep lists on the device again")
        if self._generation is not None and self._generation != _device.generation():
            raise GpuUseAfterDestroy(
                f"GpuArena.{action}(): the device this arena lived on is gone (shut down by "
                "cthreads.gpu.shutdown(), lost, or left behind by fork()); create a new "
                "GpuArena and bind the lists again")

    # -- public API --------------------------------------------------------------------------

    def bind(self, **lists) -> "GpuArena":
        """Upload lists under the given slot names (re-binding a slot re-uploads it)."""
        _retire_lost_device()
        with residency.registry_lock:
            self._check_usable("bind")
            if not lists:
                raise GpuInvalidArgument("GpuArena.bind() needs at least one name=list argument")
            plans = []
            for name, value in lists.items():
                where = f"GpuArena.bind({name}=...)"
                value = struct_args.bound_view(value)     # a @Gpu.struct array: its words
                other = lookup(value)
                if other is not None and not (other.arena_ref() is self and other.name == name):
                    owner = "this arena" if other.arena_ref() is self else "another arena"
                    raise GpuInvalidArgument(
                        f"{where}: this list is already bound as {other.name!r} in {owner}; a "
                        "list can live in one slot only (release it there, or bind a copy)")
                if convert.is_ndarray(value):
                    _check_memory(self, name, value, plans, where)
                elif isinstance(value, list):
                    if sharing.bound_lists:
                        sharing.check_list_parts(value, where, self._slots.get(name))
                    _check_rows(name, value, plans, where)
                elem, data = args.pack_any(value, where)
                plans.append((name, value, elem, data))
            queue = self._queue_now()
            for name, value, elem, data in plans:
                dims = residency.list_dims(value)
                size = elem_type(elem).size
                queue.pool.check_size(size * nested.count(dims), f"GpuArena.bind({name}=...)"
                                      f", {args.describe(value, dims)},", size,
                                      convert.device_type(elem), "bind each part under "
                                      "a name of its own")
            self._generation = _device.generation()
            self._queue = queue
            for name, value, elem, data in plans:
                old = self._slots.get(name)
                if old is not None and (old.target is not value or old.length != len(value)
                                        or old.elem != elem
                                        or old.dims != residency.list_dims(value)):
                    self._drop(old)
                    old = None
                if old is None:
                    slot = Slot(name, value, elem, queue.upload_new(data), self, queue)
                    self._slots[name] = slot
                    residency.register(slot)
                else:
                    slot = old
                    queue.upload(slot.pooled, data)
                    residency.forget(slot)        # registered again: a nested list's rows
                    residency.register(slot)      # may be other lists now
                slot.written = False
                slot.used = False
            return self

    def sync(self, *names: str) -> "GpuArena":
        """Download device copies into the bound lists (all slots, or the named ones)."""
        _retire_lost_device()
        # the launch lock first: shutdown() holds it when its hook takes the registry lock
        with residency.launch_lock, residency.registry_lock:
            self._check_usable("sync")
            for name in names:
                if not isinstance(name, str) or name not in self._slots:
                    raise GpuInvalidArgument(
                        f"GpuArena.sync({name!r}): no such slot; bound slots: "
                        f"{sorted(self._slots)}")
            slots = [self._slots[n] for n in (names or list(self._slots))]
            for slot in slots:
                if len(slot.target) != slot.length:
                    raise GpuInvalidArgument(
                        f"GpuArena.sync: the list bound as {slot.name!r} changed length from "
                        f"{slot.length} to {len(slot.target)}; re-bind it after resizing")
            residency.download_slots([s for s in slots if s.written])
            return self

    def release(self) -> None:
        """Free the device buffers (idempotent); the lists keep their last synced values."""
        with residency.registry_lock:
            if self._released:
                return
            self._released = True
            for slot in list(self._slots.values()):
                self._drop(slot)
            self._slots.clear()

    def _drop(self, slot: Slot) -> None:
        residency.forget(slot)
        pooled, slot.pooled = slot.pooled, None
        if pooled is not None and self._generation == _device.generation() and \
                not _device.is_lost():
            try:
                slot.queue.pool.release(pooled)
            except Exception:  # the device is gone: the buffer is simply dropped
                pass

    def _queue_now(self):
        """The queue of this arena's device: the one it was created on (the selection in force
        at ``GpuArena()``), kept from the first bind until the device goes."""
        if self._queue is not None and self._generation == _device.generation():
            return self._queue
        token = _device.selection.set(self._selection)
        try:
            return get_queue()
        finally:
            _device.selection.reset(token)

    @property
    def device(self) -> str:
        """``device 0 ('llvmpipe ...')``: the device this arena's lists live on (made on first
        use)."""
        return self._queue_now().ctx.label

    def __reduce__(self):
        pickling.refuse("GpuArena", "Send the lists (or numpy arrays) and bind them in a "
                        "GpuArena created in the receiving process")

    def names(self) -> list[str]:
        return list(self._slots)

    def __contains__(self, name) -> bool:
        return name in self._slots

    def __iter__(self):
        return iter(list(self._slots))

    def __len__(self) -> int:
        return len(self._slots)

    def __enter__(self) -> "GpuArena":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self):
        try:
            if not self._released:
                self.release()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "released" if self._released else f"slots={self.names()}"
        return f"<GpuArena {state}>"


__all__ = ["GpuArena"]
