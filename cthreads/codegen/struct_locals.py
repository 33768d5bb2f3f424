"""Struct locals and constructors in kernels: ``q: Particle = p[i]``, ``q.vel += a * dt``,
``p[i] = q``, ``Particle(pos=..., vel=..., mass=..., alive=True)``.

A struct local is one scalar local per word (``ct_s<ident>_<k>``, in the layout's order:
``StructType.word_types``), as a vector local is one per component; a ``StructValue`` is one
scalar expression per word. A mixin of ``frontend.Translator`` (with ``structs.StructMixin``).

Aliasing: in Python ``q = p[i]`` (or ``q = r``) makes ``q`` the same object as the element,
so a later ``q.mass = ...`` would change the array too, where the device changes a copy: such a
field assignment is a located error whose hint is the copy ``Particle(p[i])`` (which both
sides implement).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import GpuKernelTypeError
from . import ir
from .struct_alias import aliased_call
from .structs import StructValue
from .structtypes import StructType, concrete_kind, struct_of
from .vector_calls import VecValue
from .vectypes import VecType


class StructLocalMixin:  # noqa: D101 - see the module docstring
    def struct_target(self, name: str) -> bool:
        return self.struct_local(name) is not None or \
            isinstance(self.scope.fixed.get(name), StructType)

    def struct_assign(self, target: ast.Name, value, node) -> list:
        name = target.id
        declared = self.scope.fixed.get(name)
        want = declared if declared is not None else self.types.get(name)
        if want is not None and not isinstance(want, StructType):
            self.src.error(node, f"cannot assign a {value.ty} to '{name}', a {want}",
                           "use a new name for the struct", cls=GpuKernelTypeError)
        if want is None:
            if not isinstance(value, StructValue):
                return None
            want = value.ty
            self.types[name] = want
            self.widened.add(name)
        words = self.struct_words_of(value, want, node, f"'{name}'")
        self.struct_no_alias(name, node, on_assign=True)
        loc = self.src.loc(node)
        types = want.word_types(self.struct_word())
        return [ir.Assign(loc, ident, self._word_of(w, ty, node))
                for ident, w, ty in zip(self.struct_idents(name, want), words, types)]

    def struct_no_alias(self, name: str, node, on_assign: bool = False) -> None:
        """Refuse ``q = p[i]`` / ``q = r`` where a field of ``q`` is assigned in the body."""
        tree = self.src.tree
        fields = _field_targets(tree)
        if name not in fields:
            return
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(
                    n.value, (ast.Name, ast.Subscript, ast.IfExp)) and any(
                    isinstance(t, ast.Name) and t.id == name for t in _targets(n)):
                text = ast.unparse(n.value)
                ty = self.struct_local(name) or self.scope.fixed.get(name)
                self.src.error(n, f"'{name} = {text}' makes '{name}' the same {ty} as "
                               f"'{text}' in Python, and a field of '{name}' is assigned below "
                               "(in Python that would change both)",
                               f"copy it: {name} = {ty}({text})", cls=GpuKernelTypeError)
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                func = aliased_call(self, n, name)      # s = f(q) of a 'return q' (struct_alias)
                if func is not None:
                    self._returned_param_error(n, name, func)

    def _returned_param_error(self, n, name: str, func) -> None:
        ty = self.struct_local(name) or self.scope.fixed.get(name)
        text = ast.unparse(n.value)
        fix = f"copy it: {name} = {ty}({text})" if not isinstance(
            n.targets[0] if isinstance(n, ast.Assign) else n.target, ast.Tuple) else \
            f"return a copy in {func.name} (return {ty}(...))"
        self.src.error(n, f"{func.name}() may return its {ty} parameter itself, so in Python "
                       f"'{name}' may be the caller's {ty}, and a field of '{name}' is "
                       "assigned below (in Python that would change both)", fix,
                       cls=GpuKernelTypeError)

    def struct_call(self, obj, node):
        """A struct constructor ``Particle(...)`` (keywords, positional, or one struct to
        copy), or None."""
        ty = struct_of(obj)
        if ty is None:
            return None
        loc = self.src.loc(node)
        names = [n for n, _ in ty.fields]
        if len(node.args) == 1 and not node.keywords:
            value = self.expr(node.args[0])
            if isinstance(value, StructValue):
                self.struct_words_of(value, ty, node.args[0], f"{ty}(...)")
                return StructValue(ty, loc, value.words)
        if len(node.args) > len(names):
            self.src.error(node, f"{ty}() takes at most {len(names)} positional arguments, "
                           f"got {len(node.args)}",
                           f"name them: {ty}({', '.join(n + '=...' for n in names)})",
                           cls=GpuKernelTypeError)
        given = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                self.src.error(kw.value, f"{ty} has no field '{kw.arg}'", "its fields are "
                               f"{', '.join(names)}", cls=GpuKernelTypeError)
            if kw.arg in given:
                self.src.error(kw.value, f"{ty}() got field '{kw.arg}' twice",
                               "give each field once", cls=GpuKernelTypeError)
            given[kw.arg] = kw.value
        defaults = {f.name: f.default for f in obj._ct_fields}
        word = self.struct_word()
        words = []
        for fname, kind in ty.fields:
            kind = concrete_kind(kind, word)
            if fname in given:
                value = self.expr(given[fname])
                arg = given[fname]
            else:
                value = _default(self, defaults[fname], kind, loc)
                arg = node
                if value is None:
                    self.src.error(node, f"{ty}() is missing field '{fname}' (it has no "
                                   "default)", f"write {ty}(..., {fname}=...)",
                                   cls=GpuKernelTypeError)
            got = self.struct_words_of(value, kind, arg, f"field '{fname}'")
            types = kind.word_types(word) if isinstance(kind, StructType) else \
                [kind.elem] * kind.n if isinstance(kind, VecType) else [kind]
            words.extend(self._word_of(w, t, arg) for w, t in zip(got, types))
        return StructValue(ty, loc, tuple(words))


def _default(tr, default, kind, loc):
    """The IR of a field's class-level default, or None when it has none."""
    from ..lang.vectors import _Vec
    if isinstance(kind, str) and isinstance(default, (bool, int, float)):
        value = bool(default) if kind == "bool" else float(default) if "float" in kind \
            else int(default)
        return ir.Const(kind, loc, value)
    if isinstance(kind, VecType) and isinstance(default, _Vec):
        return VecValue(kind, loc, tuple(ir.Const(kind.elem, loc, c) for c in default))
    return None


def _targets(n) -> list:
    if isinstance(n, ast.Assign):
        return n.targets
    if isinstance(n, (ast.AugAssign, ast.AnnAssign)):
        return [n.target]
    return []


def _root(t):
    while isinstance(t, (ast.Attribute, ast.Subscript)):
        t = t.value
    return t


def _field_targets(tree) -> frozenset:
    """The names some field (or component of a field) of which the body assigns."""
    out = set()
    for n in ast.walk(tree):
        for t in _targets(n):
            if isinstance(t, (ast.Attribute, ast.Subscript)):
                root = _root(t)
                if isinstance(root, ast.Name):
                    out.add(root.id)
    return frozenset(out)


def struct_locals(scope, tr) -> tuple:
    """The word locals (``ir.Local``) of the struct locals of a translated body."""
    out = []
    word = scope.widths.float
    for name in scope.scalar:
        ty = tr.struct_local(name)
        if ty is not None:
            param = scope.scalar[name].param
            out.extend(ir.Local(f"{name}.{k}", ident, t, param) for k, (ident, t) in
                       enumerate(zip(tr.struct_idents(name, ty), ty.word_types(word))))
    return tuple(out)




# ----------------------------------------------------------- device functions: by value
@dataclass(frozen=True)
class StructReturn:
    """The result of a device function returning a struct: its type and the private WGSL
    variables (one per word, with their types) its returns write and its callers read."""
    ty: StructType
    registers: tuple
    types: tuple

    def __str__(self) -> str:
        return str(self.ty)

    @property
    def typed(self) -> tuple:
        return tuple(zip(self.registers, self.types))


def struct_return_of(ident: str, ty: StructType, word: str) -> StructReturn:
    types = ty.word_types(word)
    return StructReturn(ty, tuple(f"ct_ret_{ident}_s{k}" for k in range(len(types))), types)


def struct_params(scope, tr, params) -> tuple:
    """``(name, ident, type)`` params with each struct parameter expanded into its words
    (``name.k``, the word local's ident, its type), for ``vectors.vector_params``."""
    out = []
    word = scope.widths.float
    for name, ident, ty in params:
        if isinstance(ty, StructType):
            out.extend((f"{name}.{k}", i, t) for k, (i, t) in
                       enumerate(zip(tr.struct_idents(name, ty), ty.word_types(word))))
        else:
            out.append((name, ident, ty))
    return tuple(out)


class StructCallMixin:
    def struct_argument(self, node, ty: StructType, what: str) -> list:
        value = self.expr(node)
        words = self.struct_words_of(value, ty, node, what)
        types = ty.word_types(self.struct_word())
        return [self._word_of(w, t, node) for w, t in zip(words, types)]

    def struct_result_call(self, ty: StructType, req, args, node, statement: bool):
        """A call of a device function returning ``ty``: hoisted before the statement, its
        result registers copied into hidden locals (as ``vec_result_call``)."""
        loc = self.src.loc(node)
        call = ir.FuncCall("none", loc, req.ident, tuple(args))
        if statement:
            return call
        if self.lazy:
            self.src.error(node, f"a call of {req.func.name}() (a {ty} result) inside 'and', "
                           "'or', 'x if c else y' or a while test",
                           f"assign the result to a local first (r = {req.func.name}(...)), "
                           "before the condition", cls=GpuKernelTypeError)
        self.pending.append(ir.ExprStmt(loc, call))
        ret = struct_return_of(req.ident, ty, self.struct_word())
        words = []
        for register, t in ret.typed:
            tmp = self.hidden_local(t)
            self.pending.append(ir.Assign(loc, tmp, ir.Var(t, loc, register)))
            words.append(ir.Var(t, loc, tmp))
        return StructValue(ty, loc, tuple(words))

    def struct_return(self, value, node) -> list:
        ret = self.returns
        words = self.struct_words_of(value, ret.ty, node, f"the result of {self.src.name}()")
        loc = self.src.loc(node)
        out = [ir.Assign(loc, r, self._word_of(w, t, node))
               for (r, t), w in zip(ret.typed, words)]
        return out + [ir.Return(loc)]


__all__ = ["StructCallMixin", "StructLocalMixin", "StructReturn", "struct_locals", "struct_params",
           "struct_return_of"]
