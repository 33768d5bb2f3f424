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
from dataclasses import dataclass

from ..errors import GpuKernelTypeError
from . import ir
from .structtypes import StructType, concrete_kind, struct_of
from .types import assignable
from .vector_calls import VecValue
from .vectypes import VecType


@dataclass(frozen=True)
class StructValue:
    """A struct expression: its type and one scalar ``ir.Expr`` per word (leaf order)."""
    ty: StructType
    loc: object
    words: tuple


def _fields_hint(kind: StructType) -> str:
    return f"its fields are {', '.join(n for n, _ in kind.fields)}"


class StructMixin:
    # -- finding the place -----------------------------------------------------------------
    def struct_word(self) -> str:
        return self.scope.widths.float

    def struct_local(self, name: str):
        ty = self.types.get(name)
        return ty if isinstance(ty, StructType) else None

    def struct_idents(self, name: str, ty: StructType) -> tuple:
        ident = self.scope.scalar[name].ident
        return tuple(f"ct_s{ident}_{k}" for k in range(ty.words))

    def _struct_chain(self, node):
        """('list', lst, index nodes, ops, element node) for an expression rooted in a struct
        list element, ('local', name, ops) for one rooted in a struct local, else None."""
        chain, base = [], node
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            chain.insert(0, base)
            base = base.value
        if isinstance(base, ast.Call) and chain and self._struct_callee(base):
            return "value", self.expr(base), chain          # f(x).pos, Particle(q).vel
        if isinstance(base, ast.Call) and len(chain) > 1 and isinstance(chain[0], ast.Subscript) \
                and self.tuple_function(base) is not None:
            value = self.expr(chain[0])                     # f(x)[0].pos: a struct member
            return ("value", value, chain[1:]) if isinstance(value, StructValue) else None
        if not isinstance(base, ast.Name):
            return None
        if base.id in self.scope.scalar and self.struct_local(base.id) is not None:
            return "local", base.id, chain
        if base.id not in self.scope.lists:
            return None
        lst = self.scope.lists[base.id]
        if getattr(lst, "struct", None) is None:
            return None
        parts, k = [], 0
        while k < len(chain) and isinstance(chain[k], ast.Subscript) and len(parts) < lst.ndim:
            sl = chain[k].slice
            parts.extend(sl.elts if isinstance(sl, ast.Tuple) else [sl])
            k += 1
        if len(parts) != lst.ndim:
            want = ", ".join("ijk"[:lst.ndim])
            self.src.error(node, f"'{ast.unparse(node)}' needs {lst.ndim} index"
                           f"{'es' if lst.ndim > 1 else ''} of '{lst.pyname}', a list of "
                           f"{lst.struct}", f"write {lst.pyname}[{want}].field",
                           cls=GpuKernelTypeError)
        return "list", lst, parts, chain[k:], chain[k - 1]

    def _struct_callee(self, call: ast.Call) -> bool:
        """``call`` makes a struct: a constructor, or a device function of a struct result."""
        obj = self.scope.resolve(call.func)
        returns = getattr(getattr(obj, "signature", None), "returns", None)
        return struct_of(obj) is not None or isinstance(returns, StructType)

    def _struct_resolve(self, kind, ops):
        """(concrete kind, word offset) the operations ``ops`` select in a ``kind`` value."""
        word, offset = self.struct_word(), 0
        for op in ops:
            if isinstance(kind, StructType):
                if not isinstance(op, ast.Attribute):
                    self.src.error(op, f"a {kind} is not indexed: name a field",
                                   _fields_hint(kind), cls=GpuKernelTypeError)
                found = kind.lookup(op.attr)
                if found is None:
                    self.src.error(op, f"{kind} has no field '{op.attr}'", _fields_hint(kind),
                                   cls=GpuKernelTypeError)
                kind, offset = concrete_kind(found[0], word), offset + found[1]
            elif isinstance(kind, VecType):
                k = self.vec_component_index(op, kind) if isinstance(op, ast.Attribute) else \
                    self.vec_literal_index(op.slice, kind)
                kind, offset = kind.elem, offset + k
            else:
                self.src.error(op, f"'{ast.unparse(op.value)}' is a {kind}, which has no "
                               "fields or components", "use it as a number",
                               cls=GpuKernelTypeError)
        return kind, offset

    def _struct_value_place(self, found, node, loc):
        """``_struct_place`` of a struct local's field or of a struct-valued call's."""
        if found[0] == "value":
            _, value, ops = found
            kind, offset = self._struct_resolve(value.ty, ops)

            def read_value(k):
                return value.words[offset + k]

            def no_write(k, _):
                self.src.error(node, f"'{ast.unparse(node)}' is a field of a temporary value",
                               "assign the struct to a local first", cls=GpuKernelTypeError)
            return kind, value.ty.word_types(self.struct_word())[offset:], read_value, \
                no_write, None
        if found[0] == "local":
            _, name, ops = found
            sty = self.struct_local(name)
            kind, offset = self._struct_resolve(sty, ops)
            idents, types = self.struct_idents(name, sty), sty.word_types(self.struct_word())

            def read(k):
                return ir.Var(types[offset + k], loc, idents[offset + k])

            def write(k, value):
                return ir.Assign(loc, idents[offset + k], value)
            return kind, types[offset:], read, write, name

    def _struct_place(self, node):
        """(kind, word types, read(k) -> expr, write(k, expr) -> stmt) of a struct place."""
        found = self._struct_chain(node)
        if found is None:
            return None
        loc = self.src.loc(node)
        if found[0] != "list":
            return self._struct_value_place(found, node, loc)
        _, lst, parts, ops, element = found
        kind, offset = self._struct_resolve(lst.struct, ops)
        types = lst.struct.word_types(lst.elem)
        indexes = [self.index_expr(part, lst, d) for d, part in enumerate(parts)]
        last, more = indexes[-1], indexes[:-1]
        for sub in ir.walk_expr(last):
            if isinstance(sub, (ir.FuncCall, ir.Atomic)):
                self.src.error(parts[-1], "the index of a struct element calls a function",
                               "assign the index to a local first (j = ...; p[j])",
                               cls=GpuKernelTypeError)
        checks = [self.new_check(element, lst, d) for d in range(lst.ndim)]

        def flat(k: int) -> ir.Expr:
            scaled = ir.Binary(last.ty, loc, "mul", last, ir.Const(last.ty, loc, lst.vec))
            return ir.Binary(last.ty, loc, "add", scaled, ir.Const(last.ty, loc, k)) if k \
                else scaled

        def read(k):
            load = self._vec_load(lst, more, flat, checks, offset + k, loc)
            ty = types[offset + k]
            if ty in ("bool", "uint32"):
                return ir.Call(ty, loc, f"s_word_{'bool' if ty == 'bool' else 'uint'}", (load,))
            return ir.Call(ty, loc, "s_word_int", (load,)) if "int" in ty else load

        def write(k, value):
            ty = types[offset + k]
            if ty in ("bool", "uint32"):
                value = ir.Call(lst.elem, loc, f"s_{'bool' if ty == 'bool' else 'uint'}_word",
                                (value,))
            elif "int" in ty:
                value = ir.Call(lst.elem, loc, "s_int_word", (value,))
            index = flat(offset + k)
            idx, extra = (index, ()) if lst.ndim == 1 else (more[0], tuple(more[1:]) + (index,))
            return ir.Store(loc, lst, idx, value, checks[0], more=extra,
                            more_checks=tuple(checks[1:]))
        return kind, types[offset:], read, write, None

    # -- reads ---------------------------------------------------------------------------------
    def struct_read(self, node):
        """The value of ``p[i]``, ``p[i].field...``, ``q``, ``q.field``: a ``StructValue``, a
        ``VecValue`` or a scalar ``ir.Expr``; None for other expressions."""
        place = self._struct_place(node)
        if place is None:
            return None
        kind, _, read, _, _ = place
        loc = self.src.loc(node)
        if isinstance(kind, StructType):
            return StructValue(kind, loc, tuple(read(k) for k in range(kind.words)))
        if isinstance(kind, VecType):
            return VecValue(kind, loc, tuple(read(c) for c in range(kind.n)))
        return read(0)

    def struct_choice(self, test, body, orelse, node) -> StructValue:
        """``a if c else b`` of two structs of one type: the choice word by word."""
        if not isinstance(body, StructValue):
            body, orelse = orelse, body
        words = self.struct_words_of(orelse, body.ty, node.orelse if orelse is not body else
                                     node.body, "the other branch")
        loc = self.src.loc(node)
        return StructValue(body.ty, loc, tuple(ir.IfExp(a.ty, loc, test, a, self.conv(b, a.ty))
                                               for a, b in zip(body.words, words)))

    # -- stores --------------------------------------------------------------------------------
    def _word_of(self, value, kind: str, node) -> ir.Expr:
        if not assignable(value.ty, kind):
            self.src.error(getattr(node, "value", node), f"cannot store a {value.ty} value "
                           f"into a {kind} field", f"convert explicitly, e.g. {kind}(...)",
                           cls=GpuKernelTypeError)
        return self.conv(value, kind)

    def struct_words_of(self, value, kind, node, what: str) -> list:
        """The words of ``value`` stored into a ``kind`` place (checked)."""
        if isinstance(kind, StructType):
            if not isinstance(value, StructValue) or value.ty != kind:
                got = value.ty if isinstance(value, (StructValue, VecValue)) else \
                    f"{value.ty} value"
                self.src.error(getattr(node, "value", node), f"cannot store a {got} into "
                               f"{what}, a {kind}", f"build a {kind} ({kind}(...))",
                               cls=GpuKernelTypeError)
            return list(value.words)
        if isinstance(value, StructValue):
            self.src.error(getattr(node, "value", node), f"cannot store a {value.ty} into "
                           f"{what}, a {kind}", "name one of its fields",
                           cls=GpuKernelTypeError)
        if isinstance(kind, VecType):
            self.vec_check(value, kind, node, what)
            return list(value.comps)
        return [self.not_vector(value, getattr(node, "value", node))]

    def struct_store(self, target, value, node, aug_op=None):
        """``p[i] = s``, ``p[i].field = value``, ``q.field = value`` (``aug_op``: ``op=``)
        as statements, or None."""
        place = self._struct_place(target)
        if place is None:
            return None
        kind, types, _, write, local = place
        if local is not None and self.scope.scalar[local].param:
            self.src.error(target, f"'{ast.unparse(target)}' assigns a field of the parameter "
                           f"'{local}', which in Python is the caller's {self.struct_local(local)}"
                           " (it would change there too)", f"copy it first: {local}2 = "
                           f"{self.struct_local(local)}({local})", cls=GpuKernelTypeError)
        if local is not None:
            self.struct_no_alias(local, node)
        if aug_op is not None:
            old = self.struct_read(target)
            if isinstance(old, StructValue):
                self.src.error(node, f"'{ast.unparse(target)}' is a whole {kind}, which has "
                               "no arithmetic", "update its fields", cls=GpuKernelTypeError)
            value = self.vec_binary(aug_op, old, value, node) if isinstance(old, VecValue) or \
                isinstance(value, VecValue) else self.binary(aug_op, old, value, node)
        words = self.struct_words_of(value, kind, node, f"'{ast.unparse(target)}'")
        return [write(k, self._word_of(w, types[k], node)) for k, w in enumerate(words)]


__all__ = ["StructMixin", "StructValue"]
