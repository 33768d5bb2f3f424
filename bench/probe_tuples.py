"""What a tuple result costs: a kernel unpacking ``s, c = sincos(x[i])`` against the same kernel
written inline (``sin(x[i]) * cos(x[i])``), both element-wise (the four-lane variant) and with a
guard that keeps them scalar (``i < n and i >= 0``), so the struct's own cost shows.

    python bench/probe_tuples.py [--n N] [--repeats R]

Launches on ``GpuArray``s (no transfers), alternating the two kernels, median of ``R`` each;
checks that both give the same floats.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu, to_device


@Gpu.func
def sincos(x: float) -> tuple[float, float]:
    return math.sin(x), math.cos(x)


@Gpu
def tuple_lanes(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        s, c = sincos(x[i])
        out[i] = s * c


@Gpu
def inline_lanes(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = math.sin(x[i]) * math.cos(x[i])


@Gpu
def tuple_scalar(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n and i >= 0:
        s, c = sincos(x[i])
        out[i] = s * c


@Gpu
def inline_scalar(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n and i >= 0:
        out[i] = math.sin(x[i]) * math.cos(x[i])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    n = args.n
    x = to_device(np.random.default_rng(0).random(n).astype(np.float32))
    for pair in ((tuple_lanes, inline_lanes), (tuple_scalar, inline_scalar)):
        outs = [to_device(np.zeros(n, np.float32)) for _ in pair]
        times: list = [[], []]
        for k, out in zip(pair, outs):
            gpu(k, n, x, out).join()                # compiled and warm
        for _ in range(args.repeats):
            for j, (k, out) in enumerate(zip(pair, outs)):
                t0 = time.perf_counter()
                gpu(k, n, x, out).join()
                times[j].append(time.perf_counter() - t0)
        np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())
        a, b = (statistics.median(t) for t in times)
        print(f"{pair[0].__name__:13s} {a * 1e3:7.2f} ms   {pair[1].__name__:13s} "
              f"{b * 1e3:7.2f} ms   ratio {a / b:.3f}   (four-lane: "
              f"{pair[0].program.vec_guard is not None}/{pair[1].program.vec_guard is not None})")


if __name__ == "__main__":
    main()
