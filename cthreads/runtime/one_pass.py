"""The one-pass form of a whole-array ``func.reduce`` (the default; ``CTHREADS_REDUCE_FORM=old``
selects the pass-per-level form of ``reducer.py``).

One dispatch of ``codegen.reduction_wgsl(..., ticket=True)``: each workgroup folds its share
of the data into a partial result, and the last workgroup to finish (an atomic ticket) folds
the partials in index order and writes the result after them. Against the pass-per-level
form this saves a dispatch and the barrier between the passes, and the host work of each call
is mostly cached: per device and element count a ``Plan`` keeps the pass's shape, its
partials buffer (the result at its end), the ticket word (zero between dispatches: the last
workgroup resets it) and a uniform buffer whose bytes stay written while ``init`` does not
change; the bind group is cached per source buffer (``_Reducer.bind_groups``). Nothing is
acquired from the pool per call but the readback's staging buffer (a number) or the 0-d
result's buffer (``device=True``), whose value is copied in from the partials buffer by the
same submission.

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

    __slots__ = ("shape", "partials", "ticket", "uniform", "result_at", "ubytes")

    def __init__(self, red, n: int, size: int):
        queue = red.queue
        pool = queue.pool
        self.shape = codegen.plan_passes(n, red.size, *red.shape)[0]
        self.result_at = self.shape.groups * size      # byte offset of the result
        self.partials = pool.acquire(self.result_at + size)
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


def _bind_group(red, plan: Plan, src, src_offset: int, size: int):
    shape = plan.shape
    key = ("one", id(plan.partials), id(src), shape.count, src_offset)
    bg = red.bind_groups.get(key)
    if bg is not None:
        return bg
    # (with fewer than 4 elements the groups-of-four binding is 16 bytes the shader does not
    # read: never empty)
    quad_bytes = max(shape.quads * 4 * size, 4 * size)
    entries = [(0, plan.uniform.buffer, codegen.UNIFORM_SIZE),
               (1, src.buffer, quad_bytes, src_offset),
               (2, src.buffer, shape.count * size, src_offset),
               (3, plan.partials.buffer, plan.result_at + size),
               (4, plan.ticket.buffer, _TICKET_BYTES)]
    bg = red.queue.bind_group(red.layouts[True], entries)
    red.bind_groups.put(key, bg, (plan.uniform, src, plan.partials, plan.ticket))
    return bg


def submit(red, pipe, ty: str, size: int, src, count: int, src_offset: int, init,
           slot, out):
    """Queue the one dispatch over ``count`` elements of ``src`` (a PooledBuffer, from byte
    ``src_offset``) and the copy of its result (launch lock held): into ``out``'s buffer (a
    0-d DeviceSlot), or, when ``out`` is None, into a staging buffer; returns (submission
    number, the Readback to fetch, or None). ``slot``: the resident source, whose writers'
    status words ride along in the readback (or travel on to ``out``)."""
    queue = red.queue
    plan = plan_for(red, count, size)
    bg = _bind_group(red, plan, src, src_offset, size)
    readback = None
    if out is None:
        readback = Readback()
        readback.add_list(plan.partials.buffer, None, size, ty, "the result",
                          plan.result_at)
        if slot is not None:
            for rt in slot.writers:
                if rt.unchecked:
                    readback.add_status(rt)
        copies = readback.copies(queue.pool)
        held = (src, plan.partials)
    else:
        copies = [(plan.partials.buffer, plan.result_at, out.pooled.buffer, 0, size)]
        held = (src, plan.partials, out.pooled)
    seq = queue.dispatch(pipe.pipeline, bg, plan.shape.groups,
                         (plan.uniform.buffer, plan.uniform_bytes(ty, init)), copies, held)
    return seq, readback


__all__ = ["PLAN_CACHE", "Plan", "new_plans", "plan_for", "submit"]
