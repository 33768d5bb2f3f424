"""Sample kernels shared by the demo, the benchmark and the tests.

Each kernel here is written once, as a user would write it, so that the demo, the benchmark and
the tests run the very same kernel instead of copies that could drift apart. Next to each kernel
is its independent numpy reference where the check is not a one-liner.

Importing this module decorates the kernels, that is, translates them to WGSL: it needs no
device and acquires none. The kernels are ordinary ``@Gpu`` kernels, launched with
``cthreads.gpu.gpu(kernel, *args)`` and runnable as plain Python with ``kernel.simulate``.
(User code imports ``Gpu`` and ``GlobalIdx`` from ``cthreads.gpu``; inside the package this
module imports them from the modules that define them, which are the same objects.)
"""

from __future__ import annotations

import math

import numpy as np

from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu

@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    """y = a*x + y for the first n elements (float32 on the device)."""
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


@Gpu
def mandelbrot(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    """Escape-time Mandelbrot over [-2.2, 0.8] x [-1.2, 1.2]: counts[i] = the iterations of
    pixel i (row-major, width wide) before |z| exceeds 2, at most max_iter."""
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


@Gpu.func
def norm2(x: float, y: float) -> float:
    """x² + y², through ``sq`` (defined after it: device functions resolve in any order)."""
    return sq(x) + sq(y)


@Gpu.func
def sq(v: float) -> float:
    return v * v


@Gpu
def lengths(n: int, xs: list[float], ys: list[float], out: list[float]) -> None:
    """out = sqrt(xs² + ys²) through two device functions (the spec's example)."""
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = math.sqrt(norm2(xs[i], ys[i]))


@Gpu
def lengths_inline(n: int, xs: list[float], ys: list[float], out: list[float]) -> None:
    """``lengths`` written inline: the baseline of "device functions cost nothing"."""
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = math.sqrt(xs[i] * xs[i] + ys[i] * ys[i])


@Gpu
def spin(x: list[float], y: list[float], steps: int) -> None:
    """A compute-bound kernel: ``steps`` rounds of a logistic map per element (the several-
    devices figures and tests)."""
    i = GlobalIdx.x
    if i < len(x):
        v = x[i]
        for _ in range(steps):
            v = 3.5 * v * (1.0 - v)
        y[i] = v


@Gpu
def mandelbrot2d(width: int, height: int, max_iter: int, counts: list[list[int]]) -> None:
    """``mandelbrot`` with a 2-D launch (``threads=(width, height)``): one thread per pixel,
    ``counts[py, px]``, no ``%`` or ``//`` to find the pixel."""
    px: int = GlobalIdx.x
    py: int = GlobalIdx.y
    if px >= width or py >= height:
        return
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
    counts[py, px] = k


def mandelbrot_numpy(width: int, height: int, max_iter: int, rows=None) -> np.ndarray:
    """``mandelbrot``'s iteration for every pixel at once in float32 numpy, in the kernel's
    expression order: an independent reference (int32, row-major). A driver may re-associate
    float expressions, so a few pixels on the set's boundary can differ by an iteration.
    ``rows`` (an index array): those rows only, as a (len(rows), width) array (a large image's
    reference costs seconds per row block)."""
    f32 = np.float32
    if rows is None:
        idx = np.arange(width * height)
        px = (idx % width).astype(f32)
        py = (idx // width).astype(f32)
    else:
        rows = np.asarray(rows)
        px = np.broadcast_to(np.arange(width).astype(f32), (rows.size, width))
        py = np.broadcast_to(rows.astype(f32)[:, None], (rows.size, width))
    cx = f32(-2.2) + f32(3.0) * px / f32(width)
    cy = f32(-1.2) + f32(2.4) * py / f32(height)
    x = np.zeros_like(cx)
    y = np.zeros_like(cy)
    counts = np.zeros(cx.shape, np.int32)
    for _ in range(max_iter):
        alive = x * x + y * y <= f32(4.0)
        if not alive.any():
            break
        xt = x * x - y * y + cx
        y = np.where(alive, f32(2.0) * x * y + cy, y)
        x = np.where(alive, xt, x)
        counts += alive
    return counts


__all__ = ["saxpy", "mandelbrot", "mandelbrot2d", "mandelbrot_numpy", "sq", "norm2", "lengths",
           "lengths_inline", "spin"]
