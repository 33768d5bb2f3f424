"""Views of GpuArrays split across bindings (past the storage-binding limit): reshape and ravel
share its parts, as do leading rows (kernels, f.reduce, transfers, stream order); views that
start inside such an array are refused with nothing changed; device
arrays joined by ``concatenate`` across parts. ``config.override(binding_bytes=4096)`` makes
4 KiB "the limit" so that small arrays split."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import Gpu, GpuInvalidArgument, gpu, to_device
from cthreads.runtime import device_array
from tests.device.kernels import saxpy
from tests.device.nd_kernels import scale_rows

LIMIT = 4096


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@pytest.fixture
def small_limit():
    with config.override(binding_bytes=LIMIT):
        yield


def _host(n, seed=5):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_reshape_and_ravel_of_a_split_array_share_its_parts(small_limit):
    host = _host(64 * 50)                           # 12,800 bytes: 4 parts of 4 KiB
    d = to_device(host)
    assert len(d._slot.parts) == 4
    grid = d.reshape(64, 50)
    flat = grid.ravel()
    assert grid._slot.parts == d._slot.parts and flat._slot.parts == d._slot.parts
    np.testing.assert_array_equal(grid.numpy(), host.reshape(64, 50))
    # a 2-D kernel writes through the view; the base and the ravel see it
    gpu(scale_rows, grid, 3.0, threads=(50, 64)).join()
    want = host.reshape(64, 50) * np.float32(3.0) + np.float32(1.0)
    np.testing.assert_array_equal(d.numpy(), want.ravel())
    np.testing.assert_array_equal(flat.numpy(), want.ravel())
    # a 1-D kernel on the ravel, then a reduction of the 2-D view, in stream order
    x = to_device(np.ones(64 * 50, np.float32))
    gpu(saxpy, 64 * 50, 2.0, x, flat)
    want = want.ravel() + np.float32(2.0)
    got = add.reduce(grid)
    assert got == pytest.approx(float(want.astype(np.float64).sum()), rel=1e-5)
    np.testing.assert_array_equal(grid.numpy().ravel(), want)


def test_set_and_copy_through_a_view_of_a_split_array(small_limit):
    host = _host(4000)
    d = to_device(host)
    grid = d.reshape(40, 100)
    new = _host(4000, seed=9).reshape(40, 100)
    grid.set(new)
    np.testing.assert_array_equal(d.numpy(), new.ravel())
    c = grid.copy()
    assert c.shape == (40, 100) and len(c._slot.parts) == len(d._slot.parts)
    np.testing.assert_array_equal(c.numpy(), new)


@pytest.mark.parametrize("make", [lambda d: d[1:], lambda d: d[1500:],
                                  lambda d: d.reshape(40, 100)[3:5]])
def test_views_inside_a_split_array_are_refused(small_limit, make):
    host = _host(4000)
    d = to_device(host)
    with pytest.raises(GpuInvalidArgument, match="several device buffers"):
        make(d)
    np.testing.assert_array_equal(d.numpy(), host)


def test_leading_rows_of_a_split_array_in_a_kernel(small_limit):
    host = _host(4000)
    d = to_device(host)
    head = d.reshape(40, 100)[:25]                  # 10,000 bytes: 3 of the 4 parts
    assert len(head._slot.parts) == 3
    gpu(scale_rows, head, 2.0, threads=(100, 25)).join()
    want = host.reshape(40, 100).copy()
    want[:25] = want[:25] * np.float32(2.0) + np.float32(1.0)
    np.testing.assert_array_equal(d.numpy().reshape(40, 100), want)
    np.testing.assert_array_equal(head.numpy(), want[:25])


def test_concatenate_across_parts(small_limit):
    a, b = _host(1500, 1), _host(2100, 2)           # 6 KiB + 8.4 KiB: both split
    da, db = to_device(a), to_device(b)
    small = to_device(_host(100, 3))                # one part
    joined = device_array.concatenate([da._slot, small._slot, db._slot], (3700,))
    from cthreads.gpu_array import GpuArray
    out = np.empty(3700, np.float32)
    device_array.download(joined, out)
    np.testing.assert_array_equal(out, np.concatenate([a, small.numpy(), b]))
    assert isinstance(da, GpuArray)


def test_split_arrays_in_kernels_on_a_second_device(monkeypatch, device_name):
    from cthreads.gpu import devices, shutdown, use_device

    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    assert len(devices()) >= 2
    host_x, host_y = _host(3000, 7), _host(3000, 8)
    try:
        with config.override(binding_bytes=LIMIT):
            with use_device(1):
                x, y = to_device(host_x), to_device(host_y)
                assert len(x._slot.parts) == 3
                gpu(saxpy, 3000, 2.0, x, y)                     # one dispatch per part
                gpu(scale_rows, y.reshape(30, 100), 0.5, threads=(100, 30))  # the switch
                want = ((host_y + np.float32(2.0) * host_x) * np.float32(0.5)
                        + np.float32(1.0))
                np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
            with pytest.raises(GpuInvalidArgument, match="device"):
                gpu(saxpy, 3000, 2.0, x, y)                     # an array belongs to its device
            np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    finally:
        shutdown()
