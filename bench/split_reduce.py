#!/usr/bin/env python3
"""GB/s of ``add.reduce`` of a float32 array within one storage binding and of one several
bindings long (reduced in parts), as numpy arrays (uploaded each call) and as GpuArrays
(resident), best of ``--reps`` calls after a warm-up.

    python bench/split_reduce.py [--small 25165824] [--large 134217728] [--reps 5] [--equal]

The defaults are issue 23's lavapipe row: 24M float32 (96 MiB, one binding) against 128M
(512 MiB, four parts of lavapipe's 128 MiB). No asserts: it prints the figures and the ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cthreads.gpu import Gpu, device_name, to_device  # noqa: E402
from cthreads.runtime import reducer  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def best_gbs(cases, reps: int, equal: bool = False) -> list:
    """(best GB/s, best GB per CPU-second of this process) of ``add.reduce`` of each
    ``(values, nbytes)``, the cases run in turn at each repetition (so the machine's load
    meets them alike), after a warm-up of each. On a CPU driver the device's threads are this
    process's, so the CPU time is the work itself, however loaded the machine is.

    ``equal``: each sample reduces about the same bytes for every case (three calls of the
    largest, as many of the others), so a loaded machine's interruptions meet samples of the
    same length; with one call per sample a longer call is likelier to be interrupted."""
    most = max(nbytes for _, nbytes in cases)
    calls = [max(1, round(3 * most / nbytes)) if equal else 1 for _, nbytes in cases]
    for values, _ in cases:
        add.reduce(values)                              # pipelines, pooled buffers
    best = [[float("inf")] * 2 for _ in cases]
    for _ in range(reps):
        for k, (values, _) in enumerate(cases):
            t, c = time.perf_counter(), time.process_time()
            for _ in range(calls[k]):
                add.reduce(values)
            best[k][0] = min(best[k][0], time.perf_counter() - t)
            best[k][1] = min(best[k][1], time.process_time() - c)
    return [(m * nbytes / t / 1e9, m * nbytes / c / 1e9)
            for (_, nbytes), m, (t, c) in zip(cases, calls, best)]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", type=int, default=24 << 20)
    ap.add_argument("--large", type=int, default=128 << 20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-gpuarray", action="store_true")
    ap.add_argument("--equal", action="store_true",
                    help="samples of equal bytes (3 calls of --large, 16 of --small)")
    args = ap.parse_args(argv)
    pool = reducer._reducer_now().queue.pool
    limit = pool.binding_bytes()
    print(f"device: {device_name()}; storage-binding limit {limit:,} bytes")
    forms = [("numpy", lambda x: x)] + ([] if args.no_gpuarray else [("GpuArray", to_device)])
    hosts = [np.random.default_rng(0).random(n, dtype=np.float32)
             for n in (args.small, args.large)]
    for form, make in forms:
        cases = [(make(x), x.nbytes) for x in hosts]
        rates = best_gbs(cases, args.reps, args.equal)
        for x, (gbs, cpu) in zip(hosts, rates):
            parts = -(-x.size // reducer.part_elems(pool, x.size, 4))
            print(f"{form:8s} n={x.size:>11,} ({x.nbytes / 2**20:4.0f} MiB, {parts} part(s)): "
                  f"{gbs:6.2f} GB/s, {cpu:6.2f} GB per CPU-second")
        print(f"{form:8s} ratio large/small: {rates[1][0] / rates[0][0]:.2f}x GB/s, "
              f"{rates[1][1] / rates[0][1]:.2f}x GB per CPU-second")
        del cases
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
