#!/usr/bin/env python3
"""Device arrays (issue 23's targets): ``GpuArray`` against its baselines, in one process.

    python bench/gpuarray.py [--quick] [--only a,b,c,d] [--repeats K]
                             [--json PATH [--overwrite]] [--binding-bytes B]

Rows (each figure a median of alternating samples; every result checked against numpy after
the timing, a wrong one is FAIL, never a figure):

a. saxpy ``y = a*x + y`` (``examples.samples.saxpy``), k launches queued then every job
   joined: on ``GpuArray``s against the same on numpy arrays bound in a ``GpuArena``
   (``join(download=False)``), and on CUDA against torch's ``y.add_(x, alpha=a)`` then one
   synchronize. n = 64M float32 (fewer where the device cannot bind 256 MiB in one binding:
   lavapipe binds 128 MiB, so 32M there). GB/s at 12 bytes per element.
b. 256 MiB of float32: ``to_device(host)`` and ``d.set(host)`` against raw wgpu-py's
   ``queue.write_buffer`` into a storage buffer, each followed by a wait for the device;
   ``d.numpy()`` against a raw copy into a MAP_READ buffer, map and copy out (the device made
   by ``bench/raw_wgpu.py``, a second device in this process); on CUDA also torch's
   ``.cuda()`` / ``.cpu()`` of pageable memory. GB/s.
c. saxpy on arrays 4x the device's storage-binding limit (``pool.binding_bytes()``; float64
   where 4x the limit in float32 would reach 2**31 elements, past int32 indexing) against the
   same kernel on arrays of half the limit, the same bytes per sample. GB/s ratio.
d. ``add.reduce`` of a 4x-limit array (checked against numpy's float64 sum within the rounding
   bound) against one of half the limit. GB/s at the element size.

Rows c and d need arrays split across bindings; where cthreads refuses an array past the
limit (``GpuInvalidArgument``), the row reports ``not available: <the error>``. They check
host memory first (``host_available()``; on a CPU driver device memory is host memory) and
report ``not run`` when it is short. ``--binding-bytes B`` runs everything under
``config.override(binding_bytes=B)`` (a small B exercises the split code paths at small sizes;
those figures mean nothing).

Results: ``bench/results/<device>-<date>-<full|quick>-gpuarray.json`` (and ``.txt``, the
printed report), never overwriting another run's.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import gc
import json
import math
import os
import platform
import socket
import statistics
import sys
import time
import traceback

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, ROOT)
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402

from cthreads import config  # noqa: E402
from cthreads.errors import GpuInvalidArgument, VulkanOutOfMemory  # noqa: E402
from cthreads.gpu import GpuArena, full, gpu, to_device  # noqa: E402
from examples.reduce_sum import add  # noqa: E402
from examples.samples import saxpy  # noqa: E402

A = 0.5                     # saxpy's scalar: with x = i % 7 and y0 = 1 every result is exact
MiB = 1 << 20

FULL = {
    "cpu": {"a_k": 200, "a_reps": 2, "a_warm": 0, "b_reps": 7, "c_k": 4, "c_reps": 3,
            "d_reps": 5, "warm": 1},
    "gpu": {"a_k": 200, "a_reps": 11, "b_reps": 11, "c_k": 20, "c_reps": 11, "d_reps": 11,
            "warm": 2},
}
QUICK = {
    "cpu": {"a_k": 20, "a_reps": 2, "a_warm": 0, "b_reps": 3, "c_k": 2, "c_reps": 2,
            "d_reps": 2, "warm": 1},
    "gpu": {"a_k": 200, "a_reps": 5, "b_reps": 5, "c_k": 20, "c_reps": 5, "d_reps": 5, "warm": 1},
}
A_N = 64 * MiB              # row a's n (elements)
B_BYTES = 256 * MiB         # row b's size

# (label, metric, baseline metric, lavapipe bound, GPU bound): ours / baseline >= bound
TARGETS = [
    ("a. saxpy launches on GpuArrays >= {b}x arena lists", "a_ours_GBps", "a_arena_GBps",
     0.95, None),
    ("a. saxpy launches on GpuArrays >= {b}x torch add_", "a_ours_GBps", "a_torch_GBps",
     None, 0.97),
    ("b. to_device >= {b}x raw write_buffer", "b_to_device_GBps", "b_raw_up_GBps", 0.9, None),
    ("b. numpy() >= {b}x raw copy + map", "b_numpy_GBps", "b_raw_down_GBps", 0.9, None),
    ("b. to_device >= {b}x torch .cuda()", "b_to_device_GBps", "b_torch_up_GBps", None, 0.9),
    ("b. numpy() >= {b}x torch .cpu()", "b_numpy_GBps", "b_torch_down_GBps", None, 0.9),
    ("b. to_device at the binding limit >= {b}x raw (the size CPU drivers bind today)",
     "bl_to_device_GBps", "bl_raw_up_GBps", 0.9, None),
    ("b. numpy() at the binding limit >= {b}x raw (the size CPU drivers bind today)",
     "bl_numpy_GBps", "bl_raw_down_GBps", 0.9, None),
    ("c. saxpy 4x the binding limit >= {b}x under it", "c_big_GBps", "c_under_GBps", 0.9, 0.9),
    ("d. add.reduce 4x the binding limit >= {b}x under it", "d_big_GBps", "d_under_GBps",
     0.9, 0.9),
]

LOG: list = []


def say(line: str = "") -> None:
    print(line, flush=True)
    LOG.append(line)


def note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"


# -- the device -----------------------------------------------------------------------------------

def device_facts() -> dict:
    from cthreads.backend import get_queue  # noqa: PLC0415
    from cthreads.backend.buffers import host_available  # noqa: PLC0415
    q = get_queue()
    return {"device": q.ctx.name, "cpu": bool(q.ctx.is_cpu),
            "binding_bytes": int(q.pool.binding_bytes()),
            "device_binding_limit": int(q.ctx.limit("max-storage-buffer-binding-size")),
            "max_buffer_size": int(q.ctx.limit("max-buffer-size")),
            "host_available": host_available()}


def wait_ours() -> None:
    """Submit our pending work and wait for all of it (the benchmark's clock stop: no public
    call waits for an upload, which lands before the next launch that binds the array)."""
    from cthreads.backend import get_queue  # noqa: PLC0415
    get_queue().idle()


def torch_cuda():
    """torch when it sees a CUDA device, else (None, why)."""
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:
        return None, f"torch not importable ({_short(exc)})"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    return torch, f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}"


def pattern(n: int, dtype, chunk: int = 1 << 24) -> np.ndarray:
    """x[i] = i % 7 (exact in every float width), made in chunks (no n-sized temporaries)."""
    out = np.empty(n, dtype)
    for lo in range(0, n, chunk):
        out[lo:lo + chunk] = np.arange(lo, min(n, lo + chunk), dtype=np.int64) % 7
    return out


def check_saxpy(y: np.ndarray, n: int, launches: int, chunk: int = 1 << 24) -> str | None:
    """None when y == 1 + launches * A * (i % 7) everywhere (compared in chunks)."""
    if y.shape != (n,):
        return f"shape {y.shape}, expected ({n},)"
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        want = 1.0 + launches * A * (np.arange(lo, hi, dtype=np.int64) % 7).astype(np.float64)
        got = y[lo:hi].astype(np.float64)
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = lo + int(bad[0])
            return (f"{bad.size}+ of {n:,} wrong after {launches} launches; y[{i}] = "
                    f"{y[i]!r}, expected {want[i - lo]!r}")
    return None


def check_sum(got: float, n: int, dtype) -> str | None:
    """The sum of i % 7 for i < n, exactly; ``got`` within the rounding bound of any order of
    additions in ``dtype`` (the bound of ``reference.check_sum``, at the dtype's unit)."""
    full_periods, rest = divmod(n, 7)
    exact = float(21 * full_periods + rest * (rest - 1) // 2)
    u = 2.0**-24 if np.dtype(dtype) == np.float32 else 2.0**-53
    depth = math.ceil(math.log2(max(n, 2))) + max(16, math.ceil(n / 2**18)) + 8
    bound = depth * u * exact
    if not abs(got - exact) <= bound:
        return f"sum {got!r} is {abs(got - exact):.3g} from the exact {exact!r} (bound {bound:.3g})"
    return None


# -- timing ---------------------------------------------------------------------------------------

class Race:
    """Alternating samples of several set-ups; ``setup()`` -> (sample, check, seconds -> figure).
    A set-up that raises GpuInvalidArgument is 'not available: ...', another error a FAIL."""

    def __init__(self, reps: int, warm: int):
        self.reps, self.warm = reps, warm
        self.times: dict = {}

    def run(self, entries: dict, out: dict, why: dict) -> None:
        runs = {}
        for key, setup in entries.items():
            if isinstance(setup, str):          # a reason it cannot run here
                why[key] = setup
                continue
            try:
                sample, check, figure = setup()
                for _ in range(self.warm):
                    sample()
            except (GpuInvalidArgument, VulkanOutOfMemory) as exc:
                why[key] = f"not available: {_short(exc)}"
                note(f"{key}: {why[key]}")
                continue
            except Exception as exc:
                traceback.print_exc()
                why[key] = f"FAIL (set-up): {_short(exc)}"
                continue
            runs[key] = (sample, check, figure)
        times: dict = {k: [] for k in runs}
        names = list(runs)
        gc.collect()
        for r in range(self.reps if names else 0):
            for key in names[r % len(names):] + names[:r % len(names)]:
                if key not in runs:
                    continue
                gc.disable()
                try:
                    t0 = time.perf_counter()
                    runs[key][0]()
                    times[key].append(time.perf_counter() - t0)
                except Exception as exc:
                    traceback.print_exc()
                    why[key] = f"FAIL (sample {r}): {_short(exc)}"
                    del runs[key]
                finally:
                    gc.enable()
        self.times = times
        for key, (_, check, figure) in runs.items():
            try:
                err = check()
            except Exception as exc:
                traceback.print_exc()
                err = _short(exc)
            if err:
                why[key] = f"FAIL (wrong result): {err}"
                note(f"{key}: {why[key]}")
                continue
            out[key] = figure(statistics.median(times[key]))
            lo, hi = sorted(figure(t) for t in (min(times[key]), max(times[key])))
            out.setdefault("_spread", {})[key] = [lo, hi]
            note(f"{key} = {out[key]:.4g} (samples {lo:.4g}-{hi:.4g}, {len(times[key])})")
        runs.clear()
        gc.collect()


def paired(race: Race, out: dict, mine: str, base: str) -> None:
    """The median over rounds of (mine / base) of samples of the same round, neighbours in
    time (a change of the machine's load between rounds cancels): ``<mine>_per_<base>``."""
    a, b = race.times.get(mine, []), race.times.get(base, [])
    if mine in out and base in out and a and len(a) == len(b):
        out[f"{mine}_per_{base}"] = statistics.median(tb / ta for ta, tb in zip(a, b))


def _queued(jobs_of) -> None:
    jobs = jobs_of()
    jobs[-1].join(download=False)
    for job in jobs:
        job.join(download=False)


# -- a: launches on GpuArrays -----------------------------------------------------------------

def row_a(p: dict, facts: dict, race: Race, out: dict, why: dict, torch) -> None:
    limit_n = facts["binding_bytes"] // 4
    n = p.get("a_n") or min(A_N, limit_n)
    k = p["a_k"]
    if n < A_N and not p.get("a_n"):
        out["a_note"] = (f"n = {n:,} (not {A_N:,}): the device binds at most "
                         f"{facts['binding_bytes']:,} bytes in one binding")
    out["a_n"], out["a_k"] = n, k
    x = pattern(n, np.float32)
    figure = lambda s: 12 * n / (s / k) / 1e9       # noqa: E731
    stack = contextlib.ExitStack()

    def ours():
        xd, yd = to_device(x), full(n, 1.0, dtype=np.float32)
        gpu(saxpy, n, A, xd, yd).join()         # compiles; the samples are warm-up enough
        done = [1]

        def sample():
            _queued(lambda: [gpu(saxpy, n, A, xd, yd) for _ in range(k)])
            done[0] += k
        return sample, lambda: check_saxpy(yd.numpy(), n, done[0]), figure

    def arena():
        xa, ya = x.copy(), np.ones(n, np.float32)
        ar = stack.enter_context(GpuArena())
        ar.bind(x=xa, y=ya)
        gpu(saxpy, n, A, xa, ya).join(download=False)
        done = [1]

        def sample():
            _queued(lambda: [gpu(saxpy, n, A, xa, ya) for _ in range(k)])
            done[0] += k
        return sample, lambda: (ar.sync("y"), check_saxpy(ya, n, done[0]))[1], figure

    def on_torch():
        tx = torch.from_numpy(x).cuda()
        ty = torch.ones(n, dtype=torch.float32, device="cuda")
        ty.add_(tx, alpha=A)
        torch.cuda.synchronize()
        done = [1]

        def sample():
            for _ in range(k):
                ty.add_(tx, alpha=A)
            torch.cuda.synchronize()
            done[0] += k
        return sample, lambda: check_saxpy(ty.cpu().numpy(), n, done[0]), figure

    entries = {"a_ours_GBps": ours, "a_arena_GBps": arena,
               "a_torch_GBps": on_torch if torch else "torch with CUDA is not here"}
    with stack:
        warm, race.warm = race.warm, p.get("a_warm", race.warm)
        try:
            race.run(entries, out, why)
        finally:
            race.warm = warm
    paired(race, out, "a_ours_GBps", "a_arena_GBps")
    paired(race, out, "a_ours_GBps", "a_torch_GBps")
    host_cost(p, race, out, why)


def host_cost(p: dict, race: Race, out: dict, why: dict) -> None:
    """The per-launch cost with nothing to compute: n=64, ``host_calls`` launches queued,
    then all joined (us per launch), on GpuArrays and on arena lists: the host's work per
    ``gpu()`` call and per join, which the big launches above hide behind the device's."""
    n, calls = 64, p.get("host_calls", 2000)
    x = pattern(n, np.float32)
    figure = lambda s: s / calls * 1e6              # noqa: E731

    def ga():
        xd, yd = to_device(x), full(n, 1.0, dtype=np.float32)
        done = [0]

        def sample():
            _queued(lambda: [gpu(saxpy, n, A, xd, yd) for _ in range(calls)])
            done[0] += calls
        return sample, lambda: check_saxpy(yd.numpy(), n, done[0]), figure

    def arena():
        ar = GpuArena()
        xa, ya = x.copy(), np.ones(n, np.float32)
        ar.bind(x=xa, y=ya)
        done = [0]

        def sample():
            _queued(lambda: [gpu(saxpy, n, A, xa, ya) for _ in range(calls)])
            done[0] += calls

        def check():
            ar.sync("y")
            err = check_saxpy(ya, n, done[0])
            ar.release()
            return err
        return sample, check, figure

    race.run({"a_host_ours_us": ga, "a_host_arena_us": arena}, out, why)
    paired(race, out, "a_host_arena_us", "a_host_ours_us")


# -- b: transfers ---------------------------------------------------------------------------------

def row_b(p: dict, facts: dict, race: Race, out: dict, why: dict, torch) -> None:
    """At 256 MiB (the target's size; past lavapipe's binding limit, so it needs split
    arrays there) and, where that is past the limit, also at the limit (prefix ``bl_``)."""
    nbytes = p.get("b_bytes", B_BYTES)
    out["b_bytes"] = nbytes
    transfers(nbytes, "b", race, out, why, torch)
    if nbytes > facts["binding_bytes"]:
        out["bl_bytes"] = facts["binding_bytes"] // 4 * 4
        transfers(out["bl_bytes"], "bl", race, out, why, torch)


def transfers(nbytes: int, tag: str, race: Race, out: dict, why: dict, torch) -> None:
    n = nbytes // 4
    host = (np.arange(n, dtype=np.int64) % 1001).astype(np.float32)
    figure = lambda s: 4 * n / s / 1e9              # noqa: E731
    equal = lambda got: None if np.array_equal(got, host) else "the copy differs"  # noqa: E731

    def ours_up():
        box = [None]

        def sample():
            box[0] = None                   # the previous array goes back to the pool
            box[0] = to_device(host)
            wait_ours()
        return sample, lambda: equal(box[0].numpy()), figure

    def ours_set():
        d = to_device(host)

        def sample():
            d.set(host)
            wait_ours()
        return sample, lambda: equal(d.numpy()), figure

    def ours_down():
        d = to_device(host)
        box = [None]

        def sample():
            box[0] = None
            box[0] = d.numpy()
        return sample, lambda: equal(box[0]), figure

    raw_dev = {}

    def raw():
        if "raw" not in raw_dev:
            import raw_wgpu  # noqa: PLC0415
            r = raw_wgpu.Raw()
            raw_dev["raw"] = r
            raw_dev["buf"] = r.storage(4 * n)
            raw_dev["stage"] = r.staging(4 * n)
        return raw_dev["raw"], raw_dev["buf"], raw_dev["stage"]

    def raw_up():
        r, buf, stage = raw()

        def sample():
            r.queue.write_buffer(buf, 0, host)
            r.queue.submit([r.device.create_command_encoder().finish()])
            r.wait()
        return sample, lambda: equal(r.read(buf, stage, 4 * n, np.float32)), figure

    def raw_down():
        r, buf, stage = raw()
        r.queue.write_buffer(buf, 0, host)
        box = [None]

        def sample():
            box[0] = None
            box[0] = r.read(buf, stage, 4 * n, np.float32)
        return sample, lambda: equal(box[0]), figure

    def torch_up():
        pageable = torch.from_numpy(host)
        box = [None]

        def sample():
            box[0] = None
            box[0] = pageable.cuda()
            torch.cuda.synchronize()
        return sample, lambda: equal(box[0].cpu().numpy()), figure

    def torch_down():
        t = torch.from_numpy(host).cuda()
        box = [None]

        def sample():
            box[0] = None
            box[0] = t.cpu()
        return sample, lambda: equal(box[0].numpy()), figure

    no_torch = "torch with CUDA is not here"
    race.run({f"{tag}_to_device_GBps": ours_up, f"{tag}_set_GBps": ours_set,
              f"{tag}_raw_up_GBps": raw_up,
              f"{tag}_torch_up_GBps": torch_up if torch else no_torch}, out, why)
    race.run({f"{tag}_numpy_GBps": ours_down, f"{tag}_raw_down_GBps": raw_down,
              f"{tag}_torch_down_GBps": torch_down if torch else no_torch}, out, why)
    raw_dev.clear()


# -- c, d: past the binding limit -----------------------------------------------------------------

def big_sizes(facts: dict) -> tuple:
    """(dtype, n_big, n_under): n_big elements of 4x the binding limit (float64 where float32
    would reach 2**31 elements), n_under of half the limit."""
    binding = facts["binding_bytes"]
    dtype = np.float32
    n_big = -(-4 * binding // 4)
    if n_big >= 2**31 - 1:
        dtype = np.float64
        n_big = -(-4 * binding // 8)
    if n_big >= 2**31 - 1:
        raise ValueError(f"4x the binding limit ({4 * binding:,} bytes) is past int32 "
                         "indexing even in float64")
    size = np.dtype(dtype).itemsize
    return dtype, n_big, max(binding // 2 // size, 1)


def host_short(need: int, facts: dict) -> str | None:
    from cthreads.backend.buffers import host_available  # noqa: PLC0415
    avail = host_available()
    if avail is not None and need > avail:
        return (f"not run: needs about {need / 2**30:.1f} GiB of host memory, "
                f"{avail / 2**30:.1f} GiB available")
    return None


def row_c(p: dict, facts: dict, race: Race, out: dict, why: dict) -> None:
    dtype, n_big, n_under = big_sizes(facts)
    size = np.dtype(dtype).itemsize
    k_big = p["c_k"]
    k_under = k_big * max(1, n_big // n_under)
    out.update(c_dtype=np.dtype(dtype).name, c_n_big=n_big, c_n_under=n_under,
               c_big_bytes=n_big * size, c_k_big=k_big, c_k_under=k_under)
    # host x, the download of y, a staging copy; on a CPU driver x and y on the device too
    need = (3 + (2 if facts["cpu"] else 0)) * n_big * size + (256 << 20)
    short = host_short(need, facts)

    def setup(n: int, k: int):
        def make():
            xd = to_device(pattern(n, dtype))
            yd = full(n, 1.0, dtype=dtype)
            done = [0]

            def sample():
                _queued(lambda: [gpu(saxpy, n, A, xd, yd) for _ in range(k)])
                done[0] += k
            return (sample, lambda: check_saxpy(yd.numpy(), n, done[0]),
                    lambda s: 3 * size * n / (s / k) / 1e9)
        return make

    race.run({"c_big_GBps": short or setup(n_big, k_big),
              "c_under_GBps": setup(n_under, k_under)}, out, why)


def row_d(p: dict, facts: dict, race: Race, out: dict, why: dict) -> None:
    dtype, n_big, n_under = big_sizes(facts)
    size = np.dtype(dtype).itemsize
    calls_under = max(1, n_big // n_under)
    out.update(d_dtype=np.dtype(dtype).name, d_n_big=n_big, d_n_under=n_under,
               d_big_bytes=n_big * size)
    need = (1 + (1 if facts["cpu"] else 0)) * n_big * size + (256 << 20)
    short = host_short(need, facts)

    def setup(n: int, calls: int):
        def make():
            xd = to_device(pattern(n, dtype))
            got = []

            def sample():
                for _ in range(calls):
                    got.append(add.reduce(xd))

            def check():
                bad = [check_sum(g, n, dtype) for g in got]
                return next((b for b in bad if b), None) if got else "no sums"
            return sample, check, lambda s: size * n / (s / calls) / 1e9
        return make

    race.run({"d_big_GBps": short or setup(n_big, 1),
              "d_under_GBps": setup(n_under, calls_under)}, out, why)


# -- the report -----------------------------------------------------------------------------------

def render(out: dict, why: dict, facts: dict, meta: dict) -> str:
    gpu_col = not facts["cpu"]
    p_host = meta["params"].get("host_calls", 2000)
    lines = [f"cthreads GpuArray benchmark - {meta['host']} - {meta['date']} - "
             f"{facts['device']} ({'GPU' if gpu_col else 'CPU'}) - "
             f"{'quick' if meta['quick'] else 'full'} run, {meta['elapsed_s']:.0f} s",
             f"binding limit {facts['binding_bytes']:,} bytes "
             f"(device: {facts['device_binding_limit']:,}), max buffer "
             f"{facts['max_buffer_size']:,} bytes"]
    if meta.get("binding_override"):
        lines.append(f"binding_bytes overridden to {meta['binding_override']:,}: a check of "
                     "the code paths, not figures")
    rows = [
        ("a", f"{out.get('a_k', '?')} saxpy launches, n={out.get('a_n', 0):,} float32, GB/s",
         [("GpuArray", "a_ours_GBps"), ("arena lists", "a_arena_GBps"),
          ("torch add_", "a_torch_GBps")]),
        ("a", f"{p_host} tiny launches (n=64) queued, then joined: us per launch",
         [("GpuArray", "a_host_ours_us"), ("arena lists", "a_host_arena_us")]),
        ("b", f"upload {out.get('b_bytes', 0) / MiB:.0f} MiB, GB/s",
         [("to_device", "b_to_device_GBps"), ("set()", "b_set_GBps"),
          ("raw write_buffer", "b_raw_up_GBps"), ("torch .cuda()", "b_torch_up_GBps")]),
        ("b", f"download {out.get('b_bytes', 0) / MiB:.0f} MiB, GB/s",
         [("numpy()", "b_numpy_GBps"), ("raw copy + map", "b_raw_down_GBps"),
          ("torch .cpu()", "b_torch_down_GBps")]),
        ("b", f"upload {out.get('bl_bytes', 0) / MiB:.0f} MiB, GB/s (at the binding limit)",
         [("to_device", "bl_to_device_GBps"), ("set()", "bl_set_GBps"),
          ("raw write_buffer", "bl_raw_up_GBps"), ("torch .cuda()", "bl_torch_up_GBps")]),
        ("b", f"download {out.get('bl_bytes', 0) / MiB:.0f} MiB, GB/s (at the binding limit)",
         [("numpy()", "bl_numpy_GBps"), ("raw copy + map", "bl_raw_down_GBps"),
          ("torch .cpu()", "bl_torch_down_GBps")]),
        ("c", f"saxpy, {out.get('c_dtype', '?')}: {out.get('c_big_bytes', 0) / MiB:,.0f} MiB "
              f"arrays (n={out.get('c_n_big', 0):,}) vs n={out.get('c_n_under', 0):,}, GB/s",
         [("4x limit", "c_big_GBps"), ("under limit", "c_under_GBps")]),
        ("d", f"add.reduce, {out.get('d_dtype', '?')}: {out.get('d_big_bytes', 0) / MiB:,.0f} "
              f"MiB (n={out.get('d_n_big', 0):,}) vs n={out.get('d_n_under', 0):,}, GB/s",
         [("4x limit", "d_big_GBps"), ("under limit", "d_under_GBps")]),
    ]
    for tag, text, cells in rows:
        if not any(key in out or key in why for _, key in cells):
            continue
        lines.append("")
        lines.append(f"{tag}. {text}")
        for label, key in cells:
            if key in out:
                lo, hi = out.get("_spread", {}).get(key, (None, None))
                spread = f"   (samples {lo:.3g}-{hi:.3g})" if lo is not None else ""
                lines.append(f"     {label:<18} {out[key]:10.3f}{spread}")
            elif key in why:
                lines.append(f"     {label:<18} {why[key]}")
    for key in ("a_note",):
        if key in out:
            lines.append(f"note: {out[key]}")
    lines.append("")
    lines.append(f"Targets ({'H200 / GPU' if gpu_col else 'lavapipe / CPU driver'} column; "
                 "ratios within this run)")
    for label, mine, base, lav, gpu_b in TARGETS:
        bound = gpu_b if gpu_col else lav
        if bound is None:
            continue
        text = label.format(b=bound)
        if mine.startswith("bl_") and mine not in out and base not in out:
            continue                      # only where 256 MiB is past the binding limit
        if mine in out and base in out:
            ratio = out[mine] / out[base]
            verdict = "PASS" if ratio >= bound else "MISS"
            pair = out.get(f"{mine}_per_{base}")
            pair = f"  (median of per-round ratios {pair:.3f}x)" if pair else ""
            lines.append(f"  {text:<78} {ratio:6.3f}x  {verdict}{pair}")
        else:
            missing = why.get(mine) or why.get(base) or "not measured"
            lines.append(f"  {text:<78} n/a: {missing[:160]}")
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer launches and samples")
    ap.add_argument("--only", default="a,b,c,d", help="rows to run, e.g. a,b")
    ap.add_argument("--json", help="where to write the results (default: a new file "
                    "bench/results/<device>-<date>-<full|quick>-gpuarray.json)")
    ap.add_argument("--overwrite", action="store_true", help="let --json replace a file")
    ap.add_argument("--binding-bytes", type=int,
                    help="run under config.override(binding_bytes=B) (code-path check)")
    ap.add_argument("--repeats", type=int, help="samples per side in every row (default: "
                    "full 2-7 on CPU drivers, 11 on GPUs; quick fewer)")
    ap.add_argument("--a-n", type=int, help="row a's n (default 64M, capped by the binding)")
    args = ap.parse_args(argv)
    from run import refuse_to_overwrite, result_path  # noqa: PLC0415
    if args.json and not args.overwrite and refuse_to_overwrite(args.json):
        ap.error(refuse_to_overwrite(args.json))
    rows = [r.strip() for r in args.only.split(",") if r.strip()]
    if any(r not in "abcd" for r in rows):
        ap.error("--only takes rows among a,b,c,d")
    t_start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.binding_bytes:
            stack.enter_context(config.override(binding_bytes=args.binding_bytes))
        facts = device_facts()
        p = dict((QUICK if args.quick else FULL)["cpu" if facts["cpu"] else "gpu"])
        if args.binding_bytes:            # a check of the code paths: small everywhere
            p["b_bytes"] = min(B_BYTES, 2 * facts["binding_bytes"])
            p["host_calls"] = 100
        if args.a_n:
            p["a_n"] = args.a_n
        if args.repeats:
            p.update({k: args.repeats for k in ("a_reps", "b_reps", "c_reps", "d_reps")})
        torch, torch_info = torch_cuda()
        note(f"{facts['device']}: binding limit {facts['binding_bytes']:,} bytes; {torch_info}")
        race = Race(0, p["warm"])
        out: dict = {}
        why: dict = {}
        for row, fn, reps in (("a", row_a, "a_reps"), ("b", row_b, "b_reps"),
                              ("c", row_c, "c_reps"), ("d", row_d, "d_reps")):
            if row not in rows:
                continue
            race.reps = p[reps]
            t0 = time.perf_counter()
            try:
                if row in "ab":
                    fn(p, facts, race, out, why, torch)
                else:
                    fn(p, facts, race, out, why)
            except Exception as exc:
                traceback.print_exc()
                why[f"{row}_row"] = f"FAIL: {_short(exc)}"
            out[f"{row}_seconds"] = time.perf_counter() - t0
            note(f"row {row} took {out[f'{row}_seconds']:.1f} s")
            gc.collect()
    meta = {"host": socket.gethostname(), "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "quick": args.quick, "params": p, "facts": facts, "torch": torch_info,
            "binding_override": args.binding_bytes, "platform": platform.platform(),
            "cpus": os.cpu_count(), "elapsed_s": time.perf_counter() - t_start,
            "load_avg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "argv": sys.argv[1:]}
    report = render(out, why, facts, meta)
    say(report)
    path = args.json or result_path(os.path.join(BENCH, "results"), facts["device"],
                                    _dt.date.today().isoformat(), args.quick, ["gpuarray"])
    with open(path, "w") as f:
        json.dump({"meta": meta, "figures": out, "not_measured": why, "report": report}, f,
                  indent=1, default=str)
    with open(os.path.splitext(path)[0] + ".txt", "w") as f:
        f.write(report + "\n")
    note(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
