"""Structs in kernels: ``list[Particle]`` elements read and written field by field.

A ``@Gpu.struct`` array is bound as a flat list of *words* of the launch's float width
(``cthreads/lang/structs.py`` gives the layout: one word per scalar, 4 bytes in float32
launches, 8 in float64 ones), exactly as a ``list[vec3]`` is a flat list of components: the
list is ``ListType('float', ndim, vec=words, struct=S)``, so ``len(p)``, ``p.shape``, N-D
indexing and the bounds check (reported as the element index) are the vector list's.
``p[i].mass`` reads word ``W*i + offset``; a float field is the word itself, an int field its
``bitcast`` (int32 / int64), a bool field the word's first byte (numpy's bool) tested against
zero; ``p[i].pos`` is a vector of consecutive words (``VecValue``), ``p[i].pos.x`` /
``p[i].pos[0]`` one of them, ``p[i].inner.k`` a nested struct's field. Stores write the word
(a bool writes its whole word: 0 or 1, zeroing the padding bytes). Vulkan keeps loads, stores and
bitcasts bit-exact (no flush of denormals), so int words travel through float words unchanged.

A mixin of ``frontend.Translator``, reached from the vector hooks (``vectors.VecMixin``).
"""

from __future__ import annotations

import ast
from ..errors import GpuKernelTypeError
from . import ir
from .structtypes import StructType
from .types import assignable
from .vector_calls import VecValue
from .vectypes import VecType


def _concrete(kind, word: str):
    """A field kind's type in a list of ``word``s."""
    int_ty = "int64" if word == "float64" else "int"
    if kind == "float":
        return word
    if kind == "int":
        return int_ty
    if isinstance(kind, VecType):
        return VecType(kind.n, int_ty if kind.is_int else word)
    return kind


class StructMixin:
    # -- finding the field ---------------------------------------------------------------------
    def _struct_chain(self, node):
        """(struct list, element index AST nodes, the operations after the element (outer
        last), the element's node) of an expression rooted in a struct list element, else
        None."""
        chain, base = [], node
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            chain.insert(0, base)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in self.scope.lists):
            return None
        lst = self.scope.lists[base.id]
        if getattr(lst, "struct", None) is None:
            return None
        parts, k = [], 0
        while k < len(chain) and isinstance(chain[k], ast.Subscript):
            sl = chain[k].slice
            parts.extend(sl.elts if isinstance(sl, ast.Tuple) else [sl])
            k += 1
            if len(parts) >= lst.ndim:
                break
        if len(parts) != lst.ndim:
            want = ", ".join("ijk"[:lst.ndim])
            self.src.error(node, f"'{ast.unparse(node)}' needs {lst.ndim} index"
                           f"{'es' if lst.ndim > 1 else ''} of '{lst.pyname}', a list of "
                           f"{lst.struct}", f"write {lst.pyname}[{want}].field",
                           cls=GpuKernelTypeError)
        element = chain[k - 1] if k else base
        return lst, parts, chain[k:], element

    def _struct_resolve(self, lst, ops, node):
        """(concrete kind, word offset) the operations ``ops`` select in an element."""
        kind, offset = lst.struct, 0
        for op in ops:
            if isinstance(kind, StructType):
                if not isinstance(op, ast.Attribute):
                    self.src.error(op, f"a {kind} is not indexed: name a field",
                                   f"its fields are {', '.join(n for n, _ in kind.fields)}",
                                   cls=GpuKernelTypeError)
                found = kind.lookup(op.attr)
                if found is None:
                    self.src.error(op, f"{kind} has no field '{op.attr}'",
                                   f"its fields are {', '.join(n for n, _ in kind.fields)}",
                                   cls=GpuKernelTypeError)
                kind, offset = found[0], offset + found[1]
                kind = _concrete(kind, lst.elem)
            elif isinstance(kind, VecType):
                k = self.vec_component_index(op, kind) if isinstance(op, ast.Attribute) else \
                    self.vec_literal_index(op.slice, kind)
                kind, offset = kind.elem, offset + k
            else:
                self.src.error(op, f"'{ast.unparse(op.value)}' is a {kind}, which has no "
                               "fields or components", "use it as a number",
                               cls=GpuKernelTypeError)
        return kind, offset

    def _struct_place(self, node, what: str):
        found = self._struct_chain(node)
        if found is None:
            return None
        lst, parts, ops, element = found
        kind, offset = self._struct_resolve(lst, ops, node)
        indexes = [self.index_expr(part, lst, d) for d, part in enumerate(parts)]
        last = indexes[-1]
        for sub in ir.walk_expr(last):
            if isinstance(sub, (ir.FuncCall, ir.Atomic)):
                self.src.error(parts[-1], "the index of a struct element calls a function",
                               "assign the index to a local first (j = ...; p[j])",
                               cls=GpuKernelTypeError)
        checks = [self.new_check(element, lst, d) for d in range(lst.ndim)]
        loc = self.src.loc(node)

        def flat(k: int) -> ir.Expr:
            scaled = ir.Binary(last.ty, loc, "mul", last, ir.Const(last.ty, loc, lst.vec))
            return ir.Binary(last.ty, loc, "add", scaled, ir.Const(last.ty, loc, k)) if k \
                else scaled
        return lst, indexes[:-1], flat, checks, kind, offset

    # -- reads ---------------------------------------------------------------------------------
    def _struct_word(self, lst, more, flat, checks, kind: str, k: int, loc) -> ir.Expr:
        load = self._vec_load(lst, more, flat, checks, k, loc)
        if kind == "bool":
            return ir.Call("bool", loc, "s_word_bool", (load,))
        if "int" in kind:
            return ir.Call(kind, loc, "s_word_int", (load,))
        return load

    def struct_read(self, node):
        """The value of ``p[i].field...`` (a scalar ``ir.Expr`` or a ``VecValue``), or None
        when ``node`` is not rooted in a struct list element."""
        place = self._struct_place(node, "indexed")
        if place is None:
            return None
        lst, more, flat, checks, kind, offset = place
        loc = self.src.loc(node)
        if isinstance(kind, StructType):
            self.src.error(node, f"'{ast.unparse(node)}' is a whole {kind}; kernels read and "
                           "write structs field by field",
                           f"name a field: {ast.unparse(node)}."
                           f"{kind.fields[0][0]} (fields: "
                           f"{', '.join(n for n, _ in kind.fields)})", cls=GpuKernelTypeError)
        if isinstance(kind, VecType):
            return VecValue(kind, loc, tuple(
                self._struct_word(lst, more, flat, checks, kind.elem, offset + c, loc)
                for c in range(kind.n)))
        return self._struct_word(lst, more, flat, checks, kind, offset, loc)

    # -- stores --------------------------------------------------------------------------------
    def _word_of(self, value, kind: str, word: str, node) -> ir.Expr:
        if not assignable(value.ty, kind):
            self.src.error(getattr(node, "value", node), f"cannot store a {value.ty} value "
                           f"into a {kind} field", f"convert explicitly, e.g. {kind}(...)",
                           cls=GpuKernelTypeError)
        value = self.conv(value, kind)
        if kind == "bool":
            return ir.Call(word, value.loc, "s_bool_word", (value,))
        if "int" in kind:
            return ir.Call(word, value.loc, "s_int_word", (value,))
        return value

    def struct_store(self, target, value, node, aug_op=None):
        """``p[i].field = value`` (``aug_op``: ``op=``) as statements, or None."""
        place = self._struct_place(target, "written")
        if place is None:
            return None
        lst, more, flat, checks, kind, offset = place
        loc = self.src.loc(node)
        if isinstance(kind, StructType):
            self.src.error(target, f"'{ast.unparse(target)}' is a whole {kind}; kernels write "
                           "structs field by field", f"assign each field: "
                           f"{ast.unparse(target)}.{kind.fields[0][0]} = ... (fields: "
                           f"{', '.join(n for n, _ in kind.fields)})", cls=GpuKernelTypeError)
        if aug_op is not None:
            old = self.struct_read(target)
            value = self.vec_binary(aug_op, old, value, node) if isinstance(old, VecValue) or \
                isinstance(value, VecValue) else self.binary(aug_op, old, value, node)
        if isinstance(kind, VecType):
            self.vec_check(value, kind, node, f"the field '{ast.unparse(target)}'")
            pairs = [(kind.elem, offset + c, comp) for c, comp in enumerate(value.comps)]
        else:
            pairs = [(kind, offset, self.not_vector(value, getattr(node, "value", node)))]
        out = []
        for ty, k, v in pairs:
            index = flat(k)
            idx, extra = (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))
            out.append(ir.Store(loc, lst, idx, self._word_of(v, ty, lst.elem, node), checks[0],
                                more=extra, more_checks=tuple(checks[1:])))
        return out


__all__ = ["StructMixin"]
