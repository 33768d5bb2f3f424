"""Kernel types: annotations -> device types, promotion and unification of scalar types.

Scalar types are the names of ``ELEM_TYPES`` rows: ``'bool'``, ``'int'`` (int32), ``'uint32'``,
``'int64'``, ``'float'`` (float32) and ``'float64'``. Annotations spell them as Python's
``bool``, ``int``, ``float`` (the *plain* types, whose width follows the launch's arrays:
``Widths``) or as the width types of ``cthreads.lang.widths`` (``float32`` ... ``uint32``). A list type
is ``ListType(elem)``. Promotion follows numpy for values of fixed types (int32 with int64 gives
int64, uint32 with a signed int gives int64, any int with a float gives that float, two floats
the wider) and Python scalars (literals, module constants) take the type of the value they meet.
"""

from __future__ import annotations

import ast
import builtins
import sys
import typing
from dataclasses import dataclass

from ..lang.arrays import ARRAY_DIMS
from ..lang.widths import WIDTH_TYPES
from .mattypes import matrix_of
from .structtypes import StructType, struct_of
from .vectypes import VecType, vector_of
from .rngtypes import rng_of

@dataclass(frozen=True)
class ElemType:
    """One element type of kernel values, lists and parameters: every spelling of it.

    The compiler reads the WGSL columns; the runtime packs arguments and reads results with the
    host columns. A new element type is a new row of ``ELEM_TYPES``.
    """
    name: str            # the compiler's name: 'int' in 'list[int]'
    python: type         # the Python type of its values
    rank: int            # promotion order (bool < int32, uint32 < int64 < float32 < float64)
    wgsl: str            # WGSL type of a value (locals, expressions)
    storage: str         # WGSL element type in a storage buffer or shared array
    uniform: str         # WGSL field type in the uniform struct (scalar parameters)
    code: str            # struct / array.array code of one element or field on the host
    host_dtype: str      # numpy dtype of the device representation (what a buffer holds)
    array_dtype: str     # numpy dtype a caller's array must have to be taken as it is
    zero: str            # WGSL literal zero of ``wgsl``
    storage_zero: str    # WGSL literal zero of ``storage``
    suffix: str          # WGSL literal suffix ('' for bool: true/false)
    load: str = "{0}"    # a storage element ``{0}`` read as a value
    store: str = "{0}"   # a value ``{0}`` written as a storage element
    from_uniform: str = "{0}"    # a uniform field ``{0}`` read as a value
    size: int = 4        # bytes per element in buffers and per uniform field (its alignment)
    feature: str | None = None   # the device feature a kernel using it needs (None: core)
    kind: str = "i"      # numpy's dtype kind: 'b' bool, 'i' signed, 'u' unsigned, 'f' float
    bits: int = 32       # value bits (bool: 1)
    spelling: str = ""   # the width-type name users write ('' for bool)
    # -- the library helpers the emitter uses for values of this type (codegen/library)
    ops: tuple = ()      # (Python operator, helper) pairs: '/', '//', '%', '**' with its meaning
    identity: str = ""   # the identity helper that keeps a constant expression unevaluated
    opaque: str = ""     # the helper hiding a float from the driver's compiler (fold_guard)
    index: str = ""      # the helper turning an index of this type into WGSL's i32
    widen: str = ""      # the helper converting a value to int64
    int_abs: str = ""    # the helper of int abs (it wraps: abs(-2**31) is -2**31)
    to_int: tuple = ()   # (int type, helper) pairs: a float converted with saturation
    shift_count: str = ""    # a shift count ``{0}`` of this type as the u32 WGSL takes

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def int_range(self) -> tuple:
        """(smallest, largest) value of an int or bool type."""
        if self.kind == "i":
            return -2 ** (self.bits - 1), 2 ** (self.bits - 1) - 1
        return 0, 2 ** self.bits - 1


_FLOAT_OPS = (("truediv", "ct_div_f"), ("floordiv", "ct_floordiv_f"), ("mod", "ct_mod_f"),
              ("pow", "ct_pow_f"))
_FLOAT64_OPS = (("truediv", "ct_div_d"), ("floordiv", "ct_floordiv_d"), ("mod", "ct_mod_d"),
                ("pow", "ct_pow_d"))


def _int_ops(suffix: str) -> tuple:
    return tuple((op, f"ct_{op}_{suffix}") for op in ("floordiv", "mod", "pow"))


ELEM_TYPES = {
    "bool": ElemType("bool", bool, 0, "bool", "u32", "u32", "I", "uint32", "bool", "false",
                     "0u", "", load="({0} != 0u)", store="select(0u, 1u, {0})",
                     from_uniform="{0} != 0u", kind="b", bits=1),
    "int": ElemType("int", int, 1, "i32", "i32", "i32", "i", "int32", "int32", "0i", "0i", "i",
                    spelling="int32", ops=_int_ops("i"), identity="ct_iid", widen="ct_wide_i",
                    int_abs="ct_abs_i", shift_count="bitcast<u32>({0})"),
    "float": ElemType("float", float, 3, "f32", "f32", "f32", "f", "float32", "float32",
                      "0.0f", "0.0f", "f", kind="f", spelling="float32", ops=_FLOAT_OPS,
                      identity="ct_fid", opaque="ct_opaque_f",
                      to_int=(("int", "ct_i32_f"), ("uint32", "ct_u32_f"),
                              ("int64", "ct_i64_f"))),
    "uint32": ElemType("uint32", int, 1, "u32", "u32", "u32", "I", "uint32", "uint32", "0u",
                       "0u", "u", kind="u", spelling="uint32", ops=_int_ops("u"),
                       identity="ct_id_u", index="ct_index_u", widen="ct_wide_u",
                       shift_count="{0}"),
    "int64": ElemType("int64", int, 2, "i64", "i64", "i64", "q", "int64", "int64", "0li",
                      "0li", "li", size=8, feature="shader-int64", bits=64, spelling="int64",
                      ops=_int_ops("l"), identity="ct_id_l", index="ct_index_l",
                      int_abs="ct_abs_l", shift_count="u32({0} & 63li)"),
    "float64": ElemType("float64", float, 4, "f64", "f64", "f64", "d", "float64", "float64",
                        "0.0lf", "0.0lf", "lf", size=8, feature="shader-f64", kind="f",
                        bits=64, spelling="float64", ops=_FLOAT64_OPS, identity="ct_id_d",
                        opaque="ct_opaque_d",
                        to_int=(("int", "ct_i32_d"), ("uint32", "ct_u32_d"),
                                ("int64", "ct_i64_d"))),
    # complex numbers (codegen/complexes.py): a vec2 of the float type, (real, imag), which is
    # numpy's complex64 / complex128 layout exactly
    "complex": ElemType("complex", complex, 5, "vec2<f32>", "vec2<f32>", "vec2<f32>", "ff",
                        "complex64", "complex64", "vec2<f32>()", "vec2<f32>()", "", size=8,
                        kind="c", bits=64, spelling="complex64"),
    "complex128": ElemType("complex128", complex, 6, "vec2<f64>", "vec2<f64>", "vec2<f64>",
                           "dd", "complex128", "complex128", "vec2<f64>()", "vec2<f64>()", "",
                           size=16, feature="shader-f64", kind="c", bits=128,
                           spelling="complex128"),
}
#: how many times a local's inferred type can widen (unknown -> bool -> int -> int64 ->
#: float -> float64 -> complex -> complex128)
LATTICE_HEIGHT = 7

#: annotation names (plain and width types) -> the row they name in a 32-bit launch
ANNOTATION_NAMES = {"bool": "bool", "int": "int", "float": "float", "int32": "int",
                    "float32": "float", "int64": "int64", "float64": "float64",
                    "uint32": "uint32", "complex": "complex", "complex64": "complex",
                    "complex128": "complex128"}
#: numpy dtype names -> the row a numpy array of that dtype matches exactly
DTYPE_ROWS = {row.array_dtype: row.name for row in ELEM_TYPES.values()}


def elem(name: str) -> ElemType:
    """The row of an element type by its compiler name ('int', 'float64', ...)."""
    return ELEM_TYPES[name]


def is_float(ty: str) -> bool:
    return ELEM_TYPES[ty].kind == "f"


@dataclass(frozen=True)
class Widths:
    """What plain ``float`` and ``int`` mean in one compilation: 'float' (float32) or
    'float64', 'int' (int32) or 'int64'."""
    float: str = "float"
    int: str = "int"

    def concrete(self, annotation: str) -> str:
        """The compiler type of an annotation name ('float', 'int32', 'uint32', ...); a
        composite type (``tuple_types.TupleType``) makes its members concrete."""
        if not isinstance(annotation, str):
            return annotation.concrete(self)
        if annotation == "float":
            return self.float
        if annotation == "int":
            return self.int
        if annotation == "complex":         # follows the float width (complex128 in float64)
            return "complex128" if self.float == "float64" else "complex"
        return ANNOTATION_NAMES[annotation]

    @property
    def key(self) -> tuple:
        return (self.float, self.int)


NARROW = Widths()

@dataclass(frozen=True)
class ListType:
    elem: str
    ndim: int = 1        # list[list[float]]: 2; list[list[list[float]]]: 3
    vec: int = 0         # list[vec3]: 3 (elem the component type; codegen/vectors.py)
    mat: int = 0         # list[mat33]: 3 (and vec 9; codegen/matrices.py)
    struct: StructType | None = None     # list[Particle]: vec words per element (structs.py)

    def __str__(self) -> str:
        inner = VecType(self.vec, self.elem).name if self.vec else self.elem
        inner = f"mat{self.mat}{self.mat}" if self.mat else inner
        if self.struct is not None:
            inner = self.struct.name
        return "list[" * self.ndim + inner + "]" * self.ndim

    def with_elem(self, elem: str) -> "ListType":
        return ListType(elem, self.ndim, self.vec, self.mat, self.struct)


#: the most dimensions a list parameter may have
MAX_NDIM = 3


#: value bits of the int types (and bool)
INT_BITS = {row.name: row.bits for row in ELEM_TYPES.values() if row.kind in "biu"}
#: the smallest and largest values of the int types (and bool)
INT_RANGE = {row.name: row.int_range for row in ELEM_TYPES.values() if row.kind in "biu"}


def wrap(value: int, ty: str) -> int:
    """``value`` wrapped to int type ``ty`` (two's complement), as the device computes."""
    bits = INT_BITS[ty]
    value &= (1 << bits) - 1
    if ELEM_TYPES[ty].kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def assignable(ty: str, declared: str) -> bool:
    """True when a ``ty`` value may be stored in a ``declared`` local, parameter, element or
    result: bools and ints into any number, floats into floats (a narrower width rounds or
    wraps, as numpy's element assignment does); never a float into an int."""
    if ty == declared:
        return True
    have, want = elem(ty).kind, elem(declared).kind
    if want == "c":
        return True
    if have == "c":
        return False                  # Python has no implicit complex -> float conversion
    if want == "f":
        return True
    if want in "iu":
        return have in "biu"
    return False


def promote(a: str, b: str) -> str:
    """The type of a binary operation between values of types ``a`` and ``b`` (numpy's rules
    for typed values; bool counts as the other operand's type, or stays bool)."""
    if a == b:
        return a
    ra, rb = ELEM_TYPES[a], ELEM_TYPES[b]
    if ra.kind == "c" or rb.kind == "c":        # the complex of the widest float part
        wide = any(r.name in ("complex128", "float64") for r in (ra, rb))
        return "complex128" if wide else "complex"
    if ra.kind == "b":
        return b
    if rb.kind == "b":
        return a
    if ra.kind == "f" or rb.kind == "f":
        if ra.kind == "f" and rb.kind == "f":
            return a if ra.bits >= rb.bits else b
        return a if ra.kind == "f" else b
    if ra.kind == rb.kind:                        # both signed or both unsigned
        return a if ra.bits >= rb.bits else b
    return "int64"                                # a signed and an unsigned int


def join(a: str | None, b: str) -> str:
    """Least common scalar type of an inferred local's assignments."""
    if a is None:
        return b
    return promote(a, b)


def arith(a: str, b: str) -> str:
    """Result type of ``+ - *`` etc.: bools count as ints."""
    t = promote(a, b)
    return "int" if t == "bool" else t


_SCALAR_OBJECTS = {bool: "bool", int: "int", float: "float", complex: "complex"}
_SCALAR_OBJECTS.update(WIDTH_TYPES)
_NUMPY_NAMES = {"float32", "float64", "int32", "int64", "uint32", "bool_", "complex64",
                "complex128"}


def _scalar_name(obj) -> str | None:
    """The annotation name of a scalar type object: Python's, ours, or numpy's scalar types."""
    name = _SCALAR_OBJECTS.get(obj) if isinstance(obj, type) else None
    if name is None and isinstance(obj, type) and obj.__module__ == "numpy" and \
            obj.__name__ in _NUMPY_NAMES and "numpy" in sys.modules:
        name = "bool" if obj.__name__ == "bool_" else obj.__name__
    return name
_LIST_OBJECTS = (list, typing.List)


class AnnotationError(Exception):
    """Raised with a node and a message; the caller turns it into a located TypeError."""

    def __init__(self, node, message, hint=None):
        super().__init__(message)
        self.node, self.message, self.hint = node, message, hint


def resolve_annotation(node: ast.AST, lookup) -> str | ListType:
    """Turn an annotation expression into an annotation name (``ANNOTATION_NAMES``) or a
    ``ListType`` of one; ``lookup(name)`` returns the global object.

    Accepts ``int float bool``, the width types, ``list[T]``, ``typing.List[T]``,
    ``Array1D[T]`` ... ``Array3D[T]`` (``cthreads/lang/arrays.py``: ``list[T]`` ... in a form type
    checkers understand) and string annotations of the same (as ``from __future__ import
    annotations`` produces).
    """
    hint = ("annotate with int, float, bool, list[int], list[float] or list[bool] (or a width "
            "type: float32, float64, int32, int64, uint32)")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise AnnotationError(node, f"cannot read the annotation {node.value!r}", hint)
        ast.copy_location(inner, node)
        for sub in ast.walk(inner):
            ast.copy_location(sub, node)
        return resolve_annotation(inner, lookup)
    obj = _resolve_object(node, lookup)
    _reject_tuple(node, obj, lookup)
    if obj is not None and not isinstance(obj, _Missing):
        name = _scalar_name(obj)
        if name is not None:
            return name
        vector = vector_of(obj) or matrix_of(obj) or rng_of(obj) or struct_of(obj)
        if vector is not None:
            return vector
        if obj in _LIST_OBJECTS:
            raise AnnotationError(node, "a bare 'list' annotation does not say the element type",
                                  "write list[int], list[float] or list[bool]")
        if isinstance(obj, type) and obj in ARRAY_DIMS:
            raise AnnotationError(node, f"a bare '{obj.__name__}' annotation does not say the "
                                  "element type", f"write {obj.__name__}[float] (or int, bool, a "
                                  "width type)")
    if isinstance(node, ast.Subscript):
        base = _resolve_object(node.value, lookup)
        if isinstance(base, type) and base in ARRAY_DIMS:     # Array2D[T] is list[list[T]]
            inner = resolve_annotation(node.slice, lookup)
            if isinstance(inner, ListType):
                raise AnnotationError(node, f"{base.__name__}[...] takes an element type, not a "
                                      f"list", f"write {base.__name__}[float] (or int, bool, a "
                                      "width type)")
            return ListType(inner, ARRAY_DIMS[base])
        if base in _LIST_OBJECTS:
            inner = resolve_annotation(node.slice, lookup)
            if isinstance(inner, ListType):
                if inner.ndim >= MAX_NDIM:
                    raise AnnotationError(node, f"lists of more than {MAX_NDIM} dimensions are "
                                          "not supported in kernels", "pass a 3-D array and "
                                          "fold the other dimensions into one")
                return ListType(inner.elem, inner.ndim + 1, inner.vec, inner.mat, inner.struct)
            if isinstance(inner, StructType):
                return ListType("float", 1, inner.words, struct=inner)       # flat words
            if isinstance(inner, VecType):
                return ListType(inner.elem, 1, inner.n, inner.mat)
            return ListType(inner)
    text = ast.unparse(node) if not isinstance(node, ast.Constant) else repr(node.value)
    raise AnnotationError(node, f"unsupported annotation '{text}'", hint)


#: hint of a tuple annotation anywhere but a device function's result
TUPLE_HINT = ("tuples are only the results of device functions ('-> tuple[float, float]'), "
              "which the caller unpacks: 'a, b = f(x)'; pass and store each member on its own "
              "('a: float, b: float', 'xs: list[float], ys: list[float]', or a "
              "list[list[float]] of shape (n, 2) for pairs)")


def _reject_tuple(node, obj, lookup) -> None:
    """An ``AnnotationError`` for ``tuple`` / ``tuple[...]`` / ``typing.Tuple[...]`` here."""
    if isinstance(node, ast.Subscript):
        obj = _resolve_object(node.value, lookup)
    if obj is tuple or obj is typing.Tuple:
        text = ast.unparse(node)
        raise AnnotationError(node, f"'{text}' is not a type for parameters, locals or list "
                              "elements", TUPLE_HINT)


class _Missing:
    pass


def _resolve_object(node, lookup):
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve_object(node.value, lookup)
        if base is None or isinstance(base, _Missing):
            return base
        return getattr(base, node.attr, _Missing())
    return None


def builtin_lookup(globals_: dict, closure: dict):
    """A name -> object lookup over closure cells, the module's globals and builtins."""
    def lookup(name):
        if name in closure:
            return closure[name]
        if name in globals_:
            return globals_[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _Missing()
    return lookup


MISSING = _Missing
