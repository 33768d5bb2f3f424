"""Where a sort's device time goes, by kernel: one ``sort`` of n float32 keys (GpuArray in and
out) is recorded dispatch by dispatch, then the dispatches of each kernel (``map``,
``hist8``, ``scan_up``/``scan_top``/``scan_down``, ``scatter8``, ``gather``...) are queued
again on their own, ``--rounds`` times in one submission, and timed to completion; an empty
wait is subtracted. The data the replays read is the recorded sort's (its scratch buffers keep
the last pass's keys), so the histograms see realistic digit spreads; the replays' results
are not used. ``onesweep8`` replayed alone finds the recorded sort's inclusive counts already
published (its look-backs end at once), so its figure is a lower bound. A probe for the lead on the H200 (issue 26's sort target: which phase to cut).

Run: ``python bench/sort_phases.py [--n N] [--rounds R]`` (default n: 16M on a GPU, 1M on a CPU
driver). ``CTHREADS_SORT`` selects the form as for bench/sort.py; the form is printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from cthreads.gpu import device_name, sort, to_device  # noqa: E402
from cthreads.runtime import sorter  # noqa: E402


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    name = device_name()
    cpu = "llvmpipe" in name or "lavapipe" in name
    n = args.n or ((1 << 20) if cpu else (16 << 20))
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    d = to_device(x)
    sort(d)[:1].numpy()                      # compiled, scratch made
    s = sorter._sorter_now()
    queue = s.queue
    names = {id(s.pipeline(k).pipeline): k for k in s.pipelines.keys()}
    seen = []
    real = queue.dispatch

    def record(pipeline, bg, groups, uniform=None, copies=(), buffers=(), more=False,
               stamp=None):
        seen.append((names.get(id(pipeline), "?"), pipeline, bg, groups, uniform, buffers))
        return real(pipeline, bg, groups, uniform, copies, buffers, more, stamp)

    queue.dispatch = record
    try:
        out = sort(d)
    finally:
        del queue.dispatch
    out[:1].numpy()
    assert np.array_equal(out.numpy(), np.sort(x, kind="stable"))

    def replay(kinds) -> float:
        t0 = time.perf_counter()
        for _ in range(args.rounds):
            for kind, pipe, bg, groups, uniform, buffers in seen:
                if kind in kinds:
                    real(pipe, bg, groups, uniform, (), buffers, True)
        queue.wait(queue.submit_copies(()))
        return time.perf_counter() - t0

    kinds = sorted({k for k, *_ in seen}, key=[k for k, *_ in seen].index)
    empty = statistics.median(replay(()) for _ in range(args.reps))
    whole = statistics.median(replay(set(kinds)) for _ in range(args.reps))
    per = {k: statistics.median(replay({k}) for _ in range(args.reps)) for k in kinds}
    count = {k: sum(1 for j, *_ in seen if j == k) for k in kinds}
    print(f"# phases of sort of {n:,} float32 keys on {name} ({s.form()}; "
          f"CTHREADS_SORT={s.asked or '(unset)'}), {args.rounds} sorts' dispatches a "
          f"submission, median of {args.reps}; ms per sort (empty wait {empty * 1e3:.3f} ms "
          "subtracted)")
    res = {}
    for k in kinds:
        ms = (per[k] - empty) / args.rounds * 1e3
        res[k] = ms
        print(f"  {k:14s} x{count[k]:<3d} {ms:9.3f} ms  ({ms / count[k]:.3f} ms each)")
    total = (whole - empty) / args.rounds * 1e3
    print(f"  {'all':14s} x{len(seen):<3d} {total:9.3f} ms  (device time of one sort's "
          "dispatches, queued back to back)")
    return {"n": n, "ms": res, "all": total}


if __name__ == "__main__":
    main()
