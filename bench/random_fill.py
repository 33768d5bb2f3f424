"""Issue 25's random-number target: fill an n-element float32 GpuArray with ``rng.random()``
and with ``rng.normal()``, in GB/s of output written (4 bytes per element): one
``Random(seed, i)`` stream per element ("random", "normal"), and four consecutive elements per
thread from one stream ("random4", "normal4": ``for k in range(4): out[4*i+k] = rng.random()``,
four draws from one Philox block for random(), two blocks for normal(); "random4c" the same
draws written coalesced, ``out[k*m + i]`` for ``m = n/4`` threads); against a
hand-written WGSL Philox fill on wgpu-py directly ("raw philox", ``bench/raw_philox.py``: the
floor on the same driver, four floats per thread, one vec4 store; "raw philox f32" the same
with four f32 stores, as a kernel writing ``out[4*i + k]`` makes), numpy's ``default_rng().random`` /
``standard_normal`` (float32, into a preallocated array) and, where torch and CUDA import,
``torch.rand`` / ``torch.randn`` (float32, on the device). A write-only kernel (``out[i] =
1.0``) gives the device's write bandwidth for scale. Device times are of joined launches into a
GpuArray (nothing downloaded), alternating rounds, medians; ratios are within one run.
``CTHREADS_RNG_MULHI=halves`` measures the 16-bit form of Philox's multiply-high.

Run: ``python bench/random_fill.py [--n N] [--reps R]`` (default n: 256M elements on a GPU,
4M on a CPU Vulkan driver such as lavapipe).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))        # raw_wgpu's own imports

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.codegen.rng import mulhi_choice as rng_mulhi  # noqa: E402
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
def fill_random4(m: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < m:
        rng = Random(seed, i)
        for k in range(4):
            out[4 * i + k] = rng.random()


@Gpu
def fill_random4c(m: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < m:
        rng = Random(seed, i)
        for k in range(4):
            out[k * m + i] = rng.random()


@Gpu
def fill_normal4(m: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < m:
        rng = Random(seed, i)
        for k in range(4):
            out[4 * i + k] = rng.normal()


@Gpu
def fill_one(n: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = 1.0


def _torch_fns(n: int) -> dict:
    """torch.rand / torch.randn into one buffer, each call synchronized (timed like ours: a
    call and its wait), where torch sees a CUDA GPU; else nothing."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    buf = torch.empty(n, device="cuda", dtype=torch.float32)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)

    def rand():
        torch.rand(n, device="cuda", generator=gen, out=buf)
        torch.cuda.synchronize()

    def randn():
        torch.randn(n, device="cuda", generator=gen, out=buf)
        torch.cuda.synchronize()
    rand(), randn()                                            # warm
    return {"torch.rand": rand, "torch.randn": randn}


def _raw_fill(n: int, seed: int, scalar_on=None):
    """The hand-written fill (``raw_philox.PhiloxFill``: one vec4 store per thread; with
    ``scalar_on``, a fill whose device it shares, four f32 stores), or None where wgpu-py
    cannot make one (printed)."""
    try:
        from raw_philox import PhiloxFill
        fill = PhiloxFill(n, seed) if scalar_on is None else \
            PhiloxFill(n, seed, vec4=False, raw=scalar_on.raw)
        fill.run()                                             # compile, warm
        return fill
    except Exception as exc:                                   # noqa: BLE001 (reported)
        print(f"raw philox: not run ({type(exc).__name__}: {exc})")
        return None


def main(argv=None) -> dict:
    cpu_driver = any(s in device_name().lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2 ** 22 if cpu_driver else 2 ** 28)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    n, reps, seed = args.n, args.reps, args.seed
    n -= n % 4
    kernels = {"random": fill_random, "normal": fill_normal, "random4": fill_random4,
               "normal4": fill_normal4, "random4c": fill_random4c, "one": fill_one}
    outs = {name: zeros(n, np.float32) for name in kernels}

    def run(name):
        m = n // 4 if name.rstrip("c").endswith("4") else n
        return lambda: gpu(kernels[name], m, seed, outs[name], threads=m).join(download=False)

    for name in kernels:
        run(name)()                                           # compile, warm
    host = np.empty(n, np.float32)
    gen = np.random.default_rng(seed)
    fns = {f"cthreads {name}": run(name) for name in kernels}
    raw = _raw_fill(n, seed)
    raw_scalar = None if raw is None else _raw_fill(n, seed, raw)
    if raw is not None:
        fns["raw philox"] = raw.run
        fns["raw philox f32"] = raw_scalar.run
    fns.update(_torch_fns(n))
    # the device rows alternate among themselves; numpy's (seconds each on a GPU's sizes) run
    # apart, or the GPU would idle between samples and start each one at a lower clock
    ms = alternating_ms(fns, reps)
    ms.update(alternating_ms({
        "numpy random": lambda: gen.random(n, dtype=np.float32, out=host),
        "numpy normal": lambda: gen.standard_normal(n, dtype=np.float32, out=host)},
        reps if cpu_driver else 3))

    got = outs["random"].numpy()                              # a correctness check
    picks = np.unique(np.random.default_rng(0).integers(0, n, 64))
    assert all(got[i] == Random(seed, int(i)).random32() for i in picks)
    assert 0.0 <= got.min() and got.max() < 1.0
    got4 = outs["random4"].numpy()
    for i in picks[:16]:
        r = Random(seed, int(i) // 4)
        assert got4[i] == [r.random32() for _ in range(4)][int(i) % 4]
    assert np.array_equal(outs["random4c"].numpy().reshape(4, -1).T.ravel(), got4)
    if raw is not None:
        assert np.array_equal(raw.read(), got4)               # the same numbers
        assert np.array_equal(raw_scalar.read(), got4)

    gbps = {k: 4 * n / (v / 1e3) / 1e9 for k, v in ms.items()}
    print(f"{device_name()}: n = {n} float32 ({4 * n / 1e6:.0f} MB), {reps} alternating rounds "
          "(median ms, GB/s of output):")
    for k in ms:
        print(f"  {k:18s} {ms[k]:10.2f} ms  {gbps[k]:8.2f} GB/s")
    if raw is not None:
        print(f"  (raw philox multiply-high: {'int64' if raw.int64 else 'halves'}; cthreads: "
              f"CTHREADS_RNG_MULHI={rng_mulhi()})")
    pairs = [("cthreads random", "numpy random"), ("cthreads normal", "numpy normal"),
             ("cthreads random4", "numpy random"), ("cthreads normal4", "numpy normal"),
             ("cthreads random", "torch.rand"), ("cthreads normal", "torch.randn"),
             ("cthreads random4", "torch.rand"), ("cthreads normal4", "torch.randn"),
             ("cthreads random4c", "torch.rand"),
             ("raw philox", "torch.rand"), ("cthreads random4", "raw philox"),
             ("cthreads random4c", "raw philox"), ("cthreads random4", "raw philox f32"),
             ("cthreads random", "cthreads one"), ("cthreads random4", "cthreads one")]
    for a, b in pairs:
        if a in gbps and b in gbps:
            print(f"  {a} / {b}: {gbps[a] / gbps[b]:.2f}x")
    return {"n": n, "ms": ms, "GBps": gbps}


if __name__ == "__main__":
    main()
