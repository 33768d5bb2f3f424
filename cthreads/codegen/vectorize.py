"""A four-wide variant of element-wise kernels: each index step moves a ``vec4<f32>`` (a
``vec4<f64>`` in float64 kernels).

Memory-bound kernels like saxpy load and store one 4-byte float per index; a GPU keeps more
bytes in flight, and reaches its bandwidth, with 16-byte accesses, and CPU drivers vectorise
them too (see docs/performance.md, "The four-lane variant"). Python semantics are kept by
compiling this variant only for kernels whose meaning is the same lane by lane:

* the body is ``i = GlobalIdx.x`` (never assigned again), then either ``if i >= g: return``
  followed by straight-line statements, or a final ``if i < g:`` around them, where ``g`` is
  an int parameter;
* those statements assign float locals and store to float lists, and every list access is
  ``lst[i]``;
* expressions are float arithmetic (``+ - * /``, unary ``-``), float parameters and literals,
  and the lane-wise math functions (``sqrt``, ``exp``, ``abs`` ...); device functions of one
  ``return`` of such expressions, also tuples of floats unpacked (``a, b = f(x)``: one vector
  per member) or indexed (``f(x)[0]``).

Index step ``j`` covers indexes ``4j .. 4j+3``; where ``g`` falls inside a step, its stores
keep the lanes at or past ``g`` (``select`` with the old value). The runtime uses the variant
when ``g`` is within every accessed list (then no bounds check can fail) and each list's buffer
can be bound rounded up to whole ``vec4`` elements (pooled buffers can: the few bytes past the
list are the buffer's own padding, read into unused lanes and written back unchanged); any
other launch runs the scalar kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ir, library
from .builtins import CALLS
from .tuple_types import is_tuple
from .types import elem
from .vec_lanes import flatten
from .visit import Visitor
from .entry import grid_entry
from .wgsl import _const_tree, fold_guard, literal
from . import literal_entry

_ARITH = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}
#: the zero the four-lane variant's helpers use (its uniform block counts threads)
_ZERO = "fn ct_zero() -> u32 { return ct_u.ct_threads >> 31u; }"


def div4_text() -> str:
    """The lane-wise division (library helper ``ct_div4``), then the helpers it calls, each
    once, dependencies first; after the zero they use."""
    *deps, div4 = library.closure(["ct_div4"])
    return "\n\n".join([_ZERO, div4.text] + [rec.text for rec in deps])


_GUARDS = {(">=", 0): "ge", ("<=", 1): "ge", ("<", 0): "lt", (">", 1): "lt"}


@dataclass(frozen=True)
class VecPlan:
    guard: str                   # the int parameter g of the guard
    lists: tuple                 # Python names of the lists the body accesses
    divides: bool = False        # its WGSL declares the pipeline constant ct_fused_f32 (ct_div4)
    width: int = 1               # list[vecN] bodies: N (the guard and steps count components)


class _NotLanewise(Exception):
    pass


def _index_var(kernel: ir.Kernel):
    """(the index local's ident, the statements after it) or None."""
    body = list(kernel.body)
    if not body or not isinstance(body[0], ir.Assign):
        return None
    first = body[0]
    if not (isinstance(first.value, ir.Special) and first.value.name == "GlobalIdx"
            and first.value.axis == "x"):
        return None
    ident = first.ident
    if any(isinstance(s, (ir.Assign, ir.ForRange)) and s.ident == ident
           for s in ir.walk_stmts(body[1:])):
        return None
    return ident, body[1:]


def _guard(test: ir.Expr, index: str, params: dict):
    """('ge' | 'lt', parameter ident) when ``test`` compares the index with an int parameter."""
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1):
        return None
    a, b = test.operands
    for side, (mine, other) in enumerate(((a, b), (b, a))):
        if isinstance(mine, ir.Var) and mine.ident == index and isinstance(other, ir.Var) \
                and other.ident in params and params[other.ident].ty == "int":
            kind = _GUARDS.get((test.ops[0], side))
            if kind:
                return kind, other.ident
    return None


def _member(k: int):
    """Member ``k`` of a returned tuple: of ``return a, b``, or of ``return g(x)``."""
    def pick(value):
        if isinstance(value, ir.MakeTuple):
            return value.members[k]
        if isinstance(value, ir.FuncCall) and is_tuple(value.ty):
            return ir.TupleMember(value.ty.members[k], value.loc, value, k)
        raise _NotLanewise
    return pick


class _Printer(Visitor):
    """Prints the straight-line statements with vec4<f32> lanes (``visit_<node>``); any node
    without a method, or not lane-wise, raises _NotLanewise."""

    def __init__(self, index: str, locals_: dict, specs: dict, ty: str = "float"):
        self.ty = ty                        # the lanes' float type: 'float' or 'float64'
        self.vt = f"vec4<{elem(ty).wgsl}>"
        self.index = index
        self.locals = locals_
        self.specs = specs                  # device functions: WGSL name -> FuncSpec
        self.args: list[dict] = []          # inside a device function: its parameters' texts
        self.assigned: set[str] = set()
        self.tuples: set[str] = set()       # unpacked tuple locals: one vector per member
        self.lists: dict[str, ir.ListRef] = {}
        self.lines: list[str] = []          # the statements for four indexes below the guard
        self.tail: list[str] = []           # the same where only the first k < 4 are: stores
        self.divides = False                # keep the other lanes (ct_mask)
        self.width = 1                      # list[vecN] bodies over flat components: N
        self.picks = False                  # ... whose leaves differ per component (ct_c)
        self.hides = False                  # a float constant stored hidden (ct_enter_f)

    def div(self, a: str, b: str) -> str:
        if self.ty != "float":
            raise _NotLanewise          # exact float64 division has no four-lane form here
        self.divides = True
        return f"ct_div4(vec4<f32>({a}), vec4<f32>({b}))"

    def stmt(self, s: ir.Stmt, src):
        comment = f"// line {s.loc.lineno}: {src.source_of(s.loc.lineno)}"
        self.lines.append(comment)
        self.tail.append(comment)
        text, tail = self.visit(s)
        self.lines.append(text)
        self.tail.append(tail)

    def default(self, node, *args):
        raise _NotLanewise

    def visit_Assign(self, s):
        local = self.locals.get(s.ident)
        if local is not None and is_tuple(local.ty):
            return self.unpack(s, local.ty)
        if local is None or local.ty != self.ty or s.ident == self.index:
            raise _NotLanewise
        value = self.entry(s.value)
        self.assigned.add(s.ident)
        text = f"{s.ident} = {value};"
        return text, text

    def visit_Store(self, s):
        ref = self.access(s.lst, s.index)
        value = self.lanes(s.value)
        if s.aug_op is not None:
            if s.aug_op not in _ARITH or s.aug_ty != self.ty:
                raise _NotLanewise
            old = f"{ref.ident}[ct_j]"
            value = self.div(old, value) if s.aug_op == "truediv" else \
                f"({old} {_ARITH[s.aug_op]} {value})"
        return (f"{ref.ident}[ct_j] = {value};",
                f"{ref.ident}[ct_j] = select({ref.ident}[ct_j], {value}, ct_mask);")

    def lanes(self, e: ir.Expr) -> str:
        """``e`` as a vec4<f32>: a value made of scalars only (literals, parameters) is splat.
        A value read from lists is a vector already, unless a device function's result drops
        its lane-wise arguments (``return 0.001``): its text is then wrapped too (the
        conversion of a vec4 to itself costs nothing)."""
        text = self.expr(e)
        vector = any(isinstance(x, ir.Load) or (isinstance(x, ir.Var) and (
            x.ident in self.assigned or x.ident in self.tuples)) for x in ir.walk_expr(e))
        calls = any(isinstance(x, ir.FuncCall) for x in ir.walk_expr(e))
        return text if vector and not calls else f"{self.vt}({text})"

    def entry(self, e: ir.Expr) -> str:
        """``e`` stored into a name: a float constant hidden from the driver, as the scalar
        kernel hides it (literal_entry.py), then splat."""
        if not literal_entry.hides(e):
            return self.lanes(e)
        self.hides = True
        return f"{self.vt}({literal_entry.ENTER[self.ty]}({self.expr(e)}))"

    def access(self, lst: ir.ListRef, index: ir.Expr) -> ir.ListRef:
        if lst.elem != self.ty or lst.shared_size is not None or lst.atomic \
                or not (isinstance(index, ir.Var) and index.ident == self.index):
            raise _NotLanewise
        self.lists[lst.pyname] = lst
        return lst

    def expr(self, e: ir.Expr) -> str:
        if e.ty != self.ty:
            raise _NotLanewise
        return self.visit(e)

    def visit_Const(self, e):
        return literal(e.value, self.ty)

    def visit_Cast(self, e):
        if not isinstance(e.operand, ir.Const):
            raise _NotLanewise
        return literal(float(e.operand.value), self.ty)

    def visit_Var(self, e):
        if self.args:
            if e.ident not in self.args[-1]:
                raise _NotLanewise
            return self.args[-1][e.ident]
        local = self.locals.get(e.ident)
        if local is None or not (local.param or e.ident in self.assigned):
            raise _NotLanewise
        return e.ident

    def visit_Load(self, e):
        return f"{self.access(e.lst, e.index).ident}[ct_j]"

    def visit_Unary(self, e):
        if e.op != "neg":
            raise _NotLanewise
        return f"(-{self.expr(e.operand)})"

    def visit_Binary(self, e):
        if _const_tree(e):
            raise _NotLanewise          # WGSL would evaluate it at compile time (and may reject
                                        # an overflow): the scalar kernel guards against that
        if e.op not in _ARITH or fold_guard(e):
            raise _NotLanewise          # (x * 0.0, x - x ...: the scalar kernel hides them)
        left, right = self.expr(e.left), self.expr(e.right)
        if e.op == "truediv":
            return self.div(left, right)
        return f"({left} {_ARITH[e.op]} {right})"

    def visit_Pick(self, e):
        """A leaf per component (vec_lanes.py): lane by lane, the one of its component
        ``ct_c`` (the flat index modulo N)."""
        self.picks = True
        text = f"{self.vt}({self.expr(e.leaves[0])})"
        for k, leaf in enumerate(e.leaves[1:], 1):
            text = f"select({text}, {self.vt}({self.expr(leaf)}), ct_c == vec4<u32>({k}u))"
        return text

    def visit_FuncCall(self, e):
        """A device function whose body is ``return <lane-wise expression>`` of its
        parameters: that expression, with the arguments' lanes for the parameters."""
        return self.inline(e, lambda value: value)

    def inline(self, e: ir.FuncCall, pick) -> str:
        """The expression ``pick(returned value)`` of a function of one ``return``, with the
        arguments' lanes for its parameters."""
        spec = self.specs[e.fn]
        body = spec.body.body
        if spec.hidden or len(body) != 1 or not isinstance(body[0], ir.ReturnValue) or \
                len(spec.body.locals) != len(spec.params):
            raise _NotLanewise
        texts = {}
        for (ident, ty), arg in zip(spec.params, e.args):
            if ty != self.ty:
                raise _NotLanewise
            texts[ident] = f"({self.entry(arg)})" if literal_entry.hides(arg) \
                else f"({self.expr(arg)})"
        self.args.append(texts)
        try:
            value = pick(body[0].value)
            return f"({self.entry(value)})" if literal_entry.hides(value) else \
                f"({self.expr(value)})"
        finally:
            self.args.pop()

    # -- tuple results (tuple_calls.py): one vector per member -------------------------------
    def unpack(self, s: ir.Assign, ty):
        """``ct_sN = f(x)`` of an unpacking: each member of ``f``'s one ``return`` as a vector
        (``ct_sN_m0`` ...), which the member reads name."""
        if not isinstance(s.value, ir.FuncCall) or any(m != self.ty for m in ty.members):
            raise _NotLanewise
        lines = [f"let {s.ident}_m{k}: {self.vt} = {self.vt}"
                 f"{self.inline(s.value, _member(k))};" for k in range(len(ty))]
        self.tuples.add(s.ident)
        text = " ".join(lines)
        return text, text

    def visit_TupleMember(self, e):
        v = e.value
        if isinstance(v, ir.Var) and v.ident in self.tuples:
            return f"{v.ident}_m{e.index}"
        if isinstance(v, ir.FuncCall):
            return self.inline(v, _member(e.index))
        raise _NotLanewise

    def visit_Call(self, e):
        row = CALLS.get(e.fn)
        # (float64 math runs in helpers, one value at a time: few rows are lane-wise there)
        if _const_tree(e) or row is None or self.ty not in row.lanewise:
            raise _NotLanewise
        args = [self.expr(a) for a in e.args]
        if len(args) > 1:            # atan2(x, y): both the same type, vec4 where mixed
            args = [f"{self.vt}({a})" for a in args]
        return row.form(self.ty).template.format(*args)


def vectorize(kernel: ir.Kernel, layout, src, head: list[str], written: set):
    """(WGSL template for guards that are multiples of 4, template for any guard, VecPlan) for
    a lane-wise kernel, or None."""
    if kernel.uses & {"ThreadIdx", "BlockIdx", "BlockDim", "GridDim", "barrier", "shared"}:
        return None
    found = _index_var(kernel)
    if found is None:
        return None
    index, rest = found
    locals_ = {loc.ident: loc for loc in kernel.locals}
    if not rest or not isinstance(rest[0], ir.If) or rest[0].orelse:
        return None
    guard = _guard(rest[0].test, index, locals_)
    if guard is None:
        return None
    kind, g = guard
    if kind == "ge":
        exit_ = rest[0].body
        if len(exit_) != 1 or not isinstance(exit_[0], ir.Return):
            return None
        straight = rest[1:]
    else:
        if len(rest) != 1:
            return None
        straight = list(rest[0].body)
    floats = {ref.elem for ref in kernel.lists if elem(ref.elem).kind == "f"}
    ty = floats.pop() if len(floats) == 1 else "float"
    printer = _Printer(index, locals_, {spec.ident: spec for spec in kernel.functions}, ty)
    if any(ref.vec for ref in kernel.lists):
        # list[vecN] kernels: the same body over the flat components (vec_lanes.py)
        found = flatten(straight, index, locals_)
        if found is None:
            return None
        printer.width, straight = found
    try:
        for s in straight:
            printer.stmt(s, src)
    except _NotLanewise:
        return None
    if not printer.lists or not any(isinstance(s, ir.Store) for s in straight):
        return None
    decls = []
    for ref in sorted(printer.lists.values(), key=lambda r: layout.bindings[r.pyname]):
        access = "read_write" if ref.pyname in written else "read"
        decls.append(f"@group(0) @binding({layout.bindings[ref.pyname]}) var<storage, {access}> "
                     f"{ref.ident}: array<{printer.vt}>;")
    body = ["", "fn ct_vbody(ct_j: u32) {"]
    for local in kernel.locals:
        if local.ident == index or (not local.param and local.ident not in printer.assigned):
            continue
        if local.param:
            init = elem(local.ty).from_uniform.format(f"ct_u.{local.ident}")
            t = elem(local.ty).wgsl
            if local.ident in printer.assigned:
                body.append(f"    var {local.ident}: {printer.vt} = {printer.vt}({init});")
            else:
                body.append(f"    let {local.ident}: {t} = {init};")
        else:
            body.append(f"    var {local.ident}: {printer.vt};")
    helpers = ["", div4_text()] if printer.divides else ["", _ZERO] if printer.picks else []
    if printer.hides:
        if not helpers:
            helpers = ["", _ZERO]
        helpers.append(library.get(literal_entry.ENTER[ty]).text)
    # the guard on the flat index: N * g for list[vecN] bodies (each lane a component)
    w = printer.width
    g_flat = g if w == 1 else f"({w}i * {g})"
    start = ["    let ct_i: i32 = i32(ct_j * 4u);", f"    if (ct_i >= {g_flat}) {{ return; }}"]
    if printer.picks:       # each lane's component (ct_zero: not folded, vectorize._ZERO)
        start.append(f"    let ct_c = (vec4<u32>(ct_j * 4u + ct_zero()) + vec4<u32>(0u, 1u, 2u, "
                     f"3u)) % vec4<u32>({w}u);")
    g = g_flat
    # the form for guards that are multiples of 4 (every step whole), without the partial-step
    # branch: faster on CPU drivers, equal on GPUs (docs/performance.md, "The four-lane variant")
    whole = body + start + ["    " + text for text in printer.lines] + ["}"]
    tail = body + start + [f"    if ({g} - ct_i >= 4i) {{"] + [
        "        " + text for text in printer.lines] + [
        "    } else {",
        f"        let ct_mask = vec4<i32>(ct_i) + vec4<i32>(0i, 1i, 2i, 3i) < vec4<i32>({g});",
    ] + ["        " + text for text in printer.tail] + ["    }", "}"]
    entry = grid_entry("ct_vbody", "ct_g")
    templates = ["\n".join(head + decls + helpers + form + entry) for form in (whole, tail)]
    pyname = next(loc.pyname for loc in kernel.locals if loc.ident == guard[1])
    return templates[0], templates[1], VecPlan(pyname, tuple(printer.lists),
                                               printer.divides, w)
