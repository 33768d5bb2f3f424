"""The PEERS workload: ours against the CUDA stack (torch, CuPy, Triton) in the same process.

Each case runs every implementation on the same data, alternating (the order rotates every
round), and reports the median of ``reps`` samples; every result is checked against numpy
afterwards, and a wrong one is a failure (``FAIL: ...``), never a time. One peer that raises
or is missing loses only its own figures. Throughput cases time ``k`` launches queued then one
wait (ours: ``k`` ``gpu()`` calls, then ``join(download=False)`` of the jobs; torch and CuPy:
``k`` calls, then one synchronize), after ``warm`` such samples untimed (the GPU's clocks rise
under load). Metrics are named ``<case>_<implementation>_<unit>``:

* ``saxpy32`` / ``saxpy64``: resident saxpy ``y = a*x + y`` (ours: ``examples.samples.saxpy`` on
  arrays bound in a ``GpuArena``; torch ``y.add_(x, alpha=a)``; a CuPy ``RawKernel``; the
  Triton saxpy), GB/s at 12 / 24 bytes per element;
* ``sum32`` / ``sum64``: a sum returned as a Python number per call (ours ``add.reduce`` of the
  resident array; torch ``x.sum().item()``; CuPy ``float(x.sum())``), and ``sum32q`` /
  ``sum64q``: results left on the device, ``k`` queued then one wait (ours ``add.reduce(d,
  to_device=True)`` of a GpuArray, a 0-d GpuArray each, then ``.item()`` of the last; torch's
  and CuPy's ``x.sum()``, a 0-d device array each, then one synchronize); GB/s at 4 / 8 bytes
  per value;
* ``hist``: 256-bin histogram of int32 values (ours: ``examples/histogram.py``'s shared-bin
  kernel, best of ``hist_groups`` workgroup counts, each also reported as ``oursg<G>``, after a
  kernel that clears the bins; ``oursglobal``: its global-atomic kernel; torch ``bincount``;
  CuPy: a shared-memory ``RawKernel`` (``cupy``), a global-atomic one (``cupyglobal``) and
  ``cp.bincount`` (``cupybincount``)), G elements/s;
* ``stencil``: one 5-point Jacobi step on an n x n float32 grid (ours: ``threads=(n, n)`` with a
  2-D list; CuPy ``RawKernel`` in 16 x 16 blocks; torch slices), GB/s at 8 bytes per point;
* ``mandel``: Mandelbrot with a 2-D launch (ours ``examples.samples.mandelbrot2d``; CuPy
  ``RawKernel`` in 16 x 16 blocks), ms per launch;
* ``tiny``: saxpy on 64 elements, each launch waited for (ours ``join(download=False)``; torch
  ``add_`` + ``torch.cuda.synchronize()``; CuPy kernel + ``Device().synchronize()``; Triton +
  ``torch.cuda.synchronize()``), us per launch;
* ``nbody``: N-body accelerations (ours ``examples/nbody.py``'s kernel with device functions;
  a CuPy ``RawKernel`` all-pairs loop; torch in blocks of rows), ms per step.

What is not installed is skipped with its reason (``unsupported``); on a machine without CUDA
only ours runs, at the small sizes of the parameter set for CPU drivers.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import sys
import time
import traceback

import numpy as np

from cthreads.gpu import GpuArena, gpu, to_device
from examples.samples import mandelbrot_numpy

import peers_kernels as K
from reference import MANDEL_AGREE

A = 0.5                      # saxpy's scalar: every saxpy result stays exact
PEERS = ("torch", "cupy", "triton")


def log(msg: str) -> None:
    print(f"PEERS {msg}", file=sys.stderr, flush=True)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


# -- what is installed ----------------------------------------------------------------------------

class Installed:
    """The peers this process can use (``mods``), why the others are skipped (``why``), and
    their versions (``info``)."""

    def __init__(self):
        self.mods: dict = {}
        self.why: dict = {}
        self.info: dict = {}
        try:
            import torch  # noqa: PLC0415
            if torch.cuda.is_available():
                self.mods["torch"] = torch
                self.info["torch"] = f"{torch.__version__} on {torch.cuda.get_device_name(0)}"
            else:
                self.why["torch"] = f"torch {torch.__version__} sees no CUDA device"
        except Exception as exc:
            self.why["torch"] = f"torch not importable ({_short(exc)})"
        try:
            import cupy  # noqa: PLC0415
            cupy.cuda.Device(0).compute_capability       # raises without a CUDA device
            self.mods["cupy"] = cupy
            self.info["cupy"] = cupy.__version__
        except Exception as exc:
            self.why["cupy"] = f"cupy not usable ({_short(exc)})"
        if K.saxpy_triton is None:
            self.why["triton"] = f"triton not importable ({K.TRITON_MISSING})"
        elif "torch" not in self.mods:
            self.why["triton"] = "triton needs torch with CUDA"
        else:
            self.mods["triton"] = K.triton
            self.info["triton"] = getattr(K.triton, "__version__", "?")
        for name, why in self.why.items():
            log(f"{name} skipped: {why}")
        for name, text in self.info.items():
            log(f"{name}: {text}")

    def sync(self, name: str) -> None:
        if name == "cupy":
            self.mods["cupy"].cuda.Device().synchronize()
        else:
            self.mods["torch"].cuda.synchronize()

    def free(self) -> None:
        """Give cached device memory back between cases."""
        try:
            if "torch" in self.mods:
                self.mods["torch"].cuda.empty_cache()
            if "cupy" in self.mods:
                self.mods["cupy"].get_default_memory_pool().free_all_blocks()
        except Exception as exc:
            log(f"freeing cached device memory failed: {_short(exc)}")


def _queued(k: int, *launches) -> None:
    """Ours: ``k`` rounds of ``launches`` (each a callable that calls ``gpu()``), then every job
    joined without download (the last one first: the others are done by then)."""
    jobs = []
    for _ in range(k):
        for launch in launches:
            jobs.append(launch())
    jobs[-1].join(download=False)
    for job in jobs:
        job.join(download=False)


# -- the race -------------------------------------------------------------------------------------

class Peers:
    """Runs the cases; collects ``metrics`` and ``unsupported`` (reasons, and ``FAIL: ...``)."""

    def __init__(self, p: dict):
        self.p = p
        self.reps, self.warm = p["reps"], p["warm"]
        self.have = Installed()
        self.metrics: dict = {}
        self.unsupported: dict = {}
        self._module = None

    def cuda(self, name: str):
        """A function of ``CUDA_SOURCE``, compiled once (CuPy caches the binary too)."""
        if self._module is None:
            self._module = self.have.mods["cupy"].RawModule(code=K.CUDA_SOURCE)
        return self._module.get_function(name)

    def _fail(self, key: str, what: str, exc: BaseException | str) -> None:
        text = exc if isinstance(exc, str) else _short(exc)
        self.unsupported[key] = f"FAIL: {what}: {text}"
        log(f"{key} FAIL ({what}): {text}")
        if not isinstance(exc, str):
            traceback.print_exception(exc, file=sys.stderr)

    def race(self, case: str, unit: str, entries: dict, figure) -> None:
        """Time ``entries`` (name -> (peer, setup)) against each other. ``setup()`` returns
        ``(sample, check)``: ``sample()`` is one timed unit of work, ``check()`` returns None or
        what is wrong (called after the timing). ``figure(median seconds)`` is the metric."""
        runs, checks = {}, {}
        for name, (peer, setup) in entries.items():
            key = f"{case}_{name}_{unit}"
            if peer != "ours" and peer not in self.have.mods:
                self.unsupported[key] = self.have.why[peer]
                continue
            try:
                sample, check = setup()
                for _ in range(self.warm):
                    sample()
            except Exception as exc:
                self._fail(key, "set-up or warm-up", exc)
                continue
            runs[name], checks[name] = sample, check
        names = list(runs)
        times: dict = {name: [] for name in names}
        gc.collect()
        for r in range(self.reps if names else 0):
            for name in names[r % len(names):] + names[:r % len(names)]:
                if name not in runs:                 # failed in an earlier round
                    continue
                gc.disable()
                try:
                    t0 = time.perf_counter()
                    runs[name]()
                    times[name].append(time.perf_counter() - t0)
                except Exception as exc:
                    self._fail(f"{case}_{name}_{unit}", f"timed sample {r}", exc)
                    del runs[name]
                finally:
                    gc.enable()
        for name in names:
            if name not in runs:
                continue
            key = f"{case}_{name}_{unit}"
            try:
                err = checks[name]()
            except Exception as exc:
                self._fail(key, "check", exc)
                continue
            if err:
                self._fail(key, "wrong result", err)
                continue
            self.metrics[key] = figure(statistics.median(times[name]))
            spread = [figure(t) for t in (min(times[name]), max(times[name]))]
            log(f"{key} = {self.metrics[key]:.4g} (samples {min(spread):.4g}-{max(spread):.4g})")
        runs.clear()
        checks.clear()
        gc.collect()
        self.have.free()

    def case(self, label: str, fn, *args) -> None:
        """One case; a crash outside the race (inputs, references) is that case's failure."""
        t0 = time.perf_counter()
        try:
            fn(*args)
        except Exception as exc:
            self._fail(label, "case", exc)
        log(f"{label} took {time.perf_counter() - t0:.1f} s")

    # -- saxpy ------------------------------------------------------------------------------------

    def saxpy(self, bits: int) -> None:
        n, k = self.p["n"], self.p["k"]
        dt = np.float32 if bits == 32 else np.float64
        x = (np.arange(n) % 1000).astype(dt)
        torch = self.have.mods.get("torch")

        def check(y, done) -> str | None:
            want = 1.0 + done[0] * (A * x.astype(np.float64))
            if not np.array_equal(np.asarray(y, np.float64), want):
                bad = int(np.argmax(np.asarray(y, np.float64) != want))
                return f"y[{bad}] = {y[bad]!r} after {done[0]} launches, numpy says {want[bad]!r}"
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                y, done = np.ones(n, dt), [0]
                arena = stack.enter_context(GpuArena())
                arena.bind(x=x, y=y)

                def sample():
                    _queued(k, lambda: gpu(K.saxpy, n, A, x, y))
                    done[0] += k

                return sample, lambda: (arena.sync("y"), check(y, done))[1]

            def on_torch():
                tx = torch.from_numpy(x).cuda()
                ty, done = torch.ones(n, dtype=tx.dtype, device="cuda"), [0]

                def sample():
                    for _ in range(k):
                        ty.add_(tx, alpha=A)
                    torch.cuda.synchronize()
                    done[0] += k

                return sample, lambda: check(ty.cpu().numpy(), done)

            def on_cupy():
                cp = self.have.mods["cupy"]
                fn = self.cuda(f"saxpy_f{bits}")
                cx, cy, done = cp.asarray(x), cp.ones(n, dt), [0]
                args, grid = (np.int32(n), dt(A), cx, cy), ((n + 255) // 256,)
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(k):
                        fn(grid, (256,), args)
                    dev.synchronize()
                    done[0] += k

                return sample, lambda: check(cp.asnumpy(cy), done)

            def on_triton():
                tx = torch.from_numpy(x).cuda()
                ty, done = torch.ones(n, dtype=tx.dtype, device="cuda"), [0]
                grid = (K.triton.cdiv(n, 1024),)

                def sample():
                    for _ in range(k):
                        K.saxpy_triton[grid](tx, ty, A, n, BLOCK=1024)
                    torch.cuda.synchronize()
                    done[0] += k

                return sample, lambda: check(ty.cpu().numpy(), done)

            self.race(f"saxpy{bits}", "GBps",
                      {"ours": ("ours", ours), "torch": ("torch", on_torch),
                       "cupy": ("cupy", on_cupy), "triton": ("triton", on_triton)},
                      lambda s: n * 3 * (bits // 8) / (s / k) / 1e9)

    # -- sum --------------------------------------------------------------------------------------

    def sums(self, bits: int) -> None:
        n, k, calls = self.p["n"], self.p["k"], self.p["sum_calls"]
        dt = np.float32 if bits == 32 else np.float64
        x = np.random.default_rng(0).random(n, dtype=np.float32).astype(dt)
        eps = 2.0 ** -24 if bits == 32 else 2.0 ** -52
        torch = self.have.mods.get("torch")
        exact = float(np.sum(x, dtype=np.float64))
        # any order of additions: within (depth of the tree + sequential runs) roundings
        bound = (64 + n / 2**18) * eps * float(np.abs(x, dtype=np.float64).sum())

        def check(got: list) -> str | None:
            if not got:
                return "no result"
            for g in got:
                if not abs(float(g) - exact) <= bound:
                    return f"sum {g!r} is {abs(float(g) - exact):.3g} from numpy's {exact!r}"
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                arena = stack.enter_context(GpuArena())
                arena.bind(x=x)
                got: list = []

                def sample():
                    for _ in range(calls):
                        got.append(K.add.reduce(x))

                return sample, lambda: check(got)

            def on_torch():
                tx, got = torch.from_numpy(x).cuda(), []

                def sample():
                    for _ in range(calls):
                        got.append(tx.sum().item())

                return sample, lambda: check(got)

            def on_cupy():
                cx, got = self.have.mods["cupy"].asarray(x), []

                def sample():
                    for _ in range(calls):
                        got.append(float(cx.sum()))

                return sample, lambda: check(got)

            self.race(f"sum{bits}", "GBps",
                      {"ours": ("ours", ours), "torch": ("torch", on_torch),
                       "cupy": ("cupy", on_cupy)},
                      lambda s: n * (bits // 8) / (s / calls) / 1e9)

            def queued(peer: str, array, total):
                def setup():
                    xs, last = array(), []

                    def sample():
                        for _ in range(k):
                            r = xs.sum()
                        self.have.sync(peer)
                        last[:] = [r]

                    return sample, lambda: check([total(r) for r in last])
                return setup

            def ours_queued():
                d, last = to_device(x), []

                def sample():
                    for _ in range(k):
                        r = K.add.reduce(d, to_device=True)   # a 0-d GpuArray, not waited for
                    last[:] = [r.item()]                      # the queue runs in order

                return sample, lambda: check(last)

            self.race(f"sum{bits}q", "GBps",
                      {"ours": ("ours", ours_queued),
                       "torch": ("torch", queued("torch", lambda: torch.from_numpy(x).cuda(),
                                                 lambda r: r.item())),
                       "cupy": ("cupy", queued("cupy", lambda: self.have.mods["cupy"].asarray(x),
                                               float))},
                      lambda s: n * (bits // 8) / (s / k) / 1e9)

    # -- histogram --------------------------------------------------------------------------------

    def hist(self) -> None:
        n, k = self.p["hist_n"], self.p["hist_k"]
        data = np.random.default_rng(5).integers(0, K.BINS, n, dtype=np.int32)
        want = np.bincount(data, minlength=K.BINS)
        torch = self.have.mods.get("torch")

        def check(bins) -> str | None:
            got = np.asarray(bins).astype(np.int64)
            if not np.array_equal(got, want):
                bad = int(np.argmax(got != want))
                return f"bin {bad} holds {got[bad]}, numpy.bincount says {want[bad]}"
            return None

        entries: dict = {}
        with contextlib.ExitStack() as stack:
            held: dict = {}

            def arena():
                if "arena" not in held:
                    held["arena"] = stack.enter_context(GpuArena())
                    held["arena"].bind(data=data)
                return held["arena"]

            def ours(kernel, threads):
                def setup():
                    bins = np.zeros(K.BINS, np.int32)
                    a = arena()
                    slot = f"bins{len(a)}"
                    a.bind(**{slot: bins})
                    args = (n, data, bins) if kernel is K.histogram else (threads, n, data, bins)

                    def sample():
                        _queued(k, lambda: gpu(K.clear_bins, K.BINS, bins),
                                lambda: gpu(kernel, *args))

                    return sample, lambda: (a.sync(slot), check(bins))[1]
                return setup

            for groups in self.p["hist_groups"]:
                entries[f"oursg{groups}"] = ("ours", ours(K.histogram_private, groups * 64))
            entries["oursglobal"] = ("ours", ours(K.histogram, n))

            def on_torch():
                td, out = torch.from_numpy(data).cuda(), []

                def sample():
                    for _ in range(k):
                        h = torch.bincount(td, minlength=K.BINS)
                    torch.cuda.synchronize()
                    out[:] = [h]

                return sample, lambda: check(out[0].cpu().numpy())

            def on_cupy(name):
                def setup():
                    cp = self.have.mods["cupy"]
                    cd, bins = cp.asarray(data), cp.zeros(K.BINS, cp.uint32)
                    dev = cp.cuda.Device()
                    fn = self.cuda(name)
                    if name == "hist256_shared":       # a grid-stride loop: 8 blocks per SM
                        grid = (dev.attributes["MultiProcessorCount"] * 8,)
                    else:                              # one thread per value
                        grid = ((n + 255) // 256,)
                    args = (cd, np.int32(n), bins)

                    def sample():
                        for _ in range(k):
                            bins.fill(0)
                            fn(grid, (256,), args)
                        dev.synchronize()

                    return sample, lambda: check(cp.asnumpy(bins))
                return setup

            def on_cupy_bincount():
                cp = self.have.mods["cupy"]
                cd, out = cp.asarray(data), []
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(k):
                        h = cp.bincount(cd, minlength=K.BINS)
                    dev.synchronize()
                    out[:] = [h]

                return sample, lambda: check(cp.asnumpy(out[0]))

            entries.update(torch=("torch", on_torch), cupy=("cupy", on_cupy("hist256_shared")),
                           cupyglobal=("cupy", on_cupy("hist256_global")),
                           cupybincount=("cupy", on_cupy_bincount))
            self.race("hist", "Geps", entries, lambda s: n / (s / k) / 1e9)
        best = [(self.metrics[f"hist_oursg{g}_Geps"], g) for g in self.p["hist_groups"]
                if f"hist_oursg{g}_Geps" in self.metrics]
        if best:
            self.metrics["hist_ours_Geps"], self.metrics["hist_ours_groups"] = max(best)
        else:
            self.unsupported["hist_ours_Geps"] = "FAIL: no workgroup count gave a result"

    # -- 2-D stencil ------------------------------------------------------------------------------

    def stencil(self) -> None:
        g, k = self.p["grid"], self.p["stencil_k"]
        u = np.random.default_rng(11).random((g, g), dtype=np.float32)
        want = u.copy()
        want[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        torch = self.have.mods.get("torch")

        def check(v) -> str | None:
            v = np.asarray(v)
            if not np.allclose(v, want, rtol=1e-6, atol=1e-6):
                bad = np.unravel_index(int(np.argmax(np.abs(v - want))), v.shape)
                return f"v{list(bad)} = {v[bad]!r}, numpy says {want[bad]!r}"
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                v = u.copy()
                arena = stack.enter_context(GpuArena())
                arena.bind(u=u, v=v)

                def sample():
                    _queued(k, lambda: gpu(K.stencil2d, g, g, u, v, threads=(g, g)))

                return sample, lambda: (arena.sync("v"), check(v))[1]

            def on_cupy():
                cp = self.have.mods["cupy"]
                fn = self.cuda("stencil5")
                cu = cp.asarray(u)
                cv = cu.copy()
                args, grid = (cu, cv, np.int32(g), np.int32(g)), ((g + 15) // 16, (g + 15) // 16)
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(k):
                        fn(grid, (16, 16), args)
                    dev.synchronize()

                return sample, lambda: check(cp.asnumpy(cv))

            def on_torch():
                tu = torch.from_numpy(u).cuda()
                tv = tu.clone()

                def sample():
                    for _ in range(k):
                        tv[1:-1, 1:-1] = 0.25 * (tu[:-2, 1:-1] + tu[2:, 1:-1] + tu[1:-1, :-2]
                                                 + tu[1:-1, 2:])
                    torch.cuda.synchronize()

                return sample, lambda: check(tv.cpu().numpy())

            self.race("stencil", "GBps",
                      {"ours": ("ours", ours), "cupy": ("cupy", on_cupy),
                       "torch": ("torch", on_torch)},
                      lambda s: 8 * g * g / (s / k) / 1e9)

    # -- Mandelbrot -------------------------------------------------------------------------------

    def mandel(self) -> None:
        w, h, it = self.p["mandel"]
        k = self.p["mandel_k"]
        rows = mandel_rows(h)
        want = mandelbrot_reference(w, h, it, rows)

        def check(counts) -> str | None:
            got = np.asarray(counts).reshape(h, w)[rows]
            agree = float(np.mean(got == want))
            if agree < MANDEL_AGREE:
                return (f"only {agree:.2%} of {got.size} checked pixels equal numpy's float32 "
                        "iteration")
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                counts = np.zeros((h, w), np.int32)
                arena = stack.enter_context(GpuArena())
                arena.bind(counts=counts)

                def sample():
                    _queued(k, lambda: gpu(K.mandelbrot2d, w, h, it, counts, threads=(w, h)))

                return sample, lambda: (arena.sync("counts"), check(counts))[1]

            def on_cupy():
                cp = self.have.mods["cupy"]
                fn = self.cuda("mandelbrot")
                counts = cp.zeros((h, w), cp.int32)
                args = (counts, np.int32(w), np.int32(h), np.int32(it))
                grid = ((w + 15) // 16, (h + 15) // 16)
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(k):
                        fn(grid, (16, 16), args)
                    dev.synchronize()

                return sample, lambda: check(cp.asnumpy(counts))

            self.race("mandel", "ms", {"ours": ("ours", ours), "cupy": ("cupy", on_cupy)},
                      lambda s: s / k * 1e3)

    # -- tiny launch + wait -----------------------------------------------------------------------

    def tiny(self) -> None:
        n, launches = 64, self.p["tiny_launches"]
        x = (np.arange(n) % 1000).astype(np.float32)
        torch = self.have.mods.get("torch")

        def check(y, done) -> str | None:
            want = 1.0 + done[0] * (A * x.astype(np.float64))
            if not np.array_equal(np.asarray(y, np.float64), want):
                return f"y after {done[0]} launches differs from numpy"
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                y, done = np.ones(n, np.float32), [0]
                arena = stack.enter_context(GpuArena())
                arena.bind(x=x, y=y)

                def sample():
                    for _ in range(launches):
                        gpu(K.saxpy, n, A, x, y).join(download=False)
                    done[0] += launches

                return sample, lambda: (arena.sync("y"), check(y, done))[1]

            def on_torch():
                tx = torch.from_numpy(x).cuda()
                ty, done = torch.ones(n, dtype=torch.float32, device="cuda"), [0]

                def sample():
                    for _ in range(launches):
                        ty.add_(tx, alpha=A)
                        torch.cuda.synchronize()
                    done[0] += launches

                return sample, lambda: check(ty.cpu().numpy(), done)

            def on_cupy():
                cp = self.have.mods["cupy"]
                fn = self.cuda("saxpy_f32")
                cx, cy, done = cp.asarray(x), cp.ones(n, cp.float32), [0]
                args = (np.int32(n), np.float32(A), cx, cy)
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(launches):
                        fn((1,), (n,), args)
                        dev.synchronize()
                    done[0] += launches

                return sample, lambda: check(cp.asnumpy(cy), done)

            def on_triton():
                tx = torch.from_numpy(x).cuda()
                ty, done = torch.ones(n, dtype=torch.float32, device="cuda"), [0]

                def sample():
                    for _ in range(launches):
                        K.saxpy_triton[(1,)](tx, ty, A, n, BLOCK=n)
                        torch.cuda.synchronize()
                    done[0] += launches

                return sample, lambda: check(ty.cpu().numpy(), done)

            self.race("tiny", "us",
                      {"ours": ("ours", ours), "torch": ("torch", on_torch),
                       "cupy": ("cupy", on_cupy), "triton": ("triton", on_triton)},
                      lambda s: s / launches * 1e6)

    # -- N-body -----------------------------------------------------------------------------------

    def nbody(self) -> None:
        b, k = self.p["bodies"], self.p["nbody_k"]
        rng = np.random.default_rng(7)
        pos = rng.standard_normal((b, 3)).astype(np.float32)
        mass = rng.uniform(0.5, 1.5, b).astype(np.float32) / b
        x, y, z = (np.ascontiguousarray(pos[:, c]) for c in range(3))
        rows = np.unique(np.concatenate([[0, b - 1], rng.choice(b, min(b, 256), replace=False)]))
        d = pos[None, :, :].astype(np.float64) - pos[rows, None, :].astype(np.float64)
        r2 = (d * d).sum(axis=2) + K.SOFTENING2
        want = (d * (mass.astype(np.float64)[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(1)
        del d, r2
        scale = float(np.abs(want).max())
        torch = self.have.mods.get("torch")

        def check(acc) -> str | None:
            err = float(np.abs(np.asarray(acc, np.float64)[rows] - want).max())
            if not err <= 1e-4 * scale:
                return f"accelerations {err:.3g} from numpy float64's (largest {scale:.3g})"
            return None

        with contextlib.ExitStack() as stack:
            def ours():
                dp, dm = to_device(pos), to_device(mass)        # list[vec3] over (b, 3)
                acc = to_device(np.zeros((b, 3), np.float32))

                def sample():
                    _queued(k, lambda: gpu(K.accelerations, b, dp, dm, acc))

                return sample, lambda: check(acc.numpy())

            def on_cupy():
                cp = self.have.mods["cupy"]
                fn = self.cuda("nbody_accel")
                cx, cy, cz, cm = (cp.asarray(v) for v in (x, y, z, mass))
                acc = [cp.zeros(b, cp.float32) for _ in range(3)]
                args = (np.int32(b), np.float32(K.SOFTENING2), cx, cy, cz, cm, *acc)
                grid = ((b + 255) // 256,)
                dev = cp.cuda.Device()

                def sample():
                    for _ in range(k):
                        fn(grid, (256,), args)
                    dev.synchronize()

                return sample, lambda: check(np.stack([cp.asnumpy(a) for a in acc], axis=1))

            def on_torch():
                tp, tm = torch.from_numpy(pos).cuda(), torch.from_numpy(mass).cuda()
                out = torch.zeros_like(tp)
                block = self.p["torch_rows"]

                def step():
                    for s in range(0, b, block):
                        dd = tp[None, :, :] - tp[s:s + block, None, :]     # p[j] - p[i]
                        rr = (dd * dd).sum(dim=2) + K.SOFTENING2
                        out[s:s + block] = (dd * (tm / (rr * rr.sqrt()))[:, :, None]).sum(dim=1)

                def sample():
                    for _ in range(k):
                        step()
                    torch.cuda.synchronize()

                return sample, lambda: check(out.cpu().numpy())

            self.race("nbody", "ms",
                      {"ours": ("ours", ours), "cupy": ("cupy", on_cupy),
                       "torch": ("torch", on_torch)},
                      lambda s: s / k * 1e3)


def mandel_rows(height: int) -> np.ndarray:
    """The rows the Mandelbrot check compares: all of a small image, every 8th of a large one
    (the float32 numpy reference of 4096 x 4096 pixels would take a minute)."""
    return np.arange(height) if height <= 1024 else np.arange(0, height, 8)


def mandelbrot_reference(width: int, height: int, max_iter: int, rows: np.ndarray) -> np.ndarray:
    """``examples.samples.mandelbrot_numpy`` for the given rows, as a (rows, width) array."""
    if rows.size == height:
        return mandelbrot_numpy(width, height, max_iter).reshape(height, width)
    return mandelbrot_numpy(width, height, max_iter, rows=rows)


def spin_up(p: dict) -> None:
    """Our resident saxpy for ``spinup_s`` seconds, untimed: a GPU's clocks rise under load."""
    if not p.get("spinup_s"):
        return
    n = p["n"]
    x, y = np.ones(n, np.float32), np.zeros(n, np.float32)
    t0 = time.perf_counter()
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        while time.perf_counter() - t0 < p["spinup_s"]:
            _queued(10, lambda: gpu(K.saxpy, n, A, x, y))


def peers(p: dict) -> dict:
    run = Peers(p)
    run.case("spin-up", spin_up, p)
    for label, fn, *args in (("saxpy32", run.saxpy, 32), ("saxpy64", run.saxpy, 64),
                             ("sum32", run.sums, 32), ("sum64", run.sums, 64),
                             ("hist", run.hist), ("stencil", run.stencil),
                             ("mandel", run.mandel), ("tiny", run.tiny), ("nbody", run.nbody)):
        run.case(label, fn, *args)
    return {"error": None, "metrics": run.metrics, "unsupported": run.unsupported,
            "info": {"peers": run.have.info, "skipped": run.have.why}}


WORKLOADS = {"PEERS": peers}
