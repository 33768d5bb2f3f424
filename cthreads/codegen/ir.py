"""The typed kernel IR: frozen dataclasses, each node carrying its Python location.

Expressions carry their scalar type ``ty`` ('bool' | 'int' | 'float'). Operands of binary
nodes are already promoted to the node's operand type by the frontend, so the emitter never
decides types. Names are WGSL-safe identifiers (renaming happened in the frontend); lists are
referred to by their ``ListRef``.

Each node class names the fields that hold its sub-expressions (``EXPRS``: one expression each,
``EXPR_SEQS``: tuples of them) and, for statements, its nested blocks (``BODIES``); every pass
walks the tree through ``children()``, ``bodies()`` and the ``walk_*`` helpers below, so a new
node is declared here and printed by the emitter, and nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .source import SourceLoc


@dataclass(frozen=True)
class ListRef:
    pyname: str          # the Python name (for messages and the bounds-check table)
    ident: str           # WGSL identifier
    elem: str            # 'int' | 'float' | 'bool'
    shared_size: int | None = None   # None for parameters, else the workgroup array length
    atomic: bool = False
    ndim: int = 1        # dimensions (parameters only; shared arrays are 1-D)
    vec: int = 0         # list[vec3]: 3 -- a flat list of components (codegen/vectors.py)
    mat: int = 0         # list[mat33]: 3 (vec 9: entries row by row; codegen/matrices.py)
    struct: object = None    # list[Particle]: its StructType, vec words each (codegen/structs.py)


# ---------------------------------------------------------------------------- expressions
class _Node:
    EXPRS: ClassVar[tuple] = ()
    EXPR_SEQS: ClassVar[tuple] = ()
    BODIES: ClassVar[tuple] = ()
    #: reads or writes list memory (never evaluated where Python would not evaluate it)
    MEMORY: ClassVar[bool] = False
    #: its value is known only at run time, whatever its sub-expressions (else WGSL may
    #: evaluate a tree of such nodes at compile time)
    RUNTIME: ClassVar[bool] = False

    def children(self) -> tuple:
        """The expressions directly inside this node, in field order."""
        out = tuple(getattr(self, name) for name in self.EXPRS)
        for name in self.EXPR_SEQS:
            out += tuple(getattr(self, name))
        return out

    def bodies(self) -> tuple:
        """The statement blocks nested in this node (``If``: body and orelse)."""
        return tuple(getattr(self, name) for name in self.BODIES)


@dataclass(frozen=True)
class Expr(_Node):
    ty: str
    loc: SourceLoc


@dataclass(frozen=True)
class Const(Expr):
    value: object = None


@dataclass(frozen=True)
class Var(Expr):
    RUNTIME = True
    ident: str = ""
    uniform: bool = False     # filled by the uniformity pass via the local table


@dataclass(frozen=True)
class Special(Expr):
    """An index builtin component: e.g. name='GlobalIdx', axis='x'."""
    RUNTIME = True
    name: str = ""
    axis: str = "x"


@dataclass(frozen=True)
class Load(Expr):
    """``lst[index]``; for an N-D list ``lst[index, *more]``, ``check`` for the first
    dimension and ``more_checks`` for the others (one bounds check per dimension)."""
    EXPRS = ("index",)
    EXPR_SEQS = ("more",)
    MEMORY = RUNTIME = True
    lst: ListRef = None
    index: Expr = None
    check: int | None = None
    more: tuple = ()
    more_checks: tuple = ()


@dataclass(frozen=True)
class Len(Expr):
    """``len(lst)`` (dimension 0) or ``lst.shape[dim]``."""
    RUNTIME = True
    lst: ListRef = None
    dim: int = 0


@dataclass(frozen=True)
class Unary(Expr):
    EXPRS = ("operand",)
    op: str = ""             # 'neg' | 'not' | 'invert'
    operand: Expr = None


@dataclass(frozen=True)
class Binary(Expr):
    EXPRS = ("left", "right")
    op: str = ""             # add sub mul truediv floordiv mod pow bitand bitor bitxor lshift rshift
    left: Expr = None
    right: Expr = None


@dataclass(frozen=True)
class Compare(Expr):
    """One comparison or a chain ``a < b <= c``; ``cmp_types[k]`` is the type compared at k."""
    EXPR_SEQS = ("operands",)
    ops: tuple = ()
    operands: tuple = ()
    cmp_types: tuple = ()


@dataclass(frozen=True)
class BoolOp(Expr):
    EXPRS = ("left", "right")
    op: str = ""             # 'and' | 'or'; operands already converted to ty
    left: Expr = None
    right: Expr = None


@dataclass(frozen=True)
class IfExp(Expr):
    EXPRS = ("test", "body", "orelse")
    test: Expr = None
    body: Expr = None
    orelse: Expr = None


@dataclass(frozen=True)
class Cast(Expr):
    """Conversion to ``ty``; to 'bool' means Python truthiness, float->int truncates."""
    EXPRS = ("operand",)
    operand: Expr = None


@dataclass(frozen=True)
class Call(Expr):
    EXPR_SEQS = ("args",)
    fn: str = ""             # key into builtins.FUNCTIONS
    args: tuple = ()


@dataclass(frozen=True)
class FuncCall(Expr):
    """A call of a device function: ``fn`` is the WGSL name of its specialisation (one per
    device function and choice of the caller's lists for its list parameters); ``ty`` is
    'none' for a function returning None (then only a statement's value). It may read and
    write lists, so it counts as a memory access."""
    EXPR_SEQS = ("args",)
    MEMORY = RUNTIME = True
    fn: str = ""
    args: tuple = ()


@dataclass(frozen=True)
class MakeTuple(Expr):
    """The value of ``return a, b`` in a device function with a tuple result: ``ty`` is its
    ``tuple_types.TupleType``, ``members`` already converted to its member types."""
    EXPR_SEQS = ("members",)
    members: tuple = ()


@dataclass(frozen=True)
class TupleMember(Expr):
    """Member ``index`` of a tuple value (a device function's call, or the hidden local an
    unpacking assignment keeps it in); ``ty`` is the member's type."""
    EXPRS = ("value",)
    value: Expr = None
    index: int = 0


@dataclass(frozen=True)
class ComponentIndex(Expr):
    """A run-time component index ``v[k]`` of a vector of ``n`` components
    (``vector_index.py``): ``value`` (an int) counted from the end when negative, as Python
    does; with ``check``, an index outside ``-n .. n-1`` is noted as a failed bounds check."""
    EXPRS = ("value",)
    MEMORY = RUNTIME = True          # it notes failures: never evaluated where Python would not
    value: Expr = None
    n: int = 0
    check: int | None = None


@dataclass(frozen=True)
class Atomic(Expr):
    EXPRS = ("index",)
    EXPR_SEQS = ("args", "more")
    MEMORY = RUNTIME = True
    op: str = ""             # add sub min max exchange compare_exchange
    lst: ListRef = None
    index: Expr = None
    args: tuple = ()
    check: int | None = None
    more: tuple = ()         # the other dimensions' indexes of an N-D list (as Load)
    more_checks: tuple = ()


# ----------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class Stmt(_Node):
    loc: SourceLoc


@dataclass(frozen=True)
class Assign(Stmt):
    EXPRS = ("value",)
    ident: str = ""
    value: Expr = None


@dataclass(frozen=True)
class Store(Stmt):
    EXPRS = ("index", "value")
    EXPR_SEQS = ("more",)
    lst: ListRef = None
    index: Expr = None
    value: Expr = None
    check: int | None = None
    aug_op: str | None = None   # for lst[i] op= value: the Binary op; value is the rhs
    aug_ty: str | None = None   # operand type of the augmented operation
    more: tuple = ()            # the other dimensions' indexes of an N-D list (as Load)
    more_checks: tuple = ()


@dataclass(frozen=True)
class ExprStmt(Stmt):
    EXPRS = ("value",)
    value: Expr = None


@dataclass(frozen=True)
class If(Stmt):
    EXPRS = ("test",)
    BODIES = ("body", "orelse")
    test: Expr = None
    body: tuple = ()
    orelse: tuple = ()


@dataclass(frozen=True)
class While(Stmt):
    EXPRS = ("test",)
    BODIES = ("body",)
    test: Expr = None
    body: tuple = ()


@dataclass(frozen=True)
class ForRange(Stmt):
    EXPRS = ("start", "stop", "step")
    BODIES = ("body",)
    ident: str = ""
    start: Expr = None
    stop: Expr = None
    step: Expr = None
    body: tuple = ()


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    pass


@dataclass(frozen=True)
class ReturnValue(Stmt):
    """``return value`` in a device function (``value`` already converted to its result)."""
    EXPRS = ("value",)
    value: Expr = None


@dataclass(frozen=True)
class Barrier(Stmt):
    pass


@dataclass(frozen=True)
class Print(Stmt):
    """``print(...)``: the scalar values of its slots, in order (codegen/printing.py)."""
    EXPR_SEQS = ("values",)
    values: tuple = ()
    site: object = None          # printing.PrintSite


@dataclass(frozen=True)
class Local:
    """A scalar local (or scalar parameter copied into a local)."""
    pyname: str
    ident: str
    ty: str
    param: bool = False


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple            # of (pyname, type) in order, type a scalar str or ListType
    param_idents: tuple      # WGSL identifiers, same order
    locals: tuple            # of Local (parameters first)
    lists: tuple             # of ListRef: parameters in order, then shared arrays
    body: tuple              # of Stmt
    uses: frozenset          # names of features used: 'ThreadIdx', 'barrier', 'shared', ...
    #: the device functions it calls, directly or not (``functions.FuncSpec``), callees first
    functions: tuple = ()


def all_bodies(kernel: Kernel):
    """The kernel's body, then the body of each device function it calls."""
    yield kernel.body
    for spec in kernel.functions:
        yield spec.body.body


def walk_stmts(stmts):
    """Yield every statement, depth first."""
    for s in stmts:
        yield s
        for body in s.bodies():
            yield from walk_stmts(body)


def walk_expr(e):
    """Yield ``e`` and every expression inside it, depth first."""
    yield e
    for c in e.children():
        yield from walk_expr(c)


def walk_stmt_exprs(stmts):
    """Yield every expression of every statement (nested blocks included), depth first."""
    for s in walk_stmts(stmts):
        for e in s.children():
            yield from walk_expr(e)
