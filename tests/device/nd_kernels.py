"""N-D kernels for the device tests (module-level, as users write them)."""

from __future__ import annotations

from cthreads.gpu import (BlockDim, BlockIdx, GlobalIdx, Gpu, GridDim, ThreadIdx, atomic_add,
                          shared)
from cthreads.sync import __sync_threads


@Gpu
def blur(w: int, h: int, img: list[list[float]], out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    s: float = 0.0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            yy = min(max(y + dy, 0), h - 1)
            xx = min(max(x + dx, 0), w - 1)
            s += img[yy, xx]
    out[y][x] = s / 9.0


@Gpu
def scale_rows(a: list[list[float]], k: float) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(a) and x < a.shape[1]:
        a[y, x] *= k
        a[y][x] += 1.0


@Gpu
def fill_volume(v: list[list[list[int]]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    z: int = GlobalIdx.z
    if z < v.shape[0] and y < v.shape[1] and x < v.shape[2]:
        v[z, y, x] = 10000 * z + 100 * y + x


@Gpu
def indexes_2d(w: int, h: int, gx: list[list[int]], gy: list[list[int]],
               info: list[int]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        gx[y, x] = BlockIdx.x * BlockDim.x + ThreadIdx.x
        gy[y, x] = BlockIdx.y * BlockDim.y + ThreadIdx.y
    if x == 0 and y == 0:
        info[0] = BlockDim.x
        info[1] = BlockDim.y
        info[2] = BlockDim.z
        info[3] = GridDim.x
        info[4] = GridDim.y
        info[5] = GlobalIdx.z


@Gpu(workgroup=(16, 4))
def wide_groups(w: int, h: int, out: list[list[int]], dims: list[int]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        out[y, x] = y * w + x
    if x == 0 and y == 0:
        dims[0] = BlockDim.x
        dims[1] = BlockDim.y


@Gpu
def histogram_2d(w: int, h: int, img: list[list[int]], bins: list[list[int]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        atomic_add(bins, (y % 2, img[y, x] % 4), 1)


@Gpu
def tile_transpose(n: int, a: list[list[float]], out: list[list[float]]) -> None:
    tile: list[float] = shared(64)
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    tx: int = ThreadIdx.x
    ty: int = ThreadIdx.y
    if x < n and y < n:
        tile[ty * 8 + tx] = a[y, x]
    __sync_threads()
    if x < n and y < n:
        out[x, y] = tile[ty * 8 + tx]


@Gpu
def row_sums(a: list[list[float]], sums: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        s: float = 0.0
        for j in range(a.shape[1]):
            s += a[i][j]
        sums[i] = s


@Gpu
def bad_column(w: int, h: int, a: list[list[float]], out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        out[y, x] = a[y, x + 1]


@Gpu.func
def laplace(u: list[list[float]], y: int, x: int) -> float:
    return u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1] - 4.0 * u[y, x]


@Gpu
def jacobi(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        return
    v[y, x] = u[y, x] + 0.25 * laplace(u, y, x)


@Gpu
def count_1d_y(n: int, ys: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        ys[i] = GlobalIdx.y + GlobalIdx.z * 10 + BlockDim.y * 100
