"""The one-pass look-back scan on the device (``codegen/scan_lookback.py`` has the shader and
the argument for its protocol): where it runs, its status words, and its one dispatch.

``usable`` decides: the form ``lookback`` (``scanner.form()``: the default on GPUs, forced by
``CTHREADS_SCAN=lookback``), never with the loop probe, a device with subgroups, a 32-bit type,
one line (a flat scan or a 1-D array) of a multiple of four elements starting on a 16-byte
boundary, in one binding. On a CPU driver (lavapipe) it runs only when forced, and only up to
``CPU_TILES`` tiles: the waiting subgroup's loops count against the driver's loop budget
(65,535 passes an invocation, after which lavapipe ends loops silently), and at most
``CPU_TILES * (CPU_SPINS + 1 + tile / 4)`` passes stay far below it. Everything else takes the
reduce-then-scan forms (``scan_steps.py``).

``LookWords`` (one per device's ``_Scanner``) holds the status words: a ticket counter and two
words a tile. Each dispatch gets the next epoch (1 .. ``EPOCHS``); before the numbers come
round again, or when the buffer grows, the words are zeroed by a write queued after every
earlier launch, so no status of an earlier scan is ever read as this one's.
"""

from __future__ import annotations

from ..backend.pipeline import READ, READ_WRITE, UNIFORM
from ..codegen import scan as scan_codegen
from ..codegen import scan_lookback as codegen
from ..codegen.types import elem as elem_type

#: (threads a workgroup, groups of four a lane): tiles of 8,192 elements
SHAPE = (256, 8)
#: looks at a tile that is not ready before the waiting subgroup folds its input itself: on GPUs
#: about a millisecond (a look is an atomic load from L2); on CPU drivers few (the loop budget)
GPU_SPINS, CPU_SPINS = 2048, 64
#: (tests) only tile 0 publishes an inclusive prefix: every look-back walks to it
AGG_ONLY = False
#: the most tiles a forced look-back scan takes on a CPU driver (see the module docstring)
CPU_TILES = 16

_LOOK_BINDINGS = ((0, UNIFORM), (1, READ), (2, READ), (3, READ_WRITE), (4, READ_WRITE))


def usable(sc, probe: bool, ty: str, dims: tuple, src_off: int, form: str) -> bool:
    """Whether the look-back form scans these ``dims`` (``(length, inner, lines)``)."""
    length, inner, lines = dims
    # opt-in only (CTHREADS_SCAN=lookback): on the H200 it ran no faster than the fast form
    # (64M float32: 1.12 against 1.15 ms, bench/results/h200-2026-12-02-r3b-accumulate*.txt)
    # and its test file did not finish there within 50 s
    # (h200-2026-12-02-r3c-tests.txt), which a default must never risk
    if form != "lookback" or probe or ty not in codegen.LOOKBACK_TYPES:
        return False
    if "subgroup" not in sc.ctx.features or lines != 1 or inner != 1 or length % 4:
        return False
    if src_off % 16:
        return False
    if sc.ctx.is_cpu:
        return form == "lookback" and tiles(length) <= CPU_TILES
    return True


def tiles(length: int) -> int:
    size, per4 = SHAPE
    return -(-length // (size * per4 * 4))


class LookWords:
    """The status words of the look-back scans on one device."""

    def __init__(self, queue):
        self.queue = queue
        self.pooled = None
        self.words = 0
        self.epoch = codegen.EPOCHS         # the next call zeroes the words

    def next(self, ntiles: int):
        """(buffer, bytes, epoch) for a scan of ``ntiles`` tiles (launch lock held)."""
        need = 1 + 2 * ntiles
        if need > self.words:
            if self.pooled is not None:
                self.queue.pool.release(self.pooled)
            self.words = max(need, 1025)
            self.pooled = self.queue.pool.acquire(4 * self.words)
            self.epoch = codegen.EPOCHS
        if self.epoch >= codegen.EPOCHS:
            self.queue.write(self.pooled.buffer, bytes(4 * self.words))
            self.epoch = 0
        self.epoch += 1
        return self.pooled, 4 * self.words, self.epoch


def pipeline(sc, op, name: str):
    size, per4 = SHAPE
    key = ("lookback", op.fn, op.text, op.ty, size, per4)
    pipe = sc.pipelines.get(key)
    if pipe is not None:
        return pipe
    from .device_program import internal_error
    wgsl = codegen.lookback_wgsl(op.fn, op.ty, op.text, size, per4)
    return sc.pipelines.compile(
        key, wgsl, scan_codegen.ENTRY_POINT, _LOOK_BINDINGS, sc.layouts[True], op.overrides,
        lambda exc, text: internal_error(f"the look-back scan shader of {name}",
                                         "function's source", exc, text))


def dispatch(sc, op, name: str, src, src_off: int, dst, length: int, readback) -> int:
    """Queue the one dispatch scanning ``length`` elements of ``src`` (from byte ``src_off``)
    into ``dst``, then the ``readback``'s copies; the submission's number."""
    size = elem_type(op.ty).size
    ntiles = tiles(length)
    pipe = pipeline(sc, op, name)
    if getattr(sc, "look", None) is None:
        sc.look = LookWords(sc.queue)
    words, wbytes, epoch = sc.look.next(ntiles)
    nbytes = length * size
    uniform = sc.uniform(0)
    key = ("lookback", id(uniform), id(src), nbytes, src_off, id(dst), id(words), wbytes)
    bg = sc.bind_groups.get(key)
    if bg is None:
        bg = sc.queue.bind_group(sc.layouts[True], [
            (0, uniform.buffer, scan_codegen.UNIFORM_SIZE), (1, src.buffer, nbytes, src_off),
            (2, src.buffer, nbytes, src_off), (3, dst.buffer, nbytes),
            (4, words.buffer, wbytes)])
        sc.bind_groups.put(key, bg, (uniform, src, dst, words))
    spins = CPU_SPINS if sc.ctx.is_cpu else GPU_SPINS
    copies = readback.copies(sc.queue.pool) if readback is not None else ()
    return sc.queue.dispatch(
        pipe.pipeline, bg, ntiles,
        (uniform.buffer, codegen.uniform_bytes(length, ntiles, epoch, spins, AGG_ONLY)),
        copies, (src, dst, words))


__all__ = ["CPU_SPINS", "CPU_TILES", "GPU_SPINS", "LookWords", "SHAPE", "dispatch", "tiles",
           "usable"]
