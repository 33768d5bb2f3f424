"""The RED workload for cthreads: sums and maxima with ``func.reduce``, resident and from numpy.

For each size n (float32 values of ``reference.sum_input``):

* ``sum_res_<n>_GBps`` / ``max_res_<n>_GBps``: ``add.reduce(x)`` / ``biggest.reduce(x)`` with
  ``x`` bound in a ``GpuArena`` (the values stay on the device; each call runs its passes and
  reads back the one result);
* ``sum_np_<n>_GBps`` / ``max_np_<n>_GBps``: the same on the numpy array (uploaded per call);
* ``saxpy_res_<n>_GBps``: the resident saxpy of ``examples.samples`` over the same n in the same
  process, joined each launch, in bytes *read* per second (8 per element), the yardstick of
  the reduction's target (a reduction reads 4 bytes per element and writes nothing).

GB/s count 4 bytes per element for the reductions; medians of ``reps`` calls. Every result is
checked against numpy (``reference.check_sum``, exact maxima); a wrong one is an error, never a
time. numpy's and torch's sides are ``cpu_numpy.red`` and ``torch_cuda.red``.
"""

from __future__ import annotations

import numpy as np

from cthreads.gpu import Gpu, GpuArena, gpu
from examples.samples import saxpy

from reference import A, check_sum, sum_input
from timing import median_ms


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu.func
def biggest(a: float, b: float) -> float:
    return max(a, b)


def _gbps(n: int, ms: float, bytes_per_element: int = 4) -> float:
    return n * bytes_per_element / ms / 1e6


def _reductions(x: np.ndarray, tag: str, label: str, reps: int, m: dict) -> str | None:
    n = x.size
    sums, maxima = [], []
    add.reduce(x)
    biggest.reduce(x)
    m[f"sum_{tag}_{label}_GBps"] = _gbps(n, median_ms(lambda: sums.append(add.reduce(x)), reps))
    m[f"max_{tag}_{label}_GBps"] = _gbps(
        n, median_ms(lambda: maxima.append(biggest.reduce(x)), reps))
    want = float(x.max())
    for s in sums:
        err = check_sum(s, x)
        if err:
            return f"sum {tag} n={n}: {err}"
    for v in maxima:
        if v != want:
            return f"max {tag} n={n}: {v!r}, numpy says {want!r}"
    return None


def red(p: dict) -> dict:
    reps = p["reps"]
    m: dict = {}
    for label, n in p["sizes"]:
        x = sum_input(n)
        y = np.zeros(n, np.float32)
        with GpuArena() as arena:
            arena.bind(x=x, y=y)
            gpu(saxpy, n, A, x, y).join(download=False)
            m[f"saxpy_res_{label}_GBps"] = _gbps(
                n, median_ms(lambda: gpu(saxpy, n, A, x, y).join(download=False), reps), 8)
            err = _reductions(x, "res", label, reps, m)
        if err is None:
            err = _reductions(x, "np", label, reps, m)
        if err:
            return {"error": err, "metrics": m}
    return {"error": None, "metrics": m}


WORKLOADS = {"RED": red}
