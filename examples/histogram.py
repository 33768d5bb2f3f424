"""A 256-bin histogram of 1,000,000 ints with ``atomic_add``, exactly equal to numpy.bincount.

Two kernels:

* ``histogram``: one thread per value, ``atomic_add(bins, data[i], 1)`` on the global bins.
  Simple; every thread's increment goes to device memory, and threads that hit the same bin
  wait for each other.
* ``histogram_private``: a fixed number of workgroups walk the data with a grid-stride loop and
  count into a per-workgroup ``shared`` copy of the bins (atomics on workgroup memory); after a
  barrier each workgroup adds its non-zero counts to the global bins. Far fewer atomics on
  device memory when the data is much larger than the bins.

Integer atomics are exact, so both must equal ``numpy.bincount`` bin for bin, whatever order the
threads ran in. A value outside 0..255 would be an out-of-range index: ``join()`` raises
``GpuIndexError`` and the bins are left untouched. Run: ``python examples/histogram.py [n]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cthreads.gpu import BlockDim, GlobalIdx, Gpu, GridDim, ThreadIdx, atomic_add, gpu, shared
from cthreads.sync import __sync_threads

BINS = 256
PRIVATE_GROUPS = 128        # workgroups of the privatised kernel (64 threads each)


@Gpu
def histogram(n: int, data: list[int], bins: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        atomic_add(bins, data[i], 1)


@Gpu
def histogram_private(n: int, count: int, data: list[int], bins: list[int]) -> None:
    # n is the number of threads launched; count the number of values
    local: list[int] = shared(BINS)           # zero at the start of every workgroup
    t: int = ThreadIdx.x
    stride: int = GridDim.x * BlockDim.x
    for k in range(GlobalIdx.x, count, stride):
        atomic_add(local, data[k], 1)
    __sync_threads()                          # all counts of this workgroup are in `local`
    for b in range(t, BINS, BlockDim.x):      # 64 threads merge 256 bins, 4 each
        c: int = local[b]
        if c != 0:
            atomic_add(bins, b, c)


def run_global(data: np.ndarray) -> np.ndarray:
    bins = np.zeros(BINS, np.int32)
    gpu(histogram, data.size, data, bins).join()
    return bins


def run_private(data: np.ndarray, groups: int = PRIVATE_GROUPS) -> np.ndarray:
    bins = np.zeros(BINS, np.int32)
    gpu(histogram_private, groups * 64, data.size, data, bins).join()
    return bins


def best_time(fn, *args, repeats: int = 3) -> tuple[np.ndarray, float]:
    """fn's result and its best wall time in seconds over ``repeats`` runs (the first run
    also compiles the kernel for the device, so it is not timed)."""
    result = fn(*args)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return result, best


def main(n: int = 1_000_000, seed: int = 0, repeats: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    # a lopsided distribution, so that some bins are hot (many threads hit them at once)
    data = np.clip(rng.normal(100.0, 30.0, n), 0, BINS - 1).astype(np.int32)
    expect = np.bincount(data, minlength=BINS)

    bins, t_global = best_time(run_global, data, repeats=repeats)
    private, t_private = best_time(run_private, data, repeats=repeats)

    ok = bool(np.array_equal(bins, expect) and np.array_equal(private, expect))
    print(f"histogram of {n:,} ints into {BINS} bins; fullest bin {int(expect.argmax())} "
          f"holds {int(expect.max()):,}")
    for label, got, secs in (("global atomic_add:       ", bins, t_global),
                             ("shared bins, then merged:", private, t_private)):
        verdict = "equals" if np.array_equal(got, expect) else "DIFFERS FROM"
        print(f"  {label} {1e3 * secs:7.1f} ms, {verdict} numpy.bincount")
    return {"data": data, "bins": bins, "private": private, "numpy": expect, "ok": ok,
            "seconds_global": t_global, "seconds_private": t_private}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    sys.exit(0 if result["ok"] else 1)
