"""Where the fixed cost of a library call on a large GpuArray goes, per phase.

    python bench/probe_call_cost.py [--n N] [--side S] [--reps R]

For each call on a large GpuArray ``d`` (``--n`` float32 values, default 64M on a GPU, 1M on a
CPU driver; the axis reduction on a ``--side`` x ``--side`` matrix, default 8192 / 1024):

* ``d.copy()``, ``add.accumulate(d)``, ``add.reduce(m, axis=1)``: a new GpuArray, waited for
  by downloading its last element (4 bytes), as bench/accumulate.py does; the previous
  call's result is dropped when the new one is assigned (as in the benchmarks);
* ``add.reduce(d)``: a Python number (its readback is the wait);
* ``add.reduce(d, to_device=True)``: a 0-d GpuArray, waited for by its download.

Also printed: the same call on 4,096 elements / 64 x 64 (its fixed cost), and the call made
right after ``BufferPool.trim()`` dropped the idle buffers (what a call pays when its buffers
are new: wgpu's create_buffer and the zero-fill wgpu does before a new buffer's first use).

Printed per call: the median host time per call (``--reps`` calls, no instrumentation); the
device time of the same call recorded by ``capture()`` and replayed with ``timed=True`` (the
kernels' timestamps; "n/a" where the call cannot be captured or the device has no timestamp
queries); then, from as many calls again with wrappers on (perf_counter around the functions
named, each counted per call): time in ``BufferPool.acquire`` and, inside it, in wgpu's
``create_buffer`` (with the number of new buffers per call and their sizes), bind groups
created, readbacks (``DeviceQueue.read_into``: staging map and copy, waits included), the
waits alone (``DeviceQueue.wait`` and the map polls), encoding and submitting command buffers.
Phases nest (acquire holds create_buffer; readback holds its wait), so they do not add up to
the total; the rest of the total is Python (checks, plans, bookkeeping).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from cthreads.gpu import Gpu, capture, device_name, to_device  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


class Counters:
    """perf_counter totals and call counts of wrapped functions while ``on``."""

    def __init__(self):
        self.ns: dict = defaultdict(int)
        self.calls: dict = defaultdict(int)
        self.sizes: dict = defaultdict(list)
        self.on = False

    def wrap(self, owner, name: str, label: str, size_arg: str | None = None) -> None:
        real = getattr(owner, name)
        clock, c = time.perf_counter_ns, self

        def wrapper(*a, **k):
            if not c.on:
                return real(*a, **k)
            c.calls[label] += 1
            if size_arg is not None and size_arg in k:
                c.sizes[label].append(int(k[size_arg]))
            t = clock()
            try:
                return real(*a, **k)
            finally:
                c.ns[label] += clock() - t
        setattr(owner, name, wrapper)

    def reset(self) -> None:
        self.ns.clear()
        self.calls.clear()
        self.sizes.clear()


#: (label, what it is) in the order printed
PHASES = (
    ("acquire", "BufferPool.acquire (pooled or new)"),
    ("create_buffer", "  inside: wgpu create_buffer (new buffers)"),
    ("bind_group", "wgpu create_bind_group"),
    ("upload", "DeviceQueue.upload/upload_new/write (uniforms, small data)"),
    ("readback", "DeviceQueue.read_into (staging map + copy, its wait included)"),
    ("wait", "DeviceQueue.wait (work-done polls)"),
    ("map_wait", "Completion.read_when_mapped (GPU: map polls = the wait)"),
    ("encode", "encoding command buffers (native encoder)"),
    ("submit", "queue submit (C call)"),
)


def instrument() -> Counters:
    import wgpu.backends.wgpu_native as wn

    from cthreads.backend import buffers, dispatch, waits
    c = Counters()
    c.wrap(buffers.BufferPool, "acquire", "acquire")
    c.wrap(wn.GPUDevice, "create_buffer", "create_buffer", size_arg="size")
    c.wrap(wn.GPUDevice, "create_bind_group", "bind_group")
    for name in ("upload", "upload_new", "write"):
        c.wrap(dispatch.DeviceQueue, name, "upload")
    c.wrap(dispatch.DeviceQueue, "read_into", "readback")
    c.wrap(dispatch.DeviceQueue, "wait", "wait")
    c.wrap(waits.Completion, "read_when_mapped", "map_wait")
    try:
        from cthreads.backend.native import encoder
        for name in ("encode_batch", "encode_timed"):
            c.wrap(encoder.NativeEncoder, name, "encode")
        c.wrap(encoder.NativeEncoder, "submit", "submit")
    except (ImportError, AttributeError):  # pragma: no cover - wgpu-py's own encoder
        pass
    return c


def device_ms(call, reps: int) -> tuple[float | None, str]:
    """The median device time (ms) of ``call`` captured once and replayed timed."""
    try:
        with capture() as graph:
            held = call()
    except Exception as exc:          # not capturable (a copy, a Python number)
        return None, f"not capturable: {type(exc).__name__}"
    times = []
    try:
        for _ in range(reps):
            t = graph.replay(timed=True)
            t.join()
            dt = t.device_time
            if dt is None:
                return None, "no timestamp queries"
            times.append(dt * 1e3)
    except Exception as exc:          # pragma: no cover - report, do not stop the probe
        return None, f"replay failed: {type(exc).__name__}: {exc}"[:120]
    del held
    return statistics.median(times), ""


#: the same calls on small data: their host time is the fixed cost of a call
SMALL_N, SMALL_SIDE = 4096, 64


def make_calls(n: int, side: int) -> dict:
    """name -> (the timed call, the call to capture or None) on new arrays of ``n`` / ``side``
    x ``side`` float32 values (each call's result kept until the next one replaces it)."""
    rng = np.random.default_rng(1)
    d = to_device(rng.integers(-1, 2, n).astype(np.float32))
    m = to_device(rng.integers(-1, 2, (side, side)).astype(np.float32))
    held: dict = {}

    def keep(key, value):
        held[key] = value
        return value

    return {
        "d.copy()": (lambda: keep("c", d.copy())[n - 1:].numpy(), None),
        "add.accumulate(d)": (lambda: keep("a", add.accumulate(d))[n - 1:].numpy(),
                              lambda: add.accumulate(d)),
        "add.reduce(m, axis=1)": (lambda: keep("r", add.reduce(m, axis=1))[side - 1:].numpy(),
                                  lambda: add.reduce(m, axis=1)),
        "add.reduce(d) -> number": (lambda: add.reduce(d), None),
        "add.reduce(d, to_device=True)": (
            lambda: keep("s", add.reduce(d, to_device=True)).numpy(),
            lambda: add.reduce(d, to_device=True)),
    }


def host_median(call, reps: int) -> float:
    call(), call()                               # compile, warm, fill the pool
    host = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        host.append((time.perf_counter() - t) * 1e3)
    return statistics.median(host)


def main(argv=None) -> dict:
    cpu = any(s in device_name().lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2 ** 20 if cpu else 2 ** 26)
    ap.add_argument("--side", type=int, default=1024 if cpu else 8192)
    ap.add_argument("--reps", type=int, default=9 if cpu else 21)
    args = ap.parse_args(argv)
    n, side, reps = args.n, args.side, args.reps
    calls = make_calls(n, side)
    small = make_calls(SMALL_N, SMALL_SIDE)
    counters = instrument()
    from cthreads.backend import get_queue
    from cthreads.runtime import reducer
    pool = get_queue().pool
    print(f"{device_name()}: per-call cost of library calls, d = {n:,} float32 "
          f"({4 * n / 1e6:.0f} MB), m = {side} x {side} float32 ({4 * side * side / 1e6:.0f} "
          f"MB); {reps} calls each (median host ms; phases: mean per call)")
    print(f"  pending scratch: {reducer.scratch_form() or 'back to the pool at once'} "
          f"[CTHREADS_SCRATCH={reducer.scratch_form() or 'unset'}]")
    out = {}
    for name, (call, captured) in calls.items():
        med = host_median(call, reps)
        fixed = host_median(small[name][0], reps)
        counters.reset()
        allocs = pool.allocations
        counters.on = True
        t = time.perf_counter()
        for _ in range(reps):
            call()
        inst = (time.perf_counter() - t) * 1e3 / reps
        counters.on = False
        new = (pool.allocations - allocs) / reps
        fresh, made = [], pool.allocations
        for _ in range(3):                 # the pool's idle buffers dropped: new ones made
            pool.trim()
            t = time.perf_counter()
            call()
            fresh.append((time.perf_counter() - t) * 1e3)
        made = (pool.allocations - made) / 3
        call(), call()                     # the pool filled again
        # after the counted calls: a capture keeps buffers of its own alive while it lives
        dev, why = device_ms(captured, max(3, reps // 3)) if captured else (None, "not a launch")
        print(f"\n  {name}")
        print(f"    host per call (median)        {med:9.3f} ms   (instrumented mean "
              f"{inst:.3f} ms)")
        print("    device time (captured, timed) " +
              (f"{dev:9.3f} ms   (host - device: {med - dev:.3f} ms)" if dev is not None
               else f"      n/a    ({why})"))
        print(f"    same call on {SMALL_N:,} / {SMALL_SIDE}x{SMALL_SIDE} (fixed cost) "
              f"{fixed:7.3f} ms")
        print(f"    after pool.trim() (new buffers: create + wgpu's zero-fill at first use) "
              f"{statistics.median(fresh):7.3f} ms, {made:.1f} new buffers")
        row = {"host_ms": med, "device_ms": dev, "small_ms": fixed,
               "fresh_ms": statistics.median(fresh), "phases_ms": {},
               "calls": {}}
        for label, what in PHASES:
            k = counters.calls.get(label, 0)
            if not k:
                continue
            ms = counters.ns[label] / 1e6 / reps
            row["phases_ms"][label], row["calls"][label] = ms, k / reps
            print(f"    {what:62s} {ms:8.3f} ms  {k / reps:5.2f} calls/call")
        sizes = counters.sizes.get("create_buffer", [])
        print(f"    new wgpu buffers per call: {len(sizes) / reps:.2f}; pool allocations per "
              f"call: {new:.2f}" + (f"; sizes: {sorted(set(sizes))}" if sizes else ""))
        out[name] = row
    return out


if __name__ == "__main__":
    main()
