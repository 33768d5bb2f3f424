"""Which tile configuration of ``matmul`` runs fastest on this device: a sweep at one size.

    python bench/probe_matmul_tiles.py [--n 4096] [--dtype float64] [--reps 5]

Each candidate ``codegen.matmul.Tiles`` (``bm x bn`` outputs per workgroup, ``bk`` along k per
step, ``tm x tn`` per invocation) replaces the device's tile for that dtype in the matrix
products' state (``runtime.matmul_runner.state().tiles``), the product is checked against numpy
in float64 arithmetic, and timed (best of ``reps``, host time of ``matmul(ga, gb, out=gc)`` plus
a one-row read that waits for it), beside ``torch.matmul`` (TF32 off) where torch sees a GPU.
Candidates whose workgroup memory or invocations pass the device's limits are skipped. This is
how ``matmul_runner.TILES_GPU`` is chosen (issue 26: float64 4096^2 at 0.27x cuBLAS fp64).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cthreads.codegen.matmul import Tiles
from cthreads.gpu_array import to_device, zeros
from cthreads.matmul import matmul
from cthreads.runtime import matmul_runner

CANDIDATES = {
    "float64": [Tiles(128, 64, 16, 8, 4, prefetch=True), Tiles(64, 128, 16, 4, 8, prefetch=True),
                Tiles(128, 128, 8, 8, 8, prefetch=True), Tiles(64, 64, 16, 4, 4, prefetch=True),
                Tiles(128, 64, 8, 8, 4, prefetch=True), Tiles(64, 128, 8, 4, 8, prefetch=True),
                Tiles(128, 128, 16, 8, 8, prefetch=True), Tiles(64, 64, 8, 4, 4, prefetch=True),
                Tiles(128, 64, 16, 8, 4), Tiles(64, 64, 32, 4, 4, prefetch=True),
                Tiles(128, 32, 16, 8, 4, prefetch=True), Tiles(32, 128, 16, 4, 8, prefetch=True)],
    "float32": [Tiles(128, 128, 16, 8, 8, prefetch=True), Tiles(128, 128, 8, 8, 8, prefetch=True),
                Tiles(128, 64, 16, 8, 4, prefetch=True), Tiles(64, 128, 16, 4, 8, prefetch=True),
                Tiles(128, 128, 32, 8, 8, prefetch=True), Tiles(256, 128, 8, 8, 8, prefetch=True),
                Tiles(128, 256, 8, 8, 8, prefetch=True), Tiles(128, 128, 16, 8, 8)],
}


def _best(fn, reps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def torch_rate(n: int, dtype: str, reps: int) -> float | None:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    tdt = torch.float32 if dtype == "float32" else torch.float64
    a = torch.randn(n, n, device="cuda", dtype=tdt)
    b = torch.randn(n, n, device="cuda", dtype=tdt)
    c = torch.empty(n, n, device="cuda", dtype=tdt)

    def run():
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    return 2 * n ** 3 / _best(run, reps) / 1e12


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--dtype", default="float64", choices=tuple(CANDIDATES))
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    n, dt = a.n, a.dtype
    rng = np.random.default_rng(n)
    ha = rng.standard_normal((n, n)).astype(dt)
    hb = rng.standard_normal((n, n)).astype(dt)
    want = ha.astype(np.float64) @ hb.astype(np.float64)
    unit = 2.0 ** -24 if dt == "float32" else 2.0 ** -53
    bound = 16 * unit * np.sqrt(n) * (np.abs(ha).astype(np.float64) @ np.abs(hb))
    ga, gb, gc = to_device(ha), to_device(hb), zeros((n, n), dt)
    matmul(ga, gb, out=gc)
    s = matmul_runner.state()
    limits = s.ctx.limits
    room = int(limits.get("max-compute-workgroup-storage-size", 16384))
    most = int(limits.get("max-compute-invocations-per-workgroup", 256))
    size = 8 if dt == "float64" else 4
    print(f"matmul {n}x{n} {dt} on {s.ctx.adapter_name if hasattr(s.ctx, 'adapter_name') else ''}"
          f" (workgroup memory {room} B, {most} invocations)")
    peer = torch_rate(n, dt, a.reps)
    if peer:
        print(f"torch.matmul (TF32 off): {peer:6.2f} TFLOP/s")
    default = s.tiles[dt]
    for t in CANDIDATES[dt]:
        if t.workgroup_bytes(size) > room or t.threads > most:
            print(f"{t}: past the device's limits, skipped")
            continue
        s.tiles = dict(s.tiles, **{dt: t})

        def run():
            matmul(ga, gb, out=gc)
            gc[0:1].numpy()
        try:
            sec = _best(run, a.reps)
        except Exception as exc:     # noqa: BLE001
            print(f"{t}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        ok = bool(np.all(np.abs(gc.numpy() - want) <= bound))
        rate = 2 * n ** 3 / sec / 1e12
        ratio = f"  {rate / peer:.2f}x torch" if peer else ""
        mark = "  (the default)" if t == default else ""
        print(f"{t.bm}x{t.bn}x{t.bk} blocks {t.tm}x{t.tn} prefetch={t.prefetch}: "
              f"{rate:6.2f} TFLOP/s{ratio}  {'ok' if ok else 'WRONG'}{mark}")


if __name__ == "__main__":
    main()
