"""Issue 26's matmul target: square n x n products in GFLOP/s (2 n^3 flops each), float32 and
float64, cthreads' ``matmul`` on GpuArrays (the result written into a GpuArray with ``out=``,
joined by downloading its first row, nothing else read back) against numpy's ``np.matmul`` (the
BLAS, on the CPU) and, where torch and CUDA import, ``torch.matmul`` on the device (float32
with ``torch.backends.cuda.matmul.allow_tf32 = False``: cuBLAS's plain fp32; and fp64), in the
same process. Device rows alternate among themselves, numpy's run apart; medians of ``reps``
rounds. Each result is checked against numpy's (float64 reference, a relative error bound).

``--floor`` adds the compute floor of the same shader: our WGSL with every load of A and B
replaced by a value computed in registers (``a_i = f32(k) * 1.0001 + i``), the same products
and stores, dispatched the same way: what the driver's arithmetic alone gives, apart from the
loads (on lavapipe each load is a gather across the SIMD lanes of the invocations).

Run: ``python bench/matmul.py [--sizes 512 1024] [--reps R] [--floor] [--tiles gpu|cpu]`` (default sizes: 512 and 1024 on
a CPU Vulkan driver such as lavapipe, 2048 and 4096 on a GPU). ``CTHREADS_MATMUL_TILES=old``
runs the GPU tiles before issue 26's second round, ``CTHREADS_MATMUL_CPU=old`` (or
``--tiles cpu-old``) the CPU drivers' direct form before its third; the first line printed
names the tiles.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads import config  # noqa: E402
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


def _floor_text(dtype: str, tiles) -> str | None:
    """The compute-only WGSL of ``tiles`` (see the module docstring), or None."""
    import re
    from cthreads.codegen import matmul as codegen
    from cthreads.codegen import matmul_lanes
    ty = "f32" if dtype == "float32" else "f64"
    if getattr(tiles, "form", "") == "lanes":
        # the lanes form: B's vectors and A's vectors from the loop counters, the same
        # broadcasts, products and stores
        text = matmul_lanes.lanes_wgsl(dtype, dtype, dtype, tiles, True, True, True)
        text = re.sub(r"let b(\d+) = [^;]*ct_b\[[^;]*;", lambda m: f"let b{m[1]} = "
                      f"vec4<{ty}>({ty}(kb) * {ty}(0.999) + {ty}({m[1]}));", text)
        text = re.sub(r"let a(\d+)_(\d+) = [^;]*ct_a\[[^;]*;", lambda m: f"let a{m[1]}_{m[2]} = "
                      f"vec4<{ty}>({ty}(k0) * {ty}(1.0001) + {ty}({m[1]}));", text)
        body = text.split("loop {")[1].split("k0 = k0 +")[0]
        return None if "ct_a[" in body or "ct_b[" in body else text
    text = codegen.matmul_wgsl(dtype, dtype, dtype, tiles)
    text = re.sub(r"let a(\d+) = \w+\(ct_a\[[^;]*;", lambda m: f"let a{m[1]} = {ty}(k) * "
                  f"{ty}(1.0001) + {ty}({m[1]});", text)
    text = re.sub(r"let b(\d+) = \w+\(ct_b\[[^;]*;", lambda m: f"let b{m[1]} = {ty}(kn) * "
                  f"{ty}(0.999) + {ty}({m[1]});", text)
    if tiles.shared or "ct_a[" in text.split("loop {")[1].split("k = k + 1u;")[0]:
        return None                   # the floor is written for the direct form
    return text


def _floor_fn(n: int, dtype: str, ga, gb, gc):
    """Our product's dispatches with the compute-only shader (see the module docstring)."""
    from cthreads.codegen import matmul as codegen
    from cthreads.runtime import matmul_runner as runner
    state = runner.state()
    tiles = state.tiles[dtype]
    text = _floor_text(dtype, tiles)
    if text is None:
        return None
    key = ("floor", dtype, tiles)
    pipe = state.pipelines.get(key) or state.pipelines.compile(
        key, text, codegen.ENTRY_POINT, runner._BINDINGS, state.layout, (),
        lambda exc, wgsl: RuntimeError(f"floor shader rejected: {exc}"))
    ops = [runner.Operand(g._slot.pooled, dtype, 0, 0, n * n) for g in (ga, gb, gc)]

    def run():
        real = state.pipeline
        state.pipeline = lambda *a: pipe
        try:
            runner.run_product(state, *ops, 1, n, n, n)
        finally:
            state.pipeline = real
        gc[0:1].numpy()
    return run


def bench_one(n: int, dtype: str, reps: int, floor: bool = False) -> dict:
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
    from cthreads.runtime import matmul_runner as runner
    state = runner.state()
    if state.tiles is not runner.TILES_CPU_OLD and state.ctx.is_cpu:
        gd = zeros((n, n), dtype)

        def direct():                     # the CPU drivers' former form, same operands
            mine, state.tiles = state.tiles, runner.TILES_CPU_OLD
            try:
                matmul(ga, gb, out=gd)
            finally:
                state.tiles = mine
            gd[0:1].numpy()
        direct()
        fns[f"direct {dtype}"] = direct
    if floor:
        fn = _floor_fn(n, dtype, ga, gb, zeros((n, n), dtype))
        if fn is not None:
            fn()
            fns[f"floor {dtype}"] = fn
    ms = alternating_ms(fns, reps, warm=1)   # the CUDA/Vulkan switch untimed (timing.py)
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


def _describe(t, dtype: str) -> str:
    if getattr(t, "form", "") == "lanes":
        return (f"lanes form, {t.lanes} lanes of {t.tm} rows x {4 * t.tn} columns" + (
            " (operands as vec4<u64> pairs where k, n are multiples of 8)"
            if dtype == "float32" else ""))
    return (f"{t.bm}x{t.bn}x{t.bk} of {t.tm}x{t.tn}" + ("" if t.shared else " direct")
            + (" prefetched" if t.prefetch else ""))


def main() -> dict:
    name = device_name()
    cpu_driver = any(s in name.lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[512, 1024] if cpu_driver else [2048, 4096])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--floor", action="store_true", help="also the compute-only floor")
    ap.add_argument("--tiles", choices=("device", "gpu", "cpu", "cpu-old"), default="device",
                    help="the tile configuration (default: the device class's)")
    args = ap.parse_args()
    from cthreads.runtime import matmul_runner as runner
    state = runner.state()
    if args.tiles != "device":
        state.tiles = {"gpu": lambda: runner.gpu_tiles(state.ctx),
                       "cpu": lambda: runner.cpu_tiles(state.ctx),
                       "cpu-old": lambda: runner.TILES_CPU_OLD}[args.tiles]()
    print(f"{name}: square matmul, GFLOP/s (2 n^3 / time), median of {args.reps} rounds")
    print(f"  tiles ({runner.TILES_VARIABLE}={runner.tiles_form()}, CTHREADS_MATMUL_CPU="
          f"{config.current().matmul_cpu or '(unset)'}): "
          + ", ".join(f"{dt} {_describe(t, dt)}" for dt, t in state.tiles.items()), flush=True)
    results = {}
    for n in args.sizes:
        for dtype in args.dtypes:
            r = bench_one(n, dtype, args.reps, args.floor)
            results[(n, dtype)] = r
            ours = r[f"cthreads {dtype}"]
            line = f"  n={n:5d} {dtype}: cthreads {ours:9.2f}  numpy {r[f'numpy {dtype}']:9.2f}" \
                   f"  ratio {ours / r[f'numpy {dtype}']:.2f}x"
            key = f"torch.matmul {dtype}"
            if key in r:
                line += f"  torch {r[key]:9.1f}  ratio {ours / r[key]:.2f}x"
            if f"direct {dtype}" in r:
                dr = r[f"direct {dtype}"]
                line += f"  direct(old) {dr:8.2f} ({dr / r[f'numpy {dtype}']:.2f}x)"
            if f"floor {dtype}" in r:
                fl = r[f"floor {dtype}"]
                line += f"  floor {fl:9.2f} ({fl / r[f'numpy {dtype}']:.2f}x numpy)"
            print(line, flush=True)
    return results


if __name__ == "__main__":
    main()
