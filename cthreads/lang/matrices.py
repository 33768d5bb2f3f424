"""The matrix types ``mat22 mat33 mat44`` (square, of floats) as Python classes, and the matrix
functions ``transpose determinant inverse outer``, for plain-Python calls and ``simulate``
(docs/language.md, "Matrices").

A matrix is a small mutable value: ``mat33(r0, r1, r2)`` (rows as ``vec3`` or sequences of 3
numbers), ``mat33(s)`` (``s`` on the diagonal, zeros elsewhere), ``mat33(9 numbers)`` (row by
row) or ``mat33(m)`` (a copy). ``m[r, c]`` reads and assigns an entry, ``m[r]`` is row ``r`` as a
new ``vec3`` (``m[r] = v`` stores one). ``+ -`` between matrices of one size, ``*`` and ``/`` by a
scalar on either side, unary ``-``; ``m @ v`` / ``v @ m`` (a vector of the matrix's size) and
``m @ m``; comparisons raise ``TypeError`` (kernels refuse them alike). The entries are Python
floats (the plain-Python run computes in float64, as for ``float``).

``inverse`` of a singular matrix cannot raise on a device: it is the adjugate times ``1/det``
with ``1/0.0`` the IEEE ``inf`` (signed as the zero), so its entries are ``inf``/``-inf``/``nan``
(``nan`` where the adjugate's entry is 0) -- the same here and on the device (numpy raises
``LinAlgError``).

``MatList`` is how a plain-Python run sees an ``(n, k, k)`` numpy array passed for a
``list[matkk]`` parameter: ``p[i]`` is a matrix whose entries *are* the array's (so
``p[i][r, c] = x`` writes the array), ``p[i] = m`` stores all entries.
"""

from __future__ import annotations

import math
import numbers

from . import matrix_formulas as formulas
from .vectors import VECTOR_TYPES, _Vec


def _is_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (_Vec, _Mat))


class _PyOps:
    """Python float arithmetic for ``matrix_formulas``."""
    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def sub(a, b):
        return a - b

    @staticmethod
    def mul(a, b):
        return a * b

    @staticmethod
    def neg(a):
        return -a

    @staticmethod
    def keep(a):
        return a


def _ieee_div(a: float, b: float) -> float:
    """``a / b`` with IEEE results for a zero divisor (as on the device)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


class _Mat:
    """The common behaviour of the matrix classes (``_N x _N`` float entries)."""
    __slots__ = ("_c",)
    _N = 0
    __hash__ = None
    __array_ufunc__ = None       # numpy defers to our operators (2.0 * m stays a matrix)

    def __init__(self, *values):
        n, name = self._N, type(self).__name__
        if len(values) == 1 and isinstance(values[0], _Mat):
            if values[0]._N != n:
                raise TypeError(f"{name}() cannot take a {type(values[0]).__name__}")
            self._c = list(values[0]._c)
            return
        if len(values) == 1 and _is_scalar(values[0]):
            s = float(values[0])
            self._c = [s if r == c else 0.0 for r in range(n) for c in range(n)]
            return
        if len(values) == n * n and all(_is_scalar(v) for v in values):
            self._c = [float(v) for v in values]
            return
        if len(values) == n:
            entries = []
            for row in values:
                if isinstance(row, _Vec) and (row._N != n or row._KIND != "f"):
                    raise TypeError(f"{name}() takes rows of vec{n}, not "
                                    f"{type(row).__name__}")
                try:
                    row = list(row)
                except TypeError:
                    row = None
                if row is None or len(row) != n or not all(_is_scalar(x) for x in row):
                    break
                entries.extend(float(x) for x in row)
            else:
                self._c = entries
                return
        raise TypeError(f"{name}() takes {n} rows (vec{n}), one number (the diagonal) or "
                        f"{n * n} numbers (row by row); got {len(values)} arguments")

    @classmethod
    def _view(cls, storage):
        """A matrix whose entries are ``storage`` (a flat numpy view): writes go through."""
        m = object.__new__(cls)
        m._c = storage
        return m

    @classmethod
    def _plain_list(cls, array, depth: int):
        """``array`` for a ``list[matkk]`` parameter of a plain-Python run (``MatList``); for
        a ``matkk`` parameter (``depth`` 0), a ``(k, k)`` array or nested lists as a matrix,
        as a launch takes them."""
        if depth:
            return matrix_list(array, depth, cls)
        if isinstance(array, _Mat) or _is_scalar(array):
            return array
        try:
            return cls(*[x for row in array for x in row])
        except TypeError:
            return array                 # not a square table: the kernel's own error

    @classmethod
    def _of(cls, values):
        m = object.__new__(cls)
        m._c = [float(x) for x in values]
        return m

    def _entries(self) -> list:
        return [float(x) for x in self._c]

    # -- entries and rows ------------------------------------------------------------------
    def _one(self, k, what: str) -> int:
        n = self._N
        if not isinstance(k, numbers.Integral) or isinstance(k, bool):
            raise TypeError(f"{type(self).__name__} {what} indices are ints, not "
                            f"{type(k).__name__}")
        if not -n <= k < n:
            raise IndexError(f"{what} index {k} is out of range for {type(self).__name__} "
                             f"(0 .. {n - 1})")
        return int(k) % n

    def __getitem__(self, key):
        n = self._N
        if isinstance(key, tuple):
            if len(key) != 2:
                raise TypeError(f"{type(self).__name__} takes m[r, c] or m[r]")
            return float(self._c[self._one(key[0], "row") * n + self._one(key[1], "column")])
        r = self._one(key, "row")
        return VECTOR_TYPES[f"vec{n}"]._of(self._c[r * n:(r + 1) * n])

    def __setitem__(self, key, value):
        n = self._N
        if isinstance(key, tuple):
            if len(key) != 2:
                raise TypeError(f"{type(self).__name__} takes m[r, c] or m[r]")
            if not _is_scalar(value):
                raise TypeError(f"an entry of a {type(self).__name__} is a number, not "
                                f"{type(value).__name__}")
            self._c[self._one(key[0], "row") * n + self._one(key[1], "column")] = float(value)
            return
        r = self._one(key, "row")
        if not (isinstance(value, _Vec) and value._N == n and value._KIND == "f"):
            raise TypeError(f"a row of a {type(self).__name__} takes a vec{n}, not "
                            f"{type(value).__name__}")
        for c in range(n):
            self._c[r * n + c] = value[c]

    def __len__(self) -> int:
        return self._N

    def __iter__(self):
        return (self[r] for r in range(self._N))

    def __array__(self, dtype=None, copy=None):
        import numpy
        return numpy.array(self._entries(), dtype=dtype).reshape(self._N, self._N)

    def __repr__(self) -> str:
        rows = ", ".join("(" + ", ".join(repr(x) for x in self[r]) + ")"
                         for r in range(self._N))
        return f"{type(self).__name__}({rows})"

    # -- arithmetic --------------------------------------------------------------------------
    def _same(self, other, op: str):
        if type(other) is not type(self):
            name = type(self).__name__
            hint = (f"write {name}(s) for s on the diagonal" if _is_scalar(other)
                    else f"convert one side so both are {name}")
            raise TypeError(f"unsupported operand types for {op}: '{name}' and "
                            f"'{type(other).__name__}' ({hint})")
        return other

    def __add__(self, other):
        o = self._same(other, "+")
        return self._of(a + b for a, b in zip(self._entries(), o._entries()))

    def __sub__(self, other):
        o = self._same(other, "-")
        return self._of(a - b for a, b in zip(self._entries(), o._entries()))

    def __mul__(self, other):
        if _is_scalar(other):
            return self._of(a * other for a in self._entries())
        raise TypeError(f"unsupported operand types for *: '{type(self).__name__}' and "
                        f"'{type(other).__name__}' (matrices take * by a scalar; the "
                        "matrix product is @)")

    def __rmul__(self, other):
        if _is_scalar(other):
            return self._of(other * a for a in self._entries())
        return NotImplemented

    def __truediv__(self, other):
        if _is_scalar(other):
            return self._of(a / other for a in self._entries())
        return NotImplemented

    def __neg__(self):
        return self._of(-a for a in self._entries())

    def __pos__(self):
        return self._of(self._entries())

    def __matmul__(self, other):
        n = self._N
        if type(other) is type(self):
            return self._of(formulas.matmul(self._entries(), other._entries(), n, _PyOps))
        if isinstance(other, _Vec) and other._N == n and other._KIND == "f":
            return type(other)._of(formulas.mat_vec(self._entries(), list(other), n, _PyOps))
        raise TypeError(f"unsupported operand types for @: '{type(self).__name__}' and "
                        f"'{type(other).__name__}' (a {type(self).__name__} takes @ with a "
                        f"{type(self).__name__} or a vec{n})")

    def __rmatmul__(self, other):
        n = self._N
        if isinstance(other, _Vec) and other._N == n and other._KIND == "f":
            return type(other)._of(formulas.vec_mat(list(other), self._entries(), n, _PyOps))
        return NotImplemented

    def _refuse(self, other):
        raise TypeError(f"matrices are not compared as a whole ({type(self).__name__}): "
                        "compare entries (a[0, 0] == b[0, 0] ...) or a norm of the difference "
                        "(determinant, or the entries of a - b, against a tolerance)")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse

    def __bool__(self):
        raise TypeError(f"a {type(self).__name__} has no truth value: test entries "
                        "(m[0, 0] != 0.0) or determinant(m)")


def _make(n: int) -> type:
    name = f"mat{n}{n}"
    namespace = {"__slots__": (), "_N": n,
                 "__doc__": f"An {n}x{n} matrix of floats: {name}(r0, ..., r{n - 1}) of vec{n} "
                            f"rows, {name}(s) (s on the diagonal) or {n * n} numbers."}
    cls = type(name, (_Mat,), namespace)
    cls.__module__ = __name__
    return cls


mat22 = _make(2)
mat33 = _make(3)
mat44 = _make(4)

#: the classes by name
MATRIX_TYPES = {cls.__name__: cls for cls in (mat22, mat33, mat44)}
_BY_N = {cls._N: cls for cls in MATRIX_TYPES.values()}


# -------------------------------------------------------------------------------- functions
def _mat(value, fn: str) -> _Mat:
    if isinstance(value, _Mat):
        return value
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) == 2 and shape[0] == shape[1] and shape[0] in _BY_N:
        return _BY_N[shape[0]]._of(float(x) for row in value for x in row)
    raise TypeError(f"{fn}() takes a mat22, mat33 or mat44, not {type(value).__name__}")


def transpose(m):
    """The transpose of a matrix (rows become columns)."""
    m = _mat(m, "transpose")
    return m._of(formulas.transpose(m._entries(), m._N))


def determinant(m) -> float:
    """The determinant (cofactor expansion; the device evaluates the same formula)."""
    m = _mat(m, "determinant")
    return formulas.determinant(m._entries(), m._N, _PyOps)


def inverse(m):
    """The inverse: the adjugate times 1/determinant(m). A singular matrix gives inf/nan
    entries (module docstring), as on the device; nothing raises."""
    m = _mat(m, "inverse")
    adj, det = formulas.adjugate_det(m._entries(), m._N, _PyOps)
    scale = _ieee_div(1.0, det)
    return m._of(a * scale for a in adj)          # 0 * inf is nan, as on the device


def outer(u, v):
    """The outer product of two vectors of one size: m[r, c] = u[r] * v[c]."""
    if not (isinstance(u, _Vec) and isinstance(v, _Vec) and u._N == v._N):
        raise TypeError(f"outer() takes two vectors of one size, not {type(u).__name__} and "
                        f"{type(v).__name__}")
    return _BY_N[u._N]._of(float(a) * float(b) for a in u for b in v)


# ------------------------------------------------------------------ arrays in plain Python
class MatList:
    """An ``(n, k, k)`` (or ``(h, w, k, k)``) C-contiguous numpy array seen as a list of
    ``cls`` matrices (module docstring)."""
    __slots__ = ("array", "cls")

    def __init__(self, array, cls):
        self.array, self.cls = array, cls

    def __len__(self) -> int:
        return len(self.array)

    @property
    def shape(self) -> tuple:
        return self.array.shape[:-2]

    def _depth(self, index) -> int:
        """How many of ``index``'s indexes fall past the list's own dimensions (0: an element
        or a sub-list, 1: a row, 2: an entry)."""
        k = len(index) if isinstance(index, tuple) else 1
        return max(0, k - (self.array.ndim - 2))

    def __getitem__(self, index):
        part = self.array[index]
        depth = self._depth(index)
        if depth == 2:
            return float(part)
        if depth == 1:                       # p[i, r]: a row, a new vector (as m[r])
            return VECTOR_TYPES[f"vec{self.cls._N}"]._of(part)
        if part.ndim == 2:
            return self.cls._view(part.reshape(-1))
        return MatList(part, self.cls)

    def __setitem__(self, index, value):
        depth = self._depth(index)
        n = self.cls._N
        if depth == 2 and _is_scalar(value):
            self.array[index] = float(value)
        elif depth == 1 and isinstance(value, _Vec) and value._N == n and value._KIND == "f":
            self.array[index] = list(value)
        elif depth == 0 and isinstance(value, self.cls):
            self.array[index] = value.__array__()
        else:
            want = ("a number", f"a vec{n}", f"a {self.cls.__name__}")[2 - depth]
            raise TypeError(f"this part of a list[{self.cls.__name__}] takes {want}, not "
                            f"{type(value).__name__}")

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def matrix_list(array, depth: int, cls):
    """``array`` seen as a ``MatList`` when it is a numpy array of ``depth`` leading
    dimensions and trailing shape ``(k, k)``; else ``array`` unchanged."""
    shape = getattr(array, "shape", None)
    if shape is not None and hasattr(array, "dtype") and len(shape) == depth + 2 and \
            tuple(shape[-2:]) == (cls._N, cls._N):
        return MatList(array, cls)
    return array


__all__ = ["mat22", "mat33", "mat44", "transpose", "determinant", "inverse", "outer",
           "MATRIX_TYPES", "MatList", "matrix_list"]
