"""Argument conversion (cthreads/runtime/convert.py) without a device: scalar checks, container checks,
packing lists and arrays into device bytes, and writing device bytes back in place. The
reference for every byte is numpy's own conversion of the same values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.runtime import args, convert
from cthreads.errors import GpuArgumentTypeError, GpuInvalidArgument

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
F32_MAX = float(np.finfo(np.float32).max)
#: list lengths that take each packing path: array.array (short), struct chunks with and
#: without a remainder (long)
LENGTHS = [1, 7, convert.SMALL, convert.SMALL + 1, convert.CHUNK + 3]
DEVICE = {"float": np.float32, "int": np.int32, "bool": np.uint32}


def device_bytes(values, elem: str) -> bytes:
    """The reference: what the device buffer must hold, as numpy converts it."""
    return np.asarray(values, dtype=DEVICE[elem]).tobytes()


# -- scalars -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, kind, expected", [
    (1.5, "float", 1.5), (3, "float", 3.0), (-0.0, "float", -0.0), (F32_MAX, "float", F32_MAX),
    (math.inf, "float", math.inf), (I32_MIN, "int", I32_MIN), (I32_MAX, "int", I32_MAX),
    (True, "bool", True), (False, "bool", False),
    (np.float32(0.25), "float", 0.25), (np.float64(2.5), "float", 2.5), (np.int8(-3), "float", -3.0),
    (np.int64(7), "int", 7), (np.uint16(9), "int", 9), (np.bool_(True), "bool", True),
])
def test_scalars_accepted(value, kind, expected):
    got = convert.check_scalar(value, kind, "a")
    assert got == expected and type(got) is type(expected)
    if kind == "float":
        assert math.copysign(1, got) == math.copysign(1, expected)


def test_nan_passes_as_a_float():
    assert math.isnan(convert.check_scalar(math.nan, "float", "a"))


@pytest.mark.parametrize("value, kind, cls, message", [
    (True, "float", GpuArgumentTypeError,
     "a expects a float, got bool True (bools are not numbers here); convert it with float(...)"),
    (np.bool_(False), "int", GpuArgumentTypeError,
     f"a expects an int, got numpy.bool {np.bool_(False)!r} (bools are not numbers here); "
     "convert it with int(...)"),
    (1.0, "int", GpuArgumentTypeError,
     "a expects an int, got float 1.0; convert it with int(...) if it is a whole number (int() "
     "drops a fraction, round() rounds), or declare the parameter float"),
    (np.float32(2.5), "int", GpuArgumentTypeError,
     "a expects an int, got numpy.float32 np.float32(2.5); convert it with int(...) if it is a "
     "whole number (int() drops a fraction, round() rounds), or declare the parameter float"),
    ("1", "float", GpuArgumentTypeError,
     "a expects a float, got str '1'; convert it with float(...)"),
    (1, "bool", GpuArgumentTypeError,
     "a expects a bool, got int 1; pass a bool that says what True means (e.g. x != 0)"),
    (1 + 2j, "float", GpuArgumentTypeError,
     "a expects a float, got complex (1+2j); complex values are not real numbers: pass the real "
     "and imaginary parts (z.real, z.imag) as two parameters"),
    (np.complex128(1j), "float64", GpuArgumentTypeError,
     "a expects a float, got numpy.complex128 np.complex128(1j); complex values are not real "
     "numbers: pass the real and imaginary parts (z.real, z.imag) as two parameters"),
    (I32_MAX + 1, "int", GpuInvalidArgument,
     "a: 2147483648 does not fit in a 32-bit int (-2147483648..2147483647); the kernel computes "
     "with int32 values here"
     "; for 64-bit values pass int64 numpy arrays for the kernel's plain list[int] "
     "parameters (the launch then computes in int64) or annotate the parameter int64"),
    (I32_MIN - 1, "int", GpuInvalidArgument,
     "a: -2147483649 does not fit in a 32-bit int (-2147483648..2147483647); the kernel computes "
     "with int32 values here"
     "; for 64-bit values pass int64 numpy arrays for the kernel's plain list[int] "
     "parameters (the launch then computes in int64) or annotate the parameter int64"),
    (2**63, "int64", GpuInvalidArgument,
     "a: 9223372036854775808 does not fit in a 64-bit int (-9223372036854775808.."
     "9223372036854775807); the kernel computes with int64 values here"),
    (-1, "uint32", GpuInvalidArgument,
     "a: -1 does not fit in a uint32 (0..4294967295); the kernel computes with uint32 values "
     "here"),
    (1e39, "float", GpuInvalidArgument,
     "a: 1e+39 is beyond float32's range (±3.403e+38); the device computes in 32-bit floats "
     "here: pass a smaller value, or float64 arrays to compute in float64"),
    (10**400, "float", GpuInvalidArgument,
     "a: an int of 1329 bits is beyond float32's range (±3.403e+38); the device computes in "
     "32-bit floats here: pass a smaller value, or float64 arrays to compute in float64"),
    (10**400, "float64", GpuInvalidArgument, "a: an int of 1329 bits is beyond float64's range"),
    (np.datetime64("2020-01-01"), "int", GpuArgumentTypeError,
     "a expects an int, got numpy.datetime64 np.datetime64('2020-01-01'); convert it with "
     "int(...)"),
])
def test_scalars_refused(value, kind, cls, message):
    with pytest.raises(cls) as info:
        convert.check_scalar(value, kind, "a")
    assert str(info.value) == message
    assert isinstance(info.value, GpuInvalidArgument)     # every refusal is also a ValueError


def test_type_errors_are_type_errors_too():
    with pytest.raises(TypeError):
        convert.check_scalar("x", "int", "k")
    with pytest.raises(TypeError):
        args.check_container((1, 2), "int", "xs")


# -- containers ----------------------------------------------------------------------------------

def test_lists_and_matching_arrays_are_accepted():
    for elem in ("float", "int", "bool"):
        args.check_container([0], elem, "xs")
        want = {"float": np.float32, "int": np.int32, "bool": np.bool_}[elem]
        args.check_container(np.zeros(3, dtype=want), elem, "xs")
    frozen = np.zeros(3, np.float32)
    frozen.flags.writeable = False
    args.check_container(frozen, "float", "xs", writable=False)


# Each dtype mismatch names a conversion that keeps every value, or says what the conversion
# would lose: never advice that changes values silently (complex -> float drops the imaginary
# part, float -> int the fractions, int64 -> int32 wraps, float64 -> float32 rounds).
@pytest.mark.parametrize("dtype, elem, plain, says, never", [
    (np.complex128, "float", "float", "complex data is not a list of real numbers", "astype"),
    (np.complex64, "float", None, "np.ascontiguousarray(arr.imag)", "astype"),
    (np.complex128, "int", "int", "complex data is not a list of real numbers", "astype"),
    (np.complex128, "bool", None, "complex data is not a list of real numbers", "astype"),
    (np.float64, "int", "int", "keeps only whole numbers in -2**63..2**63-1", "keeps every"),
    (np.float32, "uint32", None, "drops fractions", "keeps every"),
    (np.float64, "bool", None, "arr != 0", "astype"),
    (np.int32, "bool", None, "arr != 0", "astype"),
    (np.int64, "uint32", None, "wraps values outside 0..2**32-1", "keeps every"),
    (np.uint32, "int", None, "wraps values outside -2**31..2**31-1", "keeps every"),
    (np.int64, "float", "float", "exact for ints up to 2**53 in magnitude", "keeps every"),
    (np.int32, "float", None, "exact for ints up to 2**24 in magnitude", "keeps every"),
    (np.longdouble, "float64", None, "rounds each value to float64", "keeps every"),
    # conversions that keep every value are named as such
    (np.int32, "float", "float", "pass arr.astype(np.float64), which keeps every value", "2**"),
    (np.uint32, "int", "int", "pass arr.astype(np.int64), which keeps every value", "wraps"),
    (np.int16, "int", "int", "pass arr.astype(np.int32), which keeps every value", "wraps"),
    (np.float16, "float", "float", "pass arr.astype(np.float32), which keeps every value",
     "round"),
    (np.bool_, "float64", None, "pass arr.astype(np.float64), which keeps every value", "2**"),
])
def test_dtype_mismatch_hints_are_safe(dtype, elem, plain, says, never):
    value = np.array([1.5 + 2j, -3, 0.25j]).astype(dtype) if dtype in (np.complex64,
                                                                          np.complex128) \
        else np.arange(3).astype(dtype)
    before = value.copy()
    with pytest.raises(GpuInvalidArgument) as info:
        args.check_container(value, elem, "xs", plain=plain)
    msg = str(info.value)
    assert says in msg and never not in msg.split(": ", 1)[1], msg
    assert f"dtype {value.dtype}" in msg
    np.testing.assert_array_equal(value, before)


def test_a_64_bit_launch_names_its_width_for_plain_lists():
    with pytest.raises(GpuInvalidArgument) as info:
        args.check_container(np.zeros(3, np.float16), "float64", "xs", plain="float")
    msg = str(info.value)
    assert "list[float], float64 in this launch" in msg
    assert "pass arr.astype(np.float64), which keeps every value" in msg, msg


@pytest.mark.parametrize("make, elem, message", [
    (lambda: (1.0, 2.0), "float",
     "xs expects a list[float] (or a 1-D numpy array), got tuple; pass a list (e.g. list(values))"),
    (lambda: [], "int", "xs is an empty list; the device needs at least one element per list"),
    (lambda: np.zeros(3), "float",
     "xs is a numpy array of dtype float64, but the kernel declares list[float] (float32 "
     "arrays): arr.astype(np.float32) rounds each value to float32 (about 6 significant digits; "
     "values beyond ±3.403e+38 become inf): convert only if that precision is enough; it is not "
     "converted silently because results are written back in place"),
    (lambda: np.zeros(3, np.int64), "int",
     "xs is a numpy array of dtype int64, but the kernel declares list[int] (int32 arrays): "
     "arr.astype(np.int32) wraps values outside -2**31..2**31-1: convert only if every value is "
     "in that range (check arr.min() >= -2**31 and arr.max() <= 2**31-1); it is not converted "
     "silently because results are written back in place"),
    (lambda: np.zeros((2, 2), np.float32), "float",
     "xs is a 2-D numpy array, but the kernel declares a list; pass a 1-D array (e.g. "
     "arr.ravel() of a C-contiguous array, then reshape)"),
    (lambda: np.zeros(6, np.float32)[::2], "float",
     "xs is a non-contiguous numpy view; pass a C-contiguous array (np.ascontiguousarray(arr)) "
     "and read the results from that array"),
    (lambda: np.zeros(0, np.int32), "int",
     "xs is an empty array; the device needs at least one element per list"),
])
def test_containers_refused(make, elem, message):
    value = make()
    before = np.array(value, copy=True) if isinstance(value, np.ndarray) else list(value)
    with pytest.raises(GpuInvalidArgument) as info:
        args.check_container(value, elem, "xs")
    assert str(info.value) == message
    with pytest.raises(GpuInvalidArgument):
        args.pack(value, elem, "xs")
    if isinstance(value, np.ndarray):
        np.testing.assert_array_equal(value, before)
    else:
        assert list(value) == before


def test_read_only_arrays_are_refused_when_written():
    frozen = np.arange(4, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(GpuInvalidArgument, match="xs is a read-only numpy array but the kernel "
                                                 r"writes it; pass a writable array \(arr.copy"):
        args.check_container(frozen, "float", "xs")
    assert bytes(args.pack(frozen, "float", "xs", writable=False)) == frozen.tobytes()


# -- packing -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", LENGTHS)
def test_float_lists_pack_as_float32(n):
    rng = np.random.default_rng(n)
    values = (rng.standard_normal(n) * 1e3).tolist()
    values[0] = 3                                  # an int in a float list is fine
    values[-1] = -math.inf if n > 1 else values[-1]
    keep = list(values)
    assert bytes(args.pack(values, "float", "xs")) == device_bytes(values, "float")
    assert values == keep


@pytest.mark.parametrize("n", LENGTHS)
def test_int_lists_pack_as_int32(n):
    values = np.random.default_rng(n).integers(I32_MIN, I32_MAX, n, endpoint=True).tolist()
    values[0] = I32_MIN
    values[-1] = I32_MAX if n > 1 else I32_MIN
    assert bytes(args.pack(values, "int", "xs")) == device_bytes(values, "int")


@pytest.mark.parametrize("n", LENGTHS)
def test_bool_lists_pack_as_uint32(n):
    values = (np.random.default_rng(n).random(n) < 0.5).tolist()
    assert bytes(args.pack(values, "bool", "xs")) == device_bytes(values, "bool")


def test_float_and_int_arrays_pack_without_a_copy():
    f = np.linspace(-1, 1, 9, dtype=np.float32)
    i = np.arange(-4, 5, dtype=np.int32)
    assert args.pack(f, "float", "xs") is f and args.pack(i, "int", "xs") is i


def test_bool_arrays_pack_as_uint32():
    b = np.array([True, False, True, True])
    packed = args.pack(b, "bool", "xs")
    assert bytes(packed) == device_bytes([1, 0, 1, 1], "bool")
    np.testing.assert_array_equal(b, [True, False, True, True])


@pytest.mark.parametrize("n", [5, convert.SMALL + 10, convert.CHUNK + 3])
@pytest.mark.parametrize("elem, bad, cls, message", [
    ("float", "2", GpuArgumentTypeError,
     "xs[{k}] is str '2'; every element of a list[float] must be a float"),
    ("float", 1e39, GpuInvalidArgument, "xs[{k}] = 1e+39 is beyond float32's range (±3.403e+38)"),
    ("int", 2.0, GpuArgumentTypeError,
     "xs[{k}] is float 2.0; every element of a list[int] must be an int"),
    ("int", I32_MAX + 1, GpuInvalidArgument,
     "xs[{k}] = 2147483648 does not fit in a 32-bit int (-2147483648..2147483647)"
     "; for 64-bit values pass int64 numpy arrays for the kernel's plain list[int] "
     "parameters (the launch then computes in int64) or annotate the parameter int64"),
    ("bool", 1, GpuArgumentTypeError,
     "xs[{k}] is int 1; every element of a list[bool] must be a bool"),
])
def test_a_bad_element_is_named_and_the_list_unchanged(n, elem, bad, cls, message):
    good = {"float": 0.5, "int": 3, "bool": True}[elem]
    k = n - 2
    values = [good] * n
    values[k] = bad
    keep = list(values)
    with pytest.raises(cls) as info:
        args.pack(values, elem, "xs")
    assert str(info.value) == message.format(k=k)
    assert values == keep and type(values[k]) is type(bad)


@pytest.mark.parametrize("values, kind", [
    ([True, False], "bool"), ([1, -2, 3], "int"), ([1.5, 2], "float"), ([1, 2.5], "float"),
    ([1, 2**40], "float"),                 # beyond int32: taken as floats
])
def test_pack_any_picks_the_kind(values, kind):
    got_kind, packed = args.pack_any(values, "a")
    assert got_kind == kind
    assert bytes(packed) == device_bytes(values, kind)


def test_pack_any_arrays_and_refusals():
    for arr, kind in ((np.ones(3, np.float32), "float"), (np.ones(3, np.int32), "int"),
                      (np.ones(3, np.bool_), "bool"), (np.ones(3), "float64"),
                      (np.ones(3, np.int64), "int64"), (np.ones(3, np.uint32), "uint32")):
        got_kind, packed = args.pack_any(arr, "a")
        want = device_bytes(arr, kind) if kind in ("float", "int", "bool") else arr.tobytes()
        assert got_kind == kind and bytes(packed) == want
    with pytest.raises(GpuInvalidArgument, match=r"^a is a numpy array of dtype float16; a list "
                                                 "holds float32, float64, int32, int64, uint32, "
                                                 r"bool values: pass arr.astype\(np.float32\), "
                                                 "which keeps every value"):
        args.pack_any(np.ones(3, np.float16), "a")
    z = np.array([1 + 2j, 3 - 1j])             # complex arrays are complex lists now
    got_kind, packed = args.pack_any(z, "a")
    assert got_kind == "complex128" and bytes(packed) == z.tobytes()
    with pytest.raises(GpuInvalidArgument) as info:
        args.pack_any(np.ones(2, np.clongdouble), "a")
    assert "astype(np.float" not in str(info.value)
    with pytest.raises(GpuInvalidArgument, match=r"astype\(np.int64\) wraps values outside "
                                                 r"-2\*\*63"):
        args.pack_any(np.ones(3, np.uint64), "a")
    with pytest.raises(GpuArgumentTypeError, match=r"^a expects a list of floats, ints or bools"):
        args.pack_any((1.0,), "a")
    values = [True, 2]                     # a list that starts with a bool is a list[bool]
    with pytest.raises(GpuArgumentTypeError, match=r"^a\[1\] is int 2; every element of a "
                                                   r"list\[bool\] must be a bool"):
        args.pack_any(values, "a")
    assert values == [True, 2]


@pytest.mark.parametrize("n", [5, convert.SMALL + 10, convert.CHUNK + 3])
@pytest.mark.parametrize("elem, flag", [("float", True), ("float", np.bool_(False)),
                                        ("int", False), ("int", True)])
def test_bools_in_number_lists_pack_as_their_numbers(n, elem, flag):
    """As in Python (True == 1) and numpy: a bool among numbers is the number 1 or 0."""
    good = {"float": 0.5, "int": 3}[elem]
    values = [good] * n
    values[n - 2] = flag
    keep = list(values)
    packed = args.pack(values, elem, "xs")
    expected = np.array([float(v) if elem == "float" else int(v) for v in keep],
                        np.float32 if elem == "float" else np.int32)
    assert bytes(packed) == expected.tobytes()
    assert values == keep and type(values[n - 2]) is type(flag)
    kind, packed = args.pack_any(values, "a")
    assert kind == elem and bytes(packed) == expected.tobytes()


# -- writing results back ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 9, convert.SMALL + 1])
def test_writeback_into_lists(n):
    rng = np.random.default_rng(n)
    floats = rng.standard_normal(n).astype(np.float32)
    ints = rng.integers(I32_MIN, I32_MAX, n, dtype=np.int32)
    bools = (rng.random(n) < 0.5).astype(np.uint32) * 7          # any non-zero word is True
    for elem, device, expected in (("float", floats, floats.tolist()),
                                   ("int", ints, ints.tolist()),
                                   ("bool", bools, (bools != 0).tolist())):
        target = [None] * n
        same = target
        padded = device.tobytes() + b"\xff" * 64                  # a buffer rounded up
        args.writeback(target, memoryview(padded), elem)
        assert target is same and target == expected
        assert all(type(v) is type(expected[0]) for v in target)


def test_writeback_into_arrays():
    floats = np.array([1.5, -2.0, 3.25], np.float32)
    ints = np.array([I32_MIN, 0, I32_MAX], np.int32)
    words = np.array([0, 1, 5], np.uint32)
    for elem, device, target, expected in (
            ("float", floats, np.zeros(3, np.float32), floats),
            ("int", ints, np.zeros(3, np.int32), ints),
            ("bool", words, np.zeros(3, np.bool_), np.array([False, True, True]))):
        before = target
        args.writeback(target, memoryview(device.tobytes() + b"\0" * 16), elem)
        assert target is before
        np.testing.assert_array_equal(target, expected)


def test_pack_then_writeback_round_trips():
    values = [0.1, -2.5, 1e-30, 3e38]
    target = [0.0] * 4
    args.writeback(target, memoryview(bytes(args.pack(values, "float", "xs"))), "float")
    assert target == np.asarray(values, np.float32).tolist()
