"""The W3 and W6 kernels with bounds checks off (cthreads only: the original has no
``boundscheck`` option), to report what the default checks cost."""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu


@Gpu(boundscheck=False)
def saxpy_unchecked(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


@Gpu(boundscheck=False)
def mandelbrot_unchecked(n: int, width: int, height: int, max_iter: int,
                         counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    px: int = i % width
    py: int = i // width
    cx: float = -2.2 + 3.0 * px / width
    cy: float = -1.2 + 2.4 * py / height
    x: float = 0.0
    y: float = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[i] = k
