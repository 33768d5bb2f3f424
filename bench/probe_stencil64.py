"""Where the 2-D stencil and the float64 saxpy lose to CUDA: kernel shapes timed on the GPU.

    python bench/probe_stencil64.py [--grid 4096] [--n 67108864]

Hand-written WGSL on wgpu-py (no cthreads), each shape timed with GPU timestamps (median pass
of 20 in one command buffer), beside cthreads' own kernel (``gpu(..., timed=True)``, the median
``job.device_time`` of 20 launches) and the CUDA peers (CuPy ``RawKernel`` for the stencil, torch
``y.add_(x)`` for saxpy, CUDA events) when they import. The stencil is ``bench/nd.py``'s 5-point
``stencil2d`` (4 loads, 1 store: 8 bytes per point counted); saxpy is ``y = a*x + y`` (24 bytes
per float64 element). Issue 27 asked for the stencil >= 1.0x CuPy and float64 saxpy >= 0.95x
torch; this probe shows which shape the driver runs fastest, so the generated one can follow.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

STENCIL_HEAD = """
struct P { w: u32, h: u32, gx: u32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> v: array<f32>;
"""
# x, y from a 2-D dispatch of WX x WY workgroups (global_invocation_id)
STENCIL_2D = """
@compute @workgroup_size({WX}, {WY})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let x = {X}; let y = {Y};
    if (x < 1{S} || y < 1{S} || x >= {T}(p.w) - 1{S} || y >= {T}(p.h) - 1{S}) {{ return; }}
    let w = {T}(p.w);
    v[y * w + x] = 0.25 * (u[(y - 1{S}) * w + x] + u[(y + 1{S}) * w + x]
                          + u[y * w + x - 1{S}] + u[y * w + x + 1{S}]);
}}
"""
# cthreads' N-D entry: one flat workgroup index, split into x (64 wide rows) and a row number
STENCIL_FLAT = """
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {{
    let flat = wid.y * nwg.x + wid.x;
    let x = i32((flat % p.gx) * {WG}u + lid.x);
    let row0 = (flat / p.gx) * {K}u;
    for (var k = 0u; k < {K}u; k++) {{
        let y = i32(row0 + k);
        if (y >= i32(p.h)) {{ return; }}
        let w = i32(p.w);
        if (x < 1 || y < 1 || x >= w - 1 || y >= i32(p.h) - 1) {{ continue; }}
        v[y * w + x] = 0.25 * (u[(y - 1) * w + x] + u[(y + 1) * w + x]
                              + u[y * w + x - 1] + u[y * w + x + 1]);
    }}
}}
"""

SAXPY64 = """

struct P {{ n: u32, pad0: u32, a: f64 }}
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<{T}>;
@group(0) @binding(2) var<storage, read_write> y: array<{T}>;
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {{
    let t = (w.y * nw.x + w.x) * {WG}u + l;
    let all = nw.x * nw.y * {WG}u;
{BODY}
}}
"""
SAXPY_BODIES = {
    "one": ("f64", 1, "    if (t < p.n) { y[t] = p.a * x[t] + y[t]; }"),
    "vec2": ("vec2<f64>", 2, "    if (t < p.n / 2u) { y[t] = p.a * x[t] + y[t]; }"),
    "vec4": ("vec4<f64>", 4, "    if (t < p.n / 4u) { y[t] = p.a * x[t] + y[t]; }"),
    "apart2": ("f64", 2, "    for (var k = 0u; k < 2u; k++) { let i = t + k * all;"
                          " if (i < p.n) { y[i] = p.a * x[i] + y[i]; } }"),
    "apart4": ("f64", 4, "    for (var k = 0u; k < 4u; k++) { let i = t + k * all;"
                          " if (i < p.n) { y[i] = p.a * x[i] + y[i]; } }"),
}

CUDA_STENCIL = r"""
extern "C" __global__ void stencil5(const float* __restrict__ u, float* __restrict__ v,
                                    int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    v[y * w + x] = 0.25f * (u[(y - 1) * w + x] + u[(y + 1) * w + x] + u[y * w + x - 1]
                            + u[y * w + x + 1]);
}
"""


class Raw:
    def __init__(self):
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
                 "max-compute-workgroup-size-x", "max-compute-workgroup-size-y")
        lim = self.adapter.limits
        feats = [f for f in ("timestamp-query", "shader-f64") if f in self.adapter.features]
        self.wgpu = wgpu
        self.dev = self.adapter.request_device_sync(
            required_limits={k: lim[k] for k in names}, required_features=feats)
        self.q = self.dev.queue
        self.max_groups = int(self.dev.limits["max-compute-workgroups-per-dimension"])
        u = wgpu.BufferUsage
        self.nq = 64
        self.qs = self.dev.create_query_set(type="timestamp", count=self.nq)
        self.qres = self.dev.create_buffer(size=8 * self.nq, usage=u.QUERY_RESOLVE | u.COPY_SRC)
        self.qread = self.dev.create_buffer(size=8 * self.nq, usage=u.MAP_READ | u.COPY_DST)
        stage = wgpu.ShaderStage.COMPUTE
        self.layout = self.dev.create_bind_group_layout(entries=[
            {"binding": 0, "visibility": stage, "buffer": {"type": "uniform"}},
            {"binding": 1, "visibility": stage, "buffer": {"type": "read-only-storage"}},
            {"binding": 2, "visibility": stage, "buffer": {"type": "storage"}}])
        self.pl = self.dev.create_pipeline_layout(bind_group_layouts=[self.layout])

    def buffers(self, params: bytes, a: np.ndarray, b: np.ndarray):
        u = self.wgpu.BufferUsage
        pb = self.dev.create_buffer(size=len(params), usage=u.UNIFORM | u.COPY_DST)
        self.q.write_buffer(pb, 0, params)
        xa = self.dev.create_buffer(size=a.nbytes, usage=u.STORAGE | u.COPY_DST)
        yb = self.dev.create_buffer(size=b.nbytes, usage=u.STORAGE | u.COPY_DST | u.COPY_SRC)
        self.q.write_buffer(xa, 0, a)
        self.q.write_buffer(yb, 0, b)
        self.bg = self.dev.create_bind_group(layout=self.layout, entries=[
            {"binding": 0, "resource": {"buffer": pb, "offset": 0, "size": len(params)}},
            {"binding": 1, "resource": {"buffer": xa, "offset": 0, "size": a.nbytes}},
            {"binding": 2, "resource": {"buffer": yb, "offset": 0, "size": b.nbytes}}])
        self.out, self.out_bytes = yb, b.nbytes

    def read(self, dtype) -> np.ndarray:
        u = self.wgpu.BufferUsage
        st = self.dev.create_buffer(size=self.out_bytes, usage=u.MAP_READ | u.COPY_DST)
        enc = self.dev.create_command_encoder()
        enc.copy_buffer_to_buffer(self.out, 0, st, 0, self.out_bytes)
        self.q.submit([enc.finish()])
        st.map_sync("READ", 0, self.out_bytes)
        got = np.frombuffer(st.read_mapped(0, self.out_bytes), dtype).copy()
        st.unmap()
        return got

    def time(self, code: str, grid: tuple, reps: int = 20) -> float:
        """Median seconds of ``reps`` passes of one dispatch each (GPU timestamps)."""
        module = self.dev.create_shader_module(code=code)
        pipe = self.dev.create_compute_pipeline(layout=self.pl,
                                                compute={"module": module, "entry_point": "main"})
        enc = self.dev.create_command_encoder()
        for k in range(-1, reps):
            kw = {}
            if k >= 0:
                kw["timestamp_writes"] = {"query_set": self.qs,
                                          "beginning_of_pass_write_index": 2 * k,
                                          "end_of_pass_write_index": 2 * k + 1}
            cp = enc.begin_compute_pass(**kw)
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, self.bg)
            cp.dispatch_workgroups(*grid)
            cp.end()
        enc.resolve_query_set(self.qs, 0, 2 * reps, self.qres, 0)
        enc.copy_buffer_to_buffer(self.qres, 0, self.qread, 0, 16 * reps)
        self.q.submit([enc.finish()])
        self.qread.map_sync("READ", 0, 16 * reps)
        t = np.frombuffer(self.qread.read_mapped(0, 16 * reps), np.uint64).astype(np.int64)
        self.qread.unmap()
        return float(np.median(t[1::2] - t[0::2])) / 1e9

    def fold(self, groups: int) -> tuple[int, int]:
        gy = -(-groups // self.max_groups)
        return -(-groups // gy), gy


def cuda_time(fn, reps: int = 20) -> float | None:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


def ours_time(kernel, *args, threads, reps: int = 20) -> float | None:
    from cthreads.gpu import gpu
    gpu(kernel, *args, threads=threads).join()
    times = []
    for _ in range(reps):
        job = gpu(kernel, *args, threads=threads, timed=True)
        job.join()
        if job.device_time is None:
            return None
        times.append(job.device_time)
    return statistics.median(times)


def stencil(raw: Raw, g: int) -> None:
    rng = np.random.default_rng(11)
    u = rng.random((g, g), dtype=np.float32)
    want = u.copy()
    want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    gb = lambda s: 8 * g * g / s / 1e9      # noqa: E731
    print(f"\n== 2-D 5-point stencil {g}x{g} float32 (GB/s, 8 bytes per point) ==")
    rows = []
    for wx, wy in ((16, 16), (32, 8), (64, 1), (64, 4), (128, 1), (256, 1), (32, 4)):
        for ty in ("i32", "u32"):
            x, y = ("i32(g.x)", "i32(g.y)") if ty == "i32" else ("g.x", "g.y")
            code = STENCIL_HEAD + STENCIL_2D.format(WX=wx, WY=wy, X=x, Y=y, T=ty,
                                                    S="i" if ty == "i32" else "u")
            raw.buffers(np.array([g, g, 0, 0], np.uint32).tobytes(), u, u.copy())
            s = raw.time(code, (-(-g // wx), -(-g // wy), 1))
            ok = np.allclose(raw.read(np.float32).reshape(g, g), want, atol=1e-6)
            rows.append((f"2-D dispatch {wx}x{wy} {ty}", s, ok))
    for wg, k in ((64, 1), (64, 2), (64, 4), (128, 1), (256, 1), (256, 2)):
        gx = -(-g // wg)
        groups = gx * -(-g // k)
        raw.buffers(np.array([g, g, gx, 0], np.uint32).tobytes(), u, u.copy())
        s = raw.time(STENCIL_HEAD + STENCIL_FLAT.format(WG=wg, K=k), (*raw.fold(groups), 1))
        ok = np.allclose(raw.read(np.float32).reshape(g, g), want, atol=1e-6)
        rows.append((f"flat entry wg {wg}, {k} rows", s, ok))
    try:
        sys.path.insert(0, "bench")
        from nd import stencil2d
        from cthreads.gpu import GpuArena
        v = u.copy()
        with GpuArena() as arena:
            arena.bind(u=u, v=v)
            s = ours_time(stencil2d, g, g, u, v, threads=(g, g))
            arena.sync("v")
        rows.append(("cthreads stencil2d (timed=True)", s, np.allclose(v, want, atol=1e-6)))
    except Exception as exc:       # noqa: BLE001
        print("cthreads:", type(exc).__name__, exc)
    try:
        import cupy as cp
        fn = cp.RawKernel(CUDA_STENCIL, "stencil5")
        cu = cp.asarray(u)
        for bx, by in ((16, 16), (32, 8), (64, 4), (256, 1)):
            cv = cu.copy()
            s = cuda_time(lambda: fn(((g + bx - 1) // bx, (g + by - 1) // by), (bx, by),
                                     (cu, cv, np.int32(g), np.int32(g))))
            rows.append((f"CuPy RawKernel {bx}x{by}", s, np.allclose(cp.asnumpy(cv), want,
                                                                      atol=1e-6)))
    except Exception as exc:       # noqa: BLE001
        print("cupy:", type(exc).__name__, exc)
    for name, s, ok in rows:
        print(f"{name:38s} {s * 1e3 if s else float('nan'):8.4f} ms {gb(s) if s else 0:8.0f} GB/s"
              f"  {'ok' if ok else 'WRONG'}")


def saxpy64(raw: Raw, n: int) -> None:
    if "shader-f64" not in raw.adapter.features:
        print("no shader-f64")
        return
    x = (np.arange(n) % 1000).astype(np.float64)
    y0 = np.ones(n, np.float64)
    want = 0.5 * x + y0
    gb = lambda s: 24 * n / s / 1e9         # noqa: E731
    print(f"\n== saxpy float64, n = {n} (GB/s, 24 bytes per element) ==")
    rows = []
    params = np.zeros(2, np.uint32).tobytes() + np.array([0.5], np.float64).tobytes()
    params = np.array([n, 0], np.uint32).tobytes() + np.array([0.5], np.float64).tobytes()
    for kind, (t, per, body) in SAXPY_BODIES.items():
        for wg in (64, 256):
            raw.buffers(params, x, y0.copy())
            code = SAXPY64.format(T=t, WG=wg, BODY=body)
            s = raw.time(code, (*raw.fold(-(-n // (per * wg))), 1), reps=10)
            # one pass of 1 + 10 ran: y = y0 + 11 * 0.5 * x
            got = raw.read(np.float64)
            ok = np.array_equal(got, y0 + 11 * 0.5 * x)
            rows.append((f"{kind} wg {wg}", s, ok))
    try:
        from examples.samples import saxpy
        from cthreads.gpu import GpuArena
        y = y0.copy()
        with GpuArena() as arena:
            arena.bind(x=x, y=y)
            s = ours_time(saxpy, n, 0.5, x, y, threads=n, reps=10)
        rows.append(("cthreads saxpy (timed=True)", s, True))
    except Exception as exc:       # noqa: BLE001
        print("cthreads:", type(exc).__name__, exc)
    try:
        import torch
        tx = torch.from_numpy(x).cuda()
        ty = torch.ones(n, dtype=torch.float64, device="cuda")
        rows.append(("torch y.add_(x, alpha)", cuda_time(lambda: ty.add_(tx, alpha=0.5)), True))
    except Exception as exc:       # noqa: BLE001
        print("torch:", type(exc).__name__, exc)
    for name, s, ok in rows:
        print(f"{name:38s} {s * 1e3 if s else float('nan'):8.4f} ms {gb(s) if s else 0:8.0f} GB/s"
              f"  {'ok' if ok else 'WRONG'}")
    del want


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=4096)
    ap.add_argument("--n", type=int, default=64 * 2 ** 20)
    ap.add_argument("--only", choices=("stencil", "saxpy"))
    a = ap.parse_args()
    raw = Raw()
    print("adapter:", raw.adapter.info.get("device"), raw.adapter.info.get("adapter_type"))
    if a.only in (None, "stencil"):
        stencil(raw, a.grid)
    if a.only in (None, "saxpy"):
        saxpy64(raw, a.n)


if __name__ == "__main__":
    main()
