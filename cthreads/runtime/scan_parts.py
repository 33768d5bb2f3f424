"""Flat scans of data past one storage binding (``scanner.run_scan`` hands them here): a list
or numpy array uploaded in parts of at most one binding each (``parts.py``: the parts a GpuArray
of its size has), or a split GpuArray read in its own parts, into a result split the same way.

Each part is scanned by the steps of ``scanner._steps``; every part after the first takes the
previous part's last result as the prefix of its block totals (copied on the device right after
its totals step), so all the parts' steps are queued at once and nothing waits on the host.
The result is a new split GpuArray (GpuArray input), else downloaded part by part
(``device_array.download``) into a numpy array. Scans along an axis of such data are refused
(``scanner``).
"""

from __future__ import annotations

from . import convert, device_array, residency
from . import parts as _parts
from ..codegen.scan import QUAD_TYPES
from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from .reducer import slot_parts
from .scan_steps import dispatch_steps, loop_error, readback_for, steps


def submit_parts(sc, op, probe: bool, ty: str, slot, host, device: bool, n: int, where: str,
                 name: str):
    """The scan of ``n`` elements in parts: ``("device", slot, (n,))`` or ``("host", array)``
    (the same results as ``scanner._submit``)."""
    np = convert._np()
    queue = sc.queue
    pool = queue.pool
    size = elem_type(ty).size
    temps, out_slot = [], None
    try:
        with residency.launch_lock:
            sources, per = _sources(sc, slot, host, ty, n, size, where, temps)
            out_slot = device_array.allocate(queue, ty, (n,), part_elems=per, where=where)
            outs = slot_parts(out_slot)
            if [c for _, c in outs] != [c for _, c in sources]:
                raise GpuInvalidArgument(f"{where}: internal error: the parts of the result "
                                         "do not match the input's")
            if slot is not None:
                out_slot.writers.update(slot.writers)
            if probe:
                sc.status_word()
            quads = ty in QUAD_TYPES and sc.shape(probe)[1] % 4 == 0
            todo, prefix = [], None
            for (src, count), (dst, _) in zip(sources, outs):
                todo += steps(pool, sc.shape(probe), src, 0, dst, count, 1, 1, size, temps,
                                quads, prefix)
                prefix = (dst, (count - 1) * size)
            readback, _ = readback_for(sc, None, None, probe, ty, slot)
            seq = dispatch_steps(sc, op, probe, name, todo, readback)
        if readback is not None:
            readback.fetch(queue, seq)
            with residency.launch_lock:
                readback.check(seq)
            if probe and readback.raw[readback.lists[-1].offset - readback.base] != 0:
                sc.status.reset()
                raise loop_error(sc, name)
        if device:
            return "device", out_slot, (n,)
        target = np.empty(n, dtype=elem_type(ty).host_dtype)
        device_array.download(out_slot, target)
        out_slot.release()
        out_slot = None
        if target.dtype != np.dtype(elem_type(ty).array_dtype):      # bools: u32
            target = target.astype(elem_type(ty).array_dtype)
        return "host", target
    except BaseException:
        if out_slot is not None:
            out_slot.release()
        raise
    finally:
        for buf in reversed(temps):
            pool.release(buf)


def _sources(sc, slot, host, ty: str, n: int, size: int, where: str, temps: list):
    """([(buffer, elements), ...], elements per part): ``host`` uploaded part by part (the
    buffers kept in ``temps``), or the resident slot's parts, checked live and here."""
    queue = sc.queue
    if slot is None:
        per = _parts.part_elems_for(n, size, queue.pool.binding_bytes())
        packed = host.astype(elem_type(ty).host_dtype, copy=False).reshape(-1)
        out = []
        for piece in _parts.byte_slices(packed, n, per, size):
            buf = queue.upload_new(piece)
            temps.append(buf)
            out.append((buf, memoryview(piece).nbytes // size))
        return out, per
    if slot.pooled is None:
        raise GpuUseAfterDestroy(f"{where}: the device holding it was shut down; nothing was "
                                 "submitted")
    if slot.queue is not queue:
        raise slot.other_device(sc.ctx, where)
    slot.used = True
    return slot_parts(slot), slot.part_elems


__all__ = ["submit_parts"]
