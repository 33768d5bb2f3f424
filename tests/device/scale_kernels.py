"""Kernels of the several-devices, pickling and Dask tests (module level: they pickle by
reference), and the functions that worker processes run."""

from __future__ import annotations

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu
from examples.samples import spin  # noqa: F401 - the tests' compute-bound kernel (by reference)

SCALE = 3.0


@Gpu.func
def twice(v: float) -> float:
    return v * 2.0


@Gpu
def axpy(a: float, x: list[float], y: list[float], n: int) -> None:
    i = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def scaled_twice(x: list[float], y: list[float]) -> None:
    i = GlobalIdx.x
    if i < len(x):
        y[i] = twice(x[i]) * SCALE


def spin_reference(x: np.ndarray, steps: int) -> np.ndarray:
    v = x.astype(np.float32)
    for _ in range(steps):
        v = np.float32(3.5) * v * (np.float32(1.0) - v)
    return v


def run_in_worker(kernel, n: int) -> list:
    """What a worker process runs: launch ``kernel`` (received pickled) on 0..n-1 and return
    the result."""
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    gpu(kernel, x, y).join()
    return y.tolist()


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def worker_report(dask_worker) -> tuple:
    """Run on every Dask worker by ``Client.run`` (which passes the worker): its name, the
    device index its tasks use, the devices its process opened."""
    from cthreads.backend import device  # noqa: PLC0415
    from cthreads.dask import worker_device  # noqa: PLC0415

    return dask_worker.name, worker_device(), [c.index for c in device.open_contexts()]


@Gpu
def rows_plus_cols(u: list[list[float]], v: list[list[float]]) -> None:
    """v[y, x] = 2 * u[y, x] + x - y, over a 2-D block (x along the last axis)."""
    x = GlobalIdx.x
    y = GlobalIdx.y
    if y < u.shape[0] and x < u.shape[1]:
        v[y, x] = 2.0 * u[y, x] + x - y


@Gpu
def add_table(x: list[float], table: list[float], y: list[float], n: int) -> None:
    """y[i] = x[i] + table[i % len(table)]: a whole array read by every block."""
    i = GlobalIdx.x
    if i < n:
        y[i] = x[i] + table[i % len(table)]


def gpuarray_report(d) -> tuple:
    """What a worker sees of a GpuArray it received (pickled by value): its device, this
    worker's device index, its values' sum."""
    from cthreads.dask import worker_device  # noqa: PLC0415

    return d.device, worker_device(), float(d.numpy().sum())


def block_device(block) -> np.ndarray:
    """A block's device index (a GpuArray's), for a map over GpuArray blocks."""
    return np.full(1, block._slot.queue.ctx.index, np.int32)
