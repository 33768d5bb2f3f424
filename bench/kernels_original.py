"""saxpy and Mandelbrot for the original (PyPI ``cthreads-gpu``), which has no
``examples.samples``: the same source as ``examples/samples.py``, which ours runs. The original
translates kernels from their source file, so they live in a file of their own."""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


@Gpu
def mandelbrot(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
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
