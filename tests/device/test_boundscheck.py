"""Bounds checks on by default: an out-of-range index raises at join and changes nothing."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cthreads.codegen.program import Variant
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, GpuIndexError, gpu


@Gpu
def shift_right(n: int, src: list[float], dst: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    dst[i + 1] = src[i]          # the last thread writes one past the end


SHIFT_LINE = inspect.getsourcelines(shift_right.fn)[1] + 5


@Gpu(boundscheck=False)
def shift_right_unchecked(n: int, src: list[float], dst: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    if i + 1 < n:
        dst[i + 1] = src[i]


def test_out_of_range_write_raises_at_join_with_location(device_name):
    src = [float(i) for i in range(100)]
    dst = [-1.0] * 100
    job = gpu(shift_right, 100, src, dst)
    with pytest.raises(GpuIndexError) as info:
        job.join()
    msg = str(info.value)
    assert "shift_right" in msg and "'dst'" in msg and "index 100" in msg
    assert f"line {SHIFT_LINE}" in msg and "dst[i + 1] = src[i]" in msg
    assert isinstance(info.value, IndexError)
    assert dst == [-1.0] * 100 and src == [float(i) for i in range(100)]
    with pytest.raises(GpuIndexError):                 # the job keeps its error
        job.join()


def test_status_is_reset_after_a_failure(device_name):
    dst = [0.0] * 10
    with pytest.raises(GpuIndexError):
        gpu(shift_right, 10, [1.0] * 10, dst).join()
    ok = [0.0] * 11
    gpu(shift_right, 10, [2.0] * 10, ok).join()         # in range: dst has 11 elements
    assert ok == [0.0] + [2.0] * 10


def test_failure_of_resident_launch_surfaces_at_sync(device_name):
    src = [1.0] * 50
    dst = [0.0] * 50
    with GpuArena() as arena:
        arena.bind(src=src, dst=dst)
        for _ in range(3):
            gpu(shift_right, 50, src, dst).join(download=False)
        with pytest.raises(GpuIndexError, match="'dst'"):
            arena.sync()
        assert dst == [0.0] * 50


def test_sync_after_a_failed_sync_downloads_the_changes(device_name):
    # a failed bounds check writes nothing back; the next sync() still brings every list the
    # launches changed, the failing launch's in-range writes included
    src = [1.0] * 50
    dst = [0.0] * 50
    with GpuArena() as arena:
        arena.bind(src=src, dst=dst)
        gpu(shift_right, 50, src, dst).join(download=False)
        with pytest.raises(GpuIndexError, match="'dst'"):
            arena.sync()
        assert dst == [0.0] * 50
        arena.sync()
        assert dst == [0.0] + [1.0] * 49


def test_unchecked_kernel_has_no_status_buffer(device_name):
    assert shift_right_unchecked.program.status_binding is None
    assert "ct_status" not in shift_right_unchecked.wgsl
    src = np.arange(20, dtype=np.float32).tolist()
    dst = [0.0] * 20
    gpu(shift_right_unchecked, 20, src, dst).join()
    assert dst == [0.0] + src[:-1]


def test_guarded_accesses_need_no_device_checks():
    from tests.device.kernels import copy_floats, saxpy

    # i = GlobalIdx.x; if i >= n: return -> x[i], y[i] are safe whenever n <= len(x), len(y)
    assert saxpy.program.fast_requires == (("n", "x", 0), ("n", "y", 0))
    assert "ct_ld_" not in saxpy.program.render(Variant(checks="proven"))
    # if i < len(src): dst[i] = src[i] -> src[i] is always safe, dst[i] still checked
    assert copy_floats.program.proven_checks == 1
    assert "ct_st_dst" in copy_floats.wgsl and "ct_ld_src" not in copy_floats.wgsl


def test_n_larger_than_a_list_runs_the_checked_variant(device_name):
    from tests.device.kernels import copy_floats, saxpy

    x = [1.0] * 5                              # n = 10 > len(x): the host cannot prove x[i]
    y = [0.0] * 10
    with pytest.raises(GpuIndexError, match=r"index [5-9] is out of range for list 'x' of length 5"):
        gpu(saxpy, 10, 2.0, x, y).join()
    assert y == [0.0] * 10
    dst = [0.0] * 3                             # dst shorter than src
    with pytest.raises(GpuIndexError, match="'dst'"):
        gpu(copy_floats, [1.0] * 4, dst).join()
    assert dst == [0.0] * 3
