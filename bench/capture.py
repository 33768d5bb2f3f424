"""A loop of tiny launches: one by one against a replayed capture (v3 section 5, issue 27 item 2).

    python bench/capture.py [--launches 100] [--n 64] [--reps 30]

Host time, in one process, of ``launches`` launches of a tiny kernel (``p[i] += dt * v[i]``
on ``n`` float32 elements of GpuArrays) followed by one join, median of ``reps`` runs:

* ours, one by one: ``gpu(step, ...)`` ``launches`` times (the queue batches them), then one
  ``join()`` of the last job;
* ours, replayed: the same loop recorded once by ``capture()``, then ``graph.replay().join()``;
* ``times=10``: one replay of ten repetitions, per repetition;
* the ``device_time`` of a replay (``replay(timed=True)``): the device's share;
* torch (when ``torch.cuda.is_available()``): the same loop of ``p.add_(v, alpha=dt)`` eager
  then one ``torch.cuda.synchronize()``, and the loop captured in a ``torch.cuda.CUDAGraph``,
  replayed then synchronized.

Prints the ratios the issue's targets name: replay / one by one (lavapipe: <= 0.5), replay /
torch eager (H200: <= 1.0), and replay / CUDA graph replay. Both forms check their results
against numpy first.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _times_us(fns: dict, reps: int) -> dict:
    """Median and best (µs) of each function, the functions run in turn (a load that comes
    and goes on a shared machine falls on all of them alike)."""
    for fn in fns.values():                # warm: pipelines, pools, caches
        fn()
        fn()
    times: dict = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1e6)
    return {name: (statistics.median(v), min(v)) for name, v in times.items()}


def ours(launches: int, n: int, reps: int) -> dict:
    from cthreads.backend import get_queue
    from cthreads.gpu import GlobalIdx, Gpu, capture, gpu, to_device

    @Gpu
    def step(n: int, dt: float, p: list[float], v: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            p[i] = p[i] + dt * v[i]

    p0 = np.arange(n, dtype=np.float32)
    v0 = np.ones(n, np.float32)
    p, v = to_device(p0), to_device(v0)

    def one_by_one():
        job = None
        for _ in range(launches):
            job = gpu(step, n, 0.5, p, v)
        job.join()

    with capture() as graph:
        for _ in range(launches):
            gpu(step, n, 0.5, p, v)

    def replayed():
        graph.replay().join()

    def replayed10():
        graph.replay(times=10).join()

    one_by_one()                            # checks: both forms against numpy
    np.testing.assert_allclose(p.numpy(), p0 + 0.5 * launches, rtol=1e-6)
    replayed()
    np.testing.assert_allclose(p.numpy(), p0 + 1.0 * launches, rtol=1e-6)
    queue = get_queue()
    t = _times_us({"one_by_one": one_by_one, "replay": replayed, "replay10": replayed10}, reps)
    t["replay10"] = tuple(x / 10 for x in t["replay10"])    # per repetition
    device = []                            # the device's own time of a replay (timestamps)
    for _ in range(reps):
        job = graph.replay(timed=True)
        job.join()
        if job.device_time is not None:
            device.append(job.device_time * 1e6)
    if device:
        t["replay_device"] = (statistics.median(device), min(device))
    return {"device": queue.ctx.name,
            "encoder": "native" if queue.uses_native_encoder else "public", **t}


def torch_peer(launches: int, n: int, reps: int) -> dict | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    p = torch.arange(n, dtype=torch.float32, device="cuda")
    v = torch.ones(n, dtype=torch.float32, device="cuda")

    def eager():
        for _ in range(launches):
            p.add_(v, alpha=0.5)
        torch.cuda.synchronize()

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):           # warm-up on a side stream, as the docs ask
        for _ in range(3):
            p.add_(v, alpha=0.5)
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(launches):
            p.add_(v, alpha=0.5)

    def graph_replay():
        g.replay()
        torch.cuda.synchronize()

    return _times_us({"torch_eager": eager, "torch_graph": graph_replay}, reps)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=100)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args(argv)
    r = ours(a.launches, a.n, a.reps)
    print(f"device: {r['device']} (encoder: {r['encoder']}); {a.launches} launches of a "
          f"{a.n}-element step, then one join; median and best of {a.reps}, the forms in turn")

    def row(label, key, base=None, note=""):
        med, best = r[key]
        line = f"  {label:26s} {med:9.1f} us (best {best:9.1f})"
        if base is not None:
            line += f"   {med / r[base][0]:.2f}x (best {best / r[base][1]:.2f}x) {note}"
        print(line)

    row("ours, one by one", "one_by_one")
    row("ours, graph.replay()", "replay", "one_by_one", "one by one (lavapipe target <= 0.5)")
    row("ours, replay(times=10)/10", "replay10", "one_by_one", "one by one, per repetition")
    if "replay_device" in r:
        row("  device_time of a replay", "replay_device", "replay", "of the replay's host time")
    t = torch_peer(a.launches, a.n, a.reps)
    if t is None:
        print("  torch: no CUDA device here (the H200 branch runs where torch sees one)")
        return
    r.update(t)
    row("torch eager + synchronize", "torch_eager")
    row("torch CUDA graph replay", "torch_graph")
    row("ours replay vs torch eager", "replay", "torch_eager", "(H200 target <= 1.0)")
    row("ours replay vs CUDA graph", "replay", "torch_graph")


if __name__ == "__main__":
    main()
