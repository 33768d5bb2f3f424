"""Sum 1,000,000 float32 values on the device with shared memory and a tree reduction.

Each workgroup of 64 threads loads 64 values into a ``shared`` tile, halves the tile with a
barrier between steps until one value is left, and then finishes in one of two ways:

* ``multi_pass``: thread 0 writes the workgroup's partial sum to ``partial[BlockIdx.x]``; the
  same kernel is launched again on the partials (1,000,000 -> 15,625 -> 245 -> 4 -> 1), all
  launches on lists kept on the device by a ``GpuArena``;
* ``atomic``: thread 0 adds the partial sum into ``total[0]`` with ``atomic_add`` (float atomics
  need the device feature ``shader-float32-atomic``; lavapipe and NVIDIA GPUs have it).

Both are checked against ``numpy.sum`` in float64. Run: ``python examples/reduce_sum.py [n]``.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cthreads.gpu import BlockIdx, GlobalIdx, Gpu, GpuArena, ThreadIdx, atomic_add, gpu, shared
from cthreads.sync import __sync_threads

TILE = 64          # one element per thread of a workgroup (cthreads' workgroups are 64 wide)


@Gpu
def block_sum(n: int, x: list[float], partial: list[float]) -> None:
    tile: list[float] = shared(TILE)
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    tile[t] = x[i] if i < n else 0.0       # threads past the end contribute 0
    __sync_threads()
    s: int = TILE // 2
    while s > 0:                           # s is the same in every thread: barriers are legal
        if t < s:
            tile[t] += tile[t + s]
        __sync_threads()
        s //= 2
    if t == 0:
        partial[BlockIdx.x] = tile[0]


@Gpu
def block_sum_atomic(n: int, x: list[float], total: list[float]) -> None:
    tile: list[float] = shared(TILE)
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    tile[t] = x[i] if i < n else 0.0
    __sync_threads()
    s: int = TILE // 2
    while s > 0:
        if t < s:
            tile[t] += tile[t + s]
        __sync_threads()
        s //= 2
    if t == 0:
        atomic_add(total, 0, tile[0])


def groups(n: int) -> int:
    """Workgroups (and so partial sums) a launch over ``n`` elements produces."""
    return -(-n // TILE)


def sum_multi_pass(x: np.ndarray) -> tuple[float, int]:
    """Sum ``x`` by launching ``block_sum`` until one value is left; (sum, launches)."""
    sizes = [x.size]
    while sizes[-1] > 1:
        sizes.append(groups(sizes[-1]))
    buffers = [x] + [np.zeros(k, np.float32) for k in sizes[1:]]
    with GpuArena() as arena:
        # every pass reads the previous pass's output where it already is: on the device
        arena.bind(**{f"level{k}": buf for k, buf in enumerate(buffers)})
        for k in range(len(sizes) - 1):
            gpu(block_sum, sizes[k], buffers[k], buffers[k + 1]).join(download=False)
        arena.sync(f"level{len(sizes) - 1}")          # download only the final value
    return float(buffers[-1][0]), len(sizes) - 1


def sum_atomic(x: np.ndarray) -> float:
    """Sum ``x`` in one launch: tree per workgroup, then one float atomic_add per workgroup."""
    total = np.zeros(1, np.float32)
    gpu(block_sum_atomic, x.size, x, total).join()
    return float(total[0])


def tolerance(x: np.ndarray, chain: int = 0) -> float:
    """How far a float32 sum of ``x`` may be from the exact sum.

    Every addition rounds by at most u = 2**-24 times the value it makes. A tree of depth d
    passes each value through d additions: at most d * u * sum(|x|), a strict bound. The
    atomic finish adds ``chain`` partial sums one after another, in no fixed order: its
    rounding errors have random signs and grow like sqrt(chain) (the strict worst case, chain,
    is never approached); we allow 4 * sqrt(chain) on top of the tree.
    """
    depth = math.ceil(math.log2(max(x.size, 2)))
    return (depth + 4.0 * math.sqrt(chain)) * 2.0**-24 * float(np.abs(x, dtype=np.float64).sum())


def main(n: int = 1_000_000, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32)                 # uniform in [0, 1)
    exact = float(np.sum(x, dtype=np.float64))

    tree, launches = sum_multi_pass(x)
    atomic = sum_atomic(x)

    tol_tree = tolerance(x)
    tol_atomic = tolerance(x, groups(n))
    print(f"sum of {n:,} float32 values (numpy, float64): {exact:.6f}")
    print(f"  tree per workgroup, {launches} launches:     {tree:.6f}  "
          f"(error {abs(tree - exact):.2e}, bound {tol_tree:.2e})")
    print(f"  tree per workgroup, then atomic_add: {atomic:.6f}  "
          f"(error {abs(atomic - exact):.2e}, bound {tol_atomic:.2e})")
    ok = abs(tree - exact) <= tol_tree and abs(atomic - exact) <= tol_atomic
    print("  OK" if ok else "  MISMATCH")
    return {"x": x, "numpy": exact, "multi_pass": tree, "launches": launches,
            "atomic": atomic, "tol_multi_pass": tol_tree, "tol_atomic": tol_atomic, "ok": ok}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    sys.exit(0 if result["ok"] else 1)
