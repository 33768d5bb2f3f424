"""Kernels shared by the device tests (module-level, as users write them).

``saxpy`` is the sample of examples/samples.py, the one the demo and the benchmark run too."""

from __future__ import annotations

import numpy as np

from cthreads.gpu import BlockDim, BlockIdx, GlobalIdx, Gpu, GridDim, ThreadIdx
from examples.samples import saxpy  # re-exported: the shared sample


@Gpu
def add_one(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = y[i] + 1.0


@Gpu
def index_probe(n: int, gid: list[int], ok: list[bool], grid: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    gid[i] = i
    ok[i] = BlockIdx.x * BlockDim.x + ThreadIdx.x == GlobalIdx.x and GlobalIdx.y == 0
    if i == 0:
        grid[0] = GridDim.x
        grid[1] = GridDim.y
        grid[2] = BlockDim.x


@Gpu
def scale_ints(n: int, k: int, v: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        v[i] = v[i] * k


@Gpu
def negate_flags(flags: list[bool]) -> None:
    i: int = GlobalIdx.x
    if i < len(flags):
        flags[i] = not flags[i]


@Gpu
def copy_floats(src: list[float], dst: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(src):
        dst[i] = src[i]


def assert_saxpy(y, a, x, y0) -> None:
    """``y == a*x + y0`` in float32, allowing one rounding of difference per element: GPU
    drivers may fuse the multiply-add (one rounding) where numpy rounds twice."""
    x = np.asarray(x, np.float32)
    y0 = np.asarray(y0, np.float32)
    got = np.asarray(y, np.float32)
    expect = np.float32(a) * x + y0
    scale = np.abs(np.float32(a) * x) + np.abs(y0)
    err = np.abs(got.astype(np.float64) - expect.astype(np.float64))
    assert np.all(err <= 2.4e-7 * scale + 1e-30), (err / (scale + 1e-30)).max()
