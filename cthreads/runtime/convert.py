"""Checking and packing launch arguments' values: scalars and list elements <-> device bytes.

Which kind of list argument a value is, and what each kind checks about its container (a flat
or nested list, a numpy array, a resident slot), is ``args.py``'s; this module checks scalars
and the elements of flat lists, packs and writes them back, and says how to convert numpy data.

Everything is validated before anything reaches the device, and errors name the parameter, the
element index and the fix. Lists of floats and ints are converted and type-checked in C: small
ones by ``array.array``, long ones by ``struct`` in chunks (faster than ``array.array`` for long
lists, docs/performance.md, "Start-up and argument packing"; and it refuses finite floats beyond
float32's range by itself, where ``array.array`` makes them inf and a second pass had to look);
long lists of floats go to cffi's faster loop first (``packing.py``), which hands back the ones
it cannot take as they are, to the checked ``struct`` path. Bool lists use numpy. numpy is
imported only when first needed, so ``import cthreads.gpu`` and a first small launch stay fast.
The per-element loops below run only on error paths, to name the first offending element.
"""

from __future__ import annotations

import array
import math
import struct
import sys

from ..codegen.types import INT_RANGE
from ..codegen.types import elem as elem_type
from . import complexes, packing
from ..errors import GpuArgumentTypeError, GpuInvalidArgument

F32_MAX = 3.4028234663852886e38          # numpy.finfo(numpy.float32).max
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
#: lists up to this length are checked without numpy
SMALL = 4096

#: elements packed per struct call for long lists (bounds the temporary argument tuple)
CHUNK = 1 << 16
#: lists longer than this are written back WRITE_CHUNK elements at a time (where the old
#: elements no longer fit the cache, docs/performance.md, "The 1M-element list round trip")
CHUNKED_FROM = 1 << 18
WRITE_CHUNK = 4096
# The element-type table (codegen/types.py) gives, per element kind, the array.array / struct
# code of the device representation (``code``), its numpy dtype (``host_dtype``), the dtype a
# caller's numpy array must have (``array_dtype``, no silent conversion) and ``size`` in bytes.


def _np():
    import numpy  # noqa: PLC0415 - deliberately lazy
    return numpy


def is_ndarray(value) -> bool:
    """True for a numpy array (without importing numpy when the caller never did)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


#: numpy dtype -> its name (numpy computes ``dtype.name`` in Python, slowly; a launch looks
#: up each array argument's)
_DTYPE_NAMES: dict = {}


def dtype_name(dtype) -> str:
    """``dtype.name``, cached."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _type_name(v) -> str:
    cls = type(v)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def _show(v) -> str:
    """``v`` for a message: huge ints by their size, long reprs cut short."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**20:
        return f"{'-' if v < 0 else ''}an int of {abs(v).bit_length()} bits"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def check_scalar(value, kind: str, where: str):
    """The device value of a scalar argument (int, float or bool), checked.

    numpy scalars count as the Python value they hold: ``np.float32`` as a float, ``np.int64``
    as an int, ``np.bool_`` as a bool (other numpy scalars are refused). A bool scalar is not
    taken as a number (in lists it is: see ``pack``), and an int is fine for a float.
    """
    given = value
    if type(value).__module__ == "numpy":
        value = _from_numpy_scalar(value, where)
    row = elem_type(kind)
    if row.kind == "c":
        return _complex_scalar(given, value, kind, where)
    if row.kind == "f":
        if value.__class__ is not bool and isinstance(value, (float, int)):
            if kind == "float64":
                try:
                    return float(value)
                except OverflowError:           # an int beyond a double
                    raise _float_range(value, where, kind) from None
            if isinstance(value, int):
                if abs(value) > F32_MAX:        # exact for any int, even one beyond a double
                    raise _float_range(value, where)
                return float(value)
            f = float(value)
            if math.isfinite(f) and abs(f) > F32_MAX:
                raise _float_range(value, where)
            return f
        raise _scalar_type(given, "a float", "float(...)", where)
    if row.kind in "iu":
        if isinstance(value, int) and value.__class__ is not bool:
            lo, hi = INT_RANGE[kind]
            if not lo <= value <= hi:
                raise GpuInvalidArgument(
                    f"{where}: {_show(value)} does not fit in {_int_name(kind)} ({lo}.."
                    f"{hi}); the kernel computes with {row.spelling} values here"
                    f"{_wider_int(kind, value)}")
            return value
        raise _scalar_type(given, "an int", "int(...)", where)
    if kind == "bool":
        if value.__class__ is bool:
            return value
        raise _scalar_type(given, "a bool", "bool(...)", where)
    raise AssertionError(kind)


def _float_range(value, where: str, kind: str = "float") -> GpuInvalidArgument:
    if kind == "float64":
        return GpuInvalidArgument(f"{where}: {_show(value)} is beyond float64's range")
    return GpuInvalidArgument(
        f"{where}: {_show(value)} is beyond float32's range (±{F32_MAX:.4g}); the device "
        "computes in 32-bit floats here: pass a smaller value, or float64 arrays to compute "
        "in float64")


def _int_name(kind: str) -> str:
    return {"int": "a 32-bit int", "int64": "a 64-bit int", "uint32": "a uint32"}[kind]


def _wider_int(kind: str, value) -> str:
    """The way out for an int that fits 64 bits but not ``kind``'s 32."""
    if kind != "int" or not -2**63 <= value < 2**63:
        return ""
    return ("; for 64-bit values pass int64 numpy arrays for the kernel's plain list[int] "
            "parameters (the launch then computes in int64) or annotate the parameter int64")


def _complex_scalar(given, value, kind: str, where: str) -> complex:
    """A complex scalar argument: any Python or numpy number but a bool (a float32 launch
    takes parts within float32's range)."""
    if value.__class__ is bool or not isinstance(value, (complex, float, int)):
        if type(given).__module__ == "numpy" and _is_numpy_number(given, "c"):
            value = complex(given)
        else:
            raise GpuArgumentTypeError(f"{where} expects a complex number, got "
                                       f"{_type_name(given)} {_show(given)}; convert it with "
                                       "complex(...)")
    z = complex(value)
    if kind == "complex":
        for part in (z.real, z.imag):
            if math.isfinite(part) and abs(part) > F32_MAX:
                raise _float_range(part, where)
    return z


def _scalar_type(value, want: str, fix: str, where: str) -> GpuArgumentTypeError:
    hint = (" (bools are not numbers here)" if want != "a bool" and _is_bool_like(value)
            else "")
    way = f"convert it with {fix}"
    if isinstance(value, complex) or _is_numpy_number(value, "c"):
        way = ("complex values are not real numbers: pass the real and imaginary parts "
               "(z.real, z.imag) as two parameters")
    elif want == "an int" and (isinstance(value, float) or _is_numpy_number(value, "f")):
        way = ("convert it with int(...) if it is a whole number (int() drops a fraction, "
               "round() rounds), or declare the parameter float")
    elif want == "a bool" and not hint and (isinstance(value, (int, float))
                                            or _is_numpy_number(value, "iuf")):
        way = "pass a bool that says what True means (e.g. x != 0)"
    return GpuArgumentTypeError(f"{where} expects {want}, got {_type_name(value)} "
                                f"{_show(value)}{hint}; {way}")


def _from_numpy_scalar(value, where: str):
    """The Python value of a numpy number; anything else (a date, a 0-d array) unchanged."""
    np = _np()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (np.timedelta64, np.datetime64)):
        return value                         # an integer to numpy, but not a number here
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        f = float(value)
        if math.isinf(f) and np.isfinite(value):           # a longdouble beyond a double
            raise _float_range(value, where)
        return f
    return value


def _is_bool_type(cls) -> bool:
    """bool or numpy's bool."""
    return cls is bool or (cls.__module__ == "numpy" and cls.__name__ in ("bool", "bool_"))


def _is_bool_like(v) -> bool:
    return _is_bool_type(v.__class__)


def _first_bad(values, ok) -> tuple[int, object]:
    for i, v in enumerate(values):
        if not ok(v):
            return i, v
    return -1, None


def _is_numpy_number(v, kinds: str) -> bool:
    """A numpy scalar whose dtype kind is one of ``kinds`` ('i' and 'u' ints, 'f' floats)."""
    return v.__class__.__module__ == "numpy" and getattr(getattr(v, "dtype", None), "kind",
                                                         "") in kinds


def _is_float_elem(v) -> bool:
    return isinstance(v, (float, int)) or _is_numpy_number(v, "iufb")


def _is_int_elem(v) -> bool:
    return isinstance(v, int) or _is_numpy_number(v, "iub")


def _is_bool_elem(v) -> bool:
    return isinstance(v, bool)


_CHECKERS = {"float": _is_float_elem, "int": _is_int_elem, "bool": _is_bool_elem,
             "float64": _is_float_elem, "int64": _is_int_elem, "uint32": _is_int_elem}


def _fits_double(x) -> bool:
    try:
        float(x)
    except OverflowError:
        return False
    return True


def _too_big(x) -> bool:
    try:
        return math.isfinite(x) and abs(x) > F32_MAX
    except OverflowError:          # an int too large for a float
        return True


def _bad_element(values, elem: str, where: str) -> Exception:
    i, v = _first_bad(values, _CHECKERS[elem])
    if i >= 0:
        fix = f"every element of a list[{elem}] must be a{'n' if elem == 'int' else ''} {elem}"
        return GpuArgumentTypeError(f"{where}[{i}] is {_type_name(v)} {_show(v)}; {fix}")
    if elem_type(elem).kind in "iu":
        lo, hi = INT_RANGE[elem]
        i, v = _first_bad(values, lambda x: lo <= x <= hi)
        if i >= 0:
            return GpuInvalidArgument(f"{where}[{i}] = {_show(v)} does not fit in "
                                      f"{_int_name(elem)} ({lo}..{hi}){_wider_int(elem, v)}")
    elif elem == "float64":
        i, v = _first_bad(values, _fits_double)
        if i >= 0:
            return GpuInvalidArgument(f"{where}[{i}] = {_show(v)} is beyond float64's range")
    else:
        i, v = _first_bad(values, lambda x: not _too_big(x))
        if i >= 0:
            return GpuInvalidArgument(f"{where}[{i}] = {_show(v)} is beyond float32's range "
                                      f"(±{F32_MAX:.4g})")
    # every element passes a second look: the list changed while it was being packed
    return GpuInvalidArgument(
        f"{where} changed while it was being packed (now {len(values):,} elements): an "
        "element's conversion or another thread changed it; launch with a list that nothing "
        "changes meanwhile")


def device_type(elem: str) -> str:
    """The device element type of ``elem`` for messages: 'float32', 'int64', 'bool'."""
    return elem_type(elem).spelling or elem


#: the numpy dtypes a plain list[float] / list[int] parameter takes as they are
PLAIN_DTYPES = {"float": ("float32", "float64"), "int": ("int32", "int64"),
                "complex": ("complex64", "complex128")}
#: significand bits of the float dtypes (ints up to 2**bits in magnitude convert exactly)
_SIGNIFICAND = {"float16": 11, "float32": 24, "float64": 53}


def _exact(d, w) -> bool:
    """Whether every value of numpy dtype ``d`` is a value of dtype ``w`` (astype keeps it).
    Stricter than numpy's "safe" casting, which takes int64 -> float64 as safe."""
    if d == w or d.kind == "b":
        return True
    if w.kind == "b" or d.kind not in "iuf" or w.kind not in "iuf":
        return False
    if d.kind == "f":
        return w.kind == "f" and d.name in _SIGNIFICAND and d.itemsize <= w.itemsize
    np = _np()
    lo, hi = np.iinfo(d).min, np.iinfo(d).max
    if w.kind == "f":
        return w.name in _SIGNIFICAND and max(-int(lo), int(hi)) <= 2 ** _SIGNIFICAND[w.name]
    return np.iinfo(w).min <= lo and hi <= np.iinfo(w).max


def _int_range(w) -> tuple[str, str]:
    """The ends of int dtype ``w``'s range as Python expressions ('-2**31', '2**31-1')."""
    bits = 8 * w.itemsize
    if w.kind == "u":
        return "0", f"2**{bits}-1"
    return f"-2**{bits - 1}", f"2**{bits - 1}-1"


def dtype_fix(dtype, wants) -> str:
    """How to pass data of numpy ``dtype`` where an array of one of the dtype names ``wants``
    is needed: a conversion that keeps every value, or else what each conversion would lose
    (never advice that changes values silently)."""
    np = _np()
    d = np.dtype(dtype)
    ws = [np.dtype(w) for w in wants]
    if d.kind == "c" and any(w.kind == "c" for w in ws):
        w = next(w for w in ws if w.kind == "c")
        loses = "keeps every value" if w.itemsize >= d.itemsize else "rounds each part"
        return f"pass arr.astype(np.{w.name}), which {loses}"
    if d.kind == "c":
        return ("complex data is not a list of real numbers: declare the parameter "
                "list[complex], or pass the real and imaginary parts as two arrays "
                "(np.ascontiguousarray(arr.real), np.ascontiguousarray(arr.imag)) and compute "
                "with both in the kernel")
    if d.kind not in "biuf":
        return f"pass a numeric array (dtype {', '.join(w.name for w in ws)})"
    family = {"b": "b", "i": "iu", "u": "iu", "f": "f"}
    exact = sorted((w for w in ws if _exact(d, w)),
                   key=lambda w: (w.kind not in family[d.kind], w.itemsize))
    if exact:
        return f"pass arr.astype(np.{exact[0].name}), which keeps every value"
    same = [w for w in ws if w.kind in family[d.kind]] or [w for w in ws if w.kind != "b"]
    w = max(same, key=lambda w: w.itemsize) if same else ws[0]
    cast = f"arr.astype(np.{w.name})"
    if w.kind == "b":
        return "pass the condition that makes an element True (a bool array, e.g. arr != 0)"
    if d.kind == "f" and w.kind in "iu":
        lo, hi = _int_range(w)
        return (f"float data is not converted to ints: declare the list float to compute with "
                f"the values as they are; {cast} keeps only whole numbers in {lo}..{hi} "
                "(it drops fractions and gives arbitrary values for NaN, inf and values "
                "beyond the range), so check first, e.g. np.array_equal(arr, np.trunc(arr))")
    if d.kind == "f":
        info = np.finfo(w)
        return (f"{cast} rounds each value to {w.name} (about {info.precision} significant "
                f"digits; values beyond ±{float(info.max):.4g} become inf): convert only if "
                "that precision is enough")
    if w.kind == "f":
        return (f"{cast} is exact for ints up to 2**{_SIGNIFICAND.get(w.name, 53)} in "
                "magnitude and rounds larger ones: convert only if the values are that small")
    lo, hi = _int_range(w)
    return (f"{cast} wraps values outside {lo}..{hi}: convert only if every value is in that "
            f"range (check arr.min() >= {lo} and arr.max() <= {hi})")


def pack_list(value: list, elem: str, where: str):
    """The device bytes of a flat, non-empty list of ``elem`` values (``args.py`` checked the
    container), each element checked: errors name the first bad one.

    A bool among the numbers of a list[int] or list[float] packs as its number (1 or 0), as
    Python and numpy take it; looking at every element's type would cost more than packing."""
    if elem in ("complex", "complex128"):
        return complexes.pack(value, elem, where, _np())
    if elem == "bool":
        if len(value) <= SMALL:
            if not all(v.__class__ is bool for v in value):
                raise _bad_element(value, elem, where)
            return array.array(elem_type("bool").code, value)
        return _pack_numpy(_as_array(value, elem, where), value, elem, where)
    if len(value) > SMALL:
        packed = (packing.floats(value, elem)
                  if elem in packing.CTYPES and len(value) >= packing.FROM else None)
        if packed is None:
            packed = _pack_long(value, elem, where)
    else:
        try:
            packed = array.array(elem_type(elem).code, value)
        except (TypeError, OverflowError, ValueError, IndexError):   # IndexError: it shrank
            raise _bad_element(value, elem, where) from None
        if elem == "float" and _has_inf(packed):
            # float32 overflow turns big finite values into inf: only real infinities may pass
            for k, v in enumerate(value):
                if _too_big(v):
                    raise GpuInvalidArgument(f"{where}[{k}] = {_show(v)} is beyond float32's "
                                             f"range (±{F32_MAX:.4g})")
    return packed


def _pack_long(value: list, elem: str, where: str) -> bytearray:
    """Little-endian float32 or int32 bytes of a long list of floats or ints, checked."""
    row = elem_type(elem)
    code, size = row.code, row.size
    n = len(value)
    out = bytearray(size * n)
    chunk = struct.Struct(f"<{CHUNK}{code}")
    try:
        end = n - n % CHUNK
        for start in range(0, end, CHUNK):
            chunk.pack_into(out, size * start, *value[start:start + CHUNK])
        if end < n:
            struct.Struct(f"<{n - end}{code}").pack_into(out, size * end, *value[end:])
    except (struct.error, TypeError, OverflowError, ValueError):
        raise _bad_element(value, elem, where) from None
    return out


def _has_inf(packed: array.array) -> bool:
    if len(packed) <= SMALL:
        return math.inf in packed or -math.inf in packed
    np = _np()
    return bool(np.isinf(np.frombuffer(packed, dtype=elem_type("float").host_dtype)).any())


def _as_array(value, elem, where):
    try:
        return _np().array(value)
    except (ValueError, TypeError, OverflowError):
        raise _bad_element(value, elem, where) from None


def _pack_numpy(raw, value, elem: str, where: str):
    np = _np()
    kind = raw.dtype.kind
    host = elem_type(elem).host_dtype
    if elem == "float":
        if kind == "f" and raw.dtype in (np.float64, np.float32):
            big = np.abs(raw) > F32_MAX
            if big.any() and np.isfinite(raw[big]).any():
                raise _bad_element(value, elem, where)
            return raw.astype(host)
        if kind in "ib":
            return raw.astype(host)
        raise _bad_element(value, elem, where)
    if elem == "int":
        if kind == "i" and raw.min() >= I32_MIN and raw.max() <= I32_MAX:
            return raw.astype(host)
        raise _bad_element(value, elem, where)
    if elem == "bool":
        if kind == "b":
            return raw.astype(host)
        raise _bad_element(value, elem, where)
    raise AssertionError(elem)


def write_list(target: list, view, elem: str) -> None:
    """Write device bytes back into the caller's flat list, in place."""
    if elem in ("complex", "complex128"):
        complexes.write(target, view, elem, _np())
        return
    row = elem_type(elem)
    n = len(target)
    if elem != "bool" and n > CHUNKED_FROM:
        # A slice at a time, so the new floats or ints take the memory that the old ones of the
        # slice before freed while it is still in the cache (docs/performance.md, "The
        # 1M-element list round trip"); only a MemoryError could stop it, and then the job
        # fails with it.
        flat = memoryview(view)[:row.size * n].cast(row.code)
        for start in range(0, n, WRITE_CHUNK):
            target[start:start + WRITE_CHUNK] = flat[start:start + WRITE_CHUNK].tolist()
        return
    values = array.array(row.code)
    values.frombytes(view[:row.size * n])
    if elem == "bool":
        if n > SMALL:
            np = _np()
            target[:] = (np.frombuffer(values, dtype=row.host_dtype) != 0).tolist()
        else:
            target[:] = [v != 0 for v in values]
    elif n > SMALL:
        # Emptied first, so that the new floats or ints take the memory the old ones free
        # (faster than one slice assignment while they fit the cache: docs/performance.md, "The
        # 1M-element list round trip"); only a MemoryError could stop the extend, and then the
        # job fails with it.
        target.clear()
        target.extend(values)
    else:
        target[:] = values.tolist()
