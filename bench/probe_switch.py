"""What a switch between torch's CUDA work and ours costs a call timed alone (issue 27: the
PEERS axis-reduction and scan rows timed our calls at about twice the per-call cost that
``bench/probe_call_cost.py`` measured in a process without torch work between them).

    python bench/probe_switch.py [--reps R]

For ``add.reduce(m, axis=1).numpy()`` of an 8192^2 float32 GpuArray, ``add.accumulate(d)``
of 64M float32 (waited for by its last element) and ``torch.sum(t, dim=1)`` /
``torch.cumsum`` + synchronize, and ``add.reduce`` to a number (of a GpuArray and of an arena
list) against ``x.sum().item()``: the median time of one call (a) in a run of calls back to
back, (b) right after one call of the other library's (the order ``alternating_ms`` gives
every case of a rotating round), (c) right after a numpy call of the same length (no GPU
work between). Every result is checked against numpy first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cthreads.gpu import Gpu, GpuArena, device_name, to_device  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def rows(name, ours, theirs, cpu, reps) -> None:
    cases = {"ours back to back": [], "ours after theirs": [], "ours after numpy": [],
             "theirs back to back": [], "theirs after ours": []}
    for fn in (ours, theirs, cpu):
        fn()
    for _ in range(reps):
        ours()
        cases["ours back to back"].append(_time(ours))
        theirs()
        cases["ours after theirs"].append(_time(ours))
        cpu()
        cases["ours after numpy"].append(_time(ours))
        theirs()
        cases["theirs back to back"].append(_time(theirs))
        ours()
        cases["theirs after ours"].append(_time(theirs))
    print(f"\n== {name}: median of {reps} (ms per call) ==")
    for case, v in cases.items():
        print(f"  {case:22s} {statistics.median(v) * 1e3:8.3f}   (min {min(v) * 1e3:.3f})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--side", type=int, default=8192)
    args = ap.parse_args(argv)
    import torch
    print(f"device: {device_name()}; torch {torch.__version__}")
    n = args.side
    m = np.random.default_rng(1).random((n, n), dtype=np.float32)
    dm, tm = to_device(m), torch.from_numpy(m).cuda()
    want = m.astype(np.float64).sum(axis=1)
    got = add.reduce(dm, axis=1).numpy()
    if not np.allclose(got, want, rtol=1e-4):
        raise SystemExit("axis=1: wrong result")
    small = np.ones(1 << 16, np.float32)

    def torch_sum():
        torch.sum(tm, dim=1)
        torch.cuda.synchronize()
    rows(f"add.reduce(m, axis=1).numpy(), {n}^2 float32", lambda: add.reduce(dm, axis=1).numpy(),
         torch_sum, lambda: small.sum(), args.reps)
    x = np.random.default_rng(2).random(n * n, dtype=np.float32)
    d, tx = to_device(x), torch.from_numpy(x).cuda()
    if not np.isclose(add.accumulate(d)[-1:].numpy()[0], x.astype(np.float64).sum(), rtol=1e-3):
        raise SystemExit("accumulate: wrong result")

    def torch_cumsum():
        torch.cumsum(tx, 0)
        torch.cuda.synchronize()
    rows(f"add.accumulate(d)[-1:].numpy(), {n * n:,} float32",
         lambda: add.accumulate(d)[-1:].numpy(), torch_cumsum, lambda: small.sum(), args.reps)
    exact = float(x.astype(np.float64).sum())
    if abs(add.reduce(d) - exact) > 1e-4 * exact or abs(tx.sum().item() - exact) > 1e-4 * exact:
        raise SystemExit("sum: wrong result")
    rows(f"add.reduce(d) (a number), {n * n:,} float32", lambda: add.reduce(d),
         lambda: tx.sum().item(), lambda: small.sum(), args.reps)
    xa = x.copy()
    arena = GpuArena()
    arena.bind(xa=xa)
    rows(f"add.reduce(xa) (a number), arena list of {n * n:,} float32",
         lambda: add.reduce(xa), lambda: tx.sum().item(), lambda: small.sum(), args.reps)
    arena.release()


if __name__ == "__main__":
    main()
