"""Arrays past the storage-binding limit, stored as several pooled buffers ("parts").

An array (a ``GpuArray``, or a list or numpy array passed straight to a launch) whose bytes
exceed ``BufferPool.binding_bytes()`` is split: every part holds ``part_elems`` elements, the
largest power of two whose bytes fit one binding, and the last part holds the rest. A kernel
launched with it binds each part (``codegen/split.py`` emits the addressing: part = index >>
shift, offset = index & (part_elems - 1)). An array that fits one binding is one part holding
every element (``part_elems`` = its count), as before.

Element counts above ``MAX_ELEMS`` (kernel indexes are i32) are refused here, clearly.
"""

from __future__ import annotations

from ..errors import GpuInvalidArgument

#: the most elements an array may hold: kernel indexes are 32-bit signed integers
MAX_ELEMS = 2**31 - 1


def check_count(count: int, where: str, shape=None) -> None:
    """GpuInvalidArgument when ``count`` elements are more than a kernel can index."""
    if count > MAX_ELEMS:
        what = f"an array of shape {tuple(shape)}, " if shape else "an array of "
        raise GpuInvalidArgument(
            f"{where}: {what}{count:,} elements, is more than the {MAX_ELEMS:,} (2**31 - 1) "
            "elements an array may hold (kernel indexes are 32-bit ints); nothing was "
            "allocated. Split the data into arrays of at most that many elements")


def part_elems_for(count: int, itemsize: int, binding_bytes: int) -> int:
    """Elements per part of an array of ``count`` elements of ``itemsize`` bytes: ``count``
    when it fits one binding, else the largest power of two whose bytes fit one."""
    if count * itemsize <= binding_bytes:
        return count
    elems = 1
    while elems * 2 * itemsize <= binding_bytes:
        elems *= 2
    return elems


def counts(count: int, part_elems: int) -> list[int]:
    """Elements in each part of an array of ``count`` elements (the last holds the rest)."""
    if count == 0:
        return []
    full, rest = divmod(count, part_elems)
    return [part_elems] * full + ([rest] if rest else [])


def shift_of(part_elems: int) -> int:
    """log2 of a split array's ``part_elems`` (a power of two)."""
    return part_elems.bit_length() - 1


def byte_slices(data, count: int, part_elems: int, itemsize: int) -> list:
    """The device bytes ``data`` (a buffer-protocol object of ``count`` elements) cut into the
    parts' byte ranges, as memoryviews (no copies)."""
    mv = memoryview(data)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    out, start = [], 0
    for n in counts(count, part_elems):
        out.append(mv[start:start + n * itemsize])
        start += n * itemsize
    return out


def split_key(part_elems: int, count: int) -> tuple | None:
    """(parts, shift) of a split array for the compiled variant, or None when unsplit."""
    if part_elems >= count:
        return None
    return (-(-count // part_elems), shift_of(part_elems))




class SplitLayouts:
    """The bindings and bind-group layout of a kernel's launches with split lists, one per
    ``Variant.split`` (made on first need, kept: a relaunch of the same sizes looks one up)."""

    def __init__(self, ctx, program, bindings: tuple):
        self.ctx = ctx
        self.program = program
        self.bindings = bindings          # the unsplit launch's ((binding, kind), ...)
        self._known: dict = {}

    def get(self, split: tuple) -> tuple:
        """(bindings, layout, {list name: (parts, shift, bindings of parts 1..)})."""
        hit = self._known.get(split)
        if hit is None:
            hit = self._known[split] = self._make(split)
        return hit

    def _make(self, split: tuple) -> tuple:
        from ..backend.pipeline import make_bind_group_layout  # noqa: PLC0415 - like the runtime
        from ..codegen.split import part_bindings  # noqa: PLC0415

        prog = self.program
        plan = part_bindings([p.name for p in prog.lists], split, prog.print_binding is not None)
        kinds = dict(self.bindings)
        extra = tuple((b, kinds[p.binding]) for p in prog.lists if p.name in plan
                      for b in plan[p.name][2])
        bindings = self.bindings + extra
        storage = len(bindings) - 1
        limit = self.ctx.limit("max-storage-buffers-per-shader-stage")
        if storage > limit:
            names = ", ".join(f"{name!r} in {parts} parts" for name, parts, _ in split)
            raise GpuInvalidArgument(
                f"{prog.name}(): this launch needs {storage} storage buffers ({names}, split "
                f"across bindings past the device's storage-binding limit), more than the "
                f"{limit} per shader that {self.ctx.name!r} allows; nothing was submitted. "
                "Pass smaller arrays (launch once per block of rows)")
        return bindings, make_bind_group_layout(self.ctx, bindings), plan


__all__ = ["MAX_ELEMS", "SplitLayouts", "byte_slices", "check_count", "counts", "part_elems_for",
           "shift_of", "split_key"]
