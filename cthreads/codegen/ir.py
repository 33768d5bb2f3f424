"""The typed kernel IR: frozen dataclasses, each node carrying its Python location.

Expressions carry their scalar type ``ty`` ('bool' | 'int' | 'float'). Operands of binary
nodes are already promoted to the node's operand type by the frontend, so the emitter never
decides types. Names are WGSL-safe identifiers (renaming happened in the frontend); lists are
referred to by their ``ListRef``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .source import SourceLoc


@dataclass(frozen=True)
class ListRef:
    pyname: str          # the Python name (for messages and the bounds-check table)
    ident: str           # WGSL identifier
    elem: str            # 'int' | 'float' | 'bool'
    shared_size: int | None = None   # None for parameters, else the workgroup array length
    atomic: bool = False


# ---------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Expr:
    ty: str
    loc: SourceLoc


@dataclass(frozen=True)
class Const(Expr):
    value: object = None


@dataclass(frozen=True)
class Var(Expr):
    ident: str = ""
    uniform: bool = False     # filled by the uniformity pass via the local table


@dataclass(frozen=True)
class Special(Expr):
    """An index builtin component: e.g. name='GlobalIdx', axis='x'."""
    name: str = ""
    axis: str = "x"


@dataclass(frozen=True)
class Load(Expr):
    lst: ListRef = None
    index: Expr = None
    check: int | None = None


@dataclass(frozen=True)
class Len(Expr):
    lst: ListRef = None


@dataclass(frozen=True)
class Unary(Expr):
    op: str = ""             # 'neg' | 'not' | 'invert'
    operand: Expr = None


@dataclass(frozen=True)
class Binary(Expr):
    op: str = ""             # add sub mul truediv floordiv mod pow bitand bitor bitxor lshift rshift
    left: Expr = None
    right: Expr = None


@dataclass(frozen=True)
class Compare(Expr):
    """One comparison or a chain ``a < b <= c``; ``cmp_types[k]`` is the type compared at k."""
    ops: tuple = ()
    operands: tuple = ()
    cmp_types: tuple = ()


@dataclass(frozen=True)
class BoolOp(Expr):
    op: str = ""             # 'and' | 'or'; operands already converted to ty
    left: Expr = None
    right: Expr = None


@dataclass(frozen=True)
class IfExp(Expr):
    test: Expr = None
    body: Expr = None
    orelse: Expr = None


@dataclass(frozen=True)
class Cast(Expr):
    """Conversion to ``ty``; to 'bool' means Python truthiness, float->int truncates."""
    operand: Expr = None


@dataclass(frozen=True)
class Call(Expr):
    fn: str = ""             # key into builtins.FUNCTIONS
    args: tuple = ()


@dataclass(frozen=True)
class Atomic(Expr):
    op: str = ""             # add sub min max exchange compare_exchange
    lst: ListRef = None
    index: Expr = None
    args: tuple = ()
    check: int | None = None


# ----------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class Stmt:
    loc: SourceLoc


@dataclass(frozen=True)
class Assign(Stmt):
    ident: str = ""
    value: Expr = None


@dataclass(frozen=True)
class Store(Stmt):
    lst: ListRef = None
    index: Expr = None
    value: Expr = None
    check: int | None = None
    aug_op: str | None = None   # for lst[i] op= value: the Binary op; value is the rhs
    aug_ty: str | None = None   # operand type of the augmented operation


@dataclass(frozen=True)
class ExprStmt(Stmt):
    value: Expr = None


@dataclass(frozen=True)
class If(Stmt):
    test: Expr = None
    body: tuple = ()
    orelse: tuple = ()


@dataclass(frozen=True)
class While(Stmt):
    test: Expr = None
    body: tuple = ()


@dataclass(frozen=True)
class ForRange(Stmt):
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
class Barrier(Stmt):
    pass


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


def walk_stmts(stmts):
    """Yield every statement, depth first."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk_stmts(s.body)
            yield from walk_stmts(s.orelse)
        elif isinstance(s, (While, ForRange)):
            yield from walk_stmts(s.body)


def child_exprs(e):
    for name in ("index", "operand", "left", "right", "test", "body", "orelse"):
        v = getattr(e, name, None)
        if isinstance(v, Expr):
            yield v
    for name in ("operands", "args"):
        for v in getattr(e, name, ()) or ():
            if isinstance(v, Expr):
                yield v


def walk_expr(e):
    yield e
    for c in child_exprs(e):
        yield from walk_expr(c)


def stmt_exprs(s):
    for name in ("value", "index", "test", "start", "stop", "step"):
        v = getattr(s, name, None)
        if isinstance(v, Expr):
            yield v
