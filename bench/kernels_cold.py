"""W4's script body: the only kernel a cold-start process defines."""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]
