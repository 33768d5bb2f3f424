"""Issue 26's matmul target: square n x n products in GFLOP/s (2 n^3 flops each), float32 and
float64, cthreads' ``matmul`` on GpuArrays (the result written into a GpuArray with ``out=``,
joined by downloading its first row, nothing else read back) against numpy's ``np.matmul`` (the
BLAS, on the CPU) and, where torch and CUDA import, ``torch.matmul`` on the device (float32
with ``torch.backends.cuda.matmul.allow_tf32 = False``: cuBLAS's plain fp32; and fp64), in the
same process. Device rows alternate among themselves, numpy's run apart; medians of ``reps``
rounds. Each result is checked against numpy's (float64 reference, a relative error bound).

Run: ``python bench/matmul.py [--sizes 512 1024] [--reps R]`` (default sizes: 512 and 1024 on
a CPU Vulkan driver such as lavapipe, 2048 and 4096 on a GPU).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.gpu import device_name, matmul, to_device, zeros  # noqa: E402


def _torch_fns(n: int, dtype: str, outs: dict) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    tdt = torch.float32 if dtype == "float32" else torch.float64
    gen = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(n, n, device="cuda", dtype=tdt, generator=gen)
    b = torch.randn(n, n, device="cuda", dtype=tdt, generator=gen)
    c = torch.empty(n, n, device="cuda", dtype=tdt)

    def run():
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    run()
    outs["torch"] = (a, b, c)
    return {f"torch.matmul {dtype}": run}


def bench_one(n: int, dtype: str, reps: int) -> dict:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    ga, gb, gc = to_device(a), to_device(b), zeros((n, n), dtype)

    def ours():
        matmul(ga, gb, out=gc)
        gc[0:1].numpy()                   # joins: the copy runs after the product
    ours()
    outs: dict = {}
    fns = {f"cthreads {dtype}": ours}
    fns.update(_torch_fns(n, dtype, outs))
    ms = alternating_ms(fns, reps)
    host = np.empty((n, n), dtype)
    ms.update(alternating_ms({f"numpy {dtype}": lambda: np.matmul(a, b, out=host)}, reps))

    want = a.astype(np.float64) @ b.astype(np.float64)
    unit = 2.0**-24 if dtype == "float32" else 2.0**-53
    bound = 16 * unit * np.sqrt(n) * (np.abs(a).astype(np.float64) @ np.abs(b))
    err = np.abs(gc.numpy() - want)
    assert np.all(err <= bound), f"cthreads matmul {n} {dtype}: error {err.max()}"
    if "torch" in outs:
        ta, tb, tc = outs["torch"]
        tw = ta.double() @ tb.double()
        assert float((tc.double() - tw).abs().max()) <= float(
            16 * unit * n**0.5 * (ta.double().abs() @ tb.double().abs()).max()), "torch wrong"
    return {k: 2 * n**3 / (v / 1e3) / 1e9 for k, v in ms.items()} | {
        f"{k} ms": v for k, v in ms.items()}


def main() -> dict:
    name = device_name()
    cpu_driver = any(s in name.lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[512, 1024] if cpu_driver else [2048, 4096])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    args = ap.parse_args()
    print(f"{name}: square matmul, GFLOP/s (2 n^3 / time), median of {args.reps} rounds")
    results = {}
    for n in args.sizes:
        for dtype in args.dtypes:
            r = bench_one(n, dtype, args.reps)
            results[(n, dtype)] = r
            ours = r[f"cthreads {dtype}"]
            line = f"  n={n:5d} {dtype}: cthreads {ours:9.2f}  numpy {r[f'numpy {dtype}']:9.2f}" \
                   f"  ratio {ours / r[f'numpy {dtype}']:.2f}x"
            key = f"torch.matmul {dtype}"
            if key in r:
                line += f"  torch {r[key]:9.1f}  ratio {ours / r[key]:.2f}x"
            print(line, flush=True)
    return results


if __name__ == "__main__":
    main()
