"""The repeat of a resident launch: ``gpu()`` called again with the same arena lists.

A loop of launches on data kept in a ``GpuArena`` (a simulation step, a solver's iteration)
passes the same list objects every time and only its scalars change. For such a call the
checks that depend on the lists alone (the kernel's widths, each list's slot, element type,
shape and aliasing, the runtime) gave their answer at the first launch; ``LaunchMemo`` keeps
that answer and, on the next call, only confirms it still holds (each list is the same object,
still bound to the same live slot with the same length and shape, the same device and
generation) before checking the scalars and planning the launch as usual. Anything else (a
list not resident, a nested list, a rebound or resized list, another device, ``force=``,
``device=``) takes ``gpu()``'s full path, which makes a new memo.

This halves the host time of a tiny resident launch (docs/performance.md, "Latency of a
tiny launch").
"""

from __future__ import annotations

from . import convert, residency
from .backend import device as _device


class LaunchMemo:
    """What the first launch of a kernel with these lists settled (see the module docstring)."""

    __slots__ = ("threads", "shape", "program", "rt", "runtimes", "rt_key", "lists", "checks",
                 "scalar_params", "wheres", "shape_scalars", "n_at", "n_lists", "ctx", "count")

    def __init__(self, kernel, threads, shape, program, rt, lists: list, wheres: tuple):
        self.threads = threads             # as given to gpu()
        self.shape = shape                 # as checked: None, n or (nx, ny[, nz])
        self.program = program
        self.rt = rt
        self.runtimes = kernel._runtimes   # the memo holds while rt is still the kernel's
        self.rt_key = next(k for k, v in kernel._runtimes.items() if v is rt)
        self.ctx = rt.ctx
        self.lists = lists                 # the ListArgs of the first launch (resident only)
        self.count = len(program.params)
        # per list: (argument position, the object, its slot, the slot's buffer, length,
        # shape or None for a flat Python list, element type)
        position = {p.name: k for k, p in enumerate(program.params)}
        self.checks = tuple(
            (position[a.param.name], a.value, a.slot, a.slot.pooled, a.slot.length,
             a.slot.dims if convert.is_ndarray(a.value) else None, a.slot.elem)
            for a in lists)
        self.scalar_params = tuple((k, p) for k, p in enumerate(program.params)
                                   if not p.is_list)
        self.wheres = wheres
        by_name = {a.param.name: a.dims for a in lists}
        self.shape_scalars = [by_name[name][d] for name, d, _ in program.shapes]
        # where n is among the scalar values, else n is the longest list's length
        self.n_at = next((i for i, (_, p) in enumerate(self.scalar_params)
                          if p.name == "n" and p.elem in ("int", "int64")), None)
        self.n_lists = max(len(a.value) for a in lists)

    @staticmethod
    def eligible(lists: list) -> bool:
        """Whether a launch with these ListArgs may be repeated through a memo: every list
        resident, and each a numpy array or a flat Python list."""
        return bool(lists) and all(
            a.slot is not None and (convert.is_ndarray(a.value) or len(a.dims) == 1)
            for a in lists)

    def matches(self, args: tuple, threads) -> bool:
        """Whether ``args`` are this memo's lists, still as they were (no scalar checked)."""
        if len(args) != self.count or threads != self.threads:
            return False
        if self.runtimes.get(self.rt_key) is not self.rt or _device.get_context() is not self.ctx:
            return False
        lookup = residency.lookup
        for k, value, slot, pooled, length, shape, elem in self.checks:
            if (args[k] is not value or lookup(value) is not slot or slot.pooled is not pooled
                    or slot.elem != elem or len(value) != length):
                return False
            if shape is not None and value.shape != shape:
                return False
        return True

    def scalars(self, args: tuple) -> tuple[list, int]:
        """(checked scalar values, n) of a matching call, as ``_check_args`` gives them."""
        values = [convert.check_scalar(args[k], p.elem, self.wheres[k])
                  for k, p in self.scalar_params]
        if self.shape_scalars:
            values += self.shape_scalars
        n = values[self.n_at] if self.n_at is not None else self.n_lists
        if self.shape is not None:
            n = self.shape
        return values, n


__all__ = ["LaunchMemo"]
