"""Where the time of a tiny launch + join goes: ours split by phase, wgpu-native's floor, torch.

    python bench/probe_latency.py [--n 3000] [--rounds 3]

1. ``gpu(saxpy, 64, ...)`` + ``join(download=False)``, on arena lists and on GpuArrays, in both
   forms of the repeat (``new``: ready launches, ``runtime/ready.py``; ``old``: the whole plan
   each time, as ``CTHREADS_LAUNCH_PATH=old``), alternating, ``--rounds`` times: the median
   total without instrumentation, then the same loop with a timestamp at each phase boundary
   (wrappers around the functions named; each costs ~0.2-0.3 us, counted in the phase it
   opens): the Python before the dispatch (argument checks, plan), the queue's bookkeeping,
   encoding the command buffer (C calls), submitting it (C call), the Python after it (the
   job), the join up to its wait, the work-done request (C call), the wait until it fired (the
   device's turn-around and the polls) and the join's end. The Python part is the sum of the
   phases that make no wgpu call.
2. The same dispatch made with wgpu-native's C functions only (wgpu-py's cffi handle; pipeline
   and bind group made once): encode, submit, then wait three ways: a work-done notification
   with non-blocking polls, blocking polls (``wgpuDevicePoll(wait=true)``), non-blocking polls
   until the poll says the queue is empty. This is the floor of any launch through wgpu-native.
3. 100 tiny launches queued, then one join (every job joined without download), both forms:
   host time of the 100 ``gpu()`` calls, the join, submissions made.
4. torch (when it sees a GPU): ``y.add_(x)`` + ``torch.cuda.synchronize()``; 100 ``add_`` then
   one synchronize.

Medians of per-launch times (µs); the machine's GPU or lavapipe, whichever cthreads picks.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

WGSL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < 64u) { y[g.x] = 0.5 * x[g.x] + y[g.x]; }
}
"""


#: the phases of one launch + join: (label, from mark, to mark)
PHASES = (
    ("gpu() until the dispatch (checks, plan)", "t0", "dispatch"),
    ("dispatch until submit (bookkeeping, encode)", "dispatch", "submit"),
    ("submit (C call)", "submit", "submit/"),
    ("after submit until gpu() returns", "submit/", "t1"),
    ("join until its wait", "t1", "wait"),
    ("wait until the work-done request", "wait", "request"),
    ("work-done request (C call)", "request", "request/"),
    ("request until it fired (device, polls)", "request/", "fired"),
    ("fired until join() returns", "fired", "t2"),
)
#: the phases that are Python only (the second less its encode)
PYTHON = (0, 1, 3, 4, 5, 8)


class Marks:
    """Timestamps at the phase boundaries of one launch + join, and the time spent encoding
    (on the launch's path, or the spare while the join waits: backend/spare.py)."""

    def __init__(self):
        from cthreads.backend import dispatch as dispatch_mod
        from cthreads.backend import spare, waits
        from cthreads.backend.native import encoder

        self.at: dict = {}
        self.spent: dict = defaultdict(int)
        self.on = False
        self.in_spare = False
        self._wrap(dispatch_mod.DeviceQueue, "dispatch", "dispatch")
        self._wrap(dispatch_mod.DeviceQueue, "wait", "wait")
        self._wrap(encoder.NativeEncoder, "submit", "submit")
        self._wrap(encoder.NativeEncoder, "work_done_request", "request")
        self._wrap(waits.Completion, "fence_done", "fired")
        self._time(encoder.NativeEncoder, "encode_batch",
                   lambda: "spare encode" if self.in_spare else "encode")
        real_for = spare.Spare.encode_for

        def encode_for(obj, queue):
            self.in_spare = True
            try:
                return real_for(obj, queue)
            finally:
                self.in_spare = False
        spare.Spare.encode_for = encode_for
        real_take = spare.Spare.take

        def take(obj, *a):
            cb = real_take(obj, *a)
            if self.on and cb is not None:
                self.spent["spares taken"] += 1
            return cb
        spare.Spare.take = take

    def _wrap(self, cls, name, label):
        real = getattr(cls, name)
        at, clock, marks = self.at, time.perf_counter_ns, self

        def wrapper(*a, **k):
            if not marks.on or label in at:     # the first call of a launch marks
                return real(*a, **k)
            at[label] = clock()
            try:
                return real(*a, **k)
            finally:
                at[label + "/"] = clock()
        setattr(cls, name, wrapper)

    def _time(self, cls, name, label):
        real = getattr(cls, name)
        clock, marks = time.perf_counter_ns, self

        def wrapper(*a, **k):
            if not marks.on:
                return real(*a, **k)
            t0 = clock()
            try:
                return real(*a, **k)
            finally:
                marks.spent[label()] += clock() - t0
        setattr(cls, name, wrapper)


def _set_form(kernel, form: str) -> None:
    """Run ``kernel``'s repeats in ``form``: "new" (ready launches, spare command buffers) or
    "old" (the whole plan and an encode each time, as CTHREADS_LAUNCH_PATH=old does for
    runtimes and queues made under it)."""
    from cthreads.runtime.ready import ReadyLaunches, plain_scalars

    memo = kernel.memo_slot.memo
    rt = memo.rt
    spare = rt.queue._spare
    if form == "old":
        rt.ready = None
        memo.plain = (None,) * len(memo.scalar_params)
        with rt.queue.lock:
            spare.drop()
            spare.last = spare.prev = None
            spare.native = None
    else:
        if rt.ready is None:
            rt.ready = ReadyLaunches(rt.queue.pool)
        memo.plain = plain_scalars(memo.scalar_params)
        spare.native = rt.queue._native


def _operands(kind: str, stack):
    from cthreads.gpu import GpuArena, to_device

    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    if kind == "arena":
        arena = stack.enter_context(GpuArena())
        arena.bind(x=x, y=y)
        return x, y
    return to_device(x), to_device(y)


def ours(n: int, rounds: int, marks: Marks) -> dict:
    """Tiny launch + join(download=False): totals and phases per (operands, form)."""
    import contextlib

    from cthreads.gpu import gpu
    from examples.samples import saxpy

    totals: dict = defaultdict(list)
    phases: dict = defaultdict(lambda: defaultdict(list))
    with contextlib.ExitStack() as stack:
        for kind in ("arena", "GpuArray"):
            x, y = _operands(kind, stack)
            for _ in range(200):
                gpu(saxpy, 64, 0.5, x, y).join(download=False)
            for _ in range(rounds):
                for form in ("new", "old"):
                    _set_form(saxpy, form)
                    for _ in range(100):
                        gpu(saxpy, 64, 0.5, x, y).join(download=False)
                    v = []
                    for _ in range(n):
                        t0 = time.perf_counter_ns()
                        gpu(saxpy, 64, 0.5, x, y).join(download=False)
                        v.append(time.perf_counter_ns() - t0)
                    totals[kind, form].append(statistics.median(v) / 1e3)
                    at, spent = marks.at, marks.spent
                    marks.on = True
                    for _ in range(n):
                        at.clear()
                        spent.clear()
                        at["t0"] = time.perf_counter_ns()
                        job = gpu(saxpy, 64, 0.5, x, y)
                        at["t1"] = time.perf_counter_ns()
                        job.join(download=False)
                        at["t2"] = time.perf_counter_ns()
                        if all(a in at and b in at for _, a, b in PHASES):
                            per = phases[kind, form]
                            for label, a, b in PHASES:
                                per[label].append(at[b] - at[a])
                            for label in ("encode", "spare encode", "spares taken"):
                                per[label].append(spent.get(label, 0))
                    marks.on = False
            _set_form(saxpy, "new")
    for (kind, form), runs in totals.items():
        best = min(runs)
        per = phases.get((kind, form))
        if not per:
            print(f"\nours, {kind}, {form} form: median {best:.1f} us (phases not recorded: "
                  "the native encoder is off, CTHREADS_NATIVE_ENCODER=0)")
            continue
        print(f"\nours, {kind}, {form} form: gpu(saxpy, 64, ...) + join(download=False): "
              f"median {best:.1f} us (best round of {rounds}; rounds "
              f"{', '.join(f'{t:.1f}' for t in runs)})")
        python = 0.0
        for k, (label, _, _) in enumerate(PHASES):
            med = statistics.median(per[label]) / 1e3
            note = ""
            if k == 1:
                enc = statistics.mean(per["encode"]) / 1e3
                note = f"  (of which encode, C calls: {enc:.1f} on average)"
                med_py = statistics.median(a - b for a, b in zip(per[label], per["encode"])) / 1e3
                python += med_py
            elif k == 7:
                spare = statistics.mean(per["spare encode"]) / 1e3
                note = f"  (of which the spare's encode: {spare:.1f} on average)"
            elif k in PYTHON:
                python += med
            print(f"  {label:44s} {med:7.1f} us{note}")
        taken = statistics.mean(per["spares taken"])
        print(f"  {'Python (the phases without wgpu calls)':44s} {python:7.1f} us (medians, "
              f"{len(per[PHASES[0][0]])} launches with marks on; {taken:.0%} submitted a spare "
              "command buffer)")
    return {key: min(v) for key, v in totals.items()}


def queued(rounds: int, k: int = 100) -> dict:
    """``k`` tiny launches queued, then joined once (each job joined without download)."""
    import contextlib

    from cthreads.backend import get_queue
    from cthreads.gpu import gpu
    from examples.samples import saxpy

    out = {}
    with contextlib.ExitStack() as stack:
        for kind in ("arena", "GpuArray"):
            x, y = _operands(kind, stack)
            gpu(saxpy, 64, 0.5, x, y).join(download=False)
            gpu(saxpy, 64, 0.5, x, y).join(download=False)
            queue = get_queue()
            res: dict = defaultdict(list)
            alone: dict = defaultdict(list)     # gpu() calls that made no submission
            for r in range(rounds * 10 + 4):
                for form in ("new", "old"):
                    _set_form(saxpy, form)
                    s0 = queue.submitted
                    t0 = time.perf_counter_ns()
                    jobs = []
                    clock = time.perf_counter_ns
                    for _ in range(k):
                        a, before = clock(), queue.submitted
                        jobs.append(gpu(saxpy, 64, 0.5, x, y))
                        if r >= 4 and queue.submitted == before:    # recorded, not submitted
                            alone[form].append(clock() - a)
                    t1 = time.perf_counter_ns()
                    jobs[-1].join(download=False)
                    for job in jobs:
                        job.join(download=False)
                    t2 = time.perf_counter_ns()
                    if r >= 4:
                        res[form].append((t2 - t0, t1 - t0, t2 - t1, queue.submitted - s0))
            _set_form(saxpy, "new")
            for form, v in res.items():
                total = statistics.median(a for a, *_ in v) / 1e3
                host = statistics.median(b for _, b, *_ in v) / 1e3
                join = statistics.median(c for *_, c, _ in v) / 1e3
                subs = statistics.mean(d for *_, d in v)
                out[kind, form] = total
                print(f"\nours, {kind}, {form} form: {k} tiny launches queued + one join: "
                      f"{total:,.0f} us (medians of {len(v)}: the {k} gpu() calls {host:,.0f} us, "
                      f"{host / k:.1f} each; the join {join:,.0f}; {subs:.1f} submissions); "
                      f"a gpu() call that only records its dispatch: "
                      f"{statistics.median(alone[form]) / 1e3:.1f} us (median of "
                      f"{len(alone[form])}: the Python of a queued repeat)")
    return out


def raw(n: int) -> None:
    import wgpu
    from wgpu.backends.wgpu_native import _api

    from cthreads.backend.device import get_context

    ctx = get_context()                # the same adapter and device cthreads uses
    dev = ctx.device
    ffi, lib = _api.ffi, _api.lib
    x = dev.create_buffer_with_data(data=np.ones(64, np.float32), usage=wgpu.BufferUsage.STORAGE)
    y = dev.create_buffer(size=256, usage=wgpu.BufferUsage.STORAGE)
    pipe = dev.create_compute_pipeline(layout="auto", compute={
        "module": dev.create_shader_module(code=WGSL), "entry_point": "main"})
    group = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": x}}, {"binding": 1, "resource": {"buffer": y}}])
    d, q, null = dev._internal, dev.queue._internal, ffi.NULL
    arr = ffi.new("WGPUCommandBuffer[1]")
    fired = {}

    @ffi.callback("void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)")
    def on_done(status, message, u1, u2):
        fired[int(ffi.cast("intptr_t", u1))] = int(status)

    info = ffi.new("WGPUQueueWorkDoneCallbackInfo *")
    info.mode = lib.WGPUCallbackMode_AllowSpontaneous
    info.callback = on_done

    def encode():
        enc = lib.wgpuDeviceCreateCommandEncoder(d, null)
        cp = lib.wgpuCommandEncoderBeginComputePass(enc, null)
        lib.wgpuComputePassEncoderSetPipeline(cp, pipe._internal)
        lib.wgpuComputePassEncoderSetBindGroup(cp, 0, group._internal, 0, null)
        lib.wgpuComputePassEncoderDispatchWorkgroups(cp, 1, 1, 1)
        lib.wgpuComputePassEncoderEnd(cp)
        lib.wgpuComputePassEncoderRelease(cp)
        cb = lib.wgpuCommandEncoderFinish(enc, null)
        lib.wgpuCommandEncoderRelease(enc)
        return cb

    def submit(cb):
        arr[0] = cb
        lib.wgpuQueueSubmit(q, 1, arr)
        lib.wgpuCommandBufferRelease(cb)

    key = [0]

    def wait_notified():
        key[0] += 1
        info.userdata1 = ffi.cast("void *", key[0])
        lib.wgpuQueueOnSubmittedWorkDone(q, info[0])
        while key[0] not in fired:
            lib.wgpuDevicePoll(d, False, null)

    def wait_blocking():
        lib.wgpuDevicePoll(d, True, null)

    def wait_empty():
        while not lib.wgpuDevicePoll(d, False, null):
            pass

    for name, wait in (("work-done + spin polls", wait_notified),
                       ("blocking poll", wait_blocking), ("spin until queue empty", wait_empty)):
        t_enc, t_sub, t_wait, t_all = [], [], [], []
        for k in range(n + 200):
            t0 = time.perf_counter_ns()
            cb = encode()
            t1 = time.perf_counter_ns()
            submit(cb)
            t2 = time.perf_counter_ns()
            wait()
            t3 = time.perf_counter_ns()
            if k >= 200:
                t_enc.append(t1 - t0)
                t_sub.append(t2 - t1)
                t_wait.append(t3 - t2)
                t_all.append(t3 - t0)
        med = lambda v: statistics.median(v) / 1e3  # noqa: E731
        print(f"\nraw wgpu-native, wait by {name}: total {med(t_all):.1f} us = encode "
              f"{med(t_enc):.1f} + submit {med(t_sub):.1f} + wait {med(t_wait):.1f} (medians)")


def torch_floor(n: int, k: int = 100) -> dict:
    try:
        import torch
    except ImportError:
        print("\ntorch: not installed")
        return {}
    if not torch.cuda.is_available():
        print("\ntorch: sees no GPU")
        return {}
    x = torch.ones(64, device="cuda")
    y = torch.zeros(64, device="cuda")
    v = []
    for i in range(n + 200):
        t0 = time.perf_counter_ns()
        y.add_(x, alpha=0.5)
        torch.cuda.synchronize()
        if i >= 200:
            v.append(time.perf_counter_ns() - t0)
    one = statistics.median(v) / 1e3
    q = []
    for i in range(60):
        t0 = time.perf_counter_ns()
        for _ in range(k):
            y.add_(x, alpha=0.5)
        torch.cuda.synchronize()
        if i >= 10:
            q.append(time.perf_counter_ns() - t0)
    many = statistics.median(q) / 1e3
    print(f"\ntorch add_ + synchronize: median {one:.1f} us; {k} add_ then one synchronize: "
          f"{many:,.0f} us")
    try:                               # the same 100 as one CUDA graph, replayed
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                y.add_(x, alpha=0.5)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(k):
                y.add_(x, alpha=0.5)
        g = []
        for i in range(60):
            t0 = time.perf_counter_ns()
            graph.replay()
            torch.cuda.synchronize()
            if i >= 10:
                g.append(time.perf_counter_ns() - t0)
        print(f"torch CUDA graph of those {k} add_, replayed + synchronize: "
              f"{statistics.median(g) / 1e3:,.0f} us")
    except Exception as exc:  # noqa: BLE001 - a probe: report and go on
        print(f"torch CUDA graph: not measured ({type(exc).__name__}: {exc})")
    return {"one": one, "queued": many}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    from cthreads.backend.device import get_context

    print(f"device: {get_context().name}")
    marks = Marks()
    tiny = ours(a.n, a.rounds, marks)
    raw(a.n)
    many = queued(a.rounds)
    peer = torch_floor(a.n)
    print("\nsummary (us):")
    for (kind, form), t in sorted(tiny.items()):
        line = f"  tiny launch + join, {kind:8s} {form}: {t:7.1f}"
        if peer:
            line += f"  = {t / peer['one']:.2f}x torch ({peer['one']:.1f}; target <= 2.5x)"
        print(line)
    for (kind, form), t in sorted(many.items()):
        line = f"  100 queued + one join, {kind:8s} {form}: {t:7.0f}"
        if peer:
            line += f"  = {t / peer['queued']:.2f}x torch eager ({peer['queued']:.0f})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
