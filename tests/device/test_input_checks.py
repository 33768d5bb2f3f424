"""Argument checks at the edges: bools among numbers (their numbers), numbers beyond float or int32 range, numpy
scalars, and the error classes (type errors are both ``TypeError`` and ``GpuInvalidArgument``).
Every refusal leaves the caller's lists as they were; every acceptance is checked on the device
against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import (CThreadsGPUError, GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError,
                          GpuInvalidArgument, gpu, int32)
from tests.device.kernels import add_one, saxpy, scale_ints

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
#: a short list (checked by array.array), one past the short-list limit, one past a pack chunk
SIZES = [4, 5000, 70_000]


@Gpu
def pick(n: int, flag: bool, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = 1 if flag else 2


def _refused(kind, call, *lists):
    """Run ``call``, expect ``kind``, check every list in ``lists`` is unchanged; the error."""
    before = [list(x) if isinstance(x, list) else x.copy() for x in lists]
    with pytest.raises(kind) as info:
        call()
    assert isinstance(info.value, CThreadsGPUError)
    for was, now in zip(before, lists):
        assert type(now) is type(was) or isinstance(now, np.ndarray)
        if isinstance(now, list):
            assert now == was and [type(v) for v in now] == [type(v) for v in was]
        else:
            np.testing.assert_array_equal(now, was)
    return str(info.value)


def _both(exc_text_call, *lists):
    """A type error must be catchable as TypeError and as GpuInvalidArgument."""
    text = _refused(TypeError, exc_text_call, *lists)
    with pytest.raises(GpuInvalidArgument) as info:
        exc_text_call()
    assert type(info.value) is GpuArgumentTypeError
    return text


# -- bools among numbers are their numbers (True == 1, as in Python and numpy) ---------------


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_bools_in_float_lists_are_numbers(device_name, size, flag):
    x = [1.5] * size
    x[size - 2] = flag
    y = [0.25] * size
    y[1] = True                                          # the written list, too
    ref = np.float32(2.0) * np.array(x, np.float32) + np.array(y, np.float32)
    gpu(saxpy, size, 2.0, x, y).join()
    np.testing.assert_allclose(np.array(y, np.float32), ref, rtol=1e-6)
    assert all(type(v) is float for v in y)              # results are floats, as in Python
    assert x[size - 2] is flag                           # the read-only list is untouched


@pytest.mark.parametrize("size", SIZES)
def test_bools_in_int_lists_are_numbers(device_name, size):
    v = list(range(size))
    v[size - 1] = True
    v[0] = False
    ref = [3 * int(k) for k in v]
    gpu(scale_ints, size, 3, v).join()
    assert v == ref and all(type(k) is int for k in v)
    flags = np.zeros(size, np.bool_)                    # a bool array is not an int32 array
    text = _refused(GpuInvalidArgument, lambda: gpu(scale_ints, size, 3, flags), flags)
    assert "dtype bool" in text and "int32" in text


def test_bools_in_arena_number_lists_are_numbers(device_name):
    for values, kind in (([1, True, 2], int), ([1.0, False], float), ([2.5, np.True_], float),
                         ([1] * 5000 + [True], int)):
        n = len(values)
        ref = [2 * int(k) for k in values]
        with GpuArena() as arena:
            arena.bind(x=values)
            if kind is int:
                gpu(scale_ints, n, 2, values).join(download=False)
                arena.sync()
                assert values == ref and all(type(k) is int for k in values)
            else:
                y = [0.0] * n
                gpu(saxpy, n, 1.0, values, y).join()
                assert y == [float(v) for v in values]


def test_lists_of_numbers_and_bools_still_run(device_name):
    v = list(range(-50, 50))
    gpu(scale_ints, 100, 3, v).join()
    assert v == [3 * k for k in range(-50, 50)]
    out = [0] * 8
    gpu(pick, 8, True, out).join()
    assert out == [1] * 8


# -- numbers beyond a float's range ---------------------------------------------------------


@pytest.mark.parametrize("a", [10**400, -(10**400), 2**1024, 2**1023, -(2**1100), 2**128])
def test_ints_beyond_float_range_are_refused_as_float_scalars(device_name, a):
    x, y = [1.0] * 4, [0.0] * 4
    text = _refused(GpuInvalidArgument, lambda: gpu(saxpy, 4, a, x, y), x, y)
    assert "'a'" in text and "float32" in text


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("big", [10**400, -(10**400), 2**1024, 2**128, -1e39])
def test_numbers_beyond_float_range_are_refused_in_float_lists(device_name, size, big):
    x, y = [1.0] * size, [0.0] * size
    x[size // 2] = big
    text = _refused(GpuInvalidArgument, lambda: gpu(saxpy, size, 2.0, x, y), x, y)
    assert f"'x'[{size // 2}]" in text and "float32" in text


def test_the_largest_float32_and_int_just_below_it_pass(device_name):
    f32_max = float(np.finfo(np.float32).max)
    x, y = [f32_max, -f32_max, 2.0**127, -(2**127)], [0.0] * 4
    gpu(saxpy, 4, 1, x, y).join()
    assert y == [f32_max, -f32_max, 2.0**127, -(2.0**127)]
    x, y = [1.0] * 4, [0.0] * 4
    gpu(saxpy, 4, 2**127, x, y).join()
    assert y == [2.0**127] * 4


# -- int32's two ends -----------------------------------------------------------------------


@pytest.mark.parametrize("k", [I32_MIN, I32_MAX, np.int32(I32_MIN), np.int64(I32_MAX)])
def test_int32_ends_are_accepted_as_scalars(device_name, k):
    v = [1, 0, 1]
    gpu(scale_ints, 3, k, v).join()
    assert v == [int(k), 0, int(k)]


@pytest.mark.parametrize("k", [I32_MIN - 1, I32_MAX + 1, np.int64(I32_MIN - 1), np.uint32(2**31)])
def test_ints_beyond_int32_are_refused_as_scalars(device_name, k):
    v = [1, 2, 3]
    text = _refused(GpuInvalidArgument, lambda: gpu(scale_ints, 3, k, v), v)
    assert "'k'" in text and "32-bit" in text


@pytest.mark.parametrize("size", SIZES)
def test_int32_ends_are_accepted_in_int_lists(device_name, size):
    v = [I32_MIN, I32_MAX, 0, -1] * (size // 4)
    gpu(scale_ints, len(v), 1, v).join()
    assert v == [I32_MIN, I32_MAX, 0, -1] * (size // 4)
    a = np.array(v, np.int32)
    gpu(scale_ints, len(v), -1, a).join()
    np.testing.assert_array_equal(a, -np.array(v, np.int64).astype(np.int32))   # wraps as i32


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("bad", [I32_MIN - 1, I32_MAX + 1])
def test_ints_beyond_int32_are_refused_in_int_lists(device_name, size, bad):
    v = [I32_MIN, I32_MAX] * (size // 2)
    v[size - 3] = bad
    text = _refused(GpuInvalidArgument, lambda: gpu(scale_ints, size, 1, v), v)
    assert f"'v'[{size - 3}]" in text and "32-bit" in text


# -- type errors are both TypeError and GpuInvalidArgument ----------------------------------


@pytest.mark.parametrize("args", [
    (4, "2.0", [1.0] * 4, [0.0] * 4), (4.0, 2.0, [1.0] * 4, [0.0] * 4),
    (True, 2.0, [1.0] * 4, [0.0] * 4), (4, True, [1.0] * 4, [0.0] * 4),
    (4, 2.0, (1.0, 2.0, 3.0, 4.0), [0.0] * 4), (4, 2.0, None, [0.0] * 4),
    (4, 2.0, [1.0, "2", 3.0, 4.0], [0.0] * 4), (4, 2.0, [1.0] * 4, [0.0, 0.0, None, 0.0])])
def test_argument_type_errors_are_both_classes(device_name, args):
    lists = [a for a in args if isinstance(a, list)]
    _both(lambda: gpu(saxpy, *args), *lists)


@pytest.mark.parametrize("value", [(1.0, 2.0), "abc", None, {1: 2}, [1.0, "a"], [None],
                                   [1, 2.5, "x"]])
def test_arena_bind_type_errors_are_both_classes(device_name, value):
    with GpuArena() as arena:
        text = _both(lambda: arena.bind(x=value))
        assert "GpuArena.bind(x=...)" in text
        if not isinstance(value, list):
            assert "expects a list of floats, ints or bools" in text
        assert "x" not in arena


# -- numpy scalars count as the Python number they hold ------------------------------------


@pytest.mark.parametrize("a", [np.float32(0.5), np.float64(0.5), np.float16(0.5),
                               np.longdouble(0.5), np.int32(2), np.int64(-3), np.uint8(7)])
def test_numpy_numbers_are_accepted_as_float_scalars(device_name, a):
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    gpu(saxpy, np.int64(8), a, x, y).join()
    np.testing.assert_array_equal(y, np.float32(a) * np.arange(8, dtype=np.float32) + 1)


@pytest.mark.parametrize("k", [np.int8(-3), np.int16(3), np.int32(3), np.int64(3),
                               np.uint16(3), np.uint32(3), np.uint64(3)])
def test_numpy_ints_are_accepted_as_int_scalars(device_name, k):
    v = [1, -2, 3]
    gpu(scale_ints, np.int32(3), k, v).join()
    assert v == [int(k), -2 * int(k), 3 * int(k)] and all(type(e) is int for e in v)


def test_numpy_bools_are_accepted_as_bool_scalars(device_name):
    out = [0] * 4
    gpu(pick, 4, np.False_, out).join()
    assert out == [2] * 4


@pytest.mark.parametrize("param,value", [
    ("a", np.True_), ("a", np.complex64(1)), ("a", np.timedelta64(2, "s")),
    ("a", np.datetime64("2026-01-01")), ("a", np.str_("1.0")), ("a", np.array(1.0, np.float32)),
    ("n", np.float32(4)), ("n", np.float64(4.0)), ("n", np.True_), ("n", np.timedelta64(4))])
def test_other_numpy_scalars_are_refused(device_name, param, value):
    x, y = [1.0] * 4, [0.0] * 4
    args = {"n": 4, "a": 2.0}
    args[param] = value
    text = _both(lambda: gpu(saxpy, args["n"], args["a"], x, y), x, y)
    assert f"'{param}'" in text


#: where longdouble is wider than a float (x86-64, aarch64 Linux), a value a float cannot hold
WIDE = [np.longdouble("1e400")] if np.isfinite(np.longdouble("1e400")) else []


@pytest.mark.parametrize("a", WIDE + [np.float64(1e39), np.longdouble("-1e39")])
def test_numpy_floats_beyond_float32_are_refused(device_name, a):
    x, y = [1.0] * 4, [0.0] * 4
    text = _refused(GpuInvalidArgument, lambda: gpu(saxpy, 4, a, x, y), x, y)
    assert "'a'" in text and "float32" in text


@pytest.mark.parametrize("param,value,kind", [("n", 10**5000, GpuInvalidArgument),
                                              ("a", 10**5000, GpuInvalidArgument),
                                              ("a", "x" * 10_000, GpuArgumentTypeError)],
                         ids=["huge-int-n", "huge-int-a", "long-str-a"])
def test_messages_stay_short_for_huge_values(device_name, param, value, kind):
    x, y = [1.0] * 4, [0.0] * 4
    args = {"n": 4, "a": 2.0}
    args[param] = value
    text = _refused(kind, lambda: gpu(saxpy, args["n"], args["a"], x, y), x, y)
    assert f"'{param}'" in text and len(text) < 400
    for size in (4, 5000):
        v = [1] * size
        v[2] = -(10**5000)
        text = _refused(GpuInvalidArgument, lambda: gpu(scale_ints, size, 1, v), v)
        assert "'v'[2]" in text and "bits" in text and len(text) < 400


def test_infinities_and_nan_pass_as_floats(device_name):
    x, y = [1.0, -1.0, 0.5, 2.0], [0.0] * 4
    gpu(saxpy, 4, float("inf"), x, y).join()
    assert y == [float("inf"), float("-inf"), float("inf"), float("inf")]
    x, y = [float("inf"), float("-inf"), 1.0, 2.0], [0.0] * 4
    gpu(saxpy, 4, np.float32("nan"), x, y).join()
    assert all(v != v for v in y)                           # nan * anything is nan


# ----------------------------------------------------------------- the storage-binding limit
# Arrays beyond the device's storage-binding limit (128 MiB on lavapipe) are provoked with
# np.zeros, whose pages are never written (the machine maps them only when touched), so these
# tests cost no memory; the sentinels at both ends show the caller's data is left as it was.

@Gpu
def double_rows(u: list[list[float]]) -> None:
    i = GlobalIdx.x
    j = GlobalIdx.y
    if i < len(u) and j < u.shape[1]:
        u[i, j] = u[i, j] * 2.0


@Gpu.func
def add_f(a: float, b: float) -> float:
    return a + b


def _binding_limit() -> int:
    from cthreads.backend import device as dev
    return dev.get_context().limit("max-storage-buffer-binding-size")


def _untouched_zeros(shape, dtype):
    a = np.zeros(shape, dtype)
    a.flat[0], a.flat[-1] = 1.5, 2.5
    return a


def _still_untouched(a) -> bool:
    return a.flat[0] == 1.5 and a.flat[-1] == 2.5 and np.count_nonzero(a) == 2


# (a launch splits such an array across bindings, tests/device/test_split_arrays.py, and
# f.reduce reduces it in parts, tests/device/test_split_reduce.py)
@pytest.mark.parametrize("entry", ["bind"])
def test_a_2d_float64_array_beyond_the_binding_limit_names_its_shape(device_name, entry):
    from cthreads.backend import get_queue
    limit = _binding_limit()
    rows = max(5000, limit // (8 * 4000) + 1)         # 5,000 x 4,000 float64 on lavapipe
    a = _untouched_zeros((rows, 4000), np.float64)
    # each entry's own buffers exist already: only the array's could be allocated below
    gpu(double_rows, np.ones((2, 2)), threads=(2, 2)).join()
    assert add_f.reduce(np.ones(3)) == 3.0
    GpuArena().bind(u=np.ones(3)).release()
    before = get_queue().pool.allocations
    call = {"bind": lambda: GpuArena().bind(u=a)}[entry]
    with pytest.raises(GpuInvalidArgument) as info:
        call()
    msg = str(info.value)
    assert f"a {rows:,} x 4,000 float64 array of {rows * 4000:,} elements" in msg, msg
    assert f"needs {rows * 4000 * 8:,} bytes" in msg and f"{limit:,}-byte" in msg, msg
    assert f"at most {limit // 8:,} float64 elements per list" in msg, msg
    assert "split the data" in msg and device_name in msg
    assert {"bind": "bind(u=...)"}[entry] in msg
    assert get_queue().pool.allocations == before
    assert _still_untouched(a)


# ------------------------------------------------------------------- dtype mismatch hints
# The hint never advises a conversion that changes values silently: complex data is named as
# such (astype(np.float32) would drop the imaginary part), float -> int and int64 -> int32
# conversions say what they lose, and a plain list[float] given int32 data is told float64.

@Gpu
def count_up(k: list[int32], out: list[int]) -> None:
    i = GlobalIdx.x
    if i < len(k):
        out[i] = k[i] + 1


def test_complex_data_for_a_float_list_is_not_told_to_drop_the_imaginary_part(device_name):
    z = np.array([1 + 2j, 3 - 4j, 0.5j])
    y = np.zeros(3, np.float32)
    msg = _refused(GpuInvalidArgument, lambda: gpu(saxpy, 3, 2.0, z, y), z, y)
    assert "parameter 'x'" in msg and "complex128" in msg and "astype" not in msg, msg
    assert "complex data is not a list of real numbers" in msg
    assert "np.ascontiguousarray(arr.real)" in msg and "np.ascontiguousarray(arr.imag)" in msg
    assert "declare the parameter list[complex]" in msg
    msg = _refused(GpuInvalidArgument, lambda: add_f.reduce(z.astype(np.complex64)), z)
    assert "complex data is not a list of real numbers" in msg and "astype" not in msg, msg
    # what the message says works: the two parts, each a float list
    re_, im = np.ascontiguousarray(z.real), np.ascontiguousarray(z.imag)
    out_re, out_im = np.zeros(3), np.zeros(3)
    gpu(saxpy, 3, 2.0, re_, out_re).join()
    gpu(saxpy, 3, 2.0, im, out_im).join()
    np.testing.assert_array_equal(out_re + 1j * out_im, 2.0 * z)


@pytest.mark.parametrize("data, says", [
    (np.array([1.5, 2.0]), "drops fractions"),
    (np.array([2**40, 1], np.int64), "wraps values outside -2**31..2**31-1"),
    (np.array([True, False]), "keeps every value"),
])
def test_dtype_hints_for_an_int32_list_say_what_a_conversion_loses(device_name, data, says):
    out = np.zeros(data.size, np.int32)
    msg = _refused(GpuInvalidArgument, lambda: gpu(count_up, data, out), data, out)
    assert "parameter 'k'" in msg and says in msg, msg


def test_int32_data_for_a_plain_float_list_is_told_float64(device_name):
    x = np.array([2**24 + 1, -3], np.int32)
    y = np.zeros(2, np.float64)
    msg = _refused(GpuInvalidArgument, lambda: gpu(saxpy, 2, 1.0, x, y), x, y)
    assert "pass arr.astype(np.float64), which keeps every value" in msg, msg
    gpu(saxpy, 2, 1.0, x.astype(np.float64), y).join()
    assert y.tolist() == [2**24 + 1, -3]                 # exact, as the hint says
