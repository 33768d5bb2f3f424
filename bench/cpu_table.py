"""The "CPU" workload for cthreads: four kernels against numpy, resident and with transfers.

Shows what a CPU Vulkan driver (lavapipe) gives against numpy on the same cores: element-wise
(saxpy), a 5-point stencil on a grid flattened by hand, a sum (``add.reduce`` of
``examples/reduce_sum.py``) and Mandelbrot. Each kernel is timed twice:

* ``*_res_ms``: the data already on the device in a ``GpuArena``, one launch joined with
  ``join(download=False)`` (the reduction: ``add.reduce`` of the resident list, its passes and
  the read of the one result);
* ``*_io_ms``: ``gpu(kernel, ..., arrays).join()`` on numpy arrays: upload, launch, download
  and writeback (the reduction: ``add.reduce`` of the numpy array, upload included).

numpy's side is ``cpu_numpy.cpu``. Every result is checked against numpy (``reference``); a
wrong result is an error, never a time. cthreads only: the original has no arrays or arenas of
this kind, raw wgpu has no such kernels.
"""

from __future__ import annotations

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu
from examples.samples import mandelbrot, saxpy

from examples.reduce_sum import add
from reference import (
    A, check_mandelbrot_sized, check_saxpy, check_stencil, check_sum, saxpy_arrays,
    stencil_input, sum_input,
)
from timing import median_ms


@Gpu
def stencil5(n: int, width: int, u: list[float], v: list[float]) -> None:
    """One Jacobi step of a 5-point stencil on a ``width``-wide grid; the border is copied."""
    i: int = GlobalIdx.x
    if i >= n:
        return
    col: int = i % width
    if i < width or i >= n - width or col == 0 or col == width - 1:
        v[i] = u[i]
    else:
        v[i] = 0.25 * (u[i - 1] + u[i + 1] + u[i - width] + u[i + width])


def _saxpy(n: int, reps: int, m: dict) -> str | None:
    x, y = saxpy_arrays(n)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        gpu(saxpy, n, A, x, y).join(download=False)
        m["saxpy_res_ms"] = median_ms(
            lambda: gpu(saxpy, n, A, x, y).join(download=False), reps)
        arena.sync("y")
    err = check_saxpy(y, n, reps + 1)
    if err:
        return f"saxpy resident: {err}"
    x, y = saxpy_arrays(n)
    gpu(saxpy, n, A, x, y).join()
    m["saxpy_io_ms"] = median_ms(lambda: gpu(saxpy, n, A, x, y).join(), reps)
    err = check_saxpy(y, n, reps + 1)
    return f"saxpy with transfers: {err}" if err else None


def _stencil(width: int, reps: int, m: dict) -> str | None:
    u = stencil_input(width)
    n = u.size
    v = np.zeros_like(u)
    with GpuArena() as arena:
        arena.bind(u=u, v=v)
        gpu(stencil5, n, width, u, v).join(download=False)
        m["stencil_res_ms"] = median_ms(
            lambda: gpu(stencil5, n, width, u, v).join(download=False), reps)
        arena.sync("v")
    err = check_stencil(v, u, width)
    if err:
        return f"stencil resident: {err}"
    v = np.zeros_like(u)
    gpu(stencil5, n, width, u, v).join()
    m["stencil_io_ms"] = median_ms(lambda: gpu(stencil5, n, width, u, v).join(), reps)
    err = check_stencil(v, u, width)
    return f"stencil with transfers: {err}" if err else None


def _reduce(n: int, reps: int, m: dict) -> str | None:
    x = sum_input(n)
    got = []
    with GpuArena() as arena:
        arena.bind(x=x)
        add.reduce(x)
        m["sum_res_ms"] = median_ms(lambda: got.append(add.reduce(x)), reps)
    for s in got:
        err = check_sum(s, x)
        if err:
            return f"sum resident: {err}"
    got.clear()
    add.reduce(x)
    m["sum_io_ms"] = median_ms(lambda: got.append(add.reduce(x)), reps)
    for s in got:
        err = check_sum(s, x)
        if err:
            return f"sum with transfers: {err}"
    return None


def _mandel(width: int, height: int, iters: int, reps: int, m: dict) -> str | None:
    n = width * height
    counts = np.zeros(n, np.int32)
    with GpuArena() as arena:
        arena.bind(counts=counts)
        gpu(mandelbrot, n, width, height, iters, counts).join(download=False)
        m["mandel_res_ms"] = median_ms(
            lambda: gpu(mandelbrot, n, width, height, iters, counts).join(download=False), reps)
        arena.sync()
    err = check_mandelbrot_sized(counts, width, height, iters)
    if err:
        return f"Mandelbrot resident: {err}"
    counts = np.zeros(n, np.int32)
    gpu(mandelbrot, n, width, height, iters, counts).join()
    m["mandel_io_ms"] = median_ms(
        lambda: gpu(mandelbrot, n, width, height, iters, counts).join(), reps)
    err = check_mandelbrot_sized(counts, width, height, iters)
    return f"Mandelbrot with transfers: {err}" if err else None


def cpu(p: dict) -> dict:
    """The four kernels, resident and with transfers; ms per call, medians of ``reps``."""
    reps = p["reps"]
    m: dict = {}
    for err in (_saxpy(p["n"], reps, m), _stencil(p["grid"], reps, m),
                _reduce(p["n"], reps, m), _mandel(*p["mandel"], reps, m)):
        if err:
            return {"error": err, "metrics": m}
    return {"error": None, "metrics": m}


WORKLOADS = {"CPU": cpu}
