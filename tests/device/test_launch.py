"""gpu(): dispatch sizes, folding past 65,535 workgroups, arguments checked before the device."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import GpuInvalidArgument, gpu
from tests.device.kernels import (assert_saxpy, copy_floats, index_probe, negate_flags,
                                  saxpy, scale_ints)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4_194_241, 5_000_000])
def test_saxpy_any_n(device_name, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xl, yl = x.tolist(), y.tolist()
    gpu(saxpy, n, 2.5, xl, yl).join()
    assert isinstance(yl[0], float)
    assert_saxpy(yl, 2.5, x, y)
    assert xl == x.tolist()                      # read-only list untouched


@pytest.mark.parametrize("n", [1, 65, 4_194_241])
def test_index_builtins_read_flat_values(device_name, n):
    gid, ok, grid = [0] * n, [False] * n, [0, 0, 0]
    gpu(index_probe, n, gid, ok, grid).join()
    assert gid == list(range(n))
    assert all(ok)
    assert grid == [-(-n // 64), 1, 64]


def test_problem_size_from_longest_list(device_name):
    src = [float(i) for i in range(1000)]
    dst = [0.0] * 1000
    gpu(copy_floats, src, dst).join()
    assert dst == src


def test_int_and_bool_lists_round_trip(device_name):
    v = list(range(-500, 500))
    gpu(scale_ints, len(v), -3, v).join()
    assert v == [i * -3 for i in range(-500, 500)] and type(v[0]) is int
    flags = [i % 3 == 0 for i in range(777)]
    gpu(negate_flags, flags).join()
    assert flags == [i % 3 != 0 for i in range(777)] and type(flags[0]) is bool


def test_int_passed_for_float_is_fine(device_name):
    y = [1.0, 2.0]
    gpu(saxpy, 2, 3, [1, 2], y).join()
    assert y == [4.0, 8.0]


def test_int_overflow_wraps(device_name):
    v = [2**30, -(2**31)]
    gpu(scale_ints, 2, 4, v).join()
    assert v == [0, 0]


def test_writes_into_same_list_objects(device_name):
    y = [0.0] * 10
    alias = y
    gpu(saxpy, 10, 1.0, [1.0] * 10, y).join()
    assert alias is y and y == [1.0] * 10


BAD_CALLS = [
    ("a", (4, "2.0", [1.0] * 4, [0.0] * 4), TypeError),
    ("n", (4.0, 2.0, [1.0] * 4, [0.0] * 4), TypeError),
    ("n", (2**31, 2.0, [1.0] * 4, [0.0] * 4), GpuInvalidArgument),
    ("a", (4, 1e39, [1.0] * 4, [0.0] * 4), GpuInvalidArgument),
    ("x", (4, 2.0, (1.0, 2.0, 3.0, 4.0), [0.0] * 4), TypeError),
    ("x", (4, 2.0, None, [0.0] * 4), TypeError),
    ("x", (4, 2.0, "abcd", [0.0] * 4), TypeError),
    ("x", (4, 2.0, [], [0.0] * 4), GpuInvalidArgument),
    ("x[2]", (4, 2.0, [1.0, 2.0, "3", 4.0], [0.0] * 4), TypeError),
    ("x[1]", (4, 2.0, [1.0, None, 3.0, 4.0], [0.0] * 4), TypeError),
    ("x[3]", (4, 2.0, [1.0, 2.0, 3.0, 1e40], [0.0] * 4), GpuInvalidArgument),
]


@pytest.mark.parametrize("name,args,exc", BAD_CALLS)
def test_bad_arguments_change_nothing(device_name, name, args, exc):
    snapshot = [list(a) if isinstance(a, list) else a for a in args]
    with pytest.raises(exc) as info:
        gpu(saxpy, *args)
    assert repr(name.split("[")[0]) in str(info.value) or name in str(info.value)
    if "[" in name:
        assert name.split("x")[1] in str(info.value)       # the element index
    for before, after in zip(snapshot, args):
        assert before == after
    y = [1.0, 1.0]                                          # the process is still usable
    gpu(saxpy, 2, 1.0, [1.0, 2.0], y).join()
    assert y == [2.0, 3.0]


def test_bad_int_elements(device_name):
    v = [1, 2, 2**40]
    with pytest.raises(GpuInvalidArgument, match=r"v'?\)?\[2\]"):
        gpu(scale_ints, 3, 2, v)
    assert v == [1, 2, 2**40]
    w = [1, 2.5, 3]
    with pytest.raises(TypeError, match=r"\[1\]"):
        gpu(scale_ints, 3, 2, w)
    assert w == [1, 2.5, 3]
    f = [True, 1]
    with pytest.raises(TypeError, match=r"\[1\]"):
        gpu(negate_flags, f)
    assert f == [True, 1]


LONG = 70_001          # past SMALL and past one struct chunk (convert.CHUNK), with a tail


@pytest.mark.parametrize("pos, bad, exc, kind", [
    (LONG - 1, "3", TypeError, "float"), (66_000, None, TypeError, "float"),
    (65_536, 1e39, GpuInvalidArgument, "float"), (5, 2**2000, GpuInvalidArgument, "float"),
    (LONG - 2, 2**40, GpuInvalidArgument, "int"), (40_000, 2.5, TypeError, "int")])
def test_bad_elements_of_long_lists(device_name, pos, bad, exc, kind):
    good = 1.5 if kind == "float" else 7
    v = [good] * LONG
    v[pos] = bad
    before = list(v)
    with pytest.raises(exc, match=rf"\[{pos}\]"):
        if kind == "float":
            gpu(saxpy, LONG, 2.0, v, [0.0] * LONG)
        else:
            gpu(scale_ints, LONG, 2, v)
    assert v == before


def test_long_lists_pack_exactly(device_name):
    import numpy as np

    rng = np.random.default_rng(11)
    x = rng.standard_normal(LONG).astype(np.float32).tolist()
    x[:4] = [float("inf"), -float("inf"), -0.0, 3.4028234663852886e38]
    y = [0.0] * LONG
    gpu(saxpy, LONG, 1.0, x, y).join()
    assert y == x                                            # 1.0 * x + 0.0, bit for bit
    v = list(range(-LONG // 2, LONG - LONG // 2))
    v[0], v[1] = -(2**31), 2**31 - 1
    w = list(v)
    gpu(scale_ints, LONG, 1, w).join()
    assert w == v


def test_call_shape_errors(device_name):
    y = [0.0] * 4
    with pytest.raises(TypeError, match="positionally"):
        gpu(saxpy, 4, 2.0, [1.0] * 4, y=y)
    with pytest.raises(TypeError, match="takes 4"):
        gpu(saxpy, 4, 2.0, [1.0] * 4)
    with pytest.raises(TypeError, match="not a @Gpu kernel"):
        gpu(lambda: None)
    assert y == [0.0] * 4


# (a list past the storage-binding limit is split across bindings, no longer refused:
# tests/device/test_split_arrays.py)
