"""Estimate pi by Monte Carlo on the device, with an error bar: ``Random(seed, thread)``.

Each thread draws ``per`` points in the unit square from its own stream (Philox-4x32-10, one
stream per thread: no state in memory, the same numbers on every device and in plain Python)
and counts those inside the quarter circle; the host adds the counts. With ``N`` points and a
hit fraction ``p``, the estimate is ``4 p`` with standard error ``4 sqrt(p (1 - p) / N)``.
Run: ``python examples/monte_carlo_pi.py [threads] [per_thread] [seed]`` (exits non-zero when
the estimate is more than five standard errors from pi).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, Random, gpu


@Gpu
def pi_counts(n: int, per: int, seed: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    rng = Random(seed, i)
    hits: int = 0
    for _ in range(per):
        x: float = rng.random()
        y: float = rng.random()
        if x * x + y * y < 1.0:
            hits += 1
    counts[i] = hits


def main(threads: int = 65536, per: int = 256, seed: int = 2024) -> dict:
    counts = np.zeros(threads, np.int32)
    gpu(pi_counts, threads, per, seed, counts).join()
    total = threads * per
    p = int(counts.sum(dtype=np.int64)) / total
    estimate = 4.0 * p
    error = 4.0 * math.sqrt(p * (1.0 - p) / total)
    print(f"pi ~ {estimate:.6f} +- {error:.6f} ({total} points; "
          f"{abs(estimate - math.pi) / error:.2f} standard errors from pi)")
    return {"counts": counts, "estimate": estimate, "error": error, "points": total}


if __name__ == "__main__":
    result = main(*(int(a) for a in sys.argv[1:4]))
    sys.exit(0 if abs(result["estimate"] - math.pi) < 5 * result["error"] else 1)
