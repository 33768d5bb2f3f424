"""Representative kernels whose WGSL is pinned in tests/codegen/golden/ (regenerate with
CTHREADS_UPDATE_GOLDEN=1). Line numbers in the WGSL comments refer to this file."""

from __future__ import annotations

import math

from cthreads.lang.indexes import GlobalIdx, ThreadIdx
from cthreads.lang.intrinsics import atomic_add, shared
from cthreads.kernel import Gpu
from cthreads.sync import __sync_threads


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


@Gpu(boundscheck=False)
def python_semantics(n: int, x: list[float], k: list[int], flags: list[bool]) -> None:
    i = GlobalIdx.x
    if 0 <= i < n and flags[i]:
        k[i] = k[i] // 3 % 4 + int(x[i]) ** 2
        x[i] = x[i] // 2.0 + math.floor(x[i]) + (x[i] if x[i] > 0 else -x[i])
    for out in range(n - 1, -1, -2):
        flags[out] = math.isnan(x[out]) or x[out] != 1.0


@Gpu
def reduce_sum(n: int, x: list[float], total: list[float]) -> None:
    tile: list[float] = shared(64)
    i = GlobalIdx.x
    t = ThreadIdx.x
    if i >= n:
        return
    tile[t] = x[i]
    __sync_threads()
    s = 32
    while s > 0:
        if t < s:
            tile[t] += tile[t + s]
        __sync_threads()
        s //= 2
    if t == 0:
        atomic_add(total, 0, tile[0])


GOLDEN = [saxpy, python_semantics, reduce_sum]
