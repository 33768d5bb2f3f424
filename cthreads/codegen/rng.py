"""``Random(seed, stream)`` in kernels: Philox-4x32-10 streams (``cthreads/lang/random.py`` is the
algorithm, its consumption rules and its plain-Python meaning; ``library/random.wgsl`` its WGSL).

A mixin of ``exprs.ExprMixin``. A ``Random`` local ``rng`` is nine ``uint32`` locals
(``ct_r<ident>_n`` its word counter, ``_s0 _s1`` its stream's words, ``_k0 _k1`` its seed's,
``_c0 .. _c3`` the four words of the block of its last word): nothing below the frontend sees a
``Random``. A draw of ``w`` words (``rng.random()`` ...) is hoisted before its statement
(``self.pending``): its first word ``start`` (the counter rounded up to a multiple of ``w``),
the refill ``if (start & 3) == 0 { c0..c3 = block(start >> 2) }`` (a branch on the counter, so
that a driver folds it in straight-line or unrolled code: four draws of a thread make one
block), a hidden local taking the library call over the cached words, then the counter set to
``start + w``; draws happen in Python's order, once each, and the passes below see plain
assignments and ifs. Draws where Python may not evaluate them (``and`` / ``or`` operands,
``x if c else y`` branches, while tests) are refused, located. A ``Random`` is not a value (no
copies, no aliases: Python would share the object); it is passed to a device function by name
(its nine words), which advances the caller's stream (its counter and cached words come back
in registers, ``rng_registers``).
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import replace

from ..errors import GpuKernelTypeError
from ..lang.random import Random
from . import ir, library
from .builtins import Form
from .rngtypes import RANDOM, RngType

_WORDS = ("n", "s0", "s1", "k0", "k1", "c0", "c1", "c2", "c3")
#: the words a draw's state gives back to the caller of a device function (counter, cache)
_STATE = (0, 5, 6, 7, 8)
_PICK = "ct_rng_pick({0}, {1}, {2}, {3}, {4})"               # the word at start
_PICK2 = "ct_rng_pick({0} + 1u, {1}, {2}, {3}, {4})"          # the word after it
_SIDE = "{0}, {5}, {6}, {7}, {8}"                          # start and the stream/key words
_BLOCK = "ct_philox(vec4<u32>({0} >> 2u, 0u, {1}, {2}), vec2<u32>({3}, {4}))"

#: ``ir.Call.fn`` -> its WGSL. A draw's arguments: its first word's index ``start``, the
#: cached words c0..c3, the stream and key words, then the method's.
RNG_FORMS = {
    "rng_random_f": Form(f"ct_rng_random_f({_PICK})", ("ct_rng_random_f", "ct_rng_pick")),
    "rng_random_d": Form(f"ct_rng_f53({_PICK}, {_PICK2})", ("ct_rng_f53", "ct_rng_pick")),
    "rng_normal_f": Form(f"ct_rng_normal_f({_PICK}, {_PICK2})",
                         ("ct_rng_normal_f", "ct_rng_pick")),
    "rng_normal_d": Form("ct_rng_normal_d({1}, {2}, {3}, {4})", ("ct_rng_normal_d",)),
    "rng_randint_i": Form(f"ct_rng_randint_i({_PICK}, {_SIDE}, {{9}}, {{10}})",
                          ("ct_rng_randint_i", "ct_rng_pick")),
    "rng_randint_l": Form(f"ct_rng_randint_l({_PICK}, {_PICK2}, {_SIDE}, {{9}}, {{10}})",
                          ("ct_rng_randint_l", "ct_rng_pick")),
    "rng_randrange_i": Form(f"ct_rng_randrange_i({_PICK}, {_SIDE}, {{9}}, {{10}})",
                            ("ct_rng_randrange_i", "ct_rng_pick")),
    "rng_randrange_l": Form(f"ct_rng_randrange_l({_PICK}, {_PICK2}, {_SIDE}, {{9}}, {{10}})",
                            ("ct_rng_randrange_l", "ct_rng_pick")),
    # the parts of a draw: block j's word of start, the refill test, the first word of a
    # 2- or 4-word draw, whether an int64 range takes two words
    "rng_block_0": Form(f"{_BLOCK}.x", ("ct_philox",)),
    "rng_block_1": Form(f"{_BLOCK}.y", ("ct_philox",)),
    "rng_block_2": Form(f"{_BLOCK}.z", ("ct_philox",)),
    "rng_block_3": Form(f"{_BLOCK}.w", ("ct_philox",)),
    "rng_refill": Form("(({0} & 3u) == 0u)", ()),
    "rng_align_2": Form("(({0} + 1u) & 0xfffffffeu)", ()),
    "rng_align_4": Form("(({0} + 3u) & 0xfffffffcu)", ()),
    "rng_wide_randint": Form("ct_rng_wide_l({0}, {1}, 1lu)", ("ct_rng_wide_l",)),
    "rng_wide_randrange": Form("ct_rng_wide_l({0}, {1}, 0lu)", ("ct_rng_wide_l",)),
    "rng_take_wide": Form("select({0}, (({0} + 1u) & 0xfffffffeu), {1})", ()),
    "rng_next_wide": Form("({0} + select(1u, 2u, {1}))", ()),
    "rng_lo_i": Form("ct_rng_words_i({0}).x", ("ct_rng_words_i",)),
    "rng_hi_i": Form("ct_rng_words_i({0}).y", ("ct_rng_words_i",)),
    "rng_lo_l": Form("ct_rng_words_l({0}).x", ("ct_rng_words_l",)),
    "rng_hi_l": Form("ct_rng_words_l({0}).y", ("ct_rng_words_l",)),
}

_METHODS = ("random", "uniform", "normal", "gauss", "randint", "randrange")
_HINT = ("call its methods (rng.random(), rng.uniform(a, b), rng.normal(mu, sigma), "
         "rng.randint(a, b), rng.randrange(a, b)) or pass it to a device function by name")


def rng_idents(ident: str) -> tuple:
    """The WGSL locals of the ``Random`` local whose identifier is ``ident``."""
    return tuple(f"ct_r{ident}_{w}" for w in _WORDS)


class RngValue:
    """A fresh ``Random(seed, stream)``: the IR of its four words, to be bound to a local."""
    ty = RANDOM

    def __init__(self, loc, words: tuple) -> None:
        self.loc, self.words = loc, words


class _RngDraws:
    """Random locals and their draws."""
    # -- names ----------------------------------------------------------------------------
    def rng_type_of(self, name: str) -> RngType | None:
        ty = self.types.get(name, self.scope.fixed.get(name))
        return ty if isinstance(ty, RngType) else None

    def rng_vars(self, name: str, loc) -> tuple:
        idents = rng_idents(self.scope.scalar[name].ident)
        return tuple(ir.Var("uint32", loc, i) for i in idents)

    def rng_as_value(self, node) -> None:
        self.src.error(node, f"the Random '{node.id}' is used as a value (Python would share "
                       "the object, not copy it)", _HINT, cls=GpuKernelTypeError)

    # -- Random(seed, stream) ---------------------------------------------------------------
    def rng_call(self, node):
        """``Random(...)`` or a draw ``rng.method(...)``; None for any other call."""
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                self.rng_type_of(func.value.id) is not None:
            return self._rng_method(func.value.id, func.attr, node)
        if not isinstance(func, (ast.Name, ast.Attribute)) or \
                self.scope.resolve(func) is not Random:
            return None
        if node.keywords or not 1 <= len(node.args) <= 2:
            self.src.error(node, "Random takes a seed and a stream id, by position",
                           "write Random(seed, i) (one stream per thread: i = GlobalIdx.x)",
                           cls=GpuKernelTypeError)
        loc = self.src.loc(node)
        seed = self._rng_words(node.args[0], "seed", loc)
        stream = self._rng_words(node.args[1] if len(node.args) > 1 else None, "stream", loc)
        return RngValue(loc, tuple(stream + seed))

    def _rng_words(self, arg, what: str, loc) -> list:
        if arg is None:
            return [ir.Const("uint32", loc, 0), ir.Const("uint32", loc, 0)]
        e = self.expr(arg)
        ty = getattr(e, "ty", None)
        if ty not in ("int", "int64", "uint32", "bool"):
            self.src.error(arg, f"the {what} of Random must be an int, not {ty}",
                           f"pass an int (int({ast.unparse(arg)}))", cls=GpuKernelTypeError)
        if ty == "uint32":
            return [e, ir.Const("uint32", loc, 0)]
        sfx = "l" if ty == "int64" else "i"
        e = self.conv(e, "int64" if sfx == "l" else "int")
        return [ir.Call("uint32", loc, f"rng_lo_{sfx}", (e,)),
                ir.Call("uint32", loc, f"rng_hi_{sfx}", (e,))]

    def rng_assign(self, target: ast.Name, value, node) -> list:
        """``rng = Random(seed, stream)``: the local's words (the cache is filled at its first
    draw, at counter 0)."""
        name = target.id
        if not isinstance(value, RngValue):
            self.src.error(node, f"'{name}' is a Random; it cannot be assigned a "
                           f"{getattr(value, 'ty', 'value')}", "use a new name",
                           cls=GpuKernelTypeError)
        if self.scope.scalar[name].param:
            self.src.error(node, f"the Random parameter '{name}' cannot be reassigned (the "
                           "caller's stream would not follow)", "use a new name",
                           cls=GpuKernelTypeError)
        self.types[name] = RANDOM
        loc = self.src.loc(node)
        n, *words = rng_idents(self.scope.scalar[name].ident)[:5]
        out = [ir.Assign(loc, ident, w) for ident, w in zip(words, value.words)]
        return out + [ir.Assign(loc, n, ir.Const("uint32", loc, 0))]

    # -- draws ------------------------------------------------------------------------------
    def _rng_args(self, node, names: tuple, defaults: tuple, method: str) -> list:
        args = list(node.args)
        given = {}
        for kw in node.keywords:
            if kw.arg not in names or kw.arg in given or names.index(kw.arg) < len(args):
                self.src.error(kw, f"{method}() got an unexpected keyword '{kw.arg}'",
                               f"write {method}({', '.join(names)})", cls=GpuKernelTypeError)
            given[kw.arg] = kw.value
        out = []
        for k, pname in enumerate(names):
            if k < len(args):
                out.append(args[k])
            elif pname in given:
                out.append(given[pname])
            elif defaults[k] is not None:
                out.append(defaults[k])
            else:
                self.src.error(node, f"{method}() is missing its argument '{pname}'",
                               f"write {method}({', '.join(names)})", cls=GpuKernelTypeError)
        if len(args) > len(names):
            self.src.error(node, f"{method}() takes {len(names)} arguments",
                           f"write {method}({', '.join(names)})", cls=GpuKernelTypeError)
        return [self.expr(a) if isinstance(a, ast.AST) else a for a in out]   # defaults: IR

    def _rng_method(self, name: str, method: str, node):
        loc = self.src.loc(node)
        if method not in _METHODS:
            self.src.error(node.func, f"Random has no method '{method}' in kernels",
                           "use random(), uniform(a, b), normal(mu, sigma), randint(a, b) or "
                           "randrange(a, b)", cls=GpuKernelTypeError)
        fty = self.plain_float
        sfx = "d" if fty == "float64" else "f"
        wide = fty == "float64"
        if method == "random":
            self._rng_args(node, (), (), method)
            return self._rng_draw(name, f"rng_random_{sfx}", fty, (), node, 2 if wide else 1)
        if method == "uniform":
            a, b = (self.conv(v, fty) for v in self._rng_args(node, ("a", "b"), (None, None),
                                                                method))
            r = self._rng_draw(name, f"rng_random_{sfx}", fty, (), node, 2 if wide else 1)
            span = ir.Binary(fty, loc, "sub", b, a)
            return ir.Binary(fty, loc, "add", a, ir.Binary(fty, loc, "mul", span, r))
        if method in ("normal", "gauss"):
            zero, one = ir.Const(fty, loc, 0.0), ir.Const(fty, loc, 1.0)
            mu, sigma = (self.conv(v, fty) for v in self._rng_args(
                node, ("mu", "sigma"), (zero, one), method))
            z = self._rng_draw(name, f"rng_normal_{sfx}", fty, (), node, 4 if wide else 2)
            return ir.Binary(fty, loc, "add", mu, ir.Binary(fty, loc, "mul", sigma, z))
        if method == "randint":
            a, b = self._rng_args(node, ("a", "b"), (None, None), method)
        else:
            if len(node.args) == 3:
                self.src.error(node, "randrange() with a step is not supported in kernels",
                               "write start + step * rng.randrange(count)",
                               cls=GpuKernelTypeError)
            if len(node.args) == 1 and not node.keywords:          # randrange(stop)
                a, b = ir.Const(self.plain_int, loc, 0), self.expr(node.args[0])
            else:
                a, b = self._rng_args(node, ("start", "stop"), (None, None), method)
        ty = self.unify((a, b))
        if ty not in ("int", "int64", "uint32", "bool"):
            self.src.error(node, f"{method}() takes ints, not {ty} (Python raises TypeError)",
                           f"convert with int(...), or use rng.uniform(a, b) for floats",
                           cls=GpuKernelTypeError)
        ty = "int64" if ty in ("int64", "uint32") else ("int" if ty == "bool" else ty)
        fn = f"rng_{method}_{'l' if ty == 'int64' else 'i'}"
        a, b = self.conv(a, ty), self.conv(b, ty)
        if ty != "int64":
            return self._rng_draw(name, fn, ty, (a, b), node)
        ends = []
        for e in (a, b):                   # each evaluated once: the word count reads them
            tmp = self.hidden_local(ty)
            self.pending.append(ir.Assign(loc, tmp, e))
            ends.append(ir.Var(ty, loc, tmp))
        wide = ir.Call("bool", loc, f"rng_wide_{method}", tuple(ends))
        return self._rng_draw(name, fn, ty, tuple(ends), node, 0, wide)

    def _rng_draw(self, name: str, fn: str, ty: str, extra: tuple, node, count: int = 1,
                  wide=None) -> ir.Expr:
        """A draw of ``count`` words (1, 2 or 4; 0: one or two as the bool IR ``wide`` says,
        an int64 range's) hoisted before the statement; the IR of its value."""
        if self.lazy:
            self.src.error(node, f"a draw from the Random '{name}' inside 'and', 'or', "
                           "'x if c else y' or a while test (Python may not evaluate it)",
                           "draw into a local first (u = rng.random()), before the condition",
                           cls=GpuKernelTypeError)
        loc = self.src.loc(node)
        words = self.rng_vars(name, loc)
        n, side, cache = words[0], words[1:5], words[5:]
        start = n
        if count != 1:
            tmp = self.hidden_local("uint32")
            first = ir.Call("uint32", loc, f"rng_align_{count}", (n,)) if count else \
                ir.Call("uint32", loc, "rng_take_wide", (n, wide))
            self.pending.append(ir.Assign(loc, tmp, first))
            start = ir.Var("uint32", loc, tmp)
        refill = tuple(ir.Assign(loc, c.ident, ir.Call("uint32", loc, f"rng_block_{j}",
                                                       (start,) + side))
                       for j, c in enumerate(cache))
        self.pending.append(ir.If(loc, ir.Call("bool", loc, "rng_refill", (start,)), refill, ()))
        tmp = self.hidden_local(ty)
        self.pending.append(ir.Assign(loc, tmp, ir.Call(ty, loc, fn, (start,) + cache + side
                                                        + tuple(extra))))
        step = ir.Call("uint32", loc, "rng_next_wide", (start, wide)) if count == 0 else \
            ir.Binary("uint32", loc, "add", start, ir.Const("uint32", loc, count))
        self.pending.append(ir.Assign(loc, n.ident, step))
        return ir.Var(ty, loc, tmp)


def rng_locals(scope, tr, locals_: tuple) -> tuple:
    """``locals_`` without the ``Random`` locals, plus their nine ``uint32`` words each."""
    out = tuple(loc for loc in locals_ if tr.rng_type_of(loc.pyname) is None)
    for name, local in scope.scalar.items():
        if tr.rng_type_of(name) is not None:
            out += tuple(ir.Local(i, i, "uint32", local.param) for i in rng_idents(local.ident))
    return out


# -- Random parameters of device functions -------------------------------------------------
def rng_registers(func_ident: str, params) -> tuple:
    """((register, the parameter's word ident), ...) of a device function's ``Random``
    parameters ``(name, ident, type)``, five per parameter (its counter and cached words, in
    ``_STATE`` order): the private variables its final state is left in."""
    out = []
    for k, (name, ident, ty) in enumerate(p for p in params if isinstance(p[2], RngType)):
        idents = rng_idents(ident)
        out += [(f"ct_rret_{func_ident}_{k}_{j}", idents[j]) for j in _STATE]
    return tuple(out)


def rng_params(params) -> tuple:
    """A device function's WGSL parameters ``(ident, type)``: a ``Random`` is nine u32."""
    out = []
    for ident, ty in params:
        if isinstance(ty, RngType):
            out.extend((i, "uint32") for i in rng_idents(ident))
        else:
            out.append((ident, ty))
    return tuple(out)


def rng_counters_out(body: list, registers: tuple, loc) -> list:
    """``body`` with the final counters and cached words written to their registers before
    every return and at its end (the caller copies them back: the caller's stream advances)."""
    if not registers:
        return body

    def writes(at):
        return [ir.Assign(at, reg, ir.Var("uint32", at, n)) for reg, n in registers]

    def walk(stmts) -> tuple:
        out = []
        for s in stmts:
            if isinstance(s, (ir.Return, ir.ReturnValue)):
                out += writes(s.loc)
            elif s.BODIES:
                s = replace(s, **{f: walk(getattr(s, f)) for f in s.BODIES})
            out.append(s)
        return tuple(out)
    out = list(walk(body))
    if not out or not isinstance(out[-1], (ir.Return, ir.ReturnValue)):
        out += writes(loc)
    return out


class RngCallMixin:
    def rng_argument(self, func, k: int, pname: str, arg, passed: list) -> list:
        """The nine words of the caller's ``Random`` passed to parameter ``pname``."""
        if not (isinstance(arg, ast.Name) and self.rng_type_of(arg.id) is not None):
            self.src.error(arg, f"argument {k + 1} of {func.name}() ('{pname}: Random') must "
                           "be a Random local of the caller, passed by name",
                           f"write rng = Random(seed, i) and call {func.name}(..., rng, ...)",
                           cls=GpuKernelTypeError)
        if arg.id in passed:
            self.src.error(arg, f"the Random '{arg.id}' is passed twice to {func.name}()",
                           "pass it once (a device function may draw from it many times)",
                           cls=GpuKernelTypeError)
        passed.append(arg.id)
        return list(self.rng_vars(arg.id, self.src.loc(arg)))

    def rng_after_call(self, req, passed: list, call, statement: bool, node):
        """``call`` of a device function taking ``Random``s: hoisted before its statement,
        then the callee's final counters copied into the caller's (the stream advances)."""
        if not passed:
            return call
        loc = self.src.loc(node)
        if self.lazy:
            self.src.error(node, f"a call of {req.func.name}() (it draws from a Random) inside "
                           "'and', 'or', 'x if c else y' or a while test",
                           "call it before the condition and keep its result in a local",
                           cls=GpuKernelTypeError)
        if isinstance(call, ir.FuncCall):
            if statement or call.ty == "none":
                self.pending.append(ir.ExprStmt(loc, call))
                result = self.rng_vars(passed[0], loc)[0]
            elif isinstance(call.ty, str):
                tmp = self.hidden_local(call.ty)
                self.pending.append(ir.Assign(loc, tmp, call))
                result = ir.Var(call.ty, loc, tmp)
            else:
                self.src.error(node, f"{req.func.name}() returns a tuple and takes a Random: "
                               "not supported yet", "return one value, or pass a list to "
                               "write the other results into", cls=GpuKernelTypeError)
        else:
            result = call                              # a vector result: hoisted already
        params = [(n, n, t) for n, t in req.func.signature.params]
        regs = rng_registers(req.ident, params)
        for k, name in enumerate(passed):
            words = self.rng_vars(name, loc)
            for (reg, _), j in zip(regs[5 * k:5 * k + 5], _STATE):
                self.pending.append(ir.Assign(loc, words[j].ident, ir.Var("uint32", loc, reg)))
        return result


class RngMixin(_RngDraws, RngCallMixin):
    """``Random`` in the translator (a mixin of ``exprs.ExprMixin``; see the module docstring)."""


#: the library form of ``ct_mulhi32`` for devices with ``shader-int64``
INT64_FORM = "int64"

#: the environment variable choosing the multiply-high form (read once, for measurements)
MULHI_ENV = "CTHREADS_RNG_MULHI"
_MULHI_CHOICES = ("int64", "halves")


@functools.lru_cache(maxsize=1)
def mulhi_choice() -> str:
    """``CTHREADS_RNG_MULHI``: 'int64' (the default: the 64-bit product where the device has
    ``shader-int64``) or 'halves' (four 16-bit products everywhere); read on first use."""
    value = os.environ.get(MULHI_ENV, "").strip().lower() or "int64"
    if value not in _MULHI_CHOICES:
        raise ValueError(f"{MULHI_ENV}={value!r}: write {MULHI_ENV}=int64 (one 64-bit product "
                         f"where the device has shader-int64, the default) or "
                         f"{MULHI_ENV}=halves (16-bit halves)")
    return value


def device_form(wgsl: str, int64: bool) -> str:
    """The WGSL for a device: with ``int64`` (the device has ``shader-int64``) and
    ``mulhi_choice()`` 'int64', Philox's multiply-high as one 64-bit product instead of four
    16-bit ones (3x faster on lavapipe); else the text itself. The result is the same bit for
    bit."""
    if not int64 or "fn ct_mulhi32(" not in wgsl or mulhi_choice() != INT64_FORM:
        return wgsl
    return wgsl.replace(library.get("ct_mulhi32").text,
                        library.form(INT64_FORM, "ct_mulhi32").text)
