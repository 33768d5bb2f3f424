"""Where our kernels stand against hand-written CUDA on one GPU: a quick probe, one process.

    python bench/probe_peers.py [--only stencil,mandel,hist,sum,saxpy,tiny] [--profile]

For each workload, ours (``cthreads.gpu``) and the CUDA peers that are importable (CuPy
RawKernels written the plain CUDA way, torch) run on the same data, alternating, K launches
queued then one wait (the tiny launch: a wait after each), medians of ``--reps`` rounds, every
result checked against numpy. ``--profile`` adds a cProfile of our tiny launches (where the
time of a launch + join goes on the Python side). The benchmark's PEERS workload is the
reference measurement; this probe is for deciding what to change.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cthreads.gpu import GpuArena, gpu  # noqa: E402
from examples.samples import mandelbrot2d, mandelbrot_numpy, saxpy  # noqa: E402

# the benchmark's kernels, ours and CuPy's (one source for both: bench/peers_kernels.py)
from peers_kernels import (  # noqa: E402
    BINS, CUDA_SOURCE, add, histogram, histogram_private, stencil2d,
)


def rounds(fns: dict, reps: int) -> dict:
    """Median seconds per call of each function, alternating (order rotates every round)."""
    times = {k: [] for k in fns}
    names = list(fns)
    for r in range(reps):
        for k in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            per = fns[k]()
            times[k].append(per[1] if isinstance(per, tuple) else time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def queued_ours(launch, k: int):
    def run():
        t0 = time.perf_counter()
        job = None
        for _ in range(k):
            job = launch()
        job.join(download=False)
        return ("per", (time.perf_counter() - t0) / k)
    return run


def queued_cuda(launch, sync, k: int):
    def run():
        sync()
        t0 = time.perf_counter()
        for _ in range(k):
            launch()
        sync()
        return ("per", (time.perf_counter() - t0) / k)
    return run


def peers():
    out = {}
    try:
        import cupy as cp
        out["cupy"] = cp
    except Exception as e:  # noqa: BLE001
        print("no cupy:", e)
    try:
        import torch
        if torch.cuda.is_available():
            out["torch"] = torch
    except Exception as e:  # noqa: BLE001
        print("no torch:", e)
    return out


def report(title: str, secs: dict, unit: str, work: float) -> None:
    print(f"\n== {title}")
    base = secs.get("ours")
    for k, s in secs.items():
        fig = work / s / 1e9 if unit != "ms" else s * 1e3
        rel = f"  ours/this time {base / s:.2f}x" if base and k != "ours" else ""
        print(f"  {k:28s} {fig:10.3f} {unit}{rel}")


def do_stencil(P, reps, k):
    for n in (4096, 8192):
        _stencil(P, reps, k, n)


def _stencil(P, reps, k, n):
    rng = np.random.default_rng(1)
    u = rng.random((n, n), dtype=np.float32)
    v = u.copy()
    want = u.copy()
    want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    fns = {}
    with GpuArena() as arena:
        arena.bind(u=u, v=v)
        fns["ours 2-D"] = queued_ours(lambda: gpu(stencil2d, n, n, u, v, threads=(n, n)), k)
        if "cupy" in P:
            cp = P["cupy"]
            kern = cp.RawModule(code=CUDA_SOURCE).get_function("stencil5")
            cu = cp.asarray(u)
            cv = cu.copy()
            sync = cp.cuda.Device().synchronize
            fns["cupy RawKernel 16x16"] = queued_cuda(
                lambda: kern(((n + 15) // 16, (n + 15) // 16), (16, 16),
                             (cu, cv, np.int32(n), np.int32(n))), sync, k)
            fns["cupy RawKernel 32x8"] = queued_cuda(
                lambda: kern(((n + 31) // 32, (n + 7) // 8), (32, 8),
                             (cu, cv, np.int32(n), np.int32(n))), sync, k)
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
        arena.sync("v")
    assert np.allclose(v, want, rtol=1e-6, atol=1e-6), "ours stencil wrong"
    if "cupy" in P:
        assert np.allclose(cv.get(), want, rtol=1e-6, atol=1e-6), "cupy stencil wrong"
    report(f"stencil {n}^2, GB/s at 8 B/point", secs, "GB/s", 8 * n * n)


def do_mandel(P, reps, k):
    w = h = 4096
    it = 256
    counts = np.zeros((h, w), np.int32)
    fns = {}
    with GpuArena() as arena:
        arena.bind(counts=counts)
        fns["ours 2-D"] = queued_ours(lambda: gpu(mandelbrot2d, w, h, it, counts, threads=(w, h)), k)
        if "cupy" in P:
            cp = P["cupy"]
            kern = cp.RawModule(code=CUDA_SOURCE).get_function("mandelbrot")
            cc = cp.zeros((h, w), cp.int32)
            sync = cp.cuda.Device().synchronize
            fns["cupy RawKernel 16x16"] = queued_cuda(
                lambda: kern((w // 16, h // 16), (16, 16),
                             (cc, np.int32(w), np.int32(h), np.int32(it))), sync, k)
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
        arena.sync("counts")
    rows = slice(None, None, 64)       # numpy's reference for every 64th row (it is slow)
    want = mandelbrot_numpy(w, h, it).reshape(h, w) if h <= 512 else \
        mandelbrot_numpy(w, h, it, rows=np.arange(h)[rows])
    got = counts if h <= 512 else counts[rows]
    print(f"  ours: {int(np.count_nonzero(got != want))} of {want.size} pixels differ from numpy")
    if "cupy" in P:
        cg = cc.get() if h <= 512 else cc.get()[rows]
        print(f"  cupy: {int(np.count_nonzero(cg != want))} differ")
    report("Mandelbrot 4096^2, 256 iterations, ms", secs, "ms", 0)


def do_hist(P, reps, k):
    n = 1 << 26
    rng = np.random.default_rng(2)
    vals = rng.integers(0, BINS, n, dtype=np.int32)
    want = np.bincount(vals, minlength=BINS).astype(np.int64)
    bins_s = np.zeros(BINS, np.int32)
    bins_g = np.zeros(BINS, np.int32)
    fns = {}
    groups = 132 * 16
    with GpuArena() as arena:
        arena.bind(vals=vals, bins_s=bins_s, bins_g=bins_g)
        fns["ours shared, grid-stride"] = queued_ours(
            lambda: gpu(histogram_private, groups * 64, n, vals, bins_s), k)
        fns["ours global atomics"] = queued_ours(lambda: gpu(histogram, n, vals, bins_g), k)
        if "torch" in P:
            torch = P["torch"]
            tv = torch.from_numpy(vals).cuda()
            fns["torch bincount"] = queued_cuda(lambda: torch.bincount(tv, minlength=BINS),
                                                torch.cuda.synchronize, k)
            got = torch.bincount(tv, minlength=BINS).cpu().numpy()
            assert np.array_equal(got, want), "torch bincount wrong"
        if "cupy" in P:
            cp = P["cupy"]
            kern = cp.RawModule(code=CUDA_SOURCE).get_function("hist256_shared")
            cv = cp.asarray(vals)
            cb = cp.zeros(BINS, cp.uint32)
            fns["cupy RawKernel shared"] = queued_cuda(
                lambda: kern((groups,), (256,), (cv, np.int32(n), cb)),
                cp.cuda.Device().synchronize, k)
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
        arena.sync("bins_s", "bins_g")
    for name, got in (("shared", bins_s), ("global", bins_g)):
        # every launch adds one histogram: the counts are a multiple of want
        mult = int(got[0]) // int(want[0]) if want[0] else 0
        ok = mult > 0 and np.array_equal(got.astype(np.int64), want * mult)
        print(f"  ours {name}: {'ok' if ok else 'WRONG'} ({mult} histograms accumulated)")
    report("histogram 64M int32 -> 256 bins, G elements/s", secs, "G/s", n)


def do_sum(P, reps, k):
    n = 1 << 26
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    x64 = x.astype(np.float64)
    fns = {}
    got = []
    with GpuArena() as arena:
        arena.bind(x=x, x64=x64)
        fns["ours add.reduce f32"] = lambda: got.append(add.reduce(x))
        fns["ours add.reduce f64"] = lambda: add.reduce(x64)
        if "torch" in P:
            torch = P["torch"]
            tx = torch.from_numpy(x).cuda()
            tx64 = torch.from_numpy(x64).cuda()
            fns["torch x.sum().item() f32"] = lambda: tx.sum().item()
            fns["torch x.sum().item() f64"] = lambda: tx64.sum().item()
            fns["torch x.sum() queued f32"] = queued_cuda(lambda: tx.sum(),
                                                           torch.cuda.synchronize, k)
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
    print(f"  ours sum {got[-1]!r}, numpy float64 sum {float(x64.sum())!r}")
    report("sum 64M, GB/s at 4 B/value (f64 rows: 8 B, shown at 4)", secs, "GB/s", 4 * n)


def do_saxpy(P, reps, k):
    n = 1 << 26
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    fns = {}
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for _ in range(10):
            gpu(saxpy, n, 0.5, x, y)
        fns["ours"] = queued_ours(lambda: gpu(saxpy, n, 0.5, x, y), k)
        if "torch" in P:
            torch = P["torch"]
            tx = torch.ones(n, device="cuda")
            ty = torch.zeros(n, device="cuda")
            fns["torch add_"] = queued_cuda(lambda: ty.add_(tx, alpha=0.5),
                                            torch.cuda.synchronize, k)
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
    report("saxpy 64M resident, GB/s at 12 B", secs, "GB/s", 12 * n)


def do_tiny(P, reps, k, profile):
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    fns = {}
    with GpuArena() as arena:
        arena.bind(x=x, y=y)

        def ours():
            t0 = time.perf_counter()
            for _ in range(k):
                gpu(saxpy, 64, 0.5, x, y).join(download=False)
            return ("per", (time.perf_counter() - t0) / k)
        fns["ours join each"] = ours
        if "torch" in P:
            torch = P["torch"]
            tx = torch.ones(64, device="cuda")
            ty = torch.zeros(64, device="cuda")

            def tor():
                t0 = time.perf_counter()
                for _ in range(k):
                    ty.add_(tx, alpha=0.5)
                    torch.cuda.synchronize()
                return ("per", (time.perf_counter() - t0) / k)
            fns["torch add_ + synchronize"] = tor
        for f in fns.values():
            f()
        secs = rounds(fns, reps)
        report("tiny launch + wait, ms", secs, "ms", 0)
        if profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(3000):
                gpu(saxpy, 64, 0.5, x, y).join(download=False)
            prof.disable()
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
            print(s.getvalue())


def main() -> int:
    tile = os.environ.get("PROBE_TILE")          # e.g. 16x16: the GPUs' 2-D tile, for a try
    if tile:
        from cthreads.runtime import variants
        variants.GPU_ND_TILES[2] = tuple(int(v) for v in tile.split("x")) + (1,)
    if os.environ.get("PROBE_NO_NAGA_CHECKS"):  # GPU shader modules without naga's checks
        from cthreads import config
        config.override(shader_bounds_checks=False).__enter__()    # for the whole run
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="stencil,mandel,hist,sum,saxpy,tiny")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    P = peers()
    env = {k: v for k, v in os.environ.items() if k.startswith("CTHREADS_")}
    print("env:", env, "peers:", sorted(P))
    for w in a.only.split(","):
        t0 = time.perf_counter()
        try:
            if w == "tiny":
                do_tiny(P, a.reps, 500, a.profile)
            else:
                globals()[f"do_{w}"](P, a.reps, a.k)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(f"{w}: FAILED {e}")
        print(f"  ({w}: {time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
