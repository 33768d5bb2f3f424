"""Where the time between heavy queued launches goes on a GPU (issue 27: the 2-D stencil's
86 us per launch against its 68 us kernel, and queued 0-d sums at 0.71x torch).

    python bench/probe_queue_gaps.py [--k K] [--reps R] [--small]

Workloads: the 2-D 5-point stencil of 4096^2 and 2048^2 float32 on arena lists (the PEERS
row), saxpy of 64M float32 (20 and 200 launches), and ``add.reduce(d, to_device=True)`` of
64M float32 with the 0-d results held or dropped. Each: ``K`` launches queued then joined,
in the forms of ``FORMS`` alternating in one process (the default gathering rule, the
previous rule ``CTHREADS_KEEP_FED=old``, fixed gathering counts, the idle rule for all), the
same launches captured once and replayed (one submission), and torch where it imports.
Printed per form: us per launch, the host time of the launch loop alone (before the join),
submissions per launch and the flush rules that made them; for the stencil also the time
inside the queue's functions (encode, submit, polls). Results are checked against numpy;
``--small`` runs lavapipe sizes (where the GPU rule does not apply: a check that it runs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cthreads.gpu import Gpu, GpuArena, capture, device_name, gpu, to_device  # noqa: E402
import peers_kernels as K  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def _queue():
    from cthreads.backend import get_queue
    return get_queue()


class Form:
    """The form's batching rule while inside: ``HEAVY_GROUPS`` as given (None: unchanged),
    a fixed gathering count ``batch`` (None: the library's adapting one), or each heavy
    dispatch alone (``alone``: ``CTHREADS_KEEP_FED=old``)."""

    def __init__(self, groups=None, batch=None, alone=False):
        self.groups, self.batch, self.alone = groups, batch, alone

    def __enter__(self):
        from cthreads.backend import dispatch
        q = _queue()
        self.keep = (dispatch.HEAVY_GROUPS, dispatch.KEEP_FED_BATCH, dispatch.KEEP_FED_MOST,
                     q.keep_fed_alone)
        q.keep_fed_alone = self.alone
        if self.batch is not None:         # a fixed count
            dispatch.KEEP_FED_BATCH = dispatch.KEEP_FED_MOST = self.batch
        q.gather = dispatch.KEEP_FED_BATCH
        if self.groups is not None:
            dispatch.HEAVY_GROUPS = self.groups

    def __exit__(self, *exc):
        from cthreads.backend import dispatch
        (dispatch.HEAVY_GROUPS, dispatch.KEEP_FED_BATCH, dispatch.KEEP_FED_MOST,
         _queue().keep_fed_alone) = self.keep
        _queue().gather = dispatch.KEEP_FED_BATCH


#: the batching forms compared: the default (a gathering count adapting from 8 to 16), the
#: previous rule (each heavy dispatch alone while at most one submission is in flight), fixed
#: gathering counts, the idle rule for all
FORMS = {"default": Form(), "old (alone)": Form(alone=True), "gather 4": Form(batch=4),
         "gather 16": Form(batch=16), "idle rule only": Form(groups=1 << 60)}


class Rules:
    """Counts of the FLUSH_RULES rows that submitted, per form (a wrapper on flush)."""

    def __init__(self):
        from cthreads.backend import dispatch
        self.counts: dict = {}
        self.form = None
        real = dispatch.DeviceQueue.flush
        me = self

        def flush(queue, rule, *a, **kw):
            if me.form is not None:
                per = me.counts.setdefault(me.form, {})
                per[rule] = per.get(rule, 0) + 1
            return real(queue, rule, *a, **kw)
        dispatch.DeviceQueue.flush = flush


RULES = None


def _run_forms(name, launch, join, k, reps, graph=None, peers=()):
    global RULES
    if RULES is None:
        RULES = Rules()
    RULES.counts.clear()
    q = _queue()
    forms = FORMS
    res = {f: [] for f in list(forms) + (["replay"] if graph else []) + [p for p, _ in peers]}
    for r in range(reps):
        for form, rule in forms.items():
            with rule:
                RULES.form = form
                s0 = q.submitted
                t0 = time.perf_counter()
                jobs = [launch() for _ in range(k)]
                t1 = time.perf_counter()
                join(jobs)
                t2 = time.perf_counter()
                RULES.form = None
                res[form].append(((t2 - t0) / k, (t1 - t0) / k, (q.submitted - s0) / k))
        if graph:
            t0 = time.perf_counter()
            job = graph.replay(times=k)
            t1 = time.perf_counter()
            job.join(download=False)
            t2 = time.perf_counter()
            res["replay"].append(((t2 - t0) / k, (t1 - t0) / k, 1 / k))
        for peer, run in peers:
            t0 = time.perf_counter()
            run(k)
            res[peer].append(((time.perf_counter() - t0) / k, 0.0, 0.0))
    print(f"\n== {name}: {k} launches queued then joined, medians of {reps} ==")
    for form, rows in res.items():
        tot = statistics.median(r[0] for r in rows) * 1e6
        host = statistics.median(r[1] for r in rows) * 1e6
        subs = statistics.median(r[2] for r in rows)
        why = RULES.counts.get(form, {})
        rules = ", ".join(f"{r} {n / reps:.0f}" for r, n in sorted(why.items()))
        print(f"  {form:16s} {tot:8.1f} us/launch   host loop {host:7.1f} us/launch   "
              f"{subs:5.3f} submissions/launch" + (f"   flushes/round: {rules}" if why else ""),
              flush=True)


def phases(name, launch, join, k, forms) -> None:
    """Per-launch time inside the queue's functions (perf_counter wrappers) for ``forms``."""
    import probe_call_cost as PC

    from cthreads.backend import dispatch, spare, waits
    from cthreads.backend.native import encoder
    c = PC.instrument()
    c.wrap(encoder.NativeEncoder, "work_done_request", "work-done request")
    c.wrap(encoder.NativeEncoder, "work_done_ready", "work-done poll")
    c.wrap(waits.Completion, "room", "room()")
    c.wrap(dispatch.DeviceQueue, "flush", "flush (encode + submit + bookkeeping)")
    c.wrap(dispatch.DeviceQueue, "dispatch", "DeviceQueue.dispatch (flush inside)")
    for cls in vars(spare).values():
        if isinstance(cls, type) and hasattr(cls, "encode_for"):
            c.wrap(cls, "encode_for", "spare encode")
    for form, rule in forms.items():
        with rule:
            join([launch() for _ in range(k)])
            c.reset()
            c.on = True
            t0 = time.perf_counter()
            jobs = [launch() for _ in range(k)]
            t1 = time.perf_counter()
            c.on = False
            join(jobs)
        print(f"\n-- {name}, {form}: host loop {(t1 - t0) / k * 1e6:.1f} us/launch; inside "
              "(us per launch, calls per launch):")
        for label in sorted(c.ns, key=lambda x: -c.ns[x]):
            print(f"    {label:42s} {c.ns[label] / k / 1e3:7.1f} us  {c.calls[label] / k:5.2f}")


def stencil(k, reps, torch, g):
    u = np.random.default_rng(11).random((g, g), dtype=np.float32)
    want = u.copy()
    want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    v = u.copy()
    arena = GpuArena()
    arena.bind(u=u, v=v)

    def launch():
        return gpu(K.stencil2d, g, g, u, v, threads=(g, g))

    def join(jobs):
        jobs[-1].join(download=False)
        for j in jobs:
            j.join(download=False)

    with capture() as graph:
        launch()
    peers = []
    if torch is not None:
        tu = torch.from_numpy(u).cuda()
        tv = tu.clone()

        def on_torch(k):
            for _ in range(k):
                tv[1:-1, 1:-1] = 0.25 * (tu[:-2, 1:-1] + tu[2:, 1:-1] + tu[1:-1, :-2]
                                         + tu[1:-1, 2:])
            torch.cuda.synchronize()
        peers.append(("torch", on_torch))
    _run_forms(f"2-D 5-point stencil {g}^2 float32, arena lists", launch, join, k, reps,
               graph, peers)
    phases("stencil", launch, join, k, {"default": Form(), "old (alone)": Form(alone=True)})
    arena.sync("v")
    if not np.allclose(v, want, rtol=1e-6, atol=1e-6):
        raise SystemExit("stencil: wrong result")
    arena.release()


def saxpy(k, reps, torch, n):
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    arena = GpuArena()
    arena.bind(x=x, y=y)

    def launch():
        return gpu(K.saxpy, n, 0.5, x, y)

    def join(jobs):
        jobs[-1].join(download=False)

    peers = []
    if torch is not None:
        tx = torch.from_numpy(x).cuda()
        ty = torch.ones(n, device="cuda")

        def on_torch(k):
            for _ in range(k):
                ty.add_(tx, alpha=0.5)
            torch.cuda.synchronize()
        peers.append(("torch", on_torch))
    _run_forms(f"saxpy {n:,} float32, arena lists", launch, join, k, reps, None, peers)
    arena.sync("y")
    arena.release()


def sums(k, reps, torch, n):
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    exact = float(np.sum(x, dtype=np.float64))
    d = to_device(x)
    last = []

    def launch():
        return add.reduce(d, to_device=True)

    def join(rs):
        last[:] = [rs[-1].item()]

    def launch_dropped():              # as PEERS: each result dropped at the next call
        held[:] = [add.reduce(d, to_device=True)]
    held: list = []

    r0 = add.reduce(d, to_device=True)
    try:
        with capture() as graph:
            add.reduce(d, to_device=True)
    except Exception as exc:                 # CPU drivers: reductions read back; no replay
        print(f"(sum: no capture here: {str(exc)[:80]})")
        graph = None
    peers = []
    if torch is not None:
        tx = torch.from_numpy(x).cuda()

        def on_torch(k):
            for _ in range(k):
                r = tx.sum()
            r.item()
        peers.append(("torch", on_torch))
    _run_forms(f"add.reduce(d, to_device=True) {n:,} float32, 0-d results held", launch, join,
               k, reps, graph, peers)
    _run_forms(f"add.reduce(d, to_device=True) {n:,} float32, 0-d results dropped",
               launch_dropped, lambda _: last.__setitem__(slice(None), [held[0].item()]),
               k, reps, None, ())
    if abs(last[0] - exact) > 1e-4 * abs(exact) or abs(r0.item() - exact) > 1e-4 * abs(exact):
        raise SystemExit(f"sum: wrong result {last[0]} / {r0.item()} vs {exact}")
    # a number per call: a GpuArray and an arena list, alternating
    arena = GpuArena()
    xa = x.copy()
    arena.bind(xa=xa)
    rows = {"GpuArray": lambda: add.reduce(d), "arena list": lambda: add.reduce(xa),
            "0-d + item()": lambda: add.reduce(d, to_device=True).item()}
    if torch is not None:
        rows["torch .item()"] = lambda: tx.sum().item()
    out = {w: [] for w in rows}
    for _ in range(reps):
        for w, f in rows.items():
            t0 = time.perf_counter()
            for _ in range(20):
                got = f()
            out[w].append((time.perf_counter() - t0) / 20)
            if abs(float(got) - exact) > 1e-4 * abs(exact):
                raise SystemExit(f"sum {w}: wrong result")
    print(f"\n== sum of {n:,} float32, a number per call (20 calls, medians of reps) ==")
    for w, v in out.items():
        print(f"  {w:16s} {statistics.median(v) * 1e6:8.1f} us/call")
    arena.release()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="1024^2 grid, 1M sum (CPU drivers)")
    args = ap.parse_args(argv)
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    print(f"device: {device_name()}")
    stencil(args.k, args.reps, torch, 1024 if args.small else 4096)
    if not args.small:
        stencil(args.k, args.reps, torch, 2048)
    for k in (20, 200):
        saxpy(k, args.reps, torch, 1 << (20 if args.small else 26))
    sums(args.k, args.reps, torch, 1 << (20 if args.small else 26))


if __name__ == "__main__":
    main()
