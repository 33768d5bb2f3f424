"""The steps of a scan on the device (``scanner.py`` runs them, ``scan_parts.py`` for data in
parts): the dispatches of ``codegen/scan.py``'s shaders for lines of an array
(``steps``: one line a thread, or reduce-then-scan by blocks, recursively for the block
totals), their queueing (``dispatch_steps``), the readback of a result, the loop probe's word
and the input's writers' status words, and the loop-budget error.
"""

from __future__ import annotations

from ..codegen import scan as codegen
from ..codegen.types import elem as elem_type
from ..errors import GpuDeviceError
from . import convert
from .readback import Readback

STATUS_BYTES = 4

#: one line a thread (``by_lines``): lines of at most SHORT_LINE elements, or at least
#: MANY_LINES lines side by side of at most LONG_LINE elements
SHORT_LINE, MANY_LINES, LONG_LINE = 64, 1024, 8192

def by_lines(length: int, inner: int, lines: int) -> bool:
    """Whether to scan one line a thread (``codegen.scan_wgsl(quad="lines")``): short lines
    (a workgroup a block would leave most threads idle), or many lines side by side (along an
    axis before the last: neighbouring threads then read neighbouring elements), not longer
    than ``LONG_LINE`` (a thread's loop stays far below a CPU driver's loop limit)."""
    if lines < 2:
        return False
    return length <= SHORT_LINE or (inner > 1 and lines >= MANY_LINES and length <= LONG_LINE)


def steps(pool, shape, src, src_off, dst, length, inner, lines, size, temps, quads,
           prefix=None):
    """The dispatch steps scanning ``lines`` lines of ``length`` from ``src`` into ``dst``
    (recursively for the block totals; ``shape``: threads a workgroup, elements a thread;
    the totals' buffers from ``pool``, kept in ``temps``), each ``(src, offset, bytes, carry,
    bytes, dst, bytes, length, inner, blocks, mode, groups, form, shift, copies)``;
    ``quads``: whether the element type and shape allow the groups-of-four shader, where the
    lines allow it too; ``prefix``: ``(buffer, byte offset)`` of a value folded in before
    the one line (a part after the first: the previous part's last result, copied in front
    of the block totals right after the totals step, ``codegen.uniform_bytes``' shift)."""
    threads, per = shape
    nblocks = codegen.blocks(length, threads * per)
    n = length * lines
    if by_lines(length, inner, lines):
        return [(src, src_off, n * size, src, n * size, dst, n * size, length, inner, lines, 0,
                 -(-lines // threads), "lines", 0, ())]
    quad = quads and inner == 1 and length % 4 == 0 and src_off % (4 * size) == 0
    if nblocks == 1 and prefix is None:
        return [(src, src_off, n * size, src, n * size, dst, n * size, length, inner, 1, 1,
                 lines, quad, 0, ())]
    shift = 0 if prefix is None else 1
    width = nblocks + shift                 # entries of each line's totals
    tb = width * lines * size
    totals = pool.acquire(tb)
    scanned = pool.acquire(tb)
    temps += [totals, scanned]
    copies = () if prefix is None else ((prefix[0].buffer, prefix[1], totals.buffer, 0, size),)
    first = (src, src_off, n * size, src, n * size, totals, tb, length, inner, nblocks, 0,
             nblocks * lines, quad, shift, copies)
    inner_steps = steps(pool, shape, totals, 0, scanned, width, 1, lines, size, temps, quads)
    last = (src, src_off, n * size, scanned, tb, dst, n * size, length, inner, nblocks, 1,
            nblocks * lines, quad, shift, ())
    return [first, *inner_steps, last]


def dispatch_steps(sc, op, probe: bool, name: str, steps: list, readback) -> int:
    """Queue ``steps`` (``_steps``), the ``readback``'s copies after the last; its number."""
    queue = sc.queue
    seq = None
    for k, (s, s_off, s_bytes, c, c_bytes, d, d_bytes, length, inner, nblocks, mode, groups,
            form, shift, copies) in enumerate(steps):
        last = k == len(steps) - 1
        pipe = sc.pipeline(op, probe, name, form if form == "lines" else mode if form else None)
        uniform = sc.uniform(k)
        bg = sc.bind_group(uniform, s, s_bytes, s_off, c, c_bytes, d, d_bytes, probe)
        if last and readback is not None:
            copies = readback.copies(queue.pool)
        seq = queue.dispatch(
            pipe.pipeline, bg, groups,
            (uniform.buffer, codegen.uniform_bytes(length, inner, nblocks, mode, groups, shift)),
            copies, (s, c, d), more=not last)
    return seq


def readback_for(sc, dst, out_shape, probe: bool, ty: str, slot):
    """(Readback or None, numpy target or None): the result (``out_shape``: a host result),
    the loop probe's word, and the status words of the resident input's writers not read yet
    (their failed bounds check is raised rather than scanned)."""
    if out_shape is None and not probe:
        return None, None
    readback = Readback()
    target = None
    if out_shape is not None:
        target = convert._np().empty(out_shape, dtype=elem_type(ty).host_dtype)
        readback.add_list(dst.buffer, target, target.nbytes, ty, fresh=True)
    if probe:
        readback.add_list(sc.status.buffer, None, STATUS_BYTES, "int")
    if slot is not None:
        for rt in slot.writers:
            if rt.unchecked:
                readback.add_status(rt)
    return readback, target


def loop_error(sc, name: str) -> GpuDeviceError:
    return GpuDeviceError(
        f"{name}.accumulate(): the device {sc.ctx.name!r} ended a loop of {name} before it "
        "finished, or came too close to its limit to tell. This CPU driver (Mesa's llvmpipe) "
        "stops the loops of a thread once they have made 65,535 passes together "
        "(docs/language.md, \"Long loops on CPU drivers\"), and each thread of a scan calls "
        f"{name} a few dozen times. Nothing was changed. Make {name}'s loops shorter, or run "
        "on a GPU (CTHREADS_ADAPTER)")


__all__ = ["STATUS_BYTES", "by_lines", "dispatch_steps", "loop_error", "readback_for", "steps"]
