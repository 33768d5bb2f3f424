"""The expert's floor: the benchmark's computations hand-written in WGSL on wgpu-py.

What an expert writes with wgpu-py and numpy on the same driver: a Vulkan adapter only, pipelines
and bind groups created once and reused, scalars in a uniform buffer written only when they
change, staging buffers reused for readback, one submit per launch. Python lists are converted
with numpy wherever the workload starts from or ends in Python lists, as the cthreads workloads
do: ``np.fromiter(lst, np.float32, n)`` in (the fastest of the usual ways, ~13 ms per 1M floats
here) and ``lst[:] = arr.tolist()`` out.

Waiting: ``queue.on_submitted_work_done_sync()`` is broken in wgpu-py 0.32, so completion is
learned from wgpu-native's device poll. ``SPIN_S`` > 0 polls without blocking for that long before
blocking; on lavapipe (2 cores) the blocking poll alone measured as fast or faster (spinning takes
a core from the driver's threads), so it is the default.
"""

from __future__ import annotations

import os
import time

import numpy as np

_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
SPIN_S = float(os.environ.get("BENCH_RAW_SPIN_S", "0"))


# -- WGSL --------------------------------------------------------------------------------------

def saxpy_wgsl(wg: int, folded: bool) -> str:
    """y = a*x + y. ``folded``: the grid is 2-D (more than 65,535 workgroups along x)."""
    index = "g.y * p.stride + g.x" if folded else "g.x"
    return f"""
struct Params {{ n: u32, a: f32, stride: u32, pad: u32 }}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = {index};
    if (i >= p.n) {{ return; }}
    y[i] = p.a * x[i] + y[i];
}}
"""


def saxpy_vec4_wgsl(wg: int, folded: bool) -> str:
    """saxpy over vec4<f32> elements (n a multiple of 4): what an expert writes for bandwidth."""
    index = "g.y * p.stride + g.x" if folded else "g.x"
    return f"""
struct Params {{ n: u32, a: f32, stride: u32, pad: u32 }}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;

@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = {index};
    if (i >= p.n / 4u) {{ return; }}
    y[i] = p.a * x[i] + y[i];
}}
"""


MANDEL_WGSL = """
struct Params { n: i32, width: i32, height: i32, max_iter: i32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> counts: array<i32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = i32(g.x);
    if (i >= p.n) { return; }
    let px = i % p.width;
    let py = i / p.width;
    let cx = -2.2 + 3.0 * f32(px) / f32(p.width);
    let cy = -1.2 + 2.4 * f32(py) / f32(p.height);
    var x = 0.0;
    var y = 0.0;
    var k = 0;
    while (k < p.max_iter && x * x + y * y <= 4.0) {
        let xt = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = xt;
        k += 1;
    }
    counts[i] = k;
}
"""

W7_WGSL = """
struct Params { n: i32, steps: i32, dt: f32, pad: i32 }
@group(0) @binding(0) var<uniform> prm: Params;
@group(0) @binding(1) var<storage, read> pos: array<f32>;
@group(0) @binding(2) var<storage, read> vel: array<f32>;
@group(0) @binding(3) var<storage, read_write> res: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = i32(g.x);
    if (i >= prm.n) { return; }
    var p = pos[i];
    var v = vel[i];
    var acc = 0.0;
    var k = 0;
    while (k < prm.steps) {
        var f = -p * 0.5;
        if (p > 1.0) {
            f = f - 0.25;
        } else if (p < -1.0) {
            f = f + 0.25;
        } else {
            f = f * 2.0;
        }
        v = v + f * prm.dt;
        p = p + v * prm.dt;
        acc = acc + p * p;
        k += 1;
    }
    var s = 0.0;
    for (var j = 0; j < 4; j++) {
        s = s + sqrt(acc + f32(j));
    }
    var bonus = 0.0;
    if (acc > 10.0) {
        bonus = floor(acc * 0.1);
    }
    res[i] = s + bonus + floor(p);
}
"""


# -- the device ----------------------------------------------------------------------------------

class Raw:
    """One Vulkan device with the few helpers an expert writes for themselves."""

    def __init__(self, features=()):
        """``features``: the device features to request where the adapter has them."""
        import wgpu
        from wgpu.backends.wgpu_native import extras

        self.wgpu = wgpu
        try:
            extras.set_instance_extras(backends=["Vulkan"])
        except Exception:
            pass  # instance already created: the backend filter below still applies
        adapters = [a for a in wgpu.gpu.enumerate_adapters_sync()
                    if str(a.info.get("backend_type", "")) == "Vulkan"]
        wanted = os.environ.get("CTHREADS_ADAPTER", "").strip().lower()
        if wanted:
            adapters = [a for a in adapters if wanted in str(a.info.get("device", "")).lower()]
        if not adapters:
            raise RuntimeError("no Vulkan adapter")
        self.adapter = min(adapters, key=lambda a: _RANK.get(str(a.info.get("adapter_type")), 9))
        lim = self.adapter.limits
        limits = {k: lim[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                      "max-compute-workgroups-per-dimension",
                                      "max-compute-invocations-per-workgroup",
                                      "max-compute-workgroup-size-x") if k in lim}
        self.features = [f for f in features if f in self.adapter.features]
        self.device = self.adapter.request_device_sync(required_limits=limits,
                                                       required_features=self.features)
        self.queue = self.device.queue
        self.max_groups = int(self.device.limits["max-compute-workgroups-per-dimension"])
        self._pipelines: dict = {}
        from wgpu.backends.wgpu_native._api import ffi, libf
        internal = self.device._internal
        null = ffi.NULL
        poll = libf.wgpuDevicePoll
        self._poll = lambda block: bool(poll(internal, block, null))

    @property
    def info(self) -> dict:
        i = self.adapter.info
        return {"device": str(i.get("device")), "adapter_type": str(i.get("adapter_type")),
                "backend": str(i.get("backend_type")), "driver": str(i.get("description", ""))}

    # buffers
    def storage(self, nbytes: int):
        u = self.wgpu.BufferUsage
        return self.device.create_buffer(size=max(nbytes, 16),
                                         usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)

    def staging(self, nbytes: int):
        u = self.wgpu.BufferUsage
        return self.device.create_buffer(size=max(nbytes, 16), usage=u.MAP_READ | u.COPY_DST)

    def uniform(self, data: bytes):
        u = self.wgpu.BufferUsage
        buf = self.device.create_buffer(size=max(len(data), 16), usage=u.UNIFORM | u.COPY_DST)
        self.queue.write_buffer(buf, 0, data)
        return buf

    def upload(self, buf, arr: np.ndarray) -> None:
        self.queue.write_buffer(buf, 0, arr)

    # pipelines
    def pipeline(self, wgsl: str):
        pipe = self._pipelines.get(wgsl)
        if pipe is None:
            module = self.device.create_shader_module(code=wgsl)
            pipe = self.device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": "main"})
            self._pipelines[wgsl] = pipe
        return pipe

    def bind_group(self, pipe, buffers: list):
        return self.device.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": k, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                     for k, b in enumerate(buffers)])

    def groups(self, threads: int, wg: int) -> tuple[int, int]:
        total = max(-(-threads // wg), 1)
        if total <= self.max_groups:
            return total, 1
        gy = -(-total // self.max_groups)
        return -(-total // gy), gy

    # submission and completion
    def dispatch(self, pipe, bg, gx: int, gy: int = 1, copies=()) -> None:
        enc = self.device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(gx, gy, 1)
        cp.end()
        for src, dst, nbytes in copies:
            enc.copy_buffer_to_buffer(src, 0, dst, 0, nbytes)
        self.queue.submit([enc.finish()])

    def wait(self) -> None:
        if SPIN_S <= 0:
            self._poll(True)
            return
        deadline = time.perf_counter() + SPIN_S
        while not self._poll(False):
            if time.perf_counter() > deadline:
                self._poll(True)
                return

    def read(self, src, staging, nbytes: int, dtype) -> np.ndarray:
        """Copy ``src`` to ``staging``, wait, and return a numpy copy of its bytes."""
        enc = self.device.create_command_encoder()
        enc.copy_buffer_to_buffer(src, 0, staging, 0, nbytes)
        self.queue.submit([enc.finish()])
        return self.map_read(staging, nbytes, dtype)

    def map_read(self, staging, nbytes: int, dtype) -> np.ndarray:
        staging.map_sync("READ", 0, nbytes)
        try:
            arr = np.frombuffer(staging.read_mapped(0, nbytes, copy=False), dtype).copy()
        finally:
            staging.unmap()
        return arr


class Saxpy:
    """saxpy over device buffers of n floats; pipeline, bind group and params made once."""

    def __init__(self, raw: Raw, n: int, a: float, wg: int = 64, share: "Saxpy | None" = None,
                 vec4: bool = False):
        self.raw, self.n = raw, n
        if vec4 and n % 4:
            raise ValueError("the vec4 saxpy needs n % 4 == 0")
        self.gx, self.gy = raw.groups(n // 4 if vec4 else n, wg)
        make = saxpy_vec4_wgsl if vec4 else saxpy_wgsl
        self.pipe = raw.pipeline(make(wg, self.gy > 1))
        self.params = raw.uniform(np.array([n, 0, self.gx * wg, 0], np.uint32).tobytes())
        raw.queue.write_buffer(self.params, 4, np.array([a], np.float32).tobytes())
        if share is None:
            self.x = raw.storage(4 * n)
            self.y = raw.storage(4 * n)
            self.stage = raw.staging(4 * n)
        else:  # the same device lists, another workgroup size
            self.x, self.y, self.stage = share.x, share.y, share.stage
        self.bg = raw.bind_group(self.pipe, [self.params, self.x, self.y])

    def launch(self, copy_back: bool = False) -> None:
        copies = [(self.y, self.stage, 4 * self.n)] if copy_back else ()
        self.raw.dispatch(self.pipe, self.bg, self.gx, self.gy, copies)

    def read_y(self) -> np.ndarray:
        return self.raw.read(self.y, self.stage, 4 * self.n, np.float32)


# -- workloads ----------------------------------------------------------------------------------

from timing import timed as _timed  # noqa: E402


_raw: Raw | None = None


def device() -> Raw:
    global _raw
    if _raw is None:
        _raw = Raw()
    return _raw


def w1(p: dict) -> dict:
    from reference import A, check_saxpy, saxpy_arrays
    raw, n, launches = device(), p["n"], p["launches"]
    s = Saxpy(raw, n, A)
    x, y = saxpy_arrays(n)
    raw.upload(s.x, x)
    raw.upload(s.y, y)
    done = 0
    for _ in range(p["warmup"]):
        s.launch()
        raw.wait()
    done += p["warmup"]

    def each():
        for _ in range(launches):
            s.launch()
            raw.wait()

    def once():
        for _ in range(launches):
            s.launch()
        raw.wait()

    # Join each: the better of the two ways to wait (blocking poll; spin, then block).
    global SPIN_S
    keep, times = SPIN_S, {}
    try:
        for spin in (0.0, 0.002):
            SPIN_S = spin
            times[spin] = _timed(each)
    finally:
        SPIN_S = keep
    t_once = _timed(once)
    done += 3 * launches
    err = check_saxpy(s.read_y(), n, done)
    return {"error": err, "metrics": {"each_us": min(times.values()) / launches * 1e6,
                                      "each_block_us": times[0.0] / launches * 1e6,
                                      "each_spin_us": times[0.002] / launches * 1e6,
                                      "once_us": t_once / launches * 1e6}}


def w2(p: dict) -> dict:
    from reference import A, check_saxpy, saxpy_lists
    raw = device()
    metrics = {}
    for label, n, calls in p["sizes"]:
        s = Saxpy(raw, n, A)
        x, y = saxpy_lists(n)

        def call():
            raw.upload(s.x, np.fromiter(x, np.float32, n))
            raw.upload(s.y, np.fromiter(y, np.float32, n))
            s.launch(copy_back=True)
            y[:] = raw.map_read(s.stage, 4 * n, np.float32).tolist()

        call()                       # warm-up
        t = _timed(lambda: [call() for _ in range(calls)])
        err = check_saxpy(y, n, calls + 1)
        if err:
            return {"error": f"n={n}: {err}"}
        metrics[f"{label}_ms"] = t / calls * 1e3
    # numpy float32 arrays in, results copied back into the caller's array
    from reference import saxpy_arrays  # noqa: PLC0415
    n, calls = p["sizes"][0][1], p["sizes"][0][2]
    s = Saxpy(raw, n, A)
    xa, ya = saxpy_arrays(n)

    def call_arrays():
        raw.upload(s.x, xa)
        raw.upload(s.y, ya)
        s.launch(copy_back=True)
        ya[:] = raw.map_read(s.stage, 4 * n, np.float32)

    call_arrays()
    t = _timed(lambda: [call_arrays() for _ in range(calls)])
    err = check_saxpy(ya, n, calls + 1)
    if err:
        return {"error": f"numpy arrays: {err}"}
    metrics["np1M_ms"] = t / calls * 1e3
    return {"error": None, "metrics": metrics}


def _resident_saxpy(p: dict, wait_each: bool, vec4: bool = False) -> dict:
    from reference import A, check_saxpy, gbps, saxpy_lists
    raw, n, launches = device(), p["n"], p["launches"]
    x, y = saxpy_lists(n)
    s = Saxpy(raw, n, A, p.get("wg", 64), vec4=vec4)
    t_bind = _timed(lambda: (raw.upload(s.x, np.fromiter(x, np.float32, n)),
                             raw.upload(s.y, np.fromiter(y, np.float32, n))))
    s.launch()
    raw.wait()

    def loop():
        for _ in range(launches):
            s.launch()
            if wait_each:
                raw.wait()
        raw.wait()

    t = _timed(loop)

    def sync():
        y[:] = s.read_y().tolist()

    t_sync = _timed(sync)
    err = check_saxpy(y, n, launches + 1)
    per = t / launches
    return {"error": err, "metrics": {"ms": per * 1e3, "GBps": gbps(n, per),
                                      "bind_s": t_bind, "sync_s": t_sync}}


def w3(p: dict) -> dict:
    """W3: the queued loop (wait once) is the expert's floor; W3 each: wait after every launch."""
    q = _resident_saxpy(p, wait_each=False)
    if q["error"]:
        return q
    e = _resident_saxpy(p, wait_each=True)
    if e["error"]:
        return e
    v = _resident_saxpy(p, wait_each=False, vec4=True)
    if v["error"]:
        return v
    m = q["metrics"]
    return {"error": None, "metrics": {"ms": m["ms"], "GBps": m["GBps"],
                                       "vec4_GBps": v["metrics"]["GBps"],
                                       "each_ms": e["metrics"]["ms"],
                                       "each_GBps": e["metrics"]["GBps"]}}


def w5(p: dict) -> dict:
    # Join after every launch, like the cthreads workload (each launch takes tens of ms).
    r = _resident_saxpy(p, wait_each=True)
    if not r["error"]:
        r["metrics"] = {k: r["metrics"][k] for k in ("GBps", "bind_s", "sync_s")}
        v = _resident_saxpy(p, wait_each=True, vec4=True)
        if v["error"]:
            return v
        r["metrics"]["vec4_GBps"] = v["metrics"]["GBps"]
    return r


def w5big(p: dict) -> dict:
    """Large resident saxpy, queued launches, at several workgroup sizes (the best counts)."""
    from reference import A, check_saxpy, gbps, saxpy_lists
    raw, n, launches = device(), p["n"], p["launches"]
    wgs = list(p.get("raw_wgs", (64, 256))) + ["vec4"]
    x, y = saxpy_lists(n)
    base = Saxpy(raw, n, A, wgs[0])
    t_bind = _timed(lambda: (raw.upload(base.x, np.fromiter(x, np.float32, n)),
                             raw.upload(base.y, np.fromiter(y, np.float32, n))))
    metrics, done = {"bind_s": t_bind}, 0
    for wg in wgs:
        s = base if wg == wgs[0] else \
            Saxpy(raw, n, A, 256, share=base, vec4=True) if wg == "vec4" else \
            Saxpy(raw, n, A, wg, share=base)
        for _ in range(p.get("warmup", 10)):      # as in the cthreads workload: clocks ramp up
            s.launch()
        raw.wait()

        def loop():
            for _ in range(launches):
                s.launch()
            raw.wait()

        t = _timed(loop)
        done += p.get("warmup", 10) + launches
        metrics[f"GBps_wg{wg}"] = gbps(n, t / launches)
    metrics["GBps"] = max(metrics[f"GBps_wg{wg}"] for wg in wgs)

    def sync():
        y[:] = base.read_y().tolist()

    metrics["sync_s"] = _timed(sync)
    return {"error": check_saxpy(y, n, done), "metrics": metrics}


def w6(p: dict) -> dict:
    from reference import MANDEL_H, MANDEL_ITER, MANDEL_W, check_mandelbrot
    raw, launches = device(), p["launches"]
    n = MANDEL_W * MANDEL_H
    pipe = raw.pipeline(MANDEL_WGSL)
    params = raw.uniform(np.array([n, MANDEL_W, MANDEL_H, MANDEL_ITER], np.int32).tobytes())
    counts = [0] * n
    buf = raw.storage(4 * n)
    stage = raw.staging(4 * n)
    raw.upload(buf, np.array(counts, np.int32))
    bg = raw.bind_group(pipe, [params, buf])
    gx, gy = raw.groups(n, 64)
    raw.dispatch(pipe, bg, gx, gy)
    raw.wait()

    def loop():
        for _ in range(launches):
            raw.dispatch(pipe, bg, gx, gy)
            raw.wait()

    t = _timed(loop)
    counts[:] = raw.read(buf, stage, 4 * n, np.int32).tolist()
    return {"error": check_mandelbrot(counts), "metrics": {"ms": t / launches * 1e3}}


def w7_first_launch(n: int) -> dict:
    """A new pipeline's first launch from lists, after other work ran on the device."""
    from reference import W7_DT, W7_STEPS, check_w7, w7_inputs
    raw = device()
    w1({"n": 64, "launches": 20, "warmup": 5})          # other launches first
    pos, vel = w7_inputs(n)
    res = [0.0] * n

    def first():
        pipe = raw.pipeline(W7_WGSL)
        params = raw.uniform(np.array([n, W7_STEPS, 0, 0], np.int32).tobytes())
        raw.queue.write_buffer(params, 8, np.array([W7_DT], np.float32).tobytes())
        bufs = [raw.storage(4 * n) for _ in range(3)]
        raw.upload(bufs[0], np.fromiter(pos, np.float32, n))
        raw.upload(bufs[1], np.fromiter(vel, np.float32, n))
        stage = raw.staging(4 * n)
        bg = raw.bind_group(pipe, [params] + bufs)
        gx, gy = raw.groups(n, 64)
        raw.dispatch(pipe, bg, gx, gy, [(bufs[2], stage, 4 * n)])
        res[:] = raw.map_read(stage, 4 * n, np.float32).tolist()

    t = _timed(first)
    return {"error": check_w7(res, pos, vel), "metrics": {"ms": t * 1e3}}


def cold_start(n: int = 64) -> str | None:
    """W4: from ``import wgpu`` to the first correct tiny saxpy (reference-free check)."""
    raw = Raw()
    s = Saxpy(raw, n, 0.5)
    x = [float(i % 7) for i in range(n)]
    y = [1.0] * n
    raw.upload(s.x, np.fromiter(x, np.float32, n))
    raw.upload(s.y, np.fromiter(y, np.float32, n))
    s.launch(copy_back=True)
    y[:] = raw.map_read(s.stage, 4 * n, np.float32).tolist()
    want = [1.0 + 0.5 * v for v in x]
    return None if y == want else f"wrong result: {y[:4]} vs {want[:4]}"


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W5": w5, "W5big": w5big, "W6": w6}
