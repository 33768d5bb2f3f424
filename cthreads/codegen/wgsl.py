"""IR -> WGSL text, with a ``// line N: <python source>`` comment before each statement.

Expressions that Python evaluates lazily (``and``/``or`` with a list read on the right, the
conditional expression, comparison chains) are lowered to statements with temporaries, so
that nothing is evaluated that Python would not evaluate. Kernels with barriers run their
returns through a ``ct_live`` flag (see ``uniform.py``).
"""

from __future__ import annotations

import math
import struct
from dataclasses import fields

from . import ir, library, loop_entry, printing
from .builtins import CALLS, TO_INT, f64_call
from .rng import RNG_FORMS
from .float_ops import FLOAT_TO_INT
from .entry import PROBE_END, WG
from .lists import ListAccess
from .program import LoopRecord, loop_bit
from .tuple_types import is_tuple
from .types import ELEM_TYPES, elem
from . import complexes, literal_entry
from .structtypes import WORD_CALLS, word_call_text
from .uniform import Uniformity
from .visit import Visitor

NATIVE = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "bitand": "&", "bitor": "|",
          "bitxor": "^"}
_ROWS = ELEM_TYPES.values()
#: the per-type helpers, from the element-type rows (types.ElemType)
HELPER_OP = {(op, row.name): helper for row in _ROWS for op, helper in row.ops}
#: helpers that keep WGSL from evaluating a constant expression at compile time
IDENTITY = {row.name: row.identity for row in _ROWS if row.identity}
#: helpers that hide a float from the driver's compiler (the operands ``fold_guard`` names)
OPAQUE = {row.name: row.opaque for row in _ROWS if row.opaque}
#: an index of these types reaches the (i32) array access through a helper
INDEX_HELPER = {row.name: row.index for row in _ROWS if row.index}
#: index builtins in the N-D launch variant (entry.nd_entry defines the names)
ND_SPECIALS = {
    "GlobalIdx": {"x": "ct_gidx", "y": "ct_gidy", "z": "ct_gidz"},
    "ThreadIdx": {a: f"i32(ct_lid.{a})" for a in "xyz"},
    "BlockIdx": {"x": "i32(ct_bx)", "y": "i32(ct_by)", "z": "i32(ct_bz)"},
    "BlockDim": {"x": "i32({WX})", "y": "i32({WY})", "z": "i32({WZ})"},
    "GridDim": {"x": "i32(ct_u.ct_nd_gx)", "y": "i32(ct_u.ct_nd_gy)", "z": "i32(ct_u.ct_nd_gz)"},
}
#: conversions to int64 through a helper (library/wide_ints.wgsl says why)
WIDEN = {row.name: row.widen for row in _ROWS if row.widen}
#: int abs, which wraps (abs(-2**31) is -2**31): helpers, not WGSL's abs (library/helpers.wgsl)
INT_ABS = {row.name: row.int_abs for row in _ROWS if row.int_abs}
#: shift counts as the u32 WGSL takes, per operand type
SHIFT_COUNT = {row.name: row.shift_count for row in _ROWS if row.shift_count}


def literal(value, ty: str) -> str:
    row = elem(ty)
    if row.kind == "c":
        return complexes.complex_literal(value, ty, literal)
    if row.python is bool:
        return "true" if value else "false"
    if row.python is int:
        v = int(value)
        if v == -2**31 and ty == "int":
            return "i32(-2147483648)"
        if v == -2**63:
            return "(-9223372036854775807li - 1li)"
        return f"{v}{row.suffix}" if v >= 0 else f"({v}{row.suffix})"
    v = float(value)
    if math.isnan(v) or math.isinf(v):
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        if ty == "float64":             # from the float32 of the same kind (no u64 needed)
            return f"f64(bitcast<f32>(0x{bits:08x}u))"
        return f"bitcast<{row.wgsl}>(0x{bits:08x}u)"
    text = repr(v)
    return f"{text}{row.suffix}" if not text.startswith("-") else f"({text}{row.suffix})"


def _const_tree(e: ir.Expr) -> bool:
    """True when WGSL would const-evaluate ``e`` (and could reject an overflow)."""
    return not any(x.RUNTIME for x in ir.walk_expr(e))


class Emitter(Visitor):
    def __init__(self, kernel: ir.Kernel, src, lists: ListAccess, progress=None,
                 loopcheck: bool = False, specs: dict | None = None):
        self.k = kernel
        # the device functions calls may name: WGSL name -> functions.FuncSpec
        self.specs = specs if specs is not None else {s.ident: s for s in kernel.functions}
        self.nd = False                 # emitting the N-D launch variant (entry.ND_ENTRY)
        # the CPU variant: a probe after each outermost loop (PROBE_FN, program.LoopRecord)
        self.loopcheck = loopcheck
        # and hides the entry values of loops with an early exit (loop_entry.py)
        self.hide_loops = loopcheck
        self.loops: list[LoopRecord] = []
        self.loop_depth = 0
        self.report = lists.status_binding is not None     # returns call ct_report()
        self.progress = progress
        self.src = src
        self.lists = lists
        self.uni = Uniformity(kernel, src)
        self.flag_mode = self.uni.has_barrier
        self.helpers: set[str] = set()
        self.lines: list[str] = []
        self.pylines: list[int] = []
        self.indent = 1
        self.cur_line = 0
        self.ntemp = 0

    # -- output ----------------------------------------------------------------------------
    def line(self, text: str):
        self.lines.append("    " * self.indent + text)
        self.pylines.append(self.cur_line)

    def comment(self, s: ir.Stmt):
        self.cur_line = s.loc.lineno
        if self.progress is not None:
            self.progress.lineno = s.loc.lineno
        self.line(f"// line {s.loc.lineno}: {self.src.source_of(s.loc.lineno)}")

    def temp(self, prefix="ct_t") -> str:
        self.ntemp += 1
        return f"{prefix}{self.ntemp}"

    def helper(self, name: str):
        if name not in self.helpers:
            deps = library.get(name).deps
            self.helpers.add(name)
            for dep in deps:
                self.helper(dep)

    # -- expressions -----------------------------------------------------------------------
    def expr(self, e: ir.Expr) -> str:
        return self.visit(e)

    def operands(self, e, subs) -> list:
        out = [self.expr(s) for s in subs]
        if out and _const_tree(e) and subs[0].ty in IDENTITY:
            ident = IDENTITY[subs[0].ty]
            self.helper(ident)
            out[0] = f"{ident}({out[0]})"
        return out

    def visit_Const(self, e):
        return literal(e.value, e.ty)

    def visit_Var(self, e):
        return e.ident

    def visit_Special(self, e):
        if self.nd:
            text = ND_SPECIALS[e.name][e.axis]
        elif e.axis == "x":
            text = {"GlobalIdx": "ct_gidx", "ThreadIdx": "i32(ct_lid.x)",
                    "BlockIdx": "i32(ct_flat)", "BlockDim": f"i32({WG})",
                    "GridDim": "i32(ct_u.ct_groups)"}[e.name]
        else:                           # a 1-D launch: .y and .z are those of a 1 x 1 grid
            return literal(1 if e.name in ("BlockDim", "GridDim") else 0, e.ty)
        return self.cast(text, "int", e.ty)

    def visit_Len(self, e):
        return self.cast(self.lists.length(e.lst, e.dim), "int", e.ty)

    def index(self, e: ir.Expr) -> str:
        """An index expression as the i32 that list access takes."""
        text = self.expr(e)
        name = INDEX_HELPER.get(e.ty)
        if name is None:
            return text
        self.helper(name)
        return f"{name}({text})"

    def visit_Load(self, e):
        idx = self.index(e.index)
        more = [self.index(m) for m in e.more]
        return self.lists.load(e.lst, idx, e.check, more, e.more_checks)

    def visit_ComponentIndex(self, e):
        return self.lists.component(self.expr(e.value), e.value.ty, e.n, e.check)

    def visit_Atomic(self, e):
        idx = self.index(e.index)
        more = [self.index(m) for m in e.more]
        args = [self.expr(a) for a in e.args]
        return self.lists.atomic(e.lst, e.op, idx, args, e.check, more, e.more_checks)

    def visit_Unary(self, e):
        (a,) = self.operands(e, [e.operand])
        if e.op == "not":
            return f"!({a})"
        if e.op == "invert":
            return f"(~{a})"
        if e.ty == "uint32":
            return f"(0u - {a})"
        return f"(-{a})"

    def visit_Binary(self, e):
        a, b = self.operands(e, [e.left, e.right])
        hide = fold_guard(e)
        if hide:
            # shapes a driver simplifies as if NaN, inf and -0.0 did not exist (x * 0.0,
            # x + 0.0, x - x, -x + x): the operand it would need is hidden from it
            # (literal_entry's shapes with its own helper: one the division helpers' own
            # hiding cannot undo)
            entered = literal_entry.operand_folds(e)
            for side in hide:
                ident = (literal_entry.ENTER if side in entered else OPAQUE)[e.left.ty]
                self.helper(ident)
                if side == "left":
                    a = f"{ident}({a})"
                else:
                    b = f"{ident}({b})"
        if e.op in ("lshift", "rshift") and _const_tree(e.right):
            # a count the driver can see is checked against the width at shader creation
            # (WGSL refuses 33u for a u32): write it modulo the width, as the language takes it
            bits = elem(e.left.ty).bits
            if isinstance(e.right, ir.Const):
                count = f"{int(e.right.value) % bits}u"
            else:
                count = f"({SHIFT_COUNT[e.left.ty].format(b)} & {bits - 1}u)"
            return f"({a} {'<<' if e.op == 'lshift' else '>>'} {count})"
        return self.binop(e.op, e.left.ty, a, b)

    def binop(self, op, ty, a, b) -> str:
        if (op, ty) in HELPER_OP:
            name = HELPER_OP[(op, ty)]
            self.helper(name)
            return f"{name}({a}, {b})"
        if op == "bitxor" and ty == "bool":
            return f"({a} != {b})"
        if op in ("lshift", "rshift"):
            count = SHIFT_COUNT[ty].format(b)
            return f"({a} {'<<' if op == 'lshift' else '>>'} {count})"
        return f"({a} {NATIVE[op]} {b})"

    def cast(self, text: str, src: str, dst: str) -> str:
        if src == dst:
            return text
        special = complexes.cast(text, src, dst, self.helper)
        if special is not None:
            return special
        if dst == "bool":
            zero = elem(src).zero
            return f"({text} != {zero})" if elem(src).kind in "iu" else f"!({text} == {zero})"
        if dst == "int64" and src in WIDEN:
            self.helper(WIDEN[src])
            return f"{WIDEN[src]}({text})"
        if (src, dst) in FLOAT_TO_INT:
            # saturating at the int's limits; negative floats into uint32 wrap as their int32
            # value would (numpy's astype on x86)
            self.helper(FLOAT_TO_INT[(src, dst)])
            return f"{FLOAT_TO_INT[(src, dst)]}({text})"
        return f"{elem(dst).wgsl}({text})"

    def visit_Cast(self, e):
        (a,) = self.operands(e, [e.operand])
        return self.cast(a, e.operand.ty, e.ty)

    def visit_Call(self, e):
        args = self.operands(e, list(e.args))
        if e.fn == "log_base" and e.ty in IDENTITY:
            # log(x) / log(b): WGSL evaluates log(b) of a base the driver can see, and refuses
            # one <= 0 (Python raises; the kernel's value is NaN or -0.0 by the float rules)
            for k, arg in enumerate(e.args):
                if _const_tree(arg) and not args[k].startswith(IDENTITY[e.ty] + "("):
                    self.helper(IDENTITY[e.ty])
                    args[k] = f"{IDENTITY[e.ty]}({args[k]})"
        arg_ty = e.args[0].ty if e.args else e.ty
        if e.fn in RNG_FORMS:                       # Random's draws (rng.py)
            form = RNG_FORMS[e.fn]
            for name in form.helpers:
                self.helper(name)
            return form.template.format(*args)
        if e.fn in WORD_CALLS:                  # struct fields in words (codegen/structs.py)
            return word_call_text(e, args)
        if e.fn in complexes.COMPLEX_CALLS:
            if e.fn in ("c_mul", "c_div", "c_sq"):
                # a constant operand is hidden from the driver, which would fold its zero parts
                # (x * 0.0 -> 0.0, 0.0 - y -> -y) as if NaN, inf and -0.0 did not exist
                for k, arg in enumerate(e.args):
                    if _const_tree(arg):
                        self.helper(complexes.OPAQUE[arg.ty])
                        args[k] = f"{complexes.OPAQUE[arg.ty]}({args[k]})"
            form = complexes.form(e.fn, arg_ty)
            for name in form.helpers:
                self.helper(name)
            return form.template.format(*args)
        if e.fn in TO_INT and (arg_ty != "float" or e.ty != "int"):
            # floor ceil trunc round of a float64, or to an int64: the float, then the int
            return self.cast(TO_INT[e.fn].format(*args), arg_ty, e.ty)
        if e.fn == "abs" and arg_ty == "uint32":
            return args[0]
        if e.fn in ("abs", "fabs") and arg_ty in OPAQUE and _const_tree(e):
            # abs of a literal: the driver folded abs(-0.0) to -0.0 (lavapipe)
            self.helper(OPAQUE[arg_ty])
            args = [f"{OPAQUE[arg_ty]}({args[0]})"]
        if e.fn == "abs" and arg_ty in INT_ABS:
            self.helper(INT_ABS[arg_ty])
            return f"{INT_ABS[arg_ty]}({args[0]})"
        form = f64_call(e.fn, self.src, e.loc) if arg_ty == "float64" else CALLS[e.fn].f32
        for name in form.helpers:
            self.helper(name)
        return form.template.format(*args)

    def visit_MakeTuple(self, e):
        return f"{e.ty.wgsl}({', '.join(self.entry(m) for m in e.members)})"

    def visit_TupleMember(self, e):
        return f"{self.expr(e.value)}.m{e.index}"

    def visit_FuncCall(self, e):
        args = [self.entry(a) for a in e.args]
        args += [ident for ident, _ in self.specs[e.fn].hidden_params(self.nd)]
        return f"{e.fn}({', '.join(args)})"

    def compare(self, op, ty, a, b) -> str:
        if op == "!=" and elem(ty).kind == "f":
            return f"!({a} == {b})"        # NaN != x is True in Python; keep it unordered
        return f"({a} {op} {b})"

    def cmp_operand(self, text: str, e: ir.Expr, ty: str) -> str:
        """Operand ``e`` (emitted as ``text``) of a comparison made in ``ty``. A literal met by
        values of two types in a chain keeps its own type; a 64-bit one is written here as a
        literal of each comparison's type (the front end checked that it fits): WGSL refuses
        the conversion of a 64-bit literal (``f32(3.14159lf)``, ``u32(4li)``)."""
        if isinstance(e, ir.Const) and e.ty != ty and elem(e.ty).bits == 64 and \
                elem(ty).kind != "b" and text == literal(e.value, e.ty):
            if elem(ty).kind == "f":
                value = float(e.value)
                if ty == "float" and math.isfinite(value):  # rounded once, as numpy would
                    value = struct.unpack("<f", struct.pack("<f", value))[0]
                return literal(value, ty)
            if elem(e.ty).kind in "iu":
                return literal(int(e.value), ty)
        return self.cast(text, e.ty, ty)

    def visit_Compare(self, e):
        if len(e.ops) == 1:
            a, b = self.operands(e, list(e.operands))
            ty = e.cmp_types[0]
            return self.compare(e.ops[0], ty, self.cmp_operand(a, e.operands[0], ty),
                                self.cmp_operand(b, e.operands[1], ty))
        if all(_pure(x) for x in e.operands):
            parts = []
            strs = [self.expr(x) for x in e.operands]
            for k, op in enumerate(e.ops):
                ty = e.cmp_types[k]
                parts.append(self.compare(op, ty, self.cmp_operand(strs[k], e.operands[k], ty),
                                          self.cmp_operand(strs[k + 1], e.operands[k + 1],
                                                           ty)))
            return "(" + " && ".join(parts) + ")"
        result = self.temp()
        self.line(f"var {result}: bool = false;")
        prev = self.bind(e.operands[0])
        depth = 0
        for k, op in enumerate(e.ops):
            cur = self.bind(e.operands[k + 1])
            ty = e.cmp_types[k]
            test = self.compare(op, ty, self.cmp_operand(prev, e.operands[k], ty),
                                self.cmp_operand(cur, e.operands[k + 1], ty))
            if k == len(e.ops) - 1:
                self.line(f"{result} = {test};")
            else:
                self.line(f"if {test} {{")
                self.indent += 1
                depth += 1
            prev = cur
        for _ in range(depth):
            self.indent -= 1
            self.line("}")
        return result

    def bind(self, e: ir.Expr) -> str:
        text = self.expr(e)
        if isinstance(e, (ir.Const, ir.Var)):
            return text
        name = self.temp()
        self.line(f"let {name} = {text};")
        return name

    def bind_once(self, e: ir.Expr) -> str:
        """``bind``, but a variable is copied too: its value now, whatever later lines do."""
        if isinstance(e, ir.Var):
            name = self.temp()
            self.line(f"let {name} = {self.expr(e)};")
            return name
        return self.bind(e)

    def sub_expr(self, e):
        """Emit ``e`` into a separate buffer; return (its text, its prelude lines)."""
        saved_lines, saved_py = self.lines, self.pylines
        self.lines, self.pylines = [], []
        text = self.expr(e)
        pre, pre_py = self.lines, self.pylines
        self.lines, self.pylines = saved_lines, saved_py
        return text, pre, pre_py

    def splice(self, pre, pre_py, extra_indent=1):
        for text, py in zip(pre, pre_py):
            self.lines.append("    " * extra_indent + text)
            self.pylines.append(py)

    def visit_BoolOp(self, e):
        left = self.expr(e.left)
        right, pre, pre_py = self.sub_expr(e.right)
        if e.ty == "bool" and not pre:
            return f"({left} {'&&' if e.op == 'and' else '||'} {right})"
        t = self.temp()
        self.line(f"var {t}: {elem(e.ty).wgsl} = {left};")
        truth = self.cast(t, e.ty, "bool")
        self.line(f"if {truth} {{" if e.op == "and" else f"if !{truth} {{")
        self.splice(pre, pre_py)
        self.line(f"    {t} = {right};")
        self.line("}")
        return t

    def visit_IfExp(self, e):
        test = self.expr(e.test)
        body, pre_b, py_b = self.sub_expr(e.body)
        orelse, pre_o, py_o = self.sub_expr(e.orelse)
        if not pre_b and not pre_o and _pure(e.body) and _pure(e.orelse):
            return f"select({orelse}, {body}, {test})"
        t = self.temp()
        self.line(f"var {t}: {elem(e.ty).wgsl};")
        self.line(f"if {_paren(test)} {{")
        self.splice(pre_b, py_b)
        self.line(f"    {t} = {body};")
        self.line("} else {")
        self.splice(pre_o, py_o)
        self.line(f"    {t} = {orelse};")
        self.line("}")
        return t

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts, mode: str, loops: int = 0):
        """Emit statements. mode: 'plain' (real returns), 'region' (every invocation runs
        this block; non-region statements are guarded by ct_live), 'inner' (guarded code:
        returns clear ct_live); ``loops`` counts loops entered inside the guard."""
        if mode == "region":
            self.region_block(stmts)
            return
        for k, s in enumerate(stmts):
            self.stmt(s, mode, loops)
            if mode == "inner" and _may_return(s) and k + 1 < len(stmts):
                if loops:
                    self.line("if (!ct_live) { break; }")
                else:
                    self.line("if (ct_live) {")
                    self.indent += 1
                    self.block(stmts[k + 1:], mode, loops)
                    self.indent -= 1
                    self.line("}")
                    return

    def region_block(self, stmts):
        guarded = []
        for s in stmts:
            if self.uni.is_region(s):
                self.flush_guarded(guarded)
                guarded = []
                self.stmt(s, "region", 0)
            elif isinstance(s, ir.Return):
                self.flush_guarded(guarded)
                guarded = []
                self.comment(s)
                self.line("ct_live = false;")
            else:
                guarded.append(s)
        self.flush_guarded(guarded)

    def flush_guarded(self, stmts):
        if not stmts:
            return
        self.line("if (ct_live) {")
        self.indent += 1
        self.block(stmts, "inner", 0)
        self.indent -= 1
        self.line("}")

    def stmt(self, s, mode, loops):
        self.comment(s)
        self.visit(s, mode, loops)

    def visit_Assign(self, s, mode, loops):
        self.line(f"{s.ident} = {self.entry(s.value)};")

    def entry(self, e) -> str:
        """``e`` stored into a name: a float constant hidden from the driver (literal_entry)."""
        text = self.expr(e)
        if not literal_entry.hides(e):
            return text
        self.helper(literal_entry.ENTER[e.ty])
        return f"{literal_entry.ENTER[e.ty]}({text})"

    def visit_ExprStmt(self, s, mode, loops):
        text = self.expr(s.value)
        if isinstance(s.value, ir.FuncCall) and s.value.ty == "none":
            self.line(f"{text};")
        elif isinstance(s.value, ir.Atomic) or text.startswith("ct_"):
            self.line(f"_ = {text};")
        elif not isinstance(s.value, ir.Var):
            self.line(f"_ = {text};")

    def visit_Store(self, s, mode, loops):
        lst = s.lst
        if s.aug_op is None:
            idx = self.index(s.index)
            more = [self.index(m) for m in s.more]
            value = self.expr(s.value)
            self.line(self.lists.store(lst, idx, value, s.check, more, s.more_checks) + ";")
            return
        idxs = []
        for e in (s.index, *s.more):
            idx = self.bind(e)
            name = INDEX_HELPER.get(e.ty)
            if name is not None:
                self.helper(name)
                idx = f"{name}({idx})"
            idxs.append(idx)
        idx, more = idxs[0], idxs[1:]
        old = self.cast(self.lists.load(lst, idx, s.check, more, s.more_checks), lst.elem,
                        s.aug_ty)
        rhs = self.expr(s.value)
        new = self.cast(self.binop(s.aug_op, s.aug_ty, old, rhs), s.aug_ty, lst.elem)
        self.line(self.lists.store(lst, idx, new, s.check, more, s.more_checks) + ";")

    def visit_If(self, s, mode, loops):
        self.line(f"if {_paren(self.expr(s.test))} {{")
        self.indent += 1
        self.block(s.body, mode, loops)
        self.indent -= 1
        if s.orelse:
            self.line("} else {")
            self.indent += 1
            self.block(s.orelse, mode, loops)
            self.indent -= 1
        self.line("}")

    def hide_entry(self, s) -> bool:
        """In the variant for CPU drivers, before a loop with an early exit: its locals written
        with a zero the compiler cannot see (``loop_entry.py`` says why). True when done."""
        if not self.hide_loops or not loop_entry.exits_early(s.body):
            return False
        self.helper(loop_entry.OPAQUE)
        # (a tuple local is written before each read: unpacking, tuple_calls.py)
        types = {local.ident: local.ty for local in self.k.locals if not is_tuple(local.ty)}
        for ident in loop_entry.assigned(s.body):
            if ident in types:
                self.line(f"{ident} = {loop_entry.hidden(ident, types[ident])};")
        return True

    def visit_While(self, s, mode, loops):
        test, pre, pre_py = self.sub_expr(s.test)
        self.hide_entry(s)
        rec = self.open_loop(s)
        if not pre:
            self.line(f"while {_paren(test)} {{")
        else:
            self.line("loop {")
            self.splice(pre, pre_py)
            self.line(f"    if !{_paren(test)} {{ break; }}")
        self.indent += 1
        self.block(s.body, mode, loops + 1)
        self.indent -= 1
        self.line("}")
        self.close_loop(rec)

    def visit_ForRange(self, s, mode, loops):
        # Python evaluates range() once: the start and step that each pass reads are copies
        # taken before the loop (a variable bound, the loop's own target included, may be
        # reassigned in the body); the count is fixed there too, so the target is the user's
        # copy of a hidden counter and assigning it never changes the passes.
        n = self.temp("ct_r")
        start = self.bind_once(s.start)
        stop = self.bind(s.stop)
        step = self.bind_once(s.step)
        wide = s.start.ty == "int64"
        count = "ct_range_count_l" if wide else "ct_range_count"
        self.helper(count)
        self.line(f"let {n}n = {count}({start}, {stop}, {step});")
        j = f"{n}j"
        first = loop_entry.OPAQUE if self.hide_entry(s) else "0u"
        rec = self.open_loop(s)
        self.line(f"for (var {j}: u32 = {first}; {j} < {n}n; {j} = {j} + 1u) {{")
        self.indent += 1
        if wide:
            self.helper("ct_wide_u")
            self.line(f"{s.ident} = {start} + ct_wide_u({j}) * {step};")
        elif isinstance(s.step, ir.Const) and s.step.value == 1:
            self.line(f"{s.ident} = {start} + bitcast<i32>({j});")
        else:
            self.line(f"{s.ident} = {start} + bitcast<i32>({j} * bitcast<u32>({step}));")
        self.block(s.body, mode, loops + 1)
        self.indent -= 1
        self.line("}")
        self.close_loop(rec)

    def open_loop(self, s):
        """In the CPU variant: the record of an outermost loop (None for the others)."""
        self.loop_depth += 1
        if not self.loopcheck or self.loop_depth > 1:
            return None
        rec = LoopRecord(len(self.loops), s.loc.lineno, self.src.source_of(s.loc.lineno))
        self.loops.append(rec)
        return rec

    def close_loop(self, rec) -> None:
        self.loop_depth -= 1
        if rec is not None:
            self.line(f"ct_loop_probe({loop_bit(rec.id)}u);")

    def visit_Break(self, s, mode, loops):
        self.line("break;")

    def visit_Continue(self, s, mode, loops):
        self.line("continue;")

    def visit_Return(self, s, mode, loops):
        if mode == "plain":
            if self.report:
                self.line("ct_report();")
            if self.loopcheck:
                self.line(PROBE_END)        # kept only where the entry point's end is not reached
            self.line("return;")
        else:
            self.line("ct_live = false;")
            if mode == "inner" and loops:
                self.line("break;")

    def visit_Print(self, s, mode, loops):
        printing.emit(self, s)

    def visit_Barrier(self, s, mode, loops):
        if any(lst.shared_size is None and lst.written for lst in self.lists.refs):
            self.line("storageBarrier();")
        self.line("workgroupBarrier();")


#: Loops whose passes are bounded at compile time by this many per index need no check on CPU
#: drivers: with at most 8 indexes per invocation, 8 x (8,000 + 2 for the bounds-check report)
#: + 9 for the step loop stays below llvmpipe's 65,535 (docs/language.md).
STATIC_LOOP_PASSES = 8_000


def static_passes(stmts) -> int | None:
    """A bound on the loop passes ``stmts`` make, counting every loop as run in full each time
    it is reached (llvmpipe counts a loop in a branch no thread takes too), or None when a loop
    has a run-time trip count (``while``, ``range`` of non-literal bounds)."""
    total = 0
    for s in stmts:
        if isinstance(s, ir.While):
            return None
        inner = 0
        for body in s.bodies():
            passes = static_passes(body)
            if passes is None:
                return None
            inner += passes
        if isinstance(s, ir.ForRange):
            if not all(isinstance(e, ir.Const) for e in (s.start, s.stop, s.step)):
                return None
            count = len(range(int(s.start.value), int(s.stop.value), int(s.step.value)))
            total += count * (inner + 1) + 1
        else:
            total += inner
    return total


def _paren(text: str) -> str:
    return text if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]) \
        else f"({text})"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _zero_literal(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.Const) and not isinstance(e.value, bool) and e.value == 0


#: expression nodes whose value is a function of their fields (no memory writes, no calls)
_VALUE_NODES = (ir.Const, ir.Var, ir.Special, ir.Load, ir.Len, ir.Unary, ir.Binary, ir.Cast,
                ir.Call)
#: fields that do not change a node's value (its place, its bounds checks' numbers)
_NOT_VALUE = {"loc", "check", "more_checks"}


def same_value(a, b) -> bool:
    """True when ``a`` and ``b`` are the same expression (the same reads of the same names
    and lists, the same operations), so the same value at one point of a thread."""
    if isinstance(a, ir.Expr) or isinstance(b, ir.Expr):
        if type(a) is not type(b) or not isinstance(a, _VALUE_NODES):
            return False
        return all(same_value(getattr(a, f.name), getattr(b, f.name))
                   for f in fields(a) if f.name not in _NOT_VALUE)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def fold_guard(e: ir.Binary) -> tuple:
    """The operands ('left', 'right') of a float ``+ - * /`` to hide from the driver's compiler,
    which folds x * 0.0 to 0.0, x + 0.0 to x, x - x and -x + x to 0.0 (lavapipe's and NVIDIA's:
    wrong for NaN, infinities and -0.0), and literal_entry.operand_folds' shapes; () for every
    other expression."""
    if e.op not in ("add", "sub", "mul", "truediv") or elem(e.left.ty).kind != "f" or \
            e.left.ty not in OPAQUE:
        return ()
    hide = literal_entry.operand_folds(e)
    if e.op == "truediv":
        return hide
    hide += tuple(side for side, x in (("left", e.left), ("right", e.right)) if _zero_literal(x))
    if e.op == "sub" and same_value(e.left, e.right):
        hide += ("right",)
    if e.op == "add":
        for side, neg, other in (("right", e.left, e.right), ("left", e.right, e.left)):
            if isinstance(neg, ir.Unary) and neg.op == "neg" and same_value(neg.operand, other):
                hide += (side,)
    return tuple(sorted(set(hide)))


def _pure(e: ir.Expr) -> bool:
    """Safe to evaluate even when Python would not (no list access, no atomics)."""
    return not any(x.MEMORY for x in ir.walk_expr(e))


def _may_return(s: ir.Stmt) -> bool:
    return any(isinstance(x, ir.Return) for x in ir.walk_stmts([s]))
