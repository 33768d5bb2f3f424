"""Lists split across several storage bindings: their declarations and addressing.

An array past the device's storage-binding limit reaches a kernel as several buffers ("parts",
``runtime/parts.py``), each of ``2**shift`` elements but the last. A compiled ``Variant`` says
which list parameters arrive split (``Variant.split``: (list name, parts, shift) per split
list); ``part_bindings`` numbers their parts: part 0 keeps the list's own binding, parts 1.. take
consecutive bindings after the status binding (``len(lists) + 2`` on), list after list, so the
bindings of an unsplit launch are unchanged.

Every access to a split list goes through one small helper per list and kind (``ct_sld_``,
``ct_sst_``, ``ct_sat_<op>_``): the element's part is ``u32(index) >> shift``, its offset
``index & (2**shift - 1)``, and a ``switch`` picks the part (an index past the end lands in the
last part, clamped there as an unsplit list's would be; bounds checks, by the logical shape,
come before). A 1-D split list's length is ``(parts - 1) * 2**shift`` plus the last part's
``arrayLength``; an N-D list's shape comes from the uniform as before, and its row-major flat
index is split.
"""

from __future__ import annotations

from .struct_atomics import struct_atomic_word
from .types import elem


def part_bindings(list_names, split: tuple, printing: bool = False) -> dict:
    """List name -> (parts, shift, bindings of parts 1..) for ``Variant.split`` of a kernel
    whose list parameters are ``list_names`` (in order); ``printing``: the kernel prints, its
    record buffer takes the binding after the status binding (codegen/printing.py)."""
    base = len(tuple(list_names)) + 2 + int(printing)
    out = {}
    for name, parts, shift in split:
        out[name] = (parts, shift, tuple(range(base, base + parts - 1)))
        base += parts - 1
    return out


class SplitList:
    """The declarations and access helpers of one split list (``ident``: its WGSL name)."""

    def __init__(self, ident: str, parts: int, shift: int, bindings: tuple):
        self.ident = ident
        self.parts = parts
        self.shift = shift
        self.bindings = bindings

    def part(self, k: int) -> str:
        """The WGSL name of part ``k`` (part 0 keeps the list's own)."""
        return self.ident if k == 0 else f"ct_s{k}_{self.ident}"

    def declarations(self, access: str, elem_type: str) -> list[str]:
        return [f"@group(0) @binding({b}) var<storage, {access}> {self.part(k)}: "
                f"array<{elem_type}>;" for k, b in enumerate(self.bindings, start=1)]

    def length(self) -> str:
        return (f"({(self.parts - 1) << self.shift}u + "
                f"arrayLength(&{self.part(self.parts - 1)}))")

    def _helper(self, lists, name: str, params: str, ret: str | None, body) -> str:
        """Make helper ``name`` once: ``body(part)`` is the statement on that part's buffer at
        offset ``ct_o``; ``ret``: the WGSL type returned (kept in ``ct_r``), or None."""
        if name in lists.helpers:
            return name
        head = f"fn {name}(ct_i: i32{params})" + (f" -> {ret}" if ret else "") + " {"
        lines = [head] + ([f"    var ct_r: {ret};"] if ret else []) + [
            "    let ct_q = bitcast<u32>(ct_i);",
            f"    let ct_o = ct_q & {(1 << self.shift) - 1}u;",
            f"    switch (ct_q >> {self.shift}u) {{"]
        for k in range(self.parts - 1):
            lines.append(f"        case {k}u: {{ {body(self.part(k))} }}")
        lines.append(f"        default: {{ {body(self.part(self.parts - 1))} }}")
        lines.append("    }")
        if ret:
            lines.append("    return ct_r;")
        lines.append("}")
        lists.helpers[name] = "\n".join(lines)
        return name

    def load(self, lists, ref, idx) -> str:
        t = elem(ref.elem).wgsl
        name = self._helper(lists, f"ct_sld_{self.ident}", "", t,
                            lambda part: f"ct_r = {lists.load_at(part, ref, 'ct_o')};")
        return f"{name}({idx})"

    def store(self, lists, ref, idx, value) -> str:
        row = elem(ref.elem)
        t = row.storage if ref.atomic else row.wgsl
        name = self._helper(lists, f"ct_sst_{self.ident}", f", ct_v: {t}", None,
                            lambda part: f"{lists.store_at(part, ref, 'ct_o', 'ct_v')};")
        return f"{name}({idx}, {value})"

    def atomic(self, lists, ref, op, idx, args) -> str:
        t = elem(struct_atomic_word(ref) or ref.elem).storage     # a struct list: int words
        names = [f"ct_a{k}" for k in range(len(args))]
        params = "".join(f", {a}: {t}" for a in names)
        offset = "i32(ct_o)" if op == "compare_exchange" else "ct_o"
        name = self._helper(lists, f"ct_sat_{op}_{self.ident}", params, t,
                            lambda part: f"ct_r = {lists.atomic_at(part, ref, op, offset, names)};")
        return f"{name}({idx}, {', '.join(args)})"


__all__ = ["SplitList", "part_bindings"]
