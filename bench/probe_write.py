"""Why a write-only kernel (``out[i] = 1.0``, 256M float32 into a GpuArray) ran at 0.9 TB/s on
the H200 in ``bench/random_fill.py``: its host time of a joined launch against its
``device_time``, at several sizes, next to the resident saxpy's. Prints ms and GB/s; no asserts.

    python bench/probe_write.py [--reps 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cthreads.gpu import GlobalIdx, Gpu, device_name, gpu, zeros  # noqa: E402
from examples.samples import saxpy  # noqa: E402


@Gpu
def fill_one(n: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = 1.0


def _measure(kernel, args, nbytes: int, reps: int) -> str:
    gpu(kernel, *args).join(download=False)
    host, dev = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        job = gpu(kernel, *args, timed=True)
        job.join(download=False)
        host.append(time.perf_counter() - t0)
        dev.append(job.device_time or float("nan"))
    h, d = statistics.median(host), statistics.median(dev)
    return (f"host {h * 1e3:8.3f} ms ({nbytes / h / 1e9:7.1f} GB/s)   device_time "
            f"{d * 1e3:8.3f} ms ({nbytes / d / 1e9:7.1f} GB/s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--max-log2", type=int, default=28)
    a = ap.parse_args()
    print(device_name())
    for log2 in range(20, a.max_log2 + 1, 2):
        n = 2 ** log2
        out = zeros(n, np.float32)
        print(f"fill_one n=2^{log2}: {_measure(fill_one, (n, out), 4 * n, a.reps)}")
        x, y = zeros(n, np.float32), zeros(n, np.float32)
        print(f"saxpy    n=2^{log2}: {_measure(saxpy, (n, 2.0, x, y), 12 * n, a.reps)}")
        del out, x, y


if __name__ == "__main__":
    main()
