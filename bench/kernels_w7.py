"""W7's kernel: a new ~30-line kernel, imported only after other launches have run."""

from __future__ import annotations

import math

from cthreads.gpu import GlobalIdx, Gpu


@Gpu
def w7_step(n: int, steps: int, dt: float, pos: list[float], vel: list[float],
            res: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    p: float = pos[i]
    v: float = vel[i]
    acc: float = 0.0
    k: int = 0
    while k < steps:
        f: float = -p * 0.5
        if p > 1.0:
            f = f - 0.25
        elif p < -1.0:
            f = f + 0.25
        else:
            f = f * 2.0
        v = v + f * dt
        p = p + v * dt
        acc = acc + p * p
        k += 1
    s: float = 0.0
    for j in range(4):
        s = s + math.sqrt(acc + j)
    bonus: float = 0.0
    if acc > 10.0:
        bonus = math.floor(acc * 0.1)
    res[i] = s + bonus + math.floor(p)
