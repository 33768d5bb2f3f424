"""Test support: run one WGSL expression per element on the device, through cthreads.backend.

``run_f64(helpers, expr, *columns)`` evaluates ``expr`` (a WGSL expression over the f64
arguments ``a0``, ``a1`` ...) once per row of the numpy float64 ``columns`` and returns the f64
results; a bool expression is written as 0.0 / 1.0. ``helpers`` is WGSL text defining the
functions ``expr`` calls. Everything goes through the backend's device, buffer pool, pipeline
cache and queue: no wgpu call here.

``fuse(wgsl)`` rewrites the float64 library's WGSL as a driver that contracts multiply-adds,
splits fmas or re-associates sums may compile it (``FMA_X``: an fma that rounds once anywhere).
"""

from __future__ import annotations

import re

import numpy as np

from cthreads.backend import get_context, get_queue
from cthreads.backend.pipeline import READ, READ_WRITE, make_pipeline

WORKGROUP = 64

#: ``ct_zero()``: 0 at run time, unknown to the driver's compiler (kernels emit their own from
#: their uniform block; here it is a word of the input, since the compiler bounds
#: ``arrayLength() >> 31`` to 0)
ZERO = """var<private> ct_zero_v: u32;
fn ct_zero() -> u32 { return ct_zero_v; }"""

_SHADER = """
@group(0) @binding(0) var<storage, read> ct_in: array<f64>;
@group(0) @binding(1) var<storage, read_write> ct_out: array<f64>;

{zero}

{helpers}

fn ct_as_f64_b(v: bool) -> f64 {{ return select(0.0lf, 1.0lf, v); }}
fn ct_as_f64_d(v: f64) -> f64 {{ return v; }}

@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {{
    let i = gid.x + gid.y * groups.x * {wg}u;
    if (i >= {n}u) {{ return; }}
    ct_zero_v = u32(bitcast<u64>(ct_in[{n}u * {nargs}u]) >> 40u);
{loads}
    ct_out[i] = ct_as_f64_{kind}({expr});
}}
"""


def shader(helpers: str, expr: str, nargs: int, n: int, kind: str = "d") -> str:
    loads = "\n".join(f"    let a{k} = ct_in[i * {nargs}u + {k}u];" for k in range(nargs))
    return _SHADER.format(zero=ZERO, helpers=helpers, wg=WORKGROUP, n=n, nargs=nargs,
                          loads=loads, expr=expr, kind=kind)


def run_f64(helpers: str, expr: str, *columns, kind: str = "d") -> np.ndarray:
    """``expr`` evaluated on the device for each row of ``columns`` (float64 arrays).

    ``kind``: "d" when ``expr`` is an f64, "b" when it is a bool (results 0.0 / 1.0).
    """
    cols = [np.ascontiguousarray(c, dtype=np.float64).ravel() for c in columns]
    n = len(cols[0])
    assert n > 0 and all(len(c) == n for c in cols)
    data = np.stack(cols, axis=1).ravel() if len(cols) > 1 else cols[0]
    data = np.concatenate([data, [0.0]])     # the word ct_zero() reads
    ctx = get_context()
    queue = get_queue()
    wgsl = shader(helpers, expr, len(cols), n, kind)
    pipe = make_pipeline(ctx, wgsl, "main", ((0, READ), (1, READ_WRITE)))
    src = queue.upload_new(data)
    nbytes = n * 8
    dst = queue.pool.acquire(nbytes)
    staging = queue.pool.acquire(nbytes, "staging")
    bg = queue.bind_group(pipe.layout, [(0, src.buffer, data.nbytes),
                                            (1, dst.buffer, nbytes)])
    groups = -(-n // WORKGROUP)
    seq = queue.dispatch(pipe.pipeline, bg, groups, None,
                         [(dst.buffer, 0, staging.buffer, 0, nbytes)], (src, dst))
    raw = queue.read_into(staging, nbytes, seq)
    for buf in (src, dst, staging):
        queue.pool.release(buf)
    return np.frombuffer(raw, dtype=np.float64).copy()


# ------------------------------------------------------------------ a fusing driver
# Without SPIR-V's NoContraction, Vulkan lets a driver contract ``a * b + c`` into one fma,
# also across ``let`` names (the compiler sees values, not statements), and re-associate sums;
# and it lets ``fma(a, b, c)`` be a product and a sum rounded apart (precision "inherited
# from OpFMul and OpFAdd"). NVIDIA's driver contracts and re-associates; lavapipe's f64 fma
# rounds twice. ``fuse(wgsl)`` rewrites the
# WGSL of the float64 library as such a driver may compile it, so that lavapipe runs what
# another device would:
#
# * every f64 ``x * y + z``, ``x * y - z``, ``z + x * y``, ``z - x * y`` whose product is not
#   behind ``ct_hide_d`` becomes ``ct_fma_x(...)``, an fma that rounds once on any device;
# * ``fma(x, y, z)`` becomes ``ct_fma_x`` (``split=False``: a driver whose fma rounds once), or,
#   with ``split=True``, ``ct_fma_x`` only where both factors are hidden values and two
#   roundings elsewhere (a driver that splits an fma whose product it also computes
#   elsewhere, and fuses the rest: the library may trust only an fma of hidden factors);
# * with ``reassociate=True``, every f64 sum, its terms gathered through ``let`` names and fma
#   addends (``fma(a, b, c) + d`` may become ``fma(a, b, c + d)``), is added in a random order.
#
# The parser knows the WGSL subset the library is written in; it prints the functions back
# fully parenthesized.

#: a correctly rounded fma from separate roundings (Boldo and Melquiond's emulation: the exact
#: product uh + ul by Dekker's split, c + uh = th + tl exactly, tl + ul rounded to odd, then
#: th plus that rounded to nearest; every step hidden, so that no driver can contract or
#: re-associate it); exact unless a, b or their product is outside [2^-900, 2^990] in
#: magnitude, where it is a plain a * b + c
FMA_X = """fn ct_fma_x(a: f64, b: f64, c: f64) -> f64 {
    let uh = ct_hide_d(a * b);
    let lo = min(min(abs(a), abs(b)), abs(uh));
    if (!(lo >= 0x1p-900lf && max(max(abs(a), abs(b)), abs(uh)) <= 0x1p990lf)
        || !ct_isfinite_d(c)) {
        return ct_hide_d(uh + c);
    }
    let x = ct_split_d(a);
    let y = ct_split_d(b);
    let u1 = ct_hide_d(ct_hide_d(x.x * y.x - uh) + x.x * y.y);
    let ul = ct_hide_d(ct_hide_d(u1 + x.y * y.x) + x.y * y.y);
    let th = ct_hide_d(c + uh);
    let tv = ct_hide_d(th - c);
    let tl = ct_hide_d(ct_hide_d(c - ct_hide_d(th - tv)) + ct_hide_d(uh - tv));
    let vh = ct_hide_d(tl + ul);
    let vv = ct_hide_d(vh - tl);
    let vl = ct_hide_d(tl - ct_hide_d(vh - vv)) + ct_hide_d(ul - vv);
    var v = vh;
    let bits = bitcast<u64>(vh);
    if (vl != 0.0lf && (bits & 1lu) == 0lu) {
        if ((vl > 0.0lf) == (vh > 0.0lf)) { v = bitcast<f64>(bits + 1lu); }
        else { v = bitcast<f64>(bits - 1lu); }
    }
    return ct_hide_d(th + v);
}"""

#: the helpers ``FMA_X`` calls (add them to the library's text before ``fuse``)
FMA_X_NEEDS = ("ct_split_d", "ct_isfinite_d", "ct_hide_d")

_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<num>0[xX][0-9a-fA-F.]+(?:[pP][+-]?\d+)?(?:lf|lu|u|i|f)?
           |\d+\.\d*(?:[eE][+-]?\d+)?(?:lf|f)?|\d+(?:lu|u|i|lf|f)?)
  | (?P<name>(?:bitcast|vec2|vec3|vec4|array)<[^<>]*>|[A-Za-z_]\w*)
  | (?P<op>&&|\|\||==|!=|<=|>=|<<|>>|->|[-+*/%&|^!~<>=(){}\[\],;.:])
""", re.X)

_LEVELS = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
_SAME_TYPE = {"abs", "min", "max", "round", "floor", "ceil", "trunc", "sqrt", "fma", "clamp"}
_LITERAL_TYPES = (("lf", "f64"), ("lu", "u64"), ("u", "u32"), ("i", "i32"))


class _Value:
    """A parsed expression: its text, its type, the factors (texts) of the product it is when
    a driver may still contract it, whether it is a hidden value, and the signed terms of the
    sum it is when a driver may still re-associate it."""

    def __init__(self, text, ty, product=None, hidden=False, terms=None, fused=False):
        self.text, self.ty, self.product, self.hidden = text, ty, product, hidden
        self.terms = terms
        self.fused = fused              # the product of an fma: always contracted

    def signed_terms(self):
        return self.terms if self.terms else [(1, self)]

    def names(self) -> set:
        return set(re.findall(r"[A-Za-z_]\w*", self.text))


class _Fuser:
    def __init__(self, text: str, prefer: str, split: bool, reassociate: bool, seed: int):
        import random
        self.toks = self._tokens(text)
        self.i = 0
        self.prefer, self.split, self.rng = prefer, split, random.Random(seed)
        self.reassociate = reassociate
        self.sites = 0
        self.results = {}                       # function -> its result type
        for k, t in enumerate(self.toks):
            if t == "fn":
                j = self.toks.index("{", k)
                self.results[self.toks[k + 1]] = self.toks[j - 1] if self.toks[j - 2] == "->" \
                    else ""

    @staticmethod
    def _tokens(text: str) -> list[str]:
        out, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueError(f"fuse(): cannot read {text[pos:pos + 30]!r}")
            if m.lastgroup != "ws":
                out.append(m.group())
            pos = m.end()
        return out

    def peek(self) -> str:
        return self.toks[self.i] if self.i < len(self.toks) else ""

    def take(self, want=None) -> str:
        t = self.toks[self.i]
        if want is not None and t != want:
            raise ValueError(f"fuse(): expected {want!r}, found {t!r} near "
                             f"{' '.join(self.toks[max(0, self.i - 8):self.i + 8])}")
        self.i += 1
        return t

    # -- expressions
    def expr(self, env, level=0) -> _Value:
        if level == len(_LEVELS):
            return self.unary(env)
        left = self.expr(env, level + 1)
        while self.peek() in _LEVELS[level]:
            op = self.take()
            left = self.binary(op, left, self.expr(env, level + 1))
        return left

    def binary(self, op, a: _Value, b: _Value) -> _Value:
        ty = a.ty if a.ty not in ("", "abstract") else b.ty
        if op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return _Value(f"({a.text} {op} {b.text})", "bool")
        if op == "*":
            return _Value(f"({a.text} * {b.text})", ty,
                          (a.text, b.text) if ty == "f64" else None)
        if op in "+-" and ty == "f64" and self.reassociate:
            # the sum of all the terms, in an order of the driver's choosing
            sign = 1 if op == "+" else -1
            terms = a.signed_terms() + [(sign * s, v) for s, v in b.signed_terms()]
            order = terms[:]
            self.rng.shuffle(order)
            s0, acc = order[0]
            if s0 < 0:
                acc = self.negate(acc)
            for s, v in order[1:]:
                acc = self.add("+" if s > 0 else "-", acc, v)
            self.sites += 1
            return _Value(acc.text, ty, terms=terms)
        return self.add(op, a, b)

    def negate(self, v: _Value) -> _Value:
        product = (f"(-{v.product[0]})", v.product[1]) if v.product else None
        terms = [(-s, t) for s, t in v.terms] if v.terms else None
        return _Value(f"(-{v.text})", v.ty, product, terms=terms, fused=v.fused)

    def add(self, op, a: _Value, b: _Value) -> _Value:
        """``a op b``, contracted where a product meets a sum."""
        ty = a.ty if a.ty not in ("", "abstract") else b.ty
        if op in "+-" and ty == "f64" and (a.product or b.product) and (
                self.prefer != "none" or a.fused or b.fused):
            if self.prefer == "random" and self.rng.random() < 0.25 and not (a.fused or b.fused):
                return _Value(f"({a.text} {op} {b.text})", ty)       # left as it is
            left = a.product is not None and (b.product is None or self.prefer == "left" or (
                self.prefer == "random" and self.rng.random() < 0.5)) and not b.fused
            self.sites += 1
            if left:
                x, y = a.product
                return _Value(f"ct_fma_x({x}, {y}, {b.text if op == '+' else '(-' + b.text + ')'})",
                              ty)
            x, y = b.product
            return _Value(f"ct_fma_x({x if op == '+' else '(-' + x + ')'}, {y}, {a.text})", ty)
        return _Value(f"({a.text} {op} {b.text})", ty)

    def unary(self, env) -> _Value:
        if self.peek() in ("-", "!", "~"):
            op = self.take()
            v = self.unary(env)
            if op == "-":
                return self.negate(v)
            return _Value(f"({op}{v.text})", v.ty)
        v = self.primary(env)
        while self.peek() in (".", "["):
            if self.take() == ".":
                v = _Value(f"{v.text}.{self.take()}", "f64" if "f64" in v.ty else v.ty)
            else:
                index = self.expr(env).text
                self.take("]")
                v = _Value(f"{v.text}[{index}]", "u32")
        return v

    def primary(self, env) -> _Value:
        t = self.take()
        if t == "(":
            v = self.expr(env)
            self.take(")")
            return v
        if t[0].isdigit():
            ty = next((ty for suffix, ty in _LITERAL_TYPES if t.endswith(suffix)), "abstract")
            return _Value(t, ty)
        if t in ("true", "false"):
            return _Value(t, "bool")
        if self.peek() != "(":
            return env.get(t) or _Value(t, "")
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.expr(env))
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        texts = ", ".join(a.text for a in args)
        if t == "fma" and self.prefer != "none":
            self.sites += 1
            x, y, z = args
            if self.split and not (x.hidden and y.hidden):
                return _Value(f"ct_hide_d(ct_hide_d({x.text} * {y.text}) + {z.text})", "f64")
            # re-associable as the sum of its product and its addend
            product = _Value(f"({x.text} * {y.text})", "f64", (x.text, y.text), fused=True)
            return _Value(f"ct_fma_x({texts})", "f64",
                          terms=[(1, product)] + z.signed_terms() if self.reassociate else None)
        if t.startswith("bitcast<"):
            ty = t[8:-1]
        elif t in ("f64", "u64", "u32", "i32", "bool") or t.startswith(("vec", "array")):
            ty = t
        elif t in _SAME_TYPE or t == "select":
            ty = next((a.ty for a in args if a.ty not in ("", "abstract")), "")
        else:
            ty = self.results.get(t, "")
        return _Value(f"{t}({texts})", ty, hidden=t == "ct_hide_d")

    # -- statements
    def block(self, env, out, pad):
        self.take("{")
        env = dict(env)
        while self.peek() != "}":
            self.statement(env, out, pad)
        self.take("}")

    def statement(self, env, out, pad):
        t = self.peek()
        if t in ("let", "var"):
            kind, name = self.take(), self.take()
            declared = ""
            if self.peek() == ":":
                self.take(":")
                declared = self.take()
            self.take("=")
            v = self.expr(env)
            self.take(";")
            if kind == "var":
                env["$vars"] = env.get("$vars", frozenset()) | {name}
                env[name] = _Value(name, declared or v.ty)
            else:
                # a let of a product (a sum) stays contractible (re-associable) where it is
                # used, if it reads no var (which could change before the use)
                pure = not v.names() & env.get("$vars", frozenset())
                env[name] = _Value(name, declared or v.ty, v.product if pure else None,
                                   v.hidden, v.terms if pure else None)
            out.append(f"{pad}{kind} {name}{': ' + declared if declared else ''} = {v.text};")
        elif t == "return":
            self.take()
            out.append(f"{pad}return{'' if self.peek() == ';' else ' ' + self.expr(env).text};")
            self.take(";")
        elif t == "if":
            self.take()
            out.append(f"{pad}if ({self.expr(env).text}) {{")
            self.block(env, out, pad + "    ")
            while self.peek() == "else":
                self.take()
                if self.peek() == "if":
                    self.take()
                    out.append(f"{pad}}} else if ({self.expr(env).text}) {{")
                else:
                    out.append(f"{pad}}} else {{")
                self.block(env, out, pad + "    ")
            out.append(f"{pad}}}")
        elif t == "loop":
            self.take()
            out.append(f"{pad}loop {{")
            self.block(env, out, pad + "    ")
            out.append(f"{pad}}}")
        elif t in ("break", "continue"):
            out.append(f"{pad}{self.take()};")
            self.take(";")
        else:                                   # an assignment
            target = self.unary(env).text
            self.take("=")
            out.append(f"{pad}{target} = {self.expr(env).text};")
            self.take(";")

    def program(self) -> str:
        out = []
        while self.i < len(self.toks):
            start = self.i
            if self.peek() == "fn":
                while self.peek() != "{":
                    self.i += 1
                head = self.toks[start:self.i]
                params = head[head.index("(") + 1:head.index(")")]
                env = {params[k - 1]: _Value(params[k - 1], params[k + 1])
                       for k, tok in enumerate(params) if tok == ":"}
                out.append(f"fn {head[1]}({' '.join(params).replace(' :', ':').replace(' ,', ',')})"
                           f" {' '.join(head[head.index(')') + 1:])} {{")
                self.block(env, out, "    ")
                out.append("}")
            else:                               # a module-scope declaration, kept as it is
                depth = 0
                while not (self.peek() == ";" and depth == 0):
                    depth += {"(": 1, ")": -1}.get(self.take(), 0)
                self.take(";")
                out.append(" ".join(self.toks[start:self.i]))
        return "\n".join(out)


def fuse(wgsl: str, prefer: str = "left", split: bool = False, reassociate: bool = False,
         seed: int = 0) -> tuple[str, int]:
    """``wgsl`` (functions of the float64 library) as a driver that contracts multiply-adds
    may compile it, and the number of rewritten sites. ``prefer``: which product of
    ``a * b + c * d`` is contracted, "left", "right", or "random" (each site also left as it
    is with probability 1/4, from ``seed``); "none" prints the text back unchanged in meaning.
    ``split``: an fma of factors that are not both hidden rounds twice. ``reassociate``:
    every f64 sum of terms (through let names and fma addends too) is added in a random order
    from ``seed``.
    The result calls ``ct_fma_x``: add ``FMA_X`` (and the helpers ``FMA_X_NEEDS``)."""
    fuser = _Fuser(wgsl, prefer, split, reassociate, seed)
    return fuser.program(), fuser.sites
