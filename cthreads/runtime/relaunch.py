"""The repeat of a resident launch: ``gpu()`` called again with the same arena lists.

A loop of launches on data kept in a ``GpuArena`` (a simulation step, a solver's iteration)
passes the same list objects every time and only its scalars change. For such a call the
checks that depend on the lists alone (the kernel's widths, each list's slot, element type,
shape and aliasing, the runtime) gave their answer at the first launch; ``LaunchMemo`` keeps
that answer and, on the next call, only confirms it still holds (each list is still the object
bound to the same live slot, with the same length, shape and element type, on the same device)
before checking the scalars and planning the launch as usual. Anything else (a list not
resident, a nested list, a rebound or resized list, another device, ``force=``, ``device=``)
takes ``gpu()``'s full path, which makes a new memo. The kernel keeps the memo in its
``memo_slot``; ``GpuKernel.forget_runtimes`` drops it with the runtime it holds.

``GpuArray`` arguments (``args.Device``) repeat by what they are, not by which array they are:
a loop that swaps two arrays each step (a Jacobi solver's ``a, b = b, a``) passes other objects
for the same parameters on every call. A memo's GpuArray position takes any GpuArray of the
class, shape and element type seen at the first launch whose slot is live on the memo's device
and has passed the ``Device`` handler's checks once (``DeviceSlot.checked``: whatever that
handler refuses never takes this path); the arrays of one call must share their buffers as
the first launch's did (the same array read and written, or two views of one buffer, go the
full way, which raises or binds them as it does there). Anything else takes the full path.

The memo holds the slots weakly and the caller's lists not at all: a released arena and its
arrays are freed as if no launch had been made.

What a repeat saves: docs/performance.md, "Latency of a tiny launch".
"""

from __future__ import annotations

import weakref

from . import args as _args
from . import convert, sharing
from ..backend import device as _device
from .plan import ListArg
from .ready import plain_scalars


class LaunchMemo:
    """What the first launch of a kernel with these lists settled (see the module docstring)."""

    __slots__ = ("threads", "shape", "rt", "lists", "count", "queue", "generation", "distinct",
                 "buffers", "scalar_params", "wheres", "shape_scalars", "n_at", "n_lists",
                 "ctx", "plain", "vectors")

    def __init__(self, threads, shape, program, rt, lists: list, wheres: tuple):
        self.threads = threads             # as given to gpu()
        self.shape = shape                 # as checked: None, n or (nx, ny[, nz])
        self.rt = rt
        self.ctx = rt.ctx
        self.queue = rt.queue
        self.generation = rt.generation
        self.count = len(program.params)
        position = {p.name: k for k, p in enumerate(program.params)}
        # per list: (argument position, its slot (weakly; None for a GpuArray), id of the
        # slot's buffer, length, shape or None for a flat Python list, element type,
        # parameter, bytes, dims, the GpuArray class or None)
        self.lists = tuple(
            (position[a.param.name], weakref.ref(a.slot), id(a.slot.pooled), a.slot.length,
             a.slot.dims if convert.is_ndarray(a.value) else None, a.slot.elem, a.param,
             a.nbytes, a.dims, None) if a.kind is not _args.DEVICE else
            (position[a.param.name], None, 0, a.slot.length, a.slot.dims, a.slot.elem,
             a.param, a.nbytes, a.dims, a.value.__class__)
            for a in lists)
        # with GpuArrays, which arguments share a buffer: None when none do, else each
        # list's first list of the same buffer (a repeat must share them the same way)
        self.buffers = None
        self.distinct = len(lists)
        if any(a.kind is _args.DEVICE for a in lists):
            pattern = _buffer_pattern(lists)
            if pattern != tuple(range(len(lists))):
                self.buffers = pattern
        else:
            self.distinct = 0                  # arena lists repeat by identity: no check
        self.scalar_params = tuple((k, p) for k, p in enumerate(program.params)
                                   if not p.is_list)
        self.plain = plain_scalars(self.scalar_params)   # values taken unchecked (ready.py)
        self.vectors = True      # whether the kernel has vector parameters (gpu() sets it)
        self.wheres = wheres
        by_name = {a.param.name: a.dims for a in lists}
        self.shape_scalars = [by_name[name][d] for name, d, _ in program.shapes]
        # where n is among the scalar values, else n is the longest list's length
        self.n_at = next((i for i, (k, _) in enumerate(self.scalar_params)
                          if k == program.count_param), None)
        self.n_lists = max(len(a.value) for a in lists)

    @staticmethod
    def eligible(lists: list) -> bool:
        """Whether a launch with these ListArgs may be repeated through a memo: every list
        resident (the bound object itself, not a reshape of it) or a GpuArray, and each a
        numpy array, a GpuArray or a flat Python list."""
        return bool(lists) and all(
            a.slot is not None and (a.kind is _args.DEVICE or a.value is a.slot.target
                                    and (convert.is_ndarray(a.value) or len(a.dims) == 1))
            for a in lists)

    def list_args(self, args: tuple, threads) -> list | None:
        """The ``ListArg``s of ``args`` if they are this memo's lists (or, for a GpuArray,
        one of the same kind), still as they were (no scalar checked yet); else None."""
        if len(args) != self.count or threads != self.threads:
            return None
        if _device.get_context() is not self.ctx:
            return None
        resident = sharing.resident        # residency.lookup, inlined (by identity)
        out = []
        for k, slot_ref, pooled, length, shape, elem, param, nbytes, dims, cls in self.lists:
            value = args[k]
            if cls is not None:                # a GpuArray: any of this kind on this device
                if value.__class__ is not cls:
                    return None
                slot = value._slot
                if (not slot.checked or slot.dims != shape or slot.elem != elem
                        or slot.queue is not self.queue or slot.dead
                        or slot.generation != self.generation or slot.pooled is None):
                    return None
            else:
                slot = slot_ref()
                if (slot is None or resident.get(id(value)) is not slot or slot.target is not value
                        or id(slot.pooled) != pooled or slot.pooled is None or slot.elem != elem
                        or len(value) != length):
                    return None
                if shape is not None and value.shape != shape:
                    return None
            arg = ListArg(param, value, slot, None, nbytes)
            arg.dims = dims
            out.append(arg)
        if self.distinct:                      # GpuArrays share buffers as at the first launch
            if self.buffers is None:
                if len({id(a.slot.pooled) for a in out}) != self.distinct:
                    return None
            elif _buffer_pattern(out) != self.buffers:
                return None
        return out

    def scalars(self, args: tuple) -> tuple[list, object]:
        """(checked scalar values, n) of a matching call, as ``_check_args`` gives them."""
        values = []
        for (k, p), plain in zip(self.scalar_params, self.plain):
            v = args[k]
            if plain is not None and v.__class__ is plain[0] and plain[1] <= v <= plain[2]:
                values.append(v)           # what check_scalar returns for it
            else:
                values.append(convert.check_scalar(v, p.elem, self.wheres[k]))
        if self.shape_scalars:
            values += self.shape_scalars
        n = values[self.n_at] if self.n_at is not None else self.n_lists
        if self.shape is not None:
            n = self.shape
        return values, n


def _buffer_pattern(lists: list) -> tuple:
    """For each list, the position of the first list bound to the same buffer."""
    first: dict = {}
    return tuple(first.setdefault(id(a.slot.pooled), k) for k, a in enumerate(lists))


__all__ = ["LaunchMemo"]
