"""Binding plan: the uniform struct, storage bindings, read vs read_write from write analysis.

Follows ``program.py``: binding 0 is the uniform (a hidden count first: workgroups for kernels
that observe workgroups, threads for the others; then scalars in declaration order, 4 bytes
each), lists from binding 1 in declaration order, then the status
buffer when the kernel has bounds checks.
"""

from __future__ import annotations

from . import ir
from .program import ProgramParam
from .types import ListType, elem


def written_lists(kernel: ir.Kernel) -> set:
    """Python names of lists the kernel may write (stores, augmented stores, atomics), itself
    or in the device functions it calls."""
    names = set()
    for body in ir.all_bodies(kernel):
        names.update(s.lst.pyname for s in ir.walk_stmts(body) if isinstance(s, ir.Store))
        names.update(x.lst.pyname for x in ir.walk_stmt_exprs(body) if isinstance(x, ir.Atomic))
    return names


def _plain(annotation) -> str | None:
    """'float' or 'int' for a parameter annotated with plain float or int (a list of them
    too): its width follows the launch; None for bool and the width types."""
    name = annotation.elem if isinstance(annotation, ListType) else annotation
    return name if name in ("float", "int") else None


class Layout:
    def __init__(self, kernel: ir.Kernel, has_checks: bool, fixed: bool, annotated=()):
        written = written_lists(kernel)
        atomic = {ref.pyname for ref in kernel.lists if ref.atomic}
        self.params = []
        self.bindings = {}
        self.fields = ["    ct_groups: u32," if fixed else "    ct_threads: u32,"]
        offset = 4
        binding = 1
        plain = {n: _plain(t) for n, t in annotated}
        for (name, ty), ident in zip(kernel.params, kernel.param_idents):
            if isinstance(ty, ListType):
                self.bindings[name] = binding
                self.params.append(ProgramParam(name, f"list[{ty.elem}]", True, ty.elem,
                                                binding, None, name in written, name in atomic,
                                                plain.get(name)))
                binding += 1
            else:
                size = elem(ty).size
                offset = -(-offset // size) * size         # WGSL aligns a field to its size
                self.fields.append(f"    {ident}: {elem(ty).uniform},")
                self.params.append(ProgramParam(name, ty, False, ty, None, offset,
                                                plain=plain.get(name)))
                offset += size
        self.uniform_size = max(16, (offset + 15) // 16 * 16)
        self.status_binding = binding if has_checks else None
        self.written = written

    def uniform_decl(self) -> list[str]:
        return (["struct CtUniforms {"] + self.fields + ["}",
                "@group(0) @binding(0) var<uniform> ct_u: CtUniforms;"])
