"""Where a large saxpy loses bandwidth: kernel shapes and submission structures, timed on the GPU.

    python bench/probe_saxpy.py [--n N] [--json FILE]

Hand-written WGSL on wgpu-py (no cthreads), saxpy ``y = a*x + y`` at ``n`` floats (default
64M), each shape timed with GPU timestamps (median pass of 20 in one command buffer):
one element per invocation at several workgroup sizes, a grid-stride loop, ``k`` elements per
invocation one grid apart or contiguous, and ``vec4<f32>`` elements. Then 100 dispatches of the
one-element shape submitted three ways (one submission each, one command buffer with a pass
each, one pass), with the idle time the GPU shows between passes. torch's ``y.add_(x)`` in a
subprocess gives the device's bandwidth when torch with CUDA is importable. This is how the
launch shapes of ``cthreads/runtime/kernel_runtime.py`` and ``codegen/vectorize.py`` were chosen
(``b31e468:bench/results/h200-2026-11-30-probe-*.txt``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

HEAD = """
struct P { n: u32, a: f32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<{T}>;
@group(0) @binding(2) var<storage, read_write> y: array<{T}>;
"""
ENTRY = """
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {{
    let t = (w.y * nw.x + w.x) * {WG}u + l;
    let all = nw.x * nw.y * {WG}u;
{BODY}
}}
"""
BODIES = {
    # one element per invocation
    "one": "    if (t < p.n) { y[t] = p.a * x[t] + y[t]; }",
    # a grid-stride loop over a fixed grid
    "stride": "    for (var i = t; i < p.n; i += all) { y[i] = p.a * x[i] + y[i]; }",
    # K elements per invocation, one grid apart (what runtime.py does) or contiguous
    "apart": "    for (var k = 0u; k < {K}u; k++) {{ let i = t + k * all;"
             " if (i < p.n) {{ y[i] = p.a * x[i] + y[i]; }} }}",
    "contiguous": "    for (var k = 0u; k < {K}u; k++) {{ let i = t * {K}u + k;"
                  " if (i < p.n) {{ y[i] = p.a * x[i] + y[i]; }} }}",
    # vec4<f32> elements (what codegen/vectorize.py emits)
    "vec4": "    if (t < p.n / 4u) { y[t] = p.a * x[t] + y[t]; }",
}


def wgsl(kind: str, wg: int, k: int = 1) -> str:
    body = BODIES[kind].format(K=k) if "{K}" in BODIES[kind] else BODIES[kind]
    t = "vec4<f32>" if kind == "vec4" else "f32"
    return HEAD.replace("{T}", t) + ENTRY.format(WG=wg, BODY=body)


def torch_bandwidth(n: int, reps: int = 100) -> float | None:
    code = f"""
import torch, time
x = torch.ones({n}, device='cuda'); y = torch.ones({n}, device='cuda')
for _ in range(5): y.add_(x, alpha=2.0)
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range({reps}): y.add_(x, alpha=2.0)
torch.cuda.synchronize(); print(12 * {n} / ((time.perf_counter() - t) / {reps}) / 1e9)
"""
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120)
        return float(out.stdout.strip().splitlines()[-1])
    except Exception:
        return None


class Probe:
    def __init__(self, n: int):
        import wgpu
        from wgpu.backends.wgpu_native import extras
        try:
            extras.set_instance_extras(backends=["Vulkan"])
        except Exception:
            pass
        rank = {"DiscreteGPU": 0, "IntegratedGPU": 1, "CPU": 3}
        adapters = [a for a in wgpu.gpu.enumerate_adapters_sync()
                    if str(a.info.get("backend_type")) == "Vulkan"]
        self.adapter = min(adapters, key=lambda a: rank.get(str(a.info.get("adapter_type")), 9))
        names = ("max-storage-buffer-binding-size", "max-buffer-size",
                 "max-compute-workgroups-per-dimension", "max-compute-invocations-per-workgroup",
                 "max-compute-workgroup-size-x")
        lim = self.adapter.limits
        if "timestamp-query" not in self.adapter.features:
            raise SystemExit("this adapter has no timestamp queries")
        self.dev = self.adapter.request_device_sync(
            required_limits={k: lim[k] for k in names}, required_features=["timestamp-query"])
        self.q = self.dev.queue
        self.n = n
        self.max_groups = int(self.dev.limits["max-compute-workgroups-per-dimension"])
        u = wgpu.BufferUsage
        self.x = self.dev.create_buffer(size=4 * n, usage=u.STORAGE | u.COPY_DST)
        self.y = self.dev.create_buffer(size=4 * n, usage=u.STORAGE | u.COPY_DST | u.COPY_SRC)
        self.q.write_buffer(self.x, 0, np.ones(n, np.float32))
        self.q.write_buffer(self.y, 0, np.zeros(n, np.float32))
        params = self.dev.create_buffer(size=16, usage=u.UNIFORM | u.COPY_DST)
        self.q.write_buffer(params, 0, np.array([n, np.float32(2.0).view(np.uint32), 0, 0],
                                                np.uint32))
        self.small = self.dev.create_buffer(size=16, usage=u.MAP_READ | u.COPY_DST)
        self.nq = 256
        self.qs = self.dev.create_query_set(type="timestamp", count=self.nq)
        self.qres = self.dev.create_buffer(size=8 * self.nq, usage=u.QUERY_RESOLVE | u.COPY_SRC)
        self.qread = self.dev.create_buffer(size=8 * self.nq, usage=u.MAP_READ | u.COPY_DST)
        stage = wgpu.ShaderStage.COMPUTE
        self.layout = self.dev.create_bind_group_layout(entries=[
            {"binding": 0, "visibility": stage, "buffer": {"type": "uniform"}},
            {"binding": 1, "visibility": stage, "buffer": {"type": "read-only-storage"}},
            {"binding": 2, "visibility": stage, "buffer": {"type": "storage"}}])
        self.bg = self.dev.create_bind_group(layout=self.layout, entries=[
            {"binding": 0, "resource": {"buffer": params, "offset": 0, "size": 16}},
            {"binding": 1, "resource": {"buffer": self.x, "offset": 0, "size": 4 * n}},
            {"binding": 2, "resource": {"buffer": self.y, "offset": 0, "size": 4 * n}}])
        self.pl = self.dev.create_pipeline_layout(bind_group_layouts=[self.layout])

    def pipeline(self, code: str):
        module = self.dev.create_shader_module(code=code)
        return self.dev.create_compute_pipeline(layout=self.pl,
                                                compute={"module": module, "entry_point": "main"})

    def grid(self, invocations: int, wg: int) -> tuple[int, int]:
        groups = max(1, -(-invocations // wg))
        gy = -(-groups // self.max_groups)
        return -(-groups // gy), gy

    def encode(self, enc, pipe, grid, ts: int | None = None, count: int = 1) -> None:
        kw = {}
        if ts is not None:
            kw["timestamp_writes"] = {"query_set": self.qs, "beginning_of_pass_write_index": 2 * ts,
                                      "end_of_pass_write_index": 2 * ts + 1}
        cp = enc.begin_compute_pass(**kw)
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, self.bg)
        for _ in range(count):
            cp.dispatch_workgroups(grid[0], grid[1], 1)
        cp.end()

    def finish(self) -> None:
        """Wait for everything submitted: map a buffer written by a copy submitted last."""
        enc = self.dev.create_command_encoder()
        enc.copy_buffer_to_buffer(self.y, 0, self.small, 0, 16)
        self.q.submit([enc.finish()])
        self.small.map_sync("READ", 0, 16)
        self.small.unmap()

    def stamps(self, count: int) -> np.ndarray:
        enc = self.dev.create_command_encoder()
        enc.resolve_query_set(self.qs, 0, count, self.qres, 0)
        enc.copy_buffer_to_buffer(self.qres, 0, self.qread, 0, 8 * count)
        self.q.submit([enc.finish()])
        self.qread.map_sync("READ", 0, 8 * count)
        t = np.frombuffer(self.qread.read_mapped(0, 8 * count), np.uint64).astype(np.int64)
        self.qread.unmap()
        return t

    def gbps(self, seconds: float) -> float:
        return 12 * self.n / seconds / 1e9

    def kernel(self, code: str, invocations: int, wg: int, reps: int = 20) -> float:
        """GB/s of the median pass (GPU timestamps; the period is taken as 1 ns per tick)."""
        pipe, grid = self.pipeline(code), self.grid(invocations, wg)
        enc = self.dev.create_command_encoder()
        self.encode(enc, pipe, grid)
        for k in range(reps):
            self.encode(enc, pipe, grid, ts=k)
        self.q.submit([enc.finish()])
        self.finish()
        t = self.stamps(2 * reps)
        return self.gbps(float(np.median(t[1::2] - t[0::2])) / 1e9)

    def structures(self, launches: int = 100) -> dict:
        pipe, grid = self.pipeline(wgsl("one", 256)), self.grid(self.n, 256)
        out = {}

        def each(ts):
            for k in range(launches):
                enc = self.dev.create_command_encoder()
                self.encode(enc, pipe, grid, k if ts else None)
                self.q.submit([enc.finish()])

        def one_buffer(ts):
            enc = self.dev.create_command_encoder()
            for k in range(launches):
                self.encode(enc, pipe, grid, k if ts else None)
            self.q.submit([enc.finish()])

        def one_pass(ts):
            enc = self.dev.create_command_encoder()
            self.encode(enc, pipe, grid, count=launches)
            self.q.submit([enc.finish()])

        for name, fn in (("a submission each", each), ("one command buffer", one_buffer),
                         ("one pass", one_pass)):
            walls = []
            for _ in range(3):
                self.finish()
                t0 = time.perf_counter()
                fn(False)
                self.finish()
                walls.append(time.perf_counter() - t0)
            row = {"GBps": self.gbps(float(np.median(walls)) / launches)}
            if fn is not one_pass:
                self.finish()
                fn(True)
                self.finish()
                t = self.stamps(2 * launches)
                row["gap_us"] = float(np.median(t[2::2] - t[1:-1:2])) / 1e3
            out[name] = row
        return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=64 * 1024 * 1024)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    pr = Probe(args.n)
    print(f"{pr.adapter.info['device']}: saxpy n={args.n:,}, GB/s at 12 bytes per element")
    res = {"torch_add_GBps": torch_bandwidth(args.n), "kernels": {}}
    if res["torch_add_GBps"]:
        print(f"  torch y.add_(x): {res['torch_add_GBps']:,.0f}")
    shapes = [(f"one element, workgroup {wg}", wgsl("one", wg), args.n, wg)
              for wg in (64, 128, 256, 512, 1024)]
    shapes += [(f"grid-stride, 256 x {g} groups", wgsl("stride", 256), 256 * g, 256)
               for g in (1056, 4224)]
    shapes += [(f"{k} per invocation {kind}, workgroup 256", wgsl(kind, 256, k), args.n // k, 256)
               for kind in ("apart", "contiguous") for k in (2, 4, 8)]
    shapes += [(f"vec4, workgroup {wg}", wgsl("vec4", wg), args.n // 4, wg) for wg in (64, 256)]
    print("kernel time, median of 20 passes:")
    for label, code, inv, wg in shapes:
        res["kernels"][label] = pr.kernel(code, inv, wg)
        print(f"  {label:42s} {res['kernels'][label]:8,.0f}")
    print("100 dispatches (one element, workgroup 256), wall time; GPU idle between passes:")
    res["structures"] = pr.structures()
    for label, row in res["structures"].items():
        gap = f"   gap {row['gap_us']:.1f} us" if "gap_us" in row else ""
        print(f"  {label:42s} {row['GBps']:8,.0f}{gap}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
