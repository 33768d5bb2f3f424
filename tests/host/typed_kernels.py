"""Kernels of the docs and examples in their typed form, for ``test_typing.py``: mypy must
accept every line (``Array2D[float]`` where a 2-D list is indexed ``u[i, j]``; width types;
shared arrays, atomics, barriers, device functions, decorator options). Importing it decorates
them (no device needed)."""

from __future__ import annotations

import math

from cthreads.gpu import (
    Array1D, Array2D, Array3D, BlockDim, GlobalIdx, Gpu, GridDim, ThreadIdx, atomic_add,
    atomic_compare_exchange, atomic_max, float32, float64, gpu, int32, int64, shared, uint32,
)
from cthreads.sync import Barrier, __sync_threads

ALPHA = 0.2
BINS = 256


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:      # README
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


@Gpu
def heat_step(w: int, h: int, u: Array2D[float], v: Array2D[float]) -> None:  # heat2d.py
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        return
    lap = u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1] - 4.0 * u[y, x]
    v[y, x] = u[y, x] + ALPHA * lap


@Gpu(workgroup=(16, 16))
def blur_rows(img: Array2D[float], out: Array2D[float]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    h: int = len(img)
    w: int = img.shape[1]
    if x < 1 or y >= h or x >= w - 1:
        return
    out[y][x] = (img[y][x - 1] + img[y][x] + img[y][x + 1]) / 3.0      # chained indexes
    out[y, x] += 0.0 * img[y, -1]                                         # update, from the end


@Gpu.func
def sphere(px: float, py: float, pz: float, cx: float, cy: float, cz: float, r: float) -> float:
    return math.sqrt((px - cx) ** 2 + (py - cy) ** 2 + (pz - cz) ** 2) - r


@Gpu
def distance_field(vol: Array3D[float]) -> None:                       # volume.py
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    z: int = GlobalIdx.z
    d: int = vol.shape[0]
    h: int = vol.shape[1]
    w: int = vol.shape[2]
    if x >= w or y >= h or z >= d:
        return
    a = sphere((x + 0.5) / w, (y + 0.5) / h, (z + 0.5) / d, 0.35, 0.5, 0.5, 0.25)
    b = sphere((x + 0.5) / w, (y + 0.5) / h, (z + 0.5) / d, 0.7, 0.45, 0.55, 0.18)
    vol[z, y, x] = min(a, b)
    vol[z][y][x] = min(a, b)


@Gpu.func
def add(a: int, b: int) -> int:
    return a + b


@Gpu
def histogram_private(n: int, count: int, data: list[int], bins: list[int]) -> None:
    local: list[int] = shared(BINS)
    t: int = ThreadIdx.x
    stride: int = GridDim.x * BlockDim.x
    for k in range(GlobalIdx.x, count, stride):
        atomic_add(local, data[k], 1)
    __sync_threads()
    for b in range(t, BINS, BlockDim.x):
        c: int = local[b]
        if c != 0:
            atomic_add(bins, b, c)
    Barrier.arrive_and_wait()


@Gpu
def counts_2d(w: int, h: int, labels: Array2D[int], hist: Array2D[int],
              best: list[int]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    atomic_add(hist, (y, labels[y, x]), 1)
    atomic_max(best, 0, labels[y, x])
    atomic_compare_exchange(best, 1, 0, x)
    hist[y, 0] = hist[y, 0] + 0


@Gpu(boundscheck=False)
def widths(n: int, x: list[float32], y: Array1D[float64], k: list[int32], big: list[int64],
           u: list[uint32], mask: Array2D[bool]) -> None:
    i: int = GlobalIdx.x
    if i >= n or i >= y.shape[0]:
        return
    v: float32 = float32(x[i]) * 2.0
    y[i] = float64(v) + y[i] / 3
    k[i] = int32(k[i] * 3) // 2
    big[i] = int64(k[i]) << 33
    u[i] = uint32(k[i]) ^ 7
    mask[0, i] = v > 1.0 and not math.isnan(v)
    acc = 0
    for j in range(3):
        acc += j
    x[i] = acc + float(round(v)) + abs(-v) + max(v, 0.5, 0.25)


def host_code() -> None:
    """The host side: launches, jobs, the decorated objects' attributes."""
    x, y = [1.0, 2.0], [3.0, 4.0]
    job = gpu(saxpy, 2, 2.0, x, y)
    job.join()
    print(saxpy.wgsl, add.reduce([1, 2, 3]))
    saxpy.simulate(2, 2.0, x, y)
    saxpy(2, 2.0, x, y)
