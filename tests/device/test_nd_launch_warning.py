"""A kernel over N-D lists that reads GlobalIdx.y, launched without threads= (issue 21, item 3).

The launch keeps 0.2's 1-D rule (where .y reads 0, so only row 0 is computed) but warns with
``GpuNDLaunchWarning``, once per kernel and call site, at the caller's line. 1-D kernels, kernels
over N-D lists that read only .x, and launches with threads= do not warn. The compiler gives
the index builtins a kernel reads as data (``KernelProgram.index_reads``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cthreads.gpu import (BlockIdx, GlobalIdx, Gpu, GpuArena, GpuInvalidArgument,
                          GpuNDLaunchWarning, ThreadIdx, gpu)
from tests.device import nd_kernels as nk


@Gpu
def mark_rows(a: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(a) and x < a.shape[1]:
        a[y, x] = float(y + 1)


@Gpu.func
def row_of_thread() -> int:
    return GlobalIdx.y


@Gpu
def mark_rows_via_func(a: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = row_of_thread()
    if y < len(a) and x < a.shape[1]:
        a[y, x] = 7.0


@Gpu
def block_rows(a: list[list[int]]) -> None:
    x: int = BlockIdx.x * 8 + ThreadIdx.x
    y: int = BlockIdx.y * 8 + ThreadIdx.y
    if y < len(a) and x < a.shape[1]:
        a[y, x] = 1


def test_index_reads_are_data_on_the_program():
    assert mark_rows.program.index_reads == (("GlobalIdx", "x"), ("GlobalIdx", "y"))
    assert mark_rows.program.index_axes == {"x", "y"}
    assert ("GlobalIdx", "y") in mark_rows_via_func.program.index_reads   # a device function's
    assert nk.row_sums.program.index_axes == {"x"}
    assert nk.fill_volume.program.index_axes == {"x", "y", "z"}
    assert ("BlockIdx", "y") in block_rows.program.index_reads
    assert mark_rows.nd_hint is not None and nk.row_sums.nd_hint is None
    assert nk.count_1d_y.nd_hint is None            # reads .y, but its lists are 1-D (0.2)


def _launch_without_threads(a):
    return gpu(mark_rows, a)          # the line the warning must point at


def test_a_2d_kernel_without_threads_warns_at_the_callers_line(device_name):
    mark_rows.__dict__.pop("_nd_warned", None)
    a = np.zeros((3, 5), np.float32)
    with pytest.warns(GpuNDLaunchWarning, match=r"kernel mark_rows reads GlobalIdx\.y .*"
                                                r"'a'.*threads=\(w, h\)") as record:
        _launch_without_threads(a).join()
    assert issubclass(GpuNDLaunchWarning, UserWarning)
    (w,) = [r for r in record if r.category is GpuNDLaunchWarning]
    assert w.filename == __file__
    assert w.lineno == _launch_without_threads.__code__.co_firstlineno + 1
    # still 0.2's rule: .y reads 0, row 0 only (the behaviour the warning is about)
    np.testing.assert_array_equal(a, np.r_[[np.ones(5)], np.zeros((2, 5))].astype(np.float32))
    b = np.zeros((3, 5), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpu(mark_rows, b, threads=(5, 3)).join()       # with threads=: every row, no warning
    np.testing.assert_array_equal(b, np.repeat([[1.0], [2.0], [3.0]], 5, axis=1))


def test_once_per_kernel_and_call_site(device_name):
    mark_rows.__dict__.pop("_nd_warned", None)
    a = np.zeros((2, 4), np.float32)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(3):
            gpu(mark_rows, a).join()                   # one site: one warning
        gpu(mark_rows, a).join()                       # another site: one more
        with GpuArena() as arena:                      # the relaunch memo's path warns too
            arena.bind(a=a)
            for _ in range(3):
                gpu(mark_rows, a).join()
        gpu(mark_rows_via_func, a).join()              # another kernel
        gpu(block_rows, np.zeros((2, 4), np.int32)).join()
    ours = [r for r in record if r.category is GpuNDLaunchWarning]
    assert len(ours) == 5
    assert len({r.lineno for r in ours}) == 5
    assert "mark_rows_via_func reads GlobalIdx.y" in str(ours[3].message)
    assert "BlockIdx.y" in str(ours[4].message)


def test_1d_kernels_and_launches_with_threads_do_not_warn(device_name):
    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    sums = np.zeros(5, np.float32)
    ys = np.full(10, -1, np.int32)
    v = np.zeros((2, 3, 4), np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpu(nk.row_sums, a, sums).join()               # N-D lists, reads .x only
        gpu(nk.count_1d_y, 10, ys).join()              # 1-D lists reading .y: 0.2's rule
        gpu(nk.fill_volume, v, threads=(4, 3, 2)).join()
        gpu(mark_rows, np.zeros((1, 3), np.float32), threads=3).join()   # threads=n: 1-D
    np.testing.assert_array_equal(sums, a.sum(axis=1))
    np.testing.assert_array_equal(ys, np.full(10, 100, np.int32))
    z, y, x = np.indices((2, 3, 4))
    np.testing.assert_array_equal(v, 10000 * z + 100 * y + x)


def test_a_launch_that_raises_does_not_use_up_the_warning(device_name):
    """The warning comes with a launch that was submitted: one refused for its arguments does
    not warn (and so does not use up the call site)."""
    mark_rows.__dict__.pop("_nd_warned", None)
    counts = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for a in (np.zeros((2, 4), np.int32), np.zeros((2, 4), np.float32)):
            try:
                gpu(mark_rows, a).join()               # int32 refused first, then runs
            except GpuInvalidArgument:
                pass
            counts.append(sum(r.category is GpuNDLaunchWarning for r in record))
    assert counts == [0, 1]


def test_device_keyword_still_points_at_the_caller(device_name):
    mark_rows.__dict__.pop("_nd_warned", None)
    a = np.zeros((2, 4), np.float32)
    with pytest.warns(GpuNDLaunchWarning) as record:
        gpu(mark_rows, a, device=0).join()
    (w,) = [r for r in record if r.category is GpuNDLaunchWarning]
    assert w.filename == __file__
