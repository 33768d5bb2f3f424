"""Host time per saxpy launch: GpuArrays vs arena-bound numpy arrays vs plain numpy arrays.

    python bench/relaunch_gpuarray.py [--small N] [--small-launches K] [--big N] [--big-launches K]

Each case issues K launches ``gpu(saxpy, n, a, x, y)`` and then joins the last one; it reports
the host time per launch of the issuing loop (the seconds ``gpu()`` takes to return) and of the
whole loop with the join (device time included), medians of --repeats rounds in one process, the
cases alternating. Kinds: ``gpuarray`` (GpuArrays), ``alternate`` (two GpuArrays passed in turn
for y, as a solver swaps its arrays), ``arena`` (numpy arrays bound in a GpuArena), ``numpy``
(plain arrays, uploaded and downloaded by every launch, each launch joined: the cost of the
copies, for comparison) and ``torch`` (``y.add_(x, alpha=a)`` on CUDA tensors, where torch sees
a GPU). On lavapipe keep --big within the 128 MiB binding limit and the machine's memory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from cthreads.gpu import GpuArena, gpu, to_device

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.samples import saxpy  # noqa: E402  (the saxpy every benchmark times)


def run_torch(n: int, launches: int) -> tuple[float, float]:
    """torch's ``y.add_(x, alpha=a)`` on CUDA tensors: the peer of the GpuArray loop."""
    import torch  # noqa: PLC0415 - only where torch with CUDA is there

    x = torch.ones(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    y.add_(x, alpha=0.5)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        y.add_(x, alpha=0.5)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    want = 0.5 * (launches + 1)
    got = float(y[0]), float(y[-1])
    assert abs(got[0] - want) < 1e-3 * want and abs(got[1] - want) < 1e-3 * want, got
    return (t1 - t0) / launches, (t2 - t0) / launches


def run_case(kind: str, n: int, launches: int) -> tuple[float, float]:
    if kind == "torch":
        return run_torch(n, launches)
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    arena = None
    if kind in ("gpuarray", "alternate"):
        xs, ys = to_device(x), to_device(y)
    elif kind == "arena":
        arena = GpuArena().bind(x=x, y=y)
        xs, ys = x, y
    else:
        xs, ys = x, y
    gpu(saxpy, n, 0.5, xs, ys).join()          # first launch: compile, memo
    t0 = time.perf_counter()
    job = None
    if kind == "numpy":        # each launch's results come back at its join: join each
        for _ in range(launches):
            gpu(saxpy, n, 0.5, xs, ys).join()
        t1 = time.perf_counter()
    elif kind == "alternate":  # two output arrays taking turns (a solver's swap)
        other = to_device(y)
        gpu(saxpy, n, 0.5, xs, other)
        pair = (ys, other)
        t0 = time.perf_counter()
        for k in range(launches):
            job = gpu(saxpy, n, 0.5, xs, pair[k & 1])
        t1 = time.perf_counter()
        job.join()
        launches //= 2          # each array got half of them: checked below
    else:
        for _ in range(launches):
            job = gpu(saxpy, n, 0.5, xs, ys)
        t1 = time.perf_counter()
        job.join()
    t2 = time.perf_counter()
    if kind == "alternate":
        got = pair[1].numpy()
    elif kind == "gpuarray":
        got = ys.numpy()
    else:
        if arena is not None:
            arena.sync()
        got = ys
    want = 0.5 * (launches + 1)
    assert abs(float(got[0]) - want) < 1e-3 * want and abs(float(got[-1]) - want) < 1e-3 * want, \
        (kind, got[0], want)
    if arena is not None:
        arena.release()
    if kind == "alternate":
        launches *= 2
    return (t1 - t0) / launches, (t2 - t0) / launches


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=1024)
    ap.add_argument("--small-launches", type=int, default=2000)
    ap.add_argument("--big", type=int, default=16 * 2**20)
    ap.add_argument("--big-launches", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kinds", default="gpuarray,alternate,arena,numpy")
    ap.add_argument("--big-kinds", default="gpuarray,arena")
    args = ap.parse_args()
    for n, launches, kinds in ((args.small, args.small_launches, args.kinds),
                               (args.big, args.big_launches, args.big_kinds)):
        if not n or not kinds:
            continue
        kinds = kinds.split(",")
        issue = {k: [] for k in kinds}
        total = {k: [] for k in kinds}
        for r in range(args.repeats):
            for k in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                a, b = run_case(k, n, launches)
                issue[k].append(a)
                total[k].append(b)
        print(f"n={n:,}, {launches} launches, median of {args.repeats}:")
        for k in kinds:
            print(f"  {k:9s} gpu() {statistics.median(issue[k]) * 1e6:9.1f} us/launch   "
                  f"with join {statistics.median(total[k]) * 1e6:11.1f} us/launch")
        if "gpuarray" in kinds and "torch" in kinds:
            print(f"  gpuarray speed / torch speed, with join: "
                  f"{statistics.median(total['torch']) / statistics.median(total['gpuarray']):.3f}")
        if "gpuarray" in kinds and "arena" in kinds:
            print(f"  gpuarray speed / arena speed: gpu() "
                  f"{statistics.median(issue['arena']) / statistics.median(issue['gpuarray']):.3f}"
                  f", with join "
                  f"{statistics.median(total['arena']) / statistics.median(total['gpuarray']):.3f}")


if __name__ == "__main__":
    main()
