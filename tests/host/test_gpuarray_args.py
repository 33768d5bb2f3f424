"""The GpuArray argument handler (``args.Device``) without a device: which handler a GpuArray
gets, the checks of check_args against the kernel's parameters (dtype, dimensions, the plain
float width, zero size) with their messages, and the width a GpuArray gives plain lists. A
stand-in of the root class carries a fake slot: no device is made."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.errors import GpuInvalidArgument
from cthreads.gpu import GlobalIdx, Gpu
from cthreads.runtime import args


class FakeSlot:
    def __init__(self, shape):
        self.dims = shape
        self.live_checks = 0
        self.offset = 0           # not a view

    def check_live(self, where):
        self.live_checks += 1


class FakeArray(args.DeviceArrayBase):
    """What args.Device reads of a GpuArray: _slot, shape, dtype, ndim, size."""

    __slots__ = ("_slot", "shape", "dtype", "ndim", "size")

    def __init__(self, shape, dtype):
        self._slot = FakeSlot(shape)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.ndim = len(shape)
        self.size = int(np.prod(shape))

    def __len__(self):
        return self.shape[0]


@Gpu
def host_saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def host_rows(a: list[list[float]], b: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        b[y, x] = a[y, x]


def _check(kernel, *values):
    prog = kernel.program
    return args.check_args(prog, values, args.wheres(prog))


def test_kind_and_width():
    a = FakeArray((4,), np.float64)
    assert args.kind_of(a) is args.DEVICE and args.kind_of(a, 1) is args.DEVICE
    assert args.width_of(a) == ("float64", "a float64 GpuArray")
    assert args.width_of(FakeArray((4,), np.int32)) == ("int", "a int32 GpuArray")


def test_check_args_binds_the_slot():
    x, y = FakeArray((10,), np.float32), FakeArray((10,), np.float32)
    scalars, lists, n = _check(host_saxpy, 10, 0.5, x, y)
    assert n == 10 and [a.slot for a in lists] == [x._slot, y._slot]
    assert [a.dims for a in lists] == [(10,), (10,)] and [a.nbytes for a in lists] == [40, 40]
    assert x._slot.live_checks == 1                    # a destroyed device is checked first
    a, b = FakeArray((3, 5), np.float32), FakeArray((3, 5), np.float32)
    scalars, lists, _ = _check(host_rows, a, b)
    assert scalars[-4:] == [3, 5, 3, 5]                # the shapes ride in the uniform


@pytest.mark.parametrize("value, message", [
    (FakeArray((10,), np.int32), r"host_saxpy\(\) parameter 'x' is a GpuArray of shape \(10,\) "
     r"and dtype int32, but the kernel declares list\[float\] \(float32 or float64 arrays\): "
     r"pass a GpuArray of dtype float32 or float64"),
    (FakeArray((2, 5), np.float32), r"parameter 'x' is a 2-D GpuArray of shape \(2, 5\), but "
     r"the kernel declares a list; pass a 1-D GpuArray"),
    (FakeArray((0,), np.float32), r"parameter 'x' is an empty GpuArray of shape \(0,\); the "
     "device needs at least one element per list"),
])
def test_refusals(value, message):
    with pytest.raises(GpuInvalidArgument, match=message):
        _check(host_saxpy, 10, 0.5, value, FakeArray((10,), np.float32))


def test_2d_parameter_refuses_1d():
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'a' is a 1-D GpuArray of shape "
                       r"\(6,\), but the kernel declares a 2-D list"):
        _check(host_rows, FakeArray((6,), np.float32), FakeArray((2, 3), np.float32))
