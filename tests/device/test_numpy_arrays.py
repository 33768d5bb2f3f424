"""numpy arrays wherever a list goes: uploaded as they are, written back in place."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import GpuArena, GpuInvalidArgument, gpu
from tests.device.kernels import add_one, assert_saxpy, negate_flags, saxpy, scale_ints


@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
def test_saxpy_on_arrays_in_place(device_name, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y0 = y.copy()
    x_before = x.copy()
    y_id = id(y)
    gpu(saxpy, n, 1.5, x, y).join()
    assert id(y) == y_id
    assert_saxpy(y, 1.5, x, y0)
    np.testing.assert_array_equal(x, x_before)


def test_int32_and_bool_arrays(device_name):
    v = np.arange(-100, 100, dtype=np.int32)
    gpu(scale_ints, 200, 7, v).join()
    np.testing.assert_array_equal(v, np.arange(-100, 100, dtype=np.int32) * 7)
    flags = np.arange(50) % 2 == 0
    gpu(negate_flags, flags).join()
    np.testing.assert_array_equal(flags, np.arange(50) % 2 == 1)
    assert flags.dtype == np.bool_


def test_arrays_and_lists_mix(device_name):
    x = np.ones(64, np.float32)
    y = [2.0] * 64
    gpu(saxpy, 64, 3.0, x, y).join()
    assert y == [5.0] * 64


def test_read_only_input_array_is_fine(device_name):
    x = np.ones(8, np.float32)
    x.flags.writeable = False
    y = np.zeros(8, np.float32)
    gpu(saxpy, 8, 2.0, x, y).join()
    np.testing.assert_array_equal(y, np.full(8, 2.0, np.float32))


@pytest.mark.parametrize("bad,needle", [
    (np.zeros(8, np.float16), "dtype float16"),
    (np.zeros(8, np.int32), "dtype int32"),
    (np.zeros((2, 4), np.float32), "2-D"),
    (np.zeros(16, np.float32)[::2], "non-contiguous"),
    (np.zeros(0, np.float32), "empty"),
])
def test_bad_arrays_change_nothing(device_name, bad, needle):
    before = bad.copy()
    with pytest.raises(GpuInvalidArgument) as info:
        gpu(add_one, 8, bad)
    msg = str(info.value)
    assert needle in msg and "'y'" in msg
    np.testing.assert_array_equal(bad, before)


def test_read_only_output_array_is_refused(device_name):
    y = np.zeros(4, np.float32)
    y.flags.writeable = False
    with pytest.raises(GpuInvalidArgument, match="read-only"):
        gpu(add_one, 4, y)


def test_arrays_in_arena(device_name):
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros(1000, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for _ in range(10):
            gpu(saxpy, 1000, 1.0, x, y).join(download=False)
        assert not y.any()
        arena.sync("y")
    np.testing.assert_array_equal(y, 10 * x)
    with pytest.raises(GpuInvalidArgument, match="float16"):
        GpuArena().bind(z=np.zeros(3, np.float16))


def test_numpy_scalars_are_accepted(device_name):
    y = np.zeros(4, np.float32)
    gpu(saxpy, np.int64(4), np.float32(0.5), np.ones(4, np.float32), y).join()
    np.testing.assert_array_equal(y, np.full(4, 0.5, np.float32))
    with pytest.raises(TypeError, match="expects an int"):
        gpu(saxpy, np.float64(4.0), 1.0, np.ones(4, np.float32), y)
    with pytest.raises(GpuInvalidArgument, match="32-bit"):
        gpu(saxpy, np.int64(2**40), 1.0, np.ones(4, np.float32), y)
