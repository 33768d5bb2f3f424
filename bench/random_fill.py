"""Issue 25's random-number target: fill an n-element float32 GpuArray with ``rng.random()``
(one ``Random(seed, i)`` stream per element) and with ``rng.normal()``, in GB/s of output
written (4 bytes per element), against numpy's ``default_rng().random`` / ``standard_normal``
(float32, into a preallocated array) and, where torch and CUDA import, ``torch.rand`` /
``torch.randn`` (float32, on the device). A write-only kernel (``out[i] = 1.0``) gives the
device's write bandwidth for scale. Device times are of joined launches into a GpuArray
(nothing downloaded), alternating rounds, medians; ratios are within one run.

Run: ``python bench/random_fill.py [--n N] [--reps R]`` (default n: 256M elements on a GPU,
4M on a CPU Vulkan driver such as lavapipe).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.gpu import GlobalIdx, Gpu, Random, device_name, gpu, zeros  # noqa: E402


@Gpu
def fill_random(n: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, i)
        out[i] = rng.random()


@Gpu
def fill_normal(n: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, i)
        out[i] = rng.normal()


@Gpu
def fill_one(n: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = 1.0


def _torch_ms(n: int, reps: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    buf = torch.empty(n, device="cuda", dtype=torch.float32)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)

    def timed(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return float(np.median(times)) * 1e3

    return {"torch.rand": timed(lambda: torch.rand(n, device="cuda", generator=gen, out=buf)),
            "torch.randn": timed(lambda: torch.randn(n, device="cuda", generator=gen,
                                                     out=buf))}


def main(argv=None) -> dict:
    cpu_driver = any(s in device_name().lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2 ** 22 if cpu_driver else 2 ** 28)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    n, reps, seed = args.n, args.reps, args.seed
    outs = {name: zeros(n, np.float32) for name in ("random", "normal", "one")}
    kernels = {"random": fill_random, "normal": fill_normal, "one": fill_one}

    def run(name):
        return lambda: gpu(kernels[name], n, seed, outs[name]).join(download=False)

    for name in kernels:
        run(name)()                                           # compile, warm
    host = np.empty(n, np.float32)
    gen = np.random.default_rng(seed)
    fns = {f"cthreads {name}": run(name) for name in kernels}
    fns["numpy random"] = lambda: gen.random(n, dtype=np.float32, out=host)
    fns["numpy normal"] = lambda: gen.standard_normal(n, dtype=np.float32, out=host)
    ms = alternating_ms(fns, reps)
    ms.update(_torch_ms(n, reps))

    got = outs["random"].numpy()                              # a correctness check
    picks = np.unique(np.random.default_rng(0).integers(0, n, 64))
    assert all(got[i] == Random(seed, int(i)).random32() for i in picks)
    assert 0.0 <= got.min() and got.max() < 1.0

    gbps = {k: 4 * n / (v / 1e3) / 1e9 for k, v in ms.items()}
    print(f"{device_name()}: n = {n} float32 ({4 * n / 1e6:.0f} MB), {reps} alternating rounds "
          "(median ms, GB/s of output):")
    for k in ms:
        print(f"  {k:18s} {ms[k]:10.2f} ms  {gbps[k]:8.2f} GB/s")
    pairs = [("cthreads random", "numpy random"), ("cthreads normal", "numpy normal"),
             ("cthreads random", "torch.rand"), ("cthreads normal", "torch.randn"),
             ("cthreads random", "cthreads one")]
    for a, b in pairs:
        if a in gbps and b in gbps:
            print(f"  {a} / {b}: {gbps[a] / gbps[b]:.2f}x")
    return {"n": n, "ms": ms, "GBps": gbps}


if __name__ == "__main__":
    main()
