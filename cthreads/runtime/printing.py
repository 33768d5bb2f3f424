"""The host side of ``print(...)`` in kernels: each launch's record buffer, and its lines.

A kernel that prints (``KernelProgram.print_sites``; codegen/printing.py writes the records)
gets a ``Printer`` in its runtime. Every launch binds a buffer of its own (so queued launches
never share records), whose counter word is zeroed before the dispatch; it rides in the
launch's readback (``Readback.add_prints``), and when the job is first waited for or joined its
records are sorted by thread (z, then y, then x: the linear invocation index) and sequence
number within the thread, formatted with Python's ``format`` (the specs the compiler checked)
and written to ``sys.stdout`` in one write: at most ``print_limit`` lines, then one line
counting the dropped ones. The buffer holds ``4 * print_limit`` records (at least one): when
more arrive the device keeps those it wrote first, and the lines kept are the first
``print_limit`` of these in thread order (the buffer stays within 32 MiB, so a very large
``print_limit`` keeps fewer records than 4 times it).

Values: ints, bools and float64 as Python has them; a float32 value is converted to the Python
float of exactly its value and formatted as Python formats that (the float32 nearest 0.1
prints as 0.10000000149011612, as ``simulate`` prints an element of a float32 array; write
``{x:.6g}`` for fewer digits); vectors as their Python class (``vec3(1.0, 2.0, 3.0)``),
complex numbers as Python's complex.
"""

from __future__ import annotations

import struct
import sys

from ..lang import vectors as pyvec

_F = struct.Struct("<f")
_HEADER = 5              # codegen/printing.HEADER_WORDS
_COUNTERS = 3            # the buffer's first words: cursor, prints, end of the records written
#: ``@Gpu(print_limit=...)``'s default: lines kept per launch
PRINT_LIMIT = 1000
#: the most bytes of records a launch keeps (a large print_limit's buffer stays bindable)
_MAX_BYTES = 32 << 20


def _f32(word: int) -> float:
    """The float32 of ``word``, exactly, as a Python float."""
    return _F.unpack(struct.pack("<I", word))[0]


def _f64(lo: int, hi: int) -> float:
    return struct.unpack("<d", struct.pack("<II", lo, hi))[0]


def _decode(elem: str, words: list, k: int):
    """(the Python value of a scalar of type ``elem`` at ``words[k]``, the next index)."""
    w = words[k]
    if elem == "float":
        return _f32(w), k + 1
    if elem == "int":
        return w - (1 << 32) if w >= 1 << 31 else w, k + 1
    if elem == "uint32":
        return w, k + 1
    if elem == "bool":
        return bool(w), k + 1
    if elem == "int64":
        v = w | (words[k + 1] << 32)
        return v - (1 << 64) if v >= 1 << 63 else v, k + 2
    if elem == "float64":
        return _f64(w, words[k + 1]), k + 2
    if elem == "complex":
        return complex(_f32(w), _f32(words[k + 1])), k + 2
    if elem == "complex128":
        return complex(_f64(w, words[k + 1]), _f64(words[k + 2], words[k + 3])), k + 4
    raise TypeError(f"print of a {elem} value")


def _convert(value, conv: str):
    return {"s": str, "r": repr, "a": ascii}[conv](value) if conv else value


def format_record(site, words: list, k: int) -> str:
    """The text of one record of ``site`` whose values start at ``words[k]``."""
    values = []
    for slot in site.slots:
        if slot.vec:
            comps = []
            for _ in range(slot.n):
                c, k = _decode(slot.elem, words, k)
                comps.append(c)
            value = pyvec.VECTOR_TYPES[slot.vec](*comps)
        else:
            value, k = _decode(slot.elem, words, k)
        values.append(format(_convert(value, slot.conv), slot.spec))
    return "".join(p if isinstance(p, str) else values[p] for p in site.pieces)


class Printer:
    """A printing kernel's record layout and limit on one runtime."""

    def __init__(self, program, limit: int):
        self.name = program.name
        self.binding = program.print_binding
        self.sites = {s.ident: s for s in program.print_sites}
        self.sizes = {s.ident: _HEADER + s.words for s in program.print_sites}
        self.record = max(self.sizes.values(), default=_HEADER)
        self.limit = limit
        # records of the largest site: 4 * limit, within a binding every device takes
        self.capacity = max(1, min(4 * limit, _MAX_BYTES // (4 * self.record)))
        self.nbytes = 4 * (_COUNTERS + self.record * self.capacity)

    def buffer(self, queue):
        """A launch's record buffer, its counter zeroed before the dispatch."""
        pooled = queue.pool.acquire(self.nbytes)
        try:
            queue.upload(pooled, bytes(_COUNTERS * 4))
        except BaseException:
            queue.pool.release(pooled)
            raise
        return pooled

    def text(self, raw) -> str:
        """The lines of the records in ``raw`` (the buffer's bytes), in thread order."""
        mv = memoryview(raw).cast("I")
        total, end = mv[1], min(mv[2], len(mv) - _COUNTERS)
        words = mv[_COUNTERS:_COUNTERS + end].tolist()
        records = []
        at = 0
        while at < end:            # the records written, one after another up to ``end``
            size = self.sizes[words[at + 4]]
            records.append(words[at:at + size])
            at += size
        records.sort(key=lambda w: (w[2], w[1], w[0], w[3]))
        shown = records[:self.limit]
        out = [format_record(self.sites[w[4]], w, _HEADER) for w in shown]
        dropped = total - len(shown)
        if dropped:
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            out.append(f"[cthreads] kernel {self.name}: {dropped} more print() line(s) "
                       f"dropped (print_limit={self.limit}; raise it with "
                       "@Gpu(print_limit=...))\n")
        return "".join(out)

    def emit(self, raw) -> None:
        """Write the lines of ``raw`` to ``sys.stdout`` (as it is now: a redirected or
        captured stdout gets them)."""
        text = self.text(raw)
        if text:
            sys.stdout.write(text)


__all__ = ["PRINT_LIMIT", "Printer", "format_record"]
