"""Sum, max and min of 1,000,000 float32 values on the device with ``func.reduce``.

A ``@Gpu.func`` of two parameters of one type returning that type is a binary operation, and
``func.reduce(values, init=None)`` folds a list, a numpy array or a list kept on the device in
a ``GpuArena`` with it, on the device, and returns a Python number. The operation must be
associative and commutative: the device combines values in a tree (many at once), not left to
right, so a float sum may differ from ``sum(values)`` by rounding (``tolerance`` says how much).

The example reduces a numpy array directly (uploaded for the call), then the same values kept
in an arena after a kernel launch doubled them there: the reduction reads the device copy
where it is, sees the launch's result without a join, and downloads nothing but the answer.
Every result is checked against numpy. Run: ``python examples/reduce_sum.py [n]``.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu.func
def biggest(a: float, b: float) -> float:
    return max(a, b)


@Gpu.func
def smallest(a: float, b: float) -> float:
    return min(a, b)


@Gpu
def double(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = 2.0 * x[i]


def tolerance(x: np.ndarray) -> float:
    """How far a float32 sum of ``x`` on the device may be from the exact sum. Each addition
    rounds by at most u = 2**-24 times the value it makes. A device thread first adds up its
    share in sequence (groups of four values, one grid apart: at most max(16, n / 2**18) of
    them on the devices cthreads shapes reductions for), then the threads' sums meet in trees:
    every value passes through at most that many additions plus ceil(log2 n) and a few per
    pass (8 in all)."""
    n = max(x.size, 2)
    depth = max(16, math.ceil(n / 2**18)) + math.ceil(math.log2(n)) + 8
    return depth * 2.0**-24 * float(np.abs(x, dtype=np.float64).sum())


def resident_sum(x: np.ndarray) -> tuple[float, float]:
    """Double ``x`` in place on the device, then sum and take the max there: (sum, max). ``x``
    itself is written only by the final ``sync``."""
    with GpuArena() as arena:
        arena.bind(x=x)
        gpu(double, x.size, x)                # queued; the reductions run after it
        total = add.reduce(x)
        top = biggest.reduce(x, init=-math.inf)
        arena.sync()
    return total, top


def main(n: int = 1_000_000, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32)                 # uniform in [0, 1)
    exact = float(np.sum(x, dtype=np.float64))

    total = add.reduce(x)
    top = biggest.reduce(x)
    bottom = smallest.reduce(x)
    doubled = x.copy()
    total2, top2 = resident_sum(doubled)

    tol = tolerance(x)
    print(f"{n:,} float32 values; numpy (float64) sum {exact:.6f}")
    print(f"  add.reduce(x)          {total:.6f}  (error {abs(total - exact):.2e}, "
          f"bound {tol:.2e})")
    print(f"  biggest / smallest     {top!r} / {bottom!r}  (numpy {float(x.max())!r} / "
          f"{float(x.min())!r})")
    print(f"  doubled in an arena:   sum {total2:.6f}, max {top2!r}")
    ok = (abs(total - exact) <= tol and top == float(x.max()) and bottom == float(x.min())
          and abs(total2 - 2 * exact) <= 2 * tol and top2 == 2 * float(x.max())
          and np.array_equal(doubled, 2 * x))
    print("  OK" if ok else "  MISMATCH")
    return {"x": x, "numpy": exact, "sum": total, "max": top, "min": bottom,
            "resident_sum": total2, "resident_max": top2, "tol": tol, "ok": ok}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    sys.exit(0 if result["ok"] else 1)
