"""saxpy on float32 numpy arrays: in place, then resident on the device in a GpuArena.

A 1-D C-contiguous numpy array of float32 goes wherever a ``list[float]`` goes (int32 for
``list[int]``, bool for ``list[bool]``). It is uploaded as it is, without a Python loop over its
elements, and ``join()`` writes the results back into the same array. Other dtypes are refused
rather than converted, because a converted copy would not receive the results.
Run: ``python examples/numpy_saxpy.py [n]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, GpuInvalidArgument, gpu

U = 2.0**-24       # float32 unit roundoff


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    y[i] = a * x[i] + y[i]


def saxpy_bound(a: float, x: np.ndarray, y0: np.ndarray, steps: int) -> np.ndarray:
    """Per-element error bound of ``steps`` float32 saxpy steps against the exact result.

    Each step rounds at most twice (a device may fuse the multiply-add and round once), each
    time by at most U times a value no larger than |y0| + steps * |a * x|.
    """
    big = np.abs(y0.astype(np.float64)) + steps * np.abs(a * x.astype(np.float64))
    return 2 * steps * U * big + 1e-30


def main(n: int = 1_000_000, steps: int = 100, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    a = 0.5
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)

    # 1. one launch, in place: y is the same array object afterwards, holding a*x + y
    y = y0.copy()
    gpu(saxpy, n, a, x, y).join()
    exact1 = a * x.astype(np.float64) + y0
    err1 = float(np.max(np.abs(y - exact1)))
    ok1 = bool(np.all(np.abs(y - exact1) <= saxpy_bound(a, x, y0, 1)))

    # 2. the same step `steps` times with x and y kept on the device between launches
    z = y0.copy()
    t0 = time.perf_counter()
    with GpuArena() as arena:
        arena.bind(x=x, z=z)
        for _ in range(steps):
            gpu(saxpy, n, a, x, z).join(download=False)     # nothing crosses to the host
        arena.sync("z")                                      # download into z, in place
    seconds = time.perf_counter() - t0
    exact = y0.astype(np.float64) + steps * (a * x.astype(np.float64))
    err = float(np.max(np.abs(z - exact)))
    ok2 = bool(np.all(np.abs(z - exact) <= saxpy_bound(a, x, y0, steps)))

    # 3. a float32 and a float64 array in one launch are refused (one width per launch), with a
    #    message naming both parameters and the fix
    try:
        gpu(saxpy, n, a, x, y0.astype(np.float64))
        refusal = ""
    except GpuInvalidArgument as exc:
        refusal = str(exc)

    print(f"saxpy on float32 arrays of {n:,} elements, a = {a}")
    print(f"  one launch, in place:          max error {err1:.2e} "
          f"({'OK' if ok1 else 'MISMATCH'})")
    print(f"  {steps} launches in a GpuArena:  {1e3 * seconds:.1f} ms, max error {err:.2e} "
          f"({'OK' if ok2 else 'MISMATCH'})")
    print(f"  float32 x beside float64 y refused: {refusal.splitlines()[0] if refusal else 'NOT REFUSED'}")
    return {"a": a, "x": x, "y0": y0, "y": y, "z": z, "steps": steps, "seconds": seconds,
            "refusal": refusal, "ok": ok1 and ok2 and bool(refusal)}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    sys.exit(0 if result["ok"] else 1)
