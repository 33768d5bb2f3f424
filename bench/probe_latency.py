"""Where the time of a tiny launch + join goes: ours split by phase, and wgpu-native's floor.

    python bench/probe_latency.py [--n 3000]

1. ``gpu(saxpy, 64, ...)`` on arena-resident arrays, ``join(download=False)`` after each, with
   the phases timed in place (wrappers around the backend's methods): encoding the command
   buffer, submitting it, asking for the work-done notification, polling until it fired, and
   the rest (Python: argument checks, plan, bookkeeping).
2. The same dispatch made with wgpu-native's C functions only (wgpu-py's cffi handle; pipeline
   and bind group made once): encode, submit, then wait three ways: a work-done notification
   with non-blocking polls, blocking polls (``wgpuDevicePoll(wait=true)``), non-blocking polls
   until the poll says the queue is empty. This is the floor of any launch through wgpu-native.
3. torch's ``y.add_(x)`` + ``torch.cuda.synchronize()`` when torch sees a GPU.

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


def ours(n: int) -> None:
    from cthreads.backend import dispatch as dispatch_mod
    from cthreads.backend.native import encoder as fastpath
    from cthreads.gpu import GpuArena, gpu
    from examples.samples import saxpy

    spent: dict = defaultdict(list)

    def timed(cls, name, label):
        real = getattr(cls, name)

        def wrapper(*a, **k):
            t0 = time.perf_counter_ns()
            try:
                return real(*a, **k)
            finally:
                spent[label].append(time.perf_counter_ns() - t0)
        setattr(cls, name, wrapper)

    timed(fastpath.NativeEncoder, "encode_batch", "encode (C calls)")
    timed(fastpath.NativeEncoder, "submit", "submit (C call)")
    timed(fastpath.NativeEncoder, "work_done_request", "work-done request")
    timed(fastpath.NativeEncoder, "work_done_ready", "polls until done")
    timed(dispatch_mod.DeviceQueue, "wait", "join's wait, all of it")
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for _ in range(200):
            gpu(saxpy, 64, 0.5, x, y).join(download=False)
        spent.clear()
        totals = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            gpu(saxpy, 64, 0.5, x, y).join(download=False)
            totals.append(time.perf_counter_ns() - t0)
    total = statistics.median(totals) / 1e3
    print(f"\nours: gpu(saxpy, 64, ...) + join(download=False), n={n}, median {total:.1f} us")
    parts = 0.0
    for label, v in spent.items():
        per = sum(v) / n / 1e3
        calls = len(v) / n
        print(f"  {label:28s} {per:8.1f} us per launch (mean; {calls:.2f} calls per launch)")
        if label not in ("join's wait, all of it",):
            parts += per
    print(f"  {'the rest (Python)':28s} {total - parts:8.1f} us (median total minus the parts)")


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


def torch_floor(n: int) -> None:
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    x = torch.ones(64, device="cuda")
    y = torch.zeros(64, device="cuda")
    v = []
    for k in range(n + 200):
        t0 = time.perf_counter_ns()
        y.add_(x, alpha=0.5)
        torch.cuda.synchronize()
        if k >= 200:
            v.append(time.perf_counter_ns() - t0)
    print(f"\ntorch add_ + synchronize: median {statistics.median(v) / 1e3:.1f} us")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000)
    a = ap.parse_args()
    for step in (ours, raw, torch_floor, ours):
        step(a.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
