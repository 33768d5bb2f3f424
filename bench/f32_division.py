"""What the exact float32 division helpers cost on this device: each kernel run in the form
the device picks (on a CPU driver with shader-f64: the fma-free helpers in float64), in the
fma-free float32 form (Dekker's product: shader-f64 hidden), and in the single-fma form GPUs
run (wrong on a device whose fma rounds twice, so timed only). Prints the best of several
runs of each.

    python bench/f32_division.py [n]
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cthreads import config                             # noqa: E402
from cthreads.backend.device import DeviceContext      # noqa: E402
from cthreads.gpu import GlobalIdx, Gpu, gpu            # noqa: E402


@Gpu
def mul(n: int, x: list[float], y: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    o[i] = x[i] * y[i]


@Gpu
def div(n: int, x: list[float], y: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    o[i] = x[i] / y[i]


@Gpu
def div8(n: int, x: list[float], y: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    a = x[i]
    b = y[i]
    o[i] = a / b + (a + 1.0) / b + (a + 2.0) / b + (a + 3.0) / b + a / (b + 1.0) + \
        a / (b + 2.0) + a / (b + 3.0) + a / (b + 4.0)


@Gpu
def mods(n: int, x: list[float], y: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i] = x[i] % y[i] + math.fmod(x[i], y[i]) + x[i] // y[i]


def _best(kernel, args, reps: int = 9) -> float:
    gpu(kernel, *args).join()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        gpu(kernel, *args).join()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
    rng = np.random.default_rng(1)
    x = rng.uniform(-100, 100, n).astype(np.float32)
    y = rng.uniform(0.5, 50, n).astype(np.float32)
    o = np.zeros(n, np.float32)
    own = DeviceContext.fma_rounds_once
    for vec in ("1", "0"):
        os.environ["CTHREADS_VEC"] = vec
        for kernel in (mul, div, div8, mods):
            if vec == "1" and kernel is mods:
                continue                       # no four-lane form
            times = []
            for form in ("own", "float32", "fma"):
                kernel.forget_runtimes()
                if form == "fma":
                    DeviceContext.fma_rounds_once = property(lambda self: True)
                hide = ("shader-f64",) if form == "float32" else ()
                try:
                    with config.override(hide_features=hide):
                        times.append(_best(kernel, (n, x, y, o)))
                finally:
                    DeviceContext.fma_rounds_once = own
                    kernel.forget_runtimes()
            shape = "four-lane" if vec == "1" else "scalar"
            print(f"{kernel.__name__:5s} {shape:9s} device's form {times[0] * 1e3:7.2f} ms, "
                  f"fma-free float32 {times[1] * 1e3:7.2f} ms, single fma "
                  f"{times[2] * 1e3:7.2f} ms; ratios {times[0] / times[2]:.2f}, "
                  f"{times[1] / times[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
