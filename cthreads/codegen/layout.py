"""Binding plan: the uniform struct, storage bindings, read vs read_write from write analysis.

Follows ``program.py``: binding 0 is the uniform (a hidden count first: workgroups for kernels
that observe workgroups, threads for the others; then scalars in declaration order, 4 bytes
each), lists from binding 1 in declaration order, then the status
buffer when the kernel has bounds checks, then (the binding after the status buffer's, with or
without it) the print records of a kernel that prints.
"""

from __future__ import annotations

from . import ir, printing
from .lists import shape_field
from .program import ProgramParam
from .structtypes import StructType
from .types import ListType, elem


def written_lists(kernel: ir.Kernel) -> set:
    """Python names of lists the kernel may write (stores, augmented stores, atomics), itself
    or in the device functions it calls."""
    names = set()
    for body in ir.all_bodies(kernel):
        names.update(s.lst.pyname for s in ir.walk_stmts(body) if isinstance(s, ir.Store))
        names.update(x.lst.pyname for x in ir.walk_stmt_exprs(body) if isinstance(x, ir.Atomic))
    return names


def vector_component(name: str, ty: str, offset: int, kernel, plain) -> ProgramParam:
    """The ProgramParam of component ``name`` ('g.y') of a vector parameter."""
    pyname, comp = name.split(".")
    n = sum(1 for other, _ in kernel.params if other.startswith(pyname + "."))
    kind = f"{'i' if 'int' in ty else ''}vec{n}"
    if comp.isdigit():                      # an entry of a matrix parameter (mattypes.py)
        kind = f"mat{round(n ** 0.5)}{round(n ** 0.5)}"
    return ProgramParam(pyname, kind, False, ty, None, offset, plain=plain.get(pyname), vec=n,
                        component=int(comp) if comp.isdigit() else "xyzw".index(comp))


def struct_word_param(name: str, ty: str, offset: int, annotated) -> ProgramParam:
    """The ProgramParam of word ``name`` ('q#3') of a struct parameter (a uniform field)."""
    pyname, k = name.split("#")
    struct = dict(annotated)[pyname]
    plain = "float" if "float" in ty else "int" if "int" in ty else None
    return ProgramParam(pyname, struct.name, False, ty, None, offset, plain=plain,
                        vec=struct.words, component=int(k), struct=struct)


def _plain(annotation) -> str | None:
    """'float' or 'int' for a parameter annotated with plain float or int (a list of them
    too): its width follows the launch; None for bool and the width types."""
    if isinstance(annotation, StructType):
        return None
    name = annotation if isinstance(annotation, str) else annotation.elem   # list, vector
    return name if name in ("float", "int", "complex") else None


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
                self.params.append(ProgramParam(name, str(ty), True, ty.elem,
                                                binding, None, name in written, name in atomic,
                                                plain.get(name), ty.ndim, ty.vec, mat=ty.mat,
                                                struct=ty.struct))
                binding += 1
            else:
                size = elem(ty).size
                offset = -(-offset // size) * size         # WGSL aligns a field to its size
                if "#" in name:                 # a word of a struct parameter (struct_locals.py)
                    self.params.append(struct_word_param(name, ty, offset, annotated))
                    self.fields.append(f"    {ident}: {elem(ty).uniform},")
                    offset += size
                    continue
                if "." in name:                             # a component of a vec3 parameter
                    self.params.append(vector_component(name, ty, offset, kernel, plain))
                    self.fields.append(f"    {ident}: {elem(ty).uniform},")
                    offset += size
                    continue
                self.fields.append(f"    {ident}: {elem(ty).uniform},")
                self.params.append(ProgramParam(name, ty, False, ty, None, offset,
                                                plain=plain.get(name)))
                offset += size
        # the shapes of the N-D lists, then (in the N-D launch variant's uniform only, which
        # is nd_uniform_size bytes) the group counts per axis
        self.shapes = []                     # (parameter name, dimension, byte offset)
        offset = -(-offset // 4) * 4
        for (name, ty), ident in zip(kernel.params, kernel.param_idents):
            if isinstance(ty, ListType) and ty.ndim > 1:
                for d in range(ty.ndim):
                    self.fields.append(f"    {shape_field(ident, d)}: u32,")
                    self.shapes.append((name, d, offset))
                    offset += 4
        self.nd_offset = offset
        self.nd_fields = ["    ct_nd_gx: u32,", "    ct_nd_gy: u32,", "    ct_nd_gz: u32,"]
        self.uniform_size = max(16, (offset + 15) // 16 * 16)
        self.nd_uniform_size = max(16, (offset + 12 + 15) // 16 * 16)
        self.status_binding = binding if has_checks else None
        # print(): its record buffer after the status buffer's place (codegen/printing.py)
        self.print_binding = binding + 1 if printing.prints(kernel) else None
        self.written = written

    def uniform_decl(self, nd: bool = False) -> list[str]:
        """The uniform struct; ``nd``: the N-D launch variant's (its first field counts
        workgroups, and the group counts per axis follow the shapes)."""
        fields = self.fields
        if nd:
            fields = ["    ct_groups: u32,"] + fields[1:] + self.nd_fields
        return (["struct CtUniforms {"] + fields + ["}",
                "@group(0) @binding(0) var<uniform> ct_u: CtUniforms;"])
