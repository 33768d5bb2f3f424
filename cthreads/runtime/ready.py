"""Ready launches: the plan of a repeated resident launch, kept whole except its scalars.

A repeat (``relaunch.LaunchMemo``: the same arena lists, or GpuArrays of the same kind) binds
resident buffers only: its plan uploads nothing, reads nothing back and owns nothing, and
``KernelRuntime.plan`` would build the same entries and look up the same bind group on every
call. ``ReadyLaunches`` (one per ``KernelRuntime``) keeps, for each (``Choice``, buffers) met,
the plan's parts that do not depend on the scalars: the entries and the bind group. A launch
then only takes its slots (``take``, as the full plan does), chooses its variant
(``variants.choose``: the scalars and lengths decide it) and packs its uniform.

The key is, per list, the identity of its ``PooledBuffer``, its byte offset and its size, the
lists' lengths, and the ``Choice`` object (``variants.choose`` hands out one per launch shape
and check form). The
cache holds the pooled buffers it names (so an id in a key never belongs to another buffer)
and is a holder of the pool: when the pool drops a buffer, the ready launches binding it go.
A freed array whose buffer the pool hands to a new array of the same size is the same buffer
at the same offset: the kept bind group binds exactly the new array's bytes.

Only plans that bind every list in one buffer, print nothing and read nothing back are kept;
anything else (a split GpuArray, a list in a buffer too small for the four-lane rounding, a
kernel that prints, a launch whose slot was released or retyped meanwhile) takes
``KernelRuntime.plan``. ``CTHREADS_LAUNCH_PATH=old`` turns the cache off (config.py).
What it saves: docs/performance.md, "Where a tiny launch's time goes".
"""

from __future__ import annotations

from ..codegen.types import INT_RANGE
from ..codegen.types import elem as elem_type
from .convert import F32_MAX
from .plan import LaunchPlan
from .variants import choose

#: most ready launches per runtime (a loop alternates between a few buffer sets)
READY_CAP = 32


class Ready:
    """The scalar-free parts of one repeated plan."""

    __slots__ = ("entries", "bind_group", "held")

    def __init__(self, plan: LaunchPlan, bind_group):
        self.entries = plan.entries
        self.bind_group = bind_group
        self.held = tuple(e.pooled for e in plan.entries)


class ReadyLaunches:
    """Ready launches of one kernel runtime, by (``Choice``, buffers) (module docstring)."""

    def __init__(self, pool):
        self._ready: dict = {}
        pool.add_holder(self)

    def __len__(self) -> int:
        return len(self._ready)

    def plan(self, rt, scalars: list, lists: list, n) -> LaunchPlan:
        """The plan of a repeated launch of ``rt`` (launch lock held), from a ready launch
        when one matches, else ``rt.plan`` (kept for the next time when it qualifies)."""
        key = _buffers(rt, lists)
        if key is None:
            return rt.plan(scalars, lists, n)
        rules = rt.rules
        lengths = dims = None
        if rules.per_list:
            lengths = [len(a.value) for a in lists]
            dims = [a.dims for a in lists] if rules.fast_checks else None
            key += lengths                      # the four-lane entries round by length
        choice = choose(rules, scalars, lengths, dims, n)
        key.append(choice)
        key = tuple(key)
        ready = self._ready.get(key)
        if ready is None:
            plan = rt.plan(scalars, lists, n)
            if plan.choice is choice:           # not re-chosen (vec rounding), one buffer each
                self._keep(key, rt, plan)
            return plan
        written = []
        for a in lists:                         # as the full plan takes them
            a.slot.take(rt, a.param)
            if a.param.written or a.param.atomic:
                written.append(a.slot)
        plan = LaunchPlan()
        plan.key = choice.variant
        plan.choice = choice
        plan.groups = choice.groups
        plan.entries = ready.entries
        plan.bind_group = ready.bind_group
        plan.resident_written = written
        if rt.complex_scalars:
            scalars = [p for v in scalars for p in ((v.real, v.imag) if isinstance(v, complex)
                                                    else (v,))]
        plan.uniform = rt.uniform_struct.pack(choice.hidden, *scalars, *choice.counts)
        return plan
    def _keep(self, key, rt, plan: LaunchPlan) -> None:
        if (plan.readback is not None or plan.owned or plan.more or plan.copies
                or plan.key.split):
            return
        ready = Ready(plan, rt.bind_group(plan.entries))
        plan.bind_group = ready.bind_group
        if len(self._ready) >= READY_CAP:
            self._ready.clear()
        self._ready[key] = ready

    def forget_buffer(self, pooled) -> None:
        """The pool dropped ``pooled``: let the ready launches binding it go."""
        for key, ready in list(self._ready.items()):
            if any(pb is pooled for pb in ready.held):
                self._ready.pop(key, None)

    def clear(self) -> None:
        self._ready.clear()


def plain_scalars(params) -> tuple:
    """Per scalar parameter (position, parameter), the values a repeat may take without
    ``convert.check_scalar``: (class, lowest, highest), or None. A Python float within
    float32's range for a float parameter, a Python int within the type's range for an int
    one: ``check_scalar`` returns exactly such a value unchanged; anything else (numpy
    scalars, bools, NaN, infinities, ints for floats, complex) goes through it."""
    out = []
    for _, p in params:
        row = elem_type(p.elem)
        if row.kind == "f" and p.elem in ("float", "float32", "float64"):
            top = float("inf") if p.elem == "float64" else F32_MAX    # float64: any float
            out.append((float, -top, top))
        elif row.kind in "iu" and p.elem in INT_RANGE:
            lo, hi = INT_RANGE[p.elem]
            out.append((int, lo, hi))
        else:
            out.append(None)
    return tuple(out)


def _buffers(rt, lists: list) -> list | None:
    """Per list its pooled buffer's id, offset and bytes, flat, read under the launch lock;
    None when a list cannot take a ready launch now (released, on another queue, first used
    as another element type, or bound in parts)."""
    queue = rt.queue
    key = []
    for a in lists:
        slot = a.slot
        pooled = slot.pooled
        if pooled is None or slot.queue is not queue or slot.elem != a.param.elem:
            return None
        cls = slot.__class__
        parts = _HAS_PARTS.get(cls)
        if parts is None:
            parts = _HAS_PARTS[cls] = hasattr(cls, "parts")
        if parts and len(slot.parts) > 1:
            return None
        key += (id(pooled), slot.offset, a.nbytes)
    return key


#: slot class -> whether its slots may hold parts (split GpuArrays: ``DeviceSlot.parts``)
_HAS_PARTS: dict = {}


__all__ = ["READY_CAP", "ReadyLaunches", "plain_scalars"]
