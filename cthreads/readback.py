"""Reading results back: one staging buffer and one map per join or sync.

A readback gathers every list to download and the status words of the kernels whose bounds
checks it must report, at 8-byte-aligned offsets of a single staging buffer, so a join costs one
map however many lists it downloads. The status words are looked at first: if any kernel
recorded an out-of-range index, nothing is written back and a ``GpuIndexError`` is raised.
"""

from __future__ import annotations

from . import convert


def _align8(n: int) -> int:
    return (n + 7) & ~7


class Readback:
    """A plan of (device buffer -> caller's list) downloads plus status checks."""

    def __init__(self):
        self.lists = []        # (source buffer, target, offset, nbytes, elem)
        self.statuses = []     # (kernel runtime, offset)
        self.size = 0
        self.staging = None

    def add_list(self, source, target, nbytes: int, elem: str) -> None:
        off = _align8(self.size)
        self.lists.append((source, target, off, nbytes, elem))
        self.size = off + nbytes

    def add_status(self, rt) -> None:
        if rt.status is None or any(r is rt for r, _ in self.statuses):
            return
        off = _align8(self.size)
        self.statuses.append((rt, off))
        self.size = off + rt.status_nbytes

    def __bool__(self) -> bool:
        return bool(self.lists or self.statuses)

    def copies(self, pool) -> list:
        """Acquire the staging buffer; the copies to encode into it."""
        self.staging = pool.acquire(self.size, "staging")
        dst = self.staging.buffer
        out = [(src, 0, dst, off, n) for src, _, off, n, _ in self.lists]
        out += [(rt.status.buffer, 0, dst, off, rt.status_nbytes) for rt, off in self.statuses]
        return out

    def finish(self, queue, seq: int, download: bool = True) -> None:
        """Map the staging buffer (submission ``seq`` wrote it); check statuses, write back."""
        failures = []

        def consume(view):
            mv = memoryview(view).cast("B")
            for rt, off in self.statuses:
                words = mv[off:off + rt.status_nbytes].cast("I").tolist()
                if words[0] or words[3]:      # a failed bounds check; a loop ended early
                    failures.append((rt, words))
            if failures or not download:
                return
            for _, target, off, n, elem in self.lists:
                convert.writeback(target, mv[off:off + n], elem)

        try:
            queue.read_into(self.staging, self.size, seq, consume)
        finally:
            queue.pool.release(self.staging)
            self.staging = None
        for rt, _ in self.statuses:
            rt.checked(seq)
        if failures:
            for rt, _ in failures:
                rt.reset_status()
            rt, words = failures[0]
            raise rt.status_error(words)
