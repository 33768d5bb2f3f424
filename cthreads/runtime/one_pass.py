"""The one-pass form of a whole-array ``func.reduce`` (the default; ``CTHREADS_REDUCE_FORM=old``
selects the pass-per-level form of ``reducer.py``).

One dispatch of ``codegen.reduction_wgsl(..., ticket=True)``: each workgroup folds its share
of the data into a partial result, and the last workgroup to finish (an atomic ticket) folds
the partials in index order and writes the result after them. Against the pass-per-level
form this saves a dispatch and the barrier between the passes, and the host work of each call
is mostly cached: per device and element count a ``Plan`` keeps the pass's shape, its
partials buffer, a result buffer, the ticket word (zero between dispatches: the last
workgroup resets it) and a uniform buffer whose bytes stay written while ``init`` does not
change; the bind group is cached per source buffer (``_Reducer.bind_groups``). Nothing is
acquired from the pool per call but the readback's staging buffer (a number) or the 0-d
result's buffer (``device=True``), which the dispatch writes directly (no copy: inside
``capture()`` the call is recorded).

Data in several parts (past the storage-binding limit) and operations with loops on CPU
drivers (the loop probe) take the pass-per-level form.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

from ..codegen import reduction as codegen
from .readback import Readback

#: element counts whose plan each device keeps (the least recently used goes first)
PLAN_CACHE = 16
_TICKET_BYTES = 16


class Plan:
    """What the one-pass reduction of ``n`` elements of ``size`` bytes keeps on one device."""

    __slots__ = ("shape", "partials", "ticket", "uniform", "result", "ubytes")

    def __init__(self, red, n: int, size: int):
        queue = red.queue
        pool = queue.pool
        self.shape = codegen.plan_passes(n, red.size, *red.shape)[0]
        self.partials = pool.acquire(self.shape.groups * size)
        self.result = pool.acquire(size)              # a number's result, read back from here
        # a new buffer, zero-filled by wgpu (no upload: a plan made inside capture() works)
        self.ticket = pool.acquire(_TICKET_BYTES, "zeroed")
        self.uniform = pool.acquire(codegen.UNIFORM_SIZE, "uniform")
        weakref.finalize(self.uniform, queue.forget_uniform, self.uniform.buffer)
        self.ubytes: dict = {}                          # (ty, init) -> uniform bytes

    def uniform_bytes(self, ty: str, init) -> bytes:
        key = (ty, init, type(init))
        data = self.ubytes.get(key)
        if data is None:
            if len(self.ubytes) > 8:
                self.ubytes.clear()
            data = self.ubytes[key] = codegen.uniform_bytes(self.shape, ty, init, 0)
        return data


def plan_for(red, n: int, size: int) -> Plan:
    """The plan of ``n`` elements of ``size`` bytes on ``red``'s device (launch lock held).
    A plan pushed out of the cache is dropped, never given back to the pool: a pending
    dispatch may still use its buffers (wgpu keeps them alive until it ran)."""
    plans = red.plans
    key = (n, size)
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = Plan(red, n, size)
        if len(plans) > PLAN_CACHE:
            plans.popitem(last=False)
    else:
        plans.move_to_end(key)
    return plan


def new_plans() -> OrderedDict:
    return OrderedDict()


def _bind_group(red, plan: Plan, src, src_offset: int, size: int, result):
    """The dispatch's bind group: reading ``src`` from ``src_offset``, writing ``result`` (the
    plan's own, or a 0-d result's buffer: cached too, the pool hands the same buffers back
    in a loop that drops its results)."""
    shape = plan.shape
    key = ("one", id(plan.partials), id(src), shape.count, src_offset, id(result))
    bg = red.bind_groups.get(key)
    if bg is not None:
        return bg
    # (with fewer than 4 elements the groups-of-four binding is 16 bytes the shader does not
    # read: never empty)
    quad_bytes = max(shape.quads * 4 * size, 4 * size)
    entries = [(0, plan.uniform.buffer, codegen.UNIFORM_SIZE),
               (1, src.buffer, quad_bytes, src_offset),
               (2, src.buffer, shape.count * size, src_offset),
               (3, plan.partials.buffer, shape.groups * size),
               (4, plan.ticket.buffer, _TICKET_BYTES),
               (5, result.buffer, size)]
    bg = red.queue.bind_group(red.layouts["ticket"], entries)
    red.bind_groups.put(key, bg, (plan.uniform, src, plan.partials, plan.ticket, result))
    return bg


def submit(red, pipe, ty: str, size: int, src, count: int, src_offset: int, init,
           slot, out):
    """Queue the one dispatch over ``count`` elements of ``src`` (a PooledBuffer, from byte
    ``src_offset``; launch lock held), writing its result into ``out``'s buffer (a 0-d
    DeviceSlot: no copy, so ``capture()`` records it), or, when ``out`` is None, into the
    plan's result buffer, copied to a staging buffer by the same submission; returns
    (submission number, the Readback to fetch, or None). ``slot``: the resident source, whose
    writers' status words ride along in the readback (or travel on to ``out``)."""
    queue = red.queue
    plan = plan_for(red, count, size)
    result = plan.result if out is None else out.pooled
    bg = _bind_group(red, plan, src, src_offset, size, result)
    readback = None
    copies = ()
    if out is None:
        readback = Readback()
        readback.add_list(plan.result.buffer, None, size, ty, "the result")
        if slot is not None:
            for rt in slot.writers:
                if rt.unchecked:
                    readback.add_status(rt)
        copies = readback.copies(queue.pool)
    held = (src, plan.partials, plan.ticket, result)
    seq = queue.dispatch(pipe.pipeline, bg, plan.shape.groups,
                         (plan.uniform.buffer, plan.uniform_bytes(ty, init)), copies, held)
    return seq, readback


__all__ = ["PLAN_CACHE", "Plan", "new_plans", "plan_for", "submit"]
