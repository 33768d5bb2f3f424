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


class Layout:
    def __init__(self, kernel: ir.Kernel, has_checks: bool, fixed: bool):
        written = written_lists(kernel)
        atomic = {ref.pyname for ref in kernel.lists if ref.atomic}
        self.params = []
        self.bindings = {}
        self.fields = ["    ct_groups: u32," if fixed else "    ct_threads: u32,"]
        offset = 4
        binding = 1
        for (name, ty), ident in zip(kernel.params, kernel.param_idents):
            if isinstance(ty, ListType):
                self.bindings[name] = binding
                self.params.append(ProgramParam(name, f"list[{ty.elem}]", True, ty.elem,
                                                binding, None, name in written, name in atomic))
                binding += 1
            else:
                self.fields.append(f"    {ident}: {elem(ty).uniform},")
                self.params.append(ProgramParam(name, ty, False, ty, None, offset))
                offset += elem(ty).size
        self.uniform_size = max(16, (offset + 15) // 16 * 16)
        self.status_binding = binding if has_checks else None
        self.written = written

    def uniform_decl(self) -> list[str]:
        return (["struct CtUniforms {"] + self.fields + ["}",
                "@group(0) @binding(0) var<uniform> ct_u: CtUniforms;"])
