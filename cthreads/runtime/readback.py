"""Reading results back: one staging buffer and one map per join or sync.

A readback gathers every list to download (a ``Download`` each) and the status words of the
kernels whose bounds checks it must report, at 8-byte-aligned offsets of a single staging
buffer, so a join costs one map however many lists it downloads. ``fetch`` copies the staging
bytes into host memory (at a join, or at ``shutdown()`` for jobs still in flight, so their
results survive the device); ``check`` looks at the status words first: if any kernel recorded
an out-of-range index (or a loop that the driver ended early), nothing is written back and its
error is raised; ``write`` then writes the lists back, after checking that none changed length
since the launch (a list that did raises ``GpuInvalidArgument`` and no list is written: nothing
the user added or kept is lost).
"""

from __future__ import annotations

from . import args, convert
from ..codegen.types import elem as elem_type
from ..errors import CThreadsGPUError, GpuInvalidArgument


def _align8(n: int) -> int:
    return (n + 7) & ~7


class Download:
    """One list to download: device buffer ``source`` (a split array's: a tuple of (buffer,
    bytes) per part, copied one after another) -> the caller's ``target``, from ``offset`` of
    the staging buffer; ``what`` names it in errors."""

    __slots__ = ("source", "target", "offset", "nbytes", "elem", "what", "src_offset",
                 "direct")

    def __init__(self, source, target, offset: int, nbytes: int, elem: str, what: str,
                 src_offset: int = 0):
        self.src_offset = src_offset      # byte offset in ``source`` (a GpuArray view)
        self.source = source
        self.target = target
        self.offset = offset
        self.nbytes = nbytes
        self.elem = elem
        self.what = what
        self.direct = False               # copied straight into target by ``fetch``


def _elements(target: list) -> int:
    """Elements of a list, or of a nested list (-1 when its rows are no longer rectangular)."""
    try:
        return args.elements(target)
    except CThreadsGPUError:
        return -1


class Readback:
    """A plan of (device buffer -> caller's list) downloads plus status checks."""

    def __init__(self):
        self.lists: list[Download] = []
        self.statuses = []     # (kernel runtime, offset of its status words)
        self.size = 0
        self.staging = None
        self.raw: bytes | None = None     # the staging bytes, once fetched
        self.base = 0                     # the staging offset raw starts at
        self.fresh = False                # the first download's target is a new array
        self.prints = None    # (Download of a printing kernel's records, its Printer), or None

    def add_list(self, source, target, nbytes: int, elem: str, what: str = "a list",
                 src_offset: int = 0, fresh: bool = False) -> None:
        """``fresh``: ``target`` is a new array of ours (GpuArray.numpy()), which may be written
        before the status words are checked."""
        off = _align8(self.size)
        self.lists.append(Download(source, target, off, nbytes, elem, what, src_offset))
        self.fresh = fresh if len(self.lists) == 1 else self.fresh
        self.size = off + nbytes

    def add_status(self, rt) -> None:
        if rt.status is None or any(r is rt for r, _ in self.statuses):
            return
        off = _align8(self.size)
        self.statuses.append((rt, off))
        self.size = off + rt.status_nbytes

    def add_prints(self, source, nbytes: int, printer) -> None:
        """The record buffer of a kernel that prints (runtime/printing.py)."""
        off = _align8(self.size)
        self.prints = (Download(source, None, off, nbytes, "uint32", "print()"), printer)
        self.size = off + nbytes

    def emit_prints(self) -> None:
        """Write the launch's printed lines to sys.stdout, once (``raw`` fetched)."""
        if self.prints is None or self.raw is None:
            return
        d, printer = self.prints
        self.prints = None
        off = d.offset - self.base
        printer.emit(memoryview(self.raw)[off:off + d.nbytes])

    def __bool__(self) -> bool:
        return bool(self.lists or self.statuses or self.prints)

    def copies(self, pool) -> list:
        """Acquire the staging buffer; the copies to encode into it."""
        self.staging = pool.acquire(self.size, "staging")
        dst = self.staging.buffer
        out = []
        for d in self.lists:
            if d.source.__class__ is tuple:       # a split array: (buffer, bytes) per part
                off = d.offset
                for buf, nbytes in d.source:
                    out.append((buf, 0, dst, off, nbytes))
                    off += nbytes
            else:
                out.append((d.source, d.src_offset, dst, d.offset, d.nbytes))
        out += [(rt.status.buffer, 0, dst, off, rt.status_nbytes) for rt, off in self.statuses]
        if self.prints is not None:
            d = self.prints[0]
            out.append((d.source, 0, dst, d.offset, d.nbytes))
        return out

    def fetch(self, queue, seq: int) -> None:
        """Copy the staging buffer (submission ``seq`` wrote it) into ``raw``; release it. A
        first download into a numpy array holding the device's bytes as they are goes straight
        into that array (one copy of the mapped range; ``raw`` then starts after it)."""
        into = self._direct()
        self.raw = queue.read_into(self.staging, self.size, seq, into)
        queue.pool.release(self.staging)
        self.staging = None

    def _direct(self):
        """The byte view of the first download's target when it can be copied into as is."""
        if not self.fresh:   # a caller's array is written only by ``write``, after the checks
            return None
        d = self.lists[0]
        target = d.target
        if not args.is_ndarray(target) or not target.flags.c_contiguous or \
                not target.flags.writeable or target.nbytes != d.nbytes or d.elem == "bool" or \
                target.dtype != convert._np().dtype(elem_type(d.elem).host_dtype):
            return None
        self.base = d.nbytes
        d.direct = True
        return memoryview(target.reshape(-1)).cast("B")

    def check(self, seq: int, live: bool = True) -> None:
        """Raise the error of the first failed status (bounds check, loop budget) in ``raw``. With
        ``live`` (the device still up) the kernels' statuses are marked read, a failed one
        zeroed."""
        mv = memoryview(self.raw)
        failures = []
        for rt, off in self.statuses:
            words = mv[off - self.base:off - self.base + rt.status_nbytes].cast("I").tolist()
            if any(words):   # a failed check or a loop ended early (a GpuGraph: in any slot)
                failures.append((rt, words))
        if live:
            for rt, _ in self.statuses:
                rt.checked(seq)
            for rt, _ in failures:
                rt.reset_status()
        if failures:
            rt, words = failures[0]
            raise rt.status_error(words)

    def write(self) -> None:
        """Write every list back from ``raw``, unless one changed length since the launch."""
        for d in self.lists:
            length = d.nbytes // elem_type(d.elem).size
            if args.is_ndarray(d.target):
                continue
            now = _elements(d.target)
            if now != length:
                raise GpuInvalidArgument(
                    f"{d.what}: the list changed length from {length} to {now} elements "
                    "between gpu() and join(), so its results were not written back (the "
                    "lists are as you left them; the job is finished). Change a list's length "
                    "only after join(), or launch with a copy")
        mv = memoryview(self.raw)
        for d in self.lists:
            if not d.direct:
                off = d.offset - self.base
                args.writeback(d.target, mv[off:off + d.nbytes], d.elem)

    def finish(self, queue, seq: int, download: bool = True) -> None:
        """fetch, check and (with ``download``) write, in one go."""
        try:
            self.fetch(queue, seq)
        finally:
            if self.staging is not None:
                queue.pool.release(self.staging)
                self.staging = None
        self.check(seq)
        if download:
            self.write()
