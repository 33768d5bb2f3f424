"""Long Python lists in and out: float lists packed by cffi (cthreads/runtime/packing.py), results written
back slice by slice (args.writeback). Every packing is checked against numpy's conversion of
the same values, every refusal by its message and the caller's list left as it was, and the
round trips on the device against numpy."""

from __future__ import annotations

import math
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from cthreads.runtime import args, convert, packing
from cthreads.errors import GpuArgumentTypeError, GpuInvalidArgument
from cthreads.gpu import GlobalIdx, Gpu, gpu
from cthreads.lang.widths import float64, int64, uint32
from tests.conftest import run_python
from tests.device.kernels import assert_saxpy, saxpy, scale_ints

F32_MAX = float(np.finfo(np.float32).max)
#: the smallest double that rounds to float32's infinity, and the largest that rounds to its max
F32_INF_FROM = 3.4028235677973366e38
F32_MAX_UP = math.nextafter(F32_INF_FROM, 0)
#: lengths: packed by cffi and emptied-then-extended back; written back slice by slice, with a
#: partial last slice and without one
LONG = packing.FROM
CHUNKED = convert.CHUNKED_FROM + 3
CHUNKED_EVEN = convert.CHUNKED_FROM + convert.WRITE_CHUNK
DTYPE = {"float": np.float32, "float64": np.float64}


@Gpu
def axpy64(a: float64, x: list[float64], y: list[float64]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        y[i] = a * x[i] + y[i]


@Gpu
def bump_wide(k: int64, w: list[int64], u: list[uint32]) -> None:
    i = GlobalIdx.x
    if i < len(w):
        w[i] = w[i] * k
        u[i] = u[i] + 1


class Floaty:
    """Not a number, but convertible with float(): accepted in a float list, as before."""

    def __float__(self) -> float:
        return 2.75


class Broken:
    def __float__(self) -> float:
        raise ValueError("no value")


def reference(values, elem: str) -> bytes:
    with np.errstate(all="ignore"):
        return np.array([float(v) for v in values], np.float64).astype(DTYPE[elem]).tobytes()


def unchanged(values: list, keep: list) -> bool:
    return len(values) == len(keep) and all(a is b for a, b in zip(values, keep))


class Emptying:
    """A __float__ that empties the list it is in (Python code that cffi's loop must not run)."""

    def __init__(self, home: list):
        self.home = home

    def __float__(self) -> float:
        self.home.clear()
        return 1.5


def odd_values(n: int, python_code: bool = False) -> list:
    """Floats of many magnitudes and everything else a float list accepts (with
    ``python_code``, also elements whose conversion is Python code)."""
    rng = np.random.default_rng(n)
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 37, n)).tolist()
    extras = [3, -7, 2**60, True, False, -0.0, 0.0, math.nan, 1e-45, 1e-320, 5e-324, F32_MAX,
              -F32_MAX, F32_MAX_UP, -F32_MAX_UP, 0.1, np.float32(0.1), np.float64(-2.5),
              np.int64(-9), np.uint8(200), np.bool_(True), np.float16(1.5), Decimal("2.5")]
    if python_code:
        extras += [Fraction(1, 3), Floaty()]
    for k, v in enumerate(extras):
        values[(k * 97) % n] = v
    return values


# -- packing, against numpy ----------------------------------------------------------------------

@pytest.mark.parametrize("n", [LONG, CHUNKED])
@pytest.mark.parametrize("elem", ["float", "float64"])
@pytest.mark.parametrize("python_code", [False, True])
def test_long_float_lists_pack_like_numpy(elem, n, python_code):
    values = odd_values(n, python_code)
    keep = list(values)
    packed = args.pack(values, elem, "xs")
    assert bytes(packed) == reference(values, elem)
    assert unchanged(values, keep)
    direct = packing.floats(values, elem)          # the cffi path itself, not a fallback
    if python_code:
        assert direct is None                       # left to the struct path
    else:
        assert direct is not None and bytes(direct) == bytes(packed)


EMPTYING = """
import numpy
from cthreads.runtime import args, convert, packing

class Emptying:
    def __init__(self, home):
        self.home = home

    def __float__(self):
        self.home.clear()                     # frees the list's item array and its floats
        for _ in range(3):
            [float(i) for i in range(300_000)]    # and takes that memory for other things
        return 1.5

for n, elem in ((1_000_000, "float"), (1_000_000, "float64"), (100, "float")):
    values = [0.25] * n
    values[n // 2] = Emptying(values)
    assert n < packing.FROM or packing.floats(values, elem) is None and len(values) == n
    try:
        args.pack(values, elem, "xs")
    except ValueError as exc:
        print(exc)
    assert values == []                       # what the element itself did
"""


def test_an_element_that_empties_the_list_is_no_crash():
    """cffi reads the list without references: an element's Python __float__ must not run in
    its loop (there, emptying the list crashed the process). The struct path runs it on copies
    of the list's slices and sees the list change. In a child process, as a crash would kill
    it."""
    proc = run_python(EMPTYING)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.splitlines() == [
        "xs changed while it was being packed (now 0 elements): an element's conversion or "
        "another thread changed it; launch with a list that nothing changes meanwhile"] * 3


def test_a_profiler_is_left_alone():
    calls = []

    def profiler(frame, event, arg):
        calls.append(event)

    values = [0.5] * LONG
    sys.setprofile(profiler)
    try:
        assert packing.floats(values, "float") is None
        packed = args.pack(values, "float", "xs")
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert bytes(packed) == reference(values, "float") and calls


@pytest.mark.parametrize("elem", ["float", "float64"])
def test_infinities_pass(elem):
    values = [0.5] * LONG
    values[3], values[-1], values[100] = math.inf, -math.inf, math.nan
    values[7] = F32_MAX_UP                          # rounds down to float32's max
    keep = list(values)
    packed = args.pack(values, elem, "xs")
    assert bytes(packed) == reference(values, elem)
    assert unchanged(values, keep)


def test_the_packed_buffer_owns_its_memory():
    values = [1.25] * LONG
    packed = args.pack(values, "float", "xs")
    del values
    other = args.pack([7.5] * LONG, "float", "xs")
    assert bytes(packed) == np.full(LONG, 1.25, np.float32).tobytes()
    assert bytes(other) == np.full(LONG, 7.5, np.float32).tobytes()


F32_RANGE = " is beyond float32's range (±3.403e+38)"


@pytest.mark.parametrize("n, k", [(LONG, 0), (LONG, LONG - 1), (CHUNKED, 70_000)])
@pytest.mark.parametrize("elem, bad, cls, message", [
    ("float", "2", GpuArgumentTypeError,
     "xs[{k}] is str '2'; every element of a list[float] must be a float"),
    ("float", None, GpuArgumentTypeError,
     "xs[{k}] is NoneType None; every element of a list[float] must be a float"),
    ("float", Broken(), GpuArgumentTypeError, "xs[{k}] is Broken "),
    ("float", 1e39, GpuInvalidArgument, "xs[{k}] = 1e+39" + F32_RANGE),
    ("float", -F32_INF_FROM, GpuInvalidArgument, "xs[{k}] = -3.4028235677973366e+38" + F32_RANGE),
    ("float", 10**39, GpuInvalidArgument, "xs[{k}] = an int of 130 bits" + F32_RANGE),
    ("float", 10**400, GpuInvalidArgument, "xs[{k}] = an int of 1329 bits" + F32_RANGE),
    ("float", np.float64(1e300), GpuInvalidArgument, "xs[{k}] = np.float64(1e+300)" + F32_RANGE),
    ("float64", "2", GpuArgumentTypeError,
     "xs[{k}] is str '2'; every element of a list[float64] must be a float64"),
    ("float64", 10**400, GpuInvalidArgument,
     "xs[{k}] = an int of 1329 bits is beyond float64's range"),
])
def test_a_bad_element_is_named_and_the_list_unchanged(n, k, elem, bad, cls, message):
    values = [0.5] * n
    values[k] = bad
    values[1 if k != 1 else 2] = math.inf            # a real infinity elsewhere changes nothing
    keep = list(values)
    with pytest.raises(cls) as info:
        args.pack(values, elem, "xs")
    assert str(info.value).startswith(message.format(k=k))
    assert unchanged(values, keep)
    assert packing.floats(values, elem) is None      # refused by cffi, or an overflow seen


def test_without_numpy_loaded_float32_lists_take_the_struct_path():
    """numpy is not imported for packing: a program without it packs as before."""
    code = (
        "import struct, sys\n"
        "from cthreads.runtime import args, convert, packing\n"
        "n = packing.FROM + 5\n"
        "values = [k * 0.25 - 3 for k in range(n)]\n"
        "assert packing.floats(values, 'float') is None\n"
        "packed = args.pack(values, 'float', 'xs')\n"
        "assert bytes(packed) == struct.pack(f'<{n}f', *values)\n"
        "wide = packing.floats(values, 'float64')\n"
        "assert bytes(wide) == struct.pack(f'<{n}d', *values)\n"
        "try:\n"
        "    args.pack(values[:-1] + [1e39], 'float', 'xs')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
        "print('numpy' in sys.modules)\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"xs[{packing.FROM + 4}] = 1e+39 is beyond float32's range (±3.403e+38)", "False"]


# -- writing back, against numpy -----------------------------------------------------------------

@pytest.mark.parametrize("n", [LONG, CHUNKED, CHUNKED_EVEN])
@pytest.mark.parametrize("elem, dtype", [("float", np.float32), ("float64", np.float64),
                                         ("int", np.int32), ("uint32", np.uint32),
                                         ("int64", np.int64), ("bool", np.uint32)])
def test_writeback_of_long_lists(n, elem, dtype):
    rng = np.random.default_rng(n)
    if elem in ("float", "float64"):
        device = rng.standard_normal(n).astype(dtype)
    elif elem == "bool":
        device = rng.integers(0, 3, n).astype(dtype)
    else:
        info = np.iinfo(dtype)
        device = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    expected = (device != 0).tolist() if elem == "bool" else device.tolist()
    target = [0.5] * n
    same = target
    args.writeback(target, memoryview(device.tobytes() + b"\xff" * 16), elem)
    assert target is same and target == expected
    assert {type(v) for v in target} == {type(expected[0])}


def test_writeback_of_a_long_nested_list():
    rows, cols = 513, 513                            # more elements than CHUNKED_FROM
    assert rows * cols > convert.CHUNKED_FROM
    device = np.arange(rows * cols, dtype=np.float32) * 0.5
    target = [[0.0] * cols for _ in range(rows)]
    row0 = target[0]
    args.writeback(target, memoryview(device.tobytes()), "float")
    assert target == device.reshape(rows, cols).tolist() and target[0] is row0


# -- round trips on the device -------------------------------------------------------------------

@pytest.mark.parametrize("n", [LONG, CHUNKED])
def test_saxpy_on_long_lists(device_name, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 100).tolist()
    y = rng.standard_normal(n).tolist()
    x[5] = 4                                         # ints and numpy numbers are floats here
    y[9] = np.float32(0.25)
    x_keep, y0, y_id = list(x), list(y), id(y)
    gpu(saxpy, n, 1.5, x, y).join()
    assert id(y) == y_id and len(y) == n and {type(v) for v in y} == {float}
    assert_saxpy(y, 1.5, x_keep, y0)
    assert unchanged(x, x_keep)


@pytest.mark.parametrize("n", [LONG, CHUNKED])
def test_float64_lists_on_the_device(device_name, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 1e200).tolist()    # beyond float32: kept as float64
    y = rng.standard_normal(n).tolist()
    x_keep, y0 = list(x), np.array(y)
    gpu(axpy64, 0.5, x, y).join()
    want = 0.5 * np.array(x_keep) + y0
    np.testing.assert_allclose(y, want, rtol=4.5e-16, atol=0)
    assert unchanged(x, x_keep)


def test_long_int_lists_on_the_device(device_name):
    n = CHUNKED
    rng = np.random.default_rng(7)
    v = rng.integers(-1000, 1000, n).tolist()
    want = (np.array(v, np.int32) * -3).tolist()
    gpu(scale_ints, n, -3, v).join()
    assert v == want and {type(a) for a in v} == {int}


def test_long_wide_int_lists_on_the_device(device_name):
    n = CHUNKED
    rng = np.random.default_rng(8)
    w = rng.integers(-2**40, 2**40, n).tolist()
    u = rng.integers(0, 2**32 - 1, n).tolist()
    w0, u0 = np.array(w, np.int64), np.array(u, np.uint32)
    gpu(bump_wide, 3, w, u).join()
    assert w == (w0 * 3).tolist() and u == (u0 + 1).tolist()
    assert {type(a) for a in w} == {int}


@pytest.mark.parametrize("param, bad, message", [
    ("x", 1e39, "saxpy() parameter 'x'[{k}] = 1e+39" + F32_RANGE),
    ("y", 10**40, "saxpy() parameter 'y'[{k}] = an int of 133 bits" + F32_RANGE),
    ("y", "0.5", "saxpy() parameter 'y'[{k}] is str '0.5'; every element of a list[float] must "
                 "be a float"),
])
def test_a_launch_with_a_bad_element_changes_nothing(device_name, param, bad, message):
    n, k = CHUNKED, CHUNKED - 2
    x, y = [1.0] * n, [2.0] * n
    (x if param == "x" else y)[k] = bad
    x_keep, y_keep = list(x), list(y)
    with pytest.raises(GpuInvalidArgument) as info:
        gpu(saxpy, n, 2.0, x, y).join()
    assert str(info.value) == message.format(k=k)
    assert unchanged(x, x_keep) and unchanged(y, y_keep)
    gpu(saxpy, n, 2.0, [1.0] * n, y_ok := [2.0] * n).join()    # the device still works
    assert y_ok == [4.0] * n
