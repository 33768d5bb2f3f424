"""The vector types ``vec2 vec3 vec4`` (floats) and ``ivec2 ivec3 ivec4`` (ints) as Python classes,
and the vector functions, for plain-Python calls and ``simulate`` (docs/language.md, "Vectors").

A vector is a small mutable value: ``vec3(x, y, z)`` or ``vec3(s)`` (every component ``s``),
components ``.x .y .z .w`` and ``v[k]`` (read and assigned), ``+ -`` between vectors of one
type, ``*`` and ``/`` by a scalar on either side, ``*`` component-wise between vectors of one
type, unary ``-`` and ``abs()``; ``math.floor``/``math.ceil``/``round`` apply per component.
Float vectors hold Python floats (the plain-Python run computes in float64, as for ``float``);
int vectors hold Python ints. Comparisons (``== != < <= > >=``) raise ``TypeError``: they have
no single meaning for vectors (the hint names the component-wise way), and kernels refuse them
alike.

The functions (``dot cross length length_sq normalize distance`` and the component-wise
``abs min max clamp floor ceil sqrt exp log sin cos``) take vectors, or any sequence of 2 to 4
numbers (a row of an ``(n, 3)`` numpy array, read as a float vector); the component-wise ones
given only scalars keep their ``math``/builtin meaning, so importing them does not change what
a scalar call does.

``VecList`` is how a plain-Python run sees an ``(n, k)`` (or ``(h, w, k)``) numpy array passed
for a ``list[veck]`` parameter: ``p[i]`` is a vector whose components *are* the row (so
``p[i].y = 0.0`` and ``p[i] += v`` write the array), and ``p[i] = v`` stores the components.
"""

from __future__ import annotations

import builtins
import math
import numbers

_NAMES = "xyzw"


def _is_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, _Vec)


class _Vec:
    """The common behaviour of the six vector classes (``_N`` components of kind ``_KIND``)."""
    __slots__ = ("_c",)
    _N = 0
    _KIND = "f"          # 'f': float components, 'i': int components
    __hash__ = None      # mutable, as a list is
    __array_ufunc__ = None    # numpy defers to our operators (2.0 * v stays a vector)

    def __init__(self, *values):
        n = self._N
        if len(values) == 1 and isinstance(values[0], _Vec):        # a copy / conversion
            other = values[0]
            if other._N != n or (self._KIND == "i" and other._KIND == "f"):
                raise TypeError(f"{type(self).__name__}() cannot take a "
                                f"{type(other).__name__}")
            values = tuple(other)
        if len(values) == 1 and _is_scalar(values[0]):
            values = values * n
        if len(values) != n:
            raise TypeError(f"{type(self).__name__}() takes 1 or {n} numbers, got "
                            f"{len(values)} arguments (write {type(self).__name__}("
                            f"{', '.join(_NAMES[:n])}) or {type(self).__name__}(s))")
        self._c = [self._convert(v) for v in values]

    @classmethod
    def _convert(cls, value):
        if not _is_scalar(value):
            raise TypeError(f"{cls.__name__}() components are numbers, not "
                            f"{type(value).__name__}")
        if cls._KIND == "f":
            return float(value)
        if isinstance(value, float) or (not isinstance(value, numbers.Integral)):
            raise TypeError(f"{cls.__name__} holds ints, not the float {value!r} (convert with "
                            f"int(...), or use vec{cls._N})")
        return int(value)

    @classmethod
    def _view(cls, storage):
        """A vector whose components are ``storage`` (a numpy row): writes go through."""
        v = object.__new__(cls)
        v._c = storage
        return v

    @classmethod
    def _of(cls, values):
        v = object.__new__(cls)
        v._c = [cls._convert(x) for x in values]
        return v

    # -- components ------------------------------------------------------------------------
    def _get(self, k):
        value = self._c[k]
        return float(value) if self._KIND == "f" else int(value)

    def _index(self, k) -> int:
        if not isinstance(k, numbers.Integral) or isinstance(k, bool):
            raise TypeError(f"{type(self).__name__} indices are ints, not {type(k).__name__}")
        n = self._N
        if not -n <= k < n:
            raise IndexError(f"component index {k} is out of range for {type(self).__name__} "
                             f"(0 .. {n - 1})")
        return int(k) % n

    def __getitem__(self, k):
        return self._get(self._index(k))

    def __setitem__(self, k, value):
        self._c[self._index(k)] = self._convert(value)

    def __len__(self) -> int:
        return self._N

    def __iter__(self):
        return (self._get(k) for k in range(self._N))

    def __array__(self, dtype=None, copy=None):
        import numpy
        return numpy.array(list(self), dtype=dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(c) for c in self)})"

    # -- arithmetic --------------------------------------------------------------------------
    def _same(self, other, op: str):
        if type(other) is not type(self):
            name = type(self).__name__
            other_name = type(other).__name__
            hint = (f"write {name}(s) for a vector of equal components" if _is_scalar(other)
                    else f"convert one side so both are {name}")
            raise TypeError(f"unsupported operand types for {op}: '{name}' and "
                            f"'{other_name}' ({hint})")
        return other

    def _scalar(self, s, op: str):
        if not _is_scalar(s):
            return None
        if self._KIND == "i" and not isinstance(s, numbers.Integral):
            raise TypeError(f"{type(self).__name__} {op} a float is not an int vector (use "
                            f"vec{self._N}(...) of the components)")
        return s

    def __add__(self, other):
        o = self._same(other, "+")
        return self._of(a + b for a, b in zip(self, o))

    def __sub__(self, other):
        o = self._same(other, "-")
        return self._of(a - b for a, b in zip(self, o))

    def __mul__(self, other):
        s = self._scalar(other, "*")
        if s is not None:
            return self._of(a * s for a in self)
        o = self._same(other, "*")
        return self._of(a * b for a, b in zip(self, o))

    def __rmul__(self, other):
        s = self._scalar(other, "*")
        if s is None:
            return NotImplemented
        return self._of(s * a for a in self)

    def __truediv__(self, other):
        self._no_int_div()
        if not _is_scalar(other):
            return NotImplemented
        return self._of(a / other for a in self)

    def __rtruediv__(self, other):
        self._no_int_div()
        if not _is_scalar(other):
            return NotImplemented
        return self._of(other / a for a in self)

    def _no_int_div(self):
        if self._KIND == "i":
            raise TypeError(f"'/' of an {type(self).__name__} would give floats: convert to "
                            f"vec{self._N}(v.x, ...) first")

    def __neg__(self):
        return self._of(-a for a in self)

    def __pos__(self):
        return self._of(self)

    def __abs__(self):
        return self._of(builtins.abs(a) for a in self)

    def __floor__(self):
        return self._of(math.floor(a) for a in self)

    def __ceil__(self):
        return self._of(math.ceil(a) for a in self)

    def _refuse(self, other):
        raise TypeError(f"vectors are not compared as a whole ({type(self).__name__}): compare "
                        "components (a.x == b.x and a.y == b.y ...) or use "
                        "length(a - b) < tolerance")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __bool__(self):
        raise TypeError(f"a {type(self).__name__} has no truth value: test components "
                        "(v.x != 0.0) or length(v)")


def _component(k: int):
    def get(self):
        return self._get(k)

    def set_(self, value):
        self._c[k] = self._convert(value)
    return property(get, set_, doc=f"component {k} ({_NAMES[k]})")


def _make(name: str, n: int, kind: str) -> type:
    namespace = {"__slots__": (), "_N": n, "_KIND": kind,
                 "__doc__": f"A {n}-vector of {'floats' if kind == 'f' else 'ints'}: "
                            f"{name}({', '.join(_NAMES[:n])}) or {name}(s)."}
    for k in range(n):
        namespace[_NAMES[k]] = _component(k)
    cls = type(name, (_Vec,), namespace)
    cls.__module__ = __name__
    return cls


vec2 = _make("vec2", 2, "f")
vec3 = _make("vec3", 3, "f")
vec4 = _make("vec4", 4, "f")
ivec2 = _make("ivec2", 2, "i")
ivec3 = _make("ivec3", 3, "i")
ivec4 = _make("ivec4", 4, "i")

#: the classes by name, and (components, kind) -> class
VECTOR_TYPES = {cls.__name__: cls for cls in (vec2, vec3, vec4, ivec2, ivec3, ivec4)}
_BY_SHAPE = {(cls._N, cls._KIND): cls for cls in VECTOR_TYPES.values()}


# -------------------------------------------------------------------------------- functions
def _vec(value, fn: str):
    """``value`` as a vector: itself, or a sequence of 2..4 numbers as a float vector."""
    if isinstance(value, _Vec):
        return value
    try:
        n = len(value)
    except TypeError:
        raise TypeError(f"{fn}() takes vectors, not {type(value).__name__}") from None
    if n not in (2, 3, 4):
        raise TypeError(f"{fn}() takes vectors of 2 to 4 components, not a sequence of {n}")
    return _BY_SHAPE[(n, "f")]._of(float(x) for x in value)


def _pair(a, b, fn: str):
    a, b = _vec(a, fn), _vec(b, fn)
    if type(a) is not type(b):
        raise TypeError(f"{fn}() takes two vectors of one type, not {type(a).__name__} and "
                        f"{type(b).__name__}")
    return a, b


def dot(a, b):
    """The dot product: sum of a[k] * b[k]."""
    a, b = _pair(a, b, "dot")
    return sum(x * y for x, y in zip(a, b))


def cross(a, b):
    """The cross product of two 3-vectors."""
    a, b = _pair(a, b, "cross")
    if len(a) != 3:
        raise TypeError(f"cross() takes 3-vectors, not {type(a).__name__}")
    return a._of((a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x))


def length_sq(v):
    """dot(v, v)."""
    v = _vec(v, "length_sq")
    return sum(x * x for x in v)


def length(v):
    """The Euclidean length, sqrt(dot(v, v)) (a float also for int vectors)."""
    return math.sqrt(length_sq(v))


def distance(a, b):
    """length(a - b)."""
    a, b = _pair(a, b, "distance")
    return length(a - b)


def normalize(v):
    """v / length(v) (a zero vector gives NaN components, as on the device)."""
    v = _vec(v, "normalize")
    if v._KIND == "i":
        raise TypeError(f"normalize() takes float vectors, not {type(v).__name__}")
    n = length(v)
    return v._of(x / n if n else math.nan for x in v)


def _map(fn_name: str, scalar_fn, float_only: bool = True):
    def apply(v):
        if not isinstance(v, _Vec) and _is_scalar(v):
            return scalar_fn(v)
        v = _vec(v, fn_name)
        if float_only and v._KIND == "i":
            raise TypeError(f"{fn_name}() of an {type(v).__name__}: convert to "
                            f"vec{v._N}(...) first")
        return v._of(scalar_fn(x) for x in v)
    apply.__name__ = apply.__qualname__ = fn_name
    apply.__doc__ = (f"{fn_name} of a scalar, or of each component of a vector")
    return apply


sqrt = _map("sqrt", math.sqrt)
exp = _map("exp", math.exp)
log = _map("log", math.log)
sin = _map("sin", math.sin)
cos = _map("cos", math.cos)
floor = _map("floor", math.floor, float_only=False)
ceil = _map("ceil", math.ceil, float_only=False)


def abs(v):  # noqa: A001 - the component-wise form of the builtin
    """abs of a scalar (the builtin), or of each component of a vector."""
    return builtins.abs(v)


def _fold(fn_name: str, pick):
    def apply(*args, **kwargs):
        if kwargs or not any(isinstance(a, _Vec) for a in args):
            return pick(*args, **kwargs)
        if len(args) < 2:
            raise TypeError(f"{fn_name}() of vectors takes two or more vectors")
        first = args[0] if isinstance(args[0], _Vec) else None
        vecs = [_vec(a, fn_name) if not _is_scalar(a) else a for a in args]
        ref = first if first is not None else next(a for a in vecs if isinstance(a, _Vec))
        for a in vecs:
            if not isinstance(a, _Vec) or type(a) is not type(ref):
                raise TypeError(f"{fn_name}() takes vectors of one type ({type(ref).__name__}"
                                f"); write {type(ref).__name__}(s) for a scalar")
        return ref._of(pick(*cs) for cs in zip(*vecs))
    apply.__name__ = apply.__qualname__ = fn_name
    apply.__doc__ = (f"builtins.{fn_name} of scalars, or component-wise of vectors of one "
                     "type")
    return apply


min = _fold("min", builtins.min)  # noqa: A001
max = _fold("max", builtins.max)  # noqa: A001


def clamp(v, lo, hi):
    """min(max(v, lo), hi), component-wise for vectors (lo and hi: vectors of v's type or
    scalars)."""
    if not isinstance(v, _Vec):
        return builtins.min(builtins.max(v, lo), hi)
    lo = lo if isinstance(lo, _Vec) else type(v)(lo)
    hi = hi if isinstance(hi, _Vec) else type(v)(hi)
    return min(max(v, lo), hi)


# ------------------------------------------------------------------ arrays in plain Python
class VecList:
    """An ``(n, k)`` or ``(h, w, k)`` numpy array seen as a list of ``cls`` vectors (module
    docstring); ``p[i]`` (or ``p[i][j]``, ``p[i, j]``) is a vector viewing that row."""
    __slots__ = ("array", "cls")

    def __init__(self, array, cls):
        self.array, self.cls = array, cls

    def __len__(self) -> int:
        return len(self.array)

    @property
    def shape(self) -> tuple:
        return self.array.shape[:-1]

    def __getitem__(self, index):
        row = self.array[index]
        if row.ndim == 1:
            return self.cls._view(row)
        return VecList(row, self.cls)

    def __setitem__(self, index, value):
        if not isinstance(value, self.cls):
            raise TypeError(f"a list[{self.cls.__name__}] element takes a {self.cls.__name__}, "
                            f"not {type(value).__name__}")
        self.array[index] = list(value)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def _vector_list_depth(annotation):
    """(depth, class) of ``list[vec3]`` (1) or ``list[list[vec3]]`` (2), else None."""
    depth = 0
    while getattr(annotation, "__origin__", None) is list and getattr(annotation, "__args__", ()):
        annotation, depth = annotation.__args__[0], depth + 1
    matrix = isinstance(annotation, type) and hasattr(annotation, "_plain_list")
    if matrix or (depth and isinstance(annotation, type) and issubclass(annotation, _Vec)):
        return depth, annotation
    return None


class RowVecList:
    """A Python list of rows of ``k`` numbers (``[[x, y, z], ...]``, nested once more for
    ``list[list[vec3]]``) seen as a list of ``cls`` vectors: ``p[i]`` views row ``i`` (its
    writes go into the row list), ``p[i] = v`` fills that row in place."""
    __slots__ = ("rows", "cls", "depth")

    def __init__(self, rows: list, cls, depth: int = 1):
        self.rows, self.cls, self.depth = rows, cls, depth

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def shape(self) -> tuple:
        return (len(self.rows),) if self.depth == 1 else (len(self.rows), len(self.rows[0]))

    def __getitem__(self, index):
        if isinstance(index, tuple):
            first, *rest = index
            out = self[first]
            return out[tuple(rest) if len(rest) > 1 else rest[0]] if rest else out
        row = self.rows[index]
        if self.depth == 1:
            return self.cls._view(row)
        return RowVecList(row, self.cls, self.depth - 1)

    def __setitem__(self, index, value):
        if isinstance(index, tuple):
            *head, last = index
            (self[tuple(head) if len(head) > 1 else head[0]])[last] = value
            return
        if self.depth != 1 or not isinstance(value, self.cls):
            raise TypeError(f"a list[{self.cls.__name__}] element takes a {self.cls.__name__}, "
                            f"not {type(value).__name__}")
        self.rows[index][:] = [self.cls._convert(c) for c in value]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def _rows_of(value, depth: int, n: int) -> bool:
    """``value`` is a list nested ``depth`` levels whose first element is a row of ``n``."""
    for _ in range(depth):
        if not isinstance(value, list) or not value:
            return False
        value = value[0]
    return isinstance(value, list) and len(value) == n


def vector_list_params(fn) -> tuple:
    """The ``(position, depth, class)`` of ``fn``'s ``list[veck]`` parameters (depth 1 or 2)
    and ``veck`` parameters (depth 0); annotations that cannot be evaluated count as none."""
    import inspect
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
        names = list(inspect.signature(fn).parameters)
    except Exception:   # noqa: BLE001 - an annotation the plain run need not understand
        return ()
    out = []
    for pos, name in enumerate(names):
        hint = hints.get(name)
        found = _vector_list_depth(hint)
        if found is not None:
            out.append((pos, *found))
        elif isinstance(hint, type) and issubclass(hint, _Vec):
            out.append((pos, 0, hint))          # a vector parameter (depth 0)
    return tuple(out)


def plain_args(params: tuple, args: tuple) -> tuple:
    """``args`` with each numpy array passed for a ``list[veck]`` parameter (``params`` from
    ``vector_list_params``) of trailing shape ``(k,)`` seen as a ``VecList``, and each list of
    rows of ``k`` numbers as a ``RowVecList`` (lists of vector objects are lists already);
    ``veck`` parameters given as ``k`` numbers as a ``veck``."""
    if not params:
        return args
    args = list(args)
    for pos, depth, cls in params:
        a = args[pos] if pos < len(args) else None
        if hasattr(cls, "_plain_list"):          # a matrix class (cthreads.lang.matrices)
            if pos < len(args):
                args[pos] = cls._plain_list(a, depth)
            continue
        if depth == 0:
            # a vec3 parameter given as n numbers (a tuple, a list, a numpy row), which the
            # device launch takes too: the plain run sees the vector
            if not isinstance(a, _Vec) and isinstance(a, (tuple, list)) or (
                    getattr(a, "shape", None) == (cls._N,)):
                try:
                    args[pos] = cls(*a)
                except TypeError:
                    pass                # not n numbers: left for Python to refuse
            continue
        shape = getattr(a, "shape", None)
        if shape is not None and hasattr(a, "dtype") and len(shape) == depth + 1 and \
                shape[-1] == cls._N:
            args[pos] = VecList(a, cls)
        elif _rows_of(a, depth, cls._N):
            args[pos] = RowVecList(a, cls, depth)
    return tuple(args)


__all__ = ["vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "dot", "cross", "length",
           "length_sq", "normalize", "distance", "abs", "min", "max", "clamp", "floor", "ceil",
           "sqrt", "exp", "log", "sin", "cos", "VECTOR_TYPES", "VecList", "RowVecList"]
