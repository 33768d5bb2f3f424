"""saxpy GB/s on GpuArrays under the storage-binding limit (one binding) and past it (split
across bindings): ``python bench/split_saxpy.py [small_elems] [large_elems] [reps] [kernel]``.

``kernel``: ``saxpy`` (element-wise: a split launch runs one dispatch per part,
runtime/part_launch.py) or ``rsaxpy`` (the same work at index n - 1 - i, not element-wise: the
split addressing of codegen/split.py).

Defaults: 24M float32 (96 MiB, one binding on lavapipe) vs 128M float32 (512 MiB, 4 parts).
Each size twice, interleaved: one warm-up launch, then ``reps`` launches timed one by one (each
joined); the best and the median are printed as GB/s counting 12 bytes per element (x read, y
read and written), and the ratio of the better of each size's two rounds.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

from cthreads.gpu import Gpu, GlobalIdx, full, gpu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.samples import saxpy  # noqa: E402  (the saxpy every benchmark times)


@Gpu
def rsaxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        j: int = n - 1 - i
        y[j] = a * x[j] + y[j]


def rate(n: int, reps: int, kernel=saxpy) -> tuple[float, float, int]:
    x = full(n, 1.0, dtype=np.float32)
    y = full(n, 2.0, dtype=np.float32)
    gpu(kernel, n, 0.5, x, y).join()           # warm-up: compile, first touch
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        gpu(kernel, n, 0.5, x, y).join()
        times.append(time.perf_counter() - t)
    parts = len(y._slot.parts)
    gb = 12 * n / 1e9
    return gb / min(times), gb / statistics.median(times), parts


def main() -> None:
    small = int(sys.argv[1]) if len(sys.argv) > 1 else 24 << 20
    large = int(sys.argv[2]) if len(sys.argv) > 2 else 128 << 20
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    kernel = {"saxpy": saxpy, "rsaxpy": rsaxpy}[sys.argv[4] if len(sys.argv) > 4 else "saxpy"]
    results = {small: (0.0, 0.0), large: (0.0, 0.0)}
    for n in (small, large, small, large):         # interleaved: the first run pays warm-up
        best, med, parts = rate(n, reps, kernel)
        results[n] = (max(best, results[n][0]), max(med, results[n][1]))
        print(f"{n:>12,} float32  {parts} part(s)  best {best:6.2f} GB/s  median {med:6.2f} GB/s")
    (sb, sm), (lb, lm) = results[small], results[large]
    print(f"ratio large/small: best {lb / sb:.3f}x, median {lm / sm:.3f}x")


if __name__ == "__main__":
    main()
