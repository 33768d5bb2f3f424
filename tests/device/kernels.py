"""Kernels shared by the device tests (module-level, as users write them)."""

from __future__ import annotations

from cthreads.gpu import BlockDim, BlockIdx, GlobalIdx, Gpu, GridDim, ThreadIdx


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


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
