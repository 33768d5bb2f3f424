"""The PEERS cases of the v3 issues (23-27), on top of ``peers.Peers`` (the same race: the
implementations alternate on the same data in one process, untimed warm-up samples, medians,
every result checked after the timing; a peer that is not installed loses only its figure):

* ``ga_saxpy``: saxpy on ``GpuArray``s (n floats, k launches queued, the last one joined)
  against the same on arena-bound numpy arrays and torch's ``y.add_(x, alpha=a)`` x k + one
  synchronize (CPU drivers: numpy's ``y += a * x``); GB/s at 12 B per element;
* ``ga_relaunch``: ``relaunch_n`` floats, ``relaunch_k`` launches on GpuArrays queued then one
  join (the host's cost of a launch on resident arrays) against torch's ``add_`` x k + one
  synchronize; us per launch;
* ``vec_saxpy``: ``vectors.saxpy_vec3`` over ``(n, 3)`` GpuArrays against our scalar saxpy over
  the ``3n`` floats and torch's ``add_`` on an ``(n, 3)`` tensor; GB/s at 12 B per component;
* ``vec_step``: ``vectors.step_vec3`` (``v += g * dt; p += v * dt``) against ``step_xyz`` (x/y/z
  arrays) and torch (``v.add_(g * dt); p.add_(v, alpha=dt)``); ms per step;
* ``tinyq``: 100 tiny launches (n=64) on GpuArrays queued, one join, against torch's 100 eager
  ``add_`` + one synchronize; us for the 100;
* ``capture``: the same 100 launches recorded with ``cthreads.gpu.capture()`` (v3.md section 5)
  and replayed (``graph.replay().join()``) against the 100 launched one by one (``oursloop``),
  torch eager (``torch``) and a ``torch.cuda.graph`` replay + synchronize (``torchgraph``); us
  for the 100. Where ``from cthreads.gpu import capture`` fails, ours says "not available".
"""

from __future__ import annotations

import contextlib

import numpy as np

from cthreads.gpu import GpuArena, gpu, to_device

import peers as P
import peers_kernels as K

A = P.A


def _saxpy_check(x: np.ndarray, done: list):
    def check(y) -> str | None:
        want = 1.0 + done[0] * (A * x.astype(np.float64))
        if x.dtype == np.float32 and float(want.max(initial=0.0)) >= 2.0 ** 23:
            # past 2**23 a float32 sum rounds: the reference adds in float32, as the device
            # (and torch) do, one launch at a time
            acc, step = np.ones(x.shape, np.float32), (np.float32(A) * x).astype(np.float32)
            for _ in range(done[0]):
                acc += step
            want = acc.astype(np.float64)
        y = np.asarray(y, np.float64).reshape(want.shape)
        if not np.array_equal(y, want):
            bad = int(np.argmax(y.reshape(-1) != want.reshape(-1)))
            return (f"element {bad} = {y.reshape(-1)[bad]!r} after {done[0]} launches, numpy "
                    f"says {want.reshape(-1)[bad]!r}")
        return None
    return check


def _ours_queued(launch, k: int) -> None:
    """k launches, then a join of the last (the queue runs in order), then the rest."""
    jobs = [launch() for _ in range(k)]
    jobs[-1].join()
    for job in jobs[:-1]:
        job.join()


class V3(P.Peers):
    """``peers.Peers`` with the v3 cases; numpy counts as a peer (CPU drivers' baseline)."""

    def __init__(self, p: dict):
        super().__init__(p)
        self.have.mods["numpy"] = np
        self.have.info.setdefault("numpy", np.__version__)

    # -- GpuArray ---------------------------------------------------------------------------

    def ga_saxpy(self) -> None:
        n, k = self.p["ga_n"], self.p["k"]
        x = (np.arange(n) % 1000).astype(np.float32)
        torch = self.have.mods.get("torch")
        on_gpu = torch is not None

        with contextlib.ExitStack() as stack:
            def ours():
                dx, dy, done = to_device(x), to_device(np.ones(n, np.float32)), [0]

                def sample():
                    _ours_queued(lambda: gpu(K.saxpy, n, A, dx, dy), k)
                    done[0] += k
                return sample, lambda: _saxpy_check(x, done)(dy.numpy())

            def arena():
                y, done = np.ones(n, np.float32), [0]
                a = stack.enter_context(GpuArena())
                a.bind(x=x, y=y)

                def sample():
                    P._queued(k, lambda: gpu(K.saxpy, n, A, x, y))
                    done[0] += k
                return sample, lambda: (a.sync("y"), _saxpy_check(x, done)(y))[1]

            def on_torch():
                tx = torch.from_numpy(x).cuda()
                ty, done = torch.ones(n, dtype=tx.dtype, device="cuda"), [0]

                def sample():
                    for _ in range(k):
                        ty.add_(tx, alpha=A)
                    torch.cuda.synchronize()
                    done[0] += k
                return sample, lambda: _saxpy_check(x, done)(ty.cpu().numpy())

            def on_numpy():
                y, done = np.ones(n, np.float32), [0]

                def sample():
                    for _ in range(k):
                        y[:] += np.float32(A) * x
                    done[0] += k
                return sample, lambda: _saxpy_check(x, done)(y)

            entries = {"ours": ("ours", ours), "oursarena": ("ours", arena),
                       "torch": ("torch", on_torch)}
            if not on_gpu:
                entries["numpy"] = ("numpy", on_numpy)
            self.race("ga_saxpy", "GBps", entries, lambda s: n * 12 / (s / k) / 1e9)

    def ga_relaunch(self) -> None:
        n, k = self.p["relaunch_n"], self.p["relaunch_k"]
        x = (np.arange(n) % 1000).astype(np.float32)
        torch = self.have.mods.get("torch")

        def ours():
            dx, dy, done = to_device(x), to_device(np.ones(n, np.float32)), [0]

            def sample():
                _ours_queued(lambda: gpu(K.saxpy, n, A, dx, dy), k)
                done[0] += k
            return sample, lambda: _saxpy_check(x, done)(dy.numpy())

        def on_torch():
            tx = torch.from_numpy(x).cuda()
            ty, done = torch.ones(n, dtype=tx.dtype, device="cuda"), [0]

            def sample():
                for _ in range(k):
                    ty.add_(tx, alpha=A)
                torch.cuda.synchronize()
                done[0] += k
            return sample, lambda: _saxpy_check(x, done)(ty.cpu().numpy())

        self.race("ga_relaunch", "us", {"ours": ("ours", ours), "torch": ("torch", on_torch)},
                  lambda s: s / k * 1e6)

    # -- vectors ----------------------------------------------------------------------------

    def vec_saxpy(self) -> None:
        import vectors as V  # noqa: PLC0415 - its kernels (decorated at import)
        n, k = self.p["vec_n"], self.p["vec_k"]
        x = (np.arange(3 * n) % 1000).astype(np.float32).reshape(n, 3)
        torch = self.have.mods.get("torch")

        def ours(vec: bool):
            def setup():
                shape = (n, 3) if vec else (3 * n,)
                dx = to_device(x.reshape(shape))
                dy, done = to_device(np.ones(shape, np.float32)), [0]
                if vec:
                    launch = lambda: gpu(V.saxpy_vec3, n, A, dx, dy)    # noqa: E731
                else:
                    launch = lambda: gpu(K.saxpy, 3 * n, A, dx, dy)     # noqa: E731

                def sample():
                    _ours_queued(launch, k)
                    done[0] += k
                return sample, lambda: _saxpy_check(x, done)(dy.numpy())
            return setup

        def on_torch():
            tx = torch.from_numpy(x).cuda()
            ty, done = torch.ones_like(tx), [0]

            def sample():
                for _ in range(k):
                    ty.add_(tx, alpha=A)
                torch.cuda.synchronize()
                done[0] += k
            return sample, lambda: _saxpy_check(x, done)(ty.cpu().numpy())

        self.race("vec_saxpy", "GBps", {"ours": ("ours", ours(True)),
                                        "oursscalar": ("ours", ours(False)),
                                        "torch": ("torch", on_torch)},
                  lambda s: n * 3 * 12 / (s / k) / 1e9)

    def vec_step(self) -> None:
        import vectors as V  # noqa: PLC0415
        from cthreads.gpu import vec3  # noqa: PLC0415
        n, k, dt = self.p["vec_n"], self.p["vec_k"], 0.01
        rng = np.random.default_rng(1)
        p0 = rng.random((n, 3)).astype(np.float32)
        v0 = rng.random((n, 3)).astype(np.float32)
        g = np.array([0.0, -9.8, 0.0], np.float32)
        torch = self.have.mods.get("torch")

        def want(steps: int):
            p, v = p0.astype(np.float64), v0.astype(np.float64)
            return p + dt * (steps * v + dt * g * steps * (steps + 1) / 2), v + steps * g * dt

        def check(p, v, steps) -> str | None:
            wp, wv = want(steps)
            for what, got, ref in (("p", p, wp), ("v", v, wv)):
                err = float(np.abs(np.asarray(got, np.float64) - ref).max())
                scale = float(np.abs(ref).max())
                if not err <= 1e-5 * scale * max(steps, 1):
                    return f"{what} is {err:.3g} from numpy float64's after {steps} steps"
            return None

        def ours(vec: bool):
            def setup():
                done = [0]
                if vec:
                    dp, dv = to_device(p0), to_device(v0)
                    launch = lambda: gpu(V.step_vec3, n, dt, vec3(*g.tolist()), dp, dv)  # noqa
                    result = lambda: (dp.numpy(), dv.numpy())                           # noqa
                else:
                    ps = [to_device(np.ascontiguousarray(p0[:, c])) for c in range(3)]
                    vs = [to_device(np.ascontiguousarray(v0[:, c])) for c in range(3)]
                    launch = lambda: gpu(V.step_xyz, n, dt, *g.tolist(), *ps, *vs)     # noqa
                    result = lambda: (np.stack([a.numpy() for a in ps], 1),             # noqa
                                      np.stack([a.numpy() for a in vs], 1))

                def sample():
                    _ours_queued(launch, k)
                    done[0] += k
                return sample, lambda: check(*result(), done[0])
            return setup

        def on_torch():
            tp, tv = torch.from_numpy(p0).cuda(), torch.from_numpy(v0).cuda()
            tg, done = torch.from_numpy(g).cuda() * dt, [0]

            def sample():
                for _ in range(k):
                    tv.add_(tg)
                    tp.add_(tv, alpha=dt)
                torch.cuda.synchronize()
                done[0] += k
            return sample, lambda: check(tp.cpu().numpy(), tv.cpu().numpy(), done[0])

        self.race("vec_step", "ms", {"ours": ("ours", ours(True)),
                                     "oursxyz": ("ours", ours(False)),
                                     "torch": ("torch", on_torch)},
                  lambda s: s / k * 1e3)

    # -- 100 tiny launches: queued, captured -------------------------------------------------

    def _tiny_inputs(self):
        n = 64
        return n, (np.arange(n) % 1000).astype(np.float32)

    def _torch_eager(self, x, launches: int):
        torch = self.have.mods["torch"]
        tx = torch.from_numpy(x).cuda()
        ty, done = torch.ones(x.size, dtype=torch.float32, device="cuda"), [0]

        def sample():
            for _ in range(launches):
                ty.add_(tx, alpha=A)
            torch.cuda.synchronize()
            done[0] += launches
        return sample, lambda: _saxpy_check(x, done)(ty.cpu().numpy())

    def tinyq(self) -> None:
        n, x = self._tiny_inputs()
        launches = self.p["tiny_batch"]

        def ours():
            dx, dy, done = to_device(x), to_device(np.ones(n, np.float32)), [0]

            def sample():
                _ours_queued(lambda: gpu(K.saxpy, n, A, dx, dy), launches)
                done[0] += launches
            return sample, lambda: _saxpy_check(x, done)(dy.numpy())

        self.race("tinyq", "us", {"ours": ("ours", ours),
                                  "torch": ("torch", lambda: self._torch_eager(x, launches))},
                  lambda s: s * 1e6)

    def capture(self) -> None:
        n, x = self._tiny_inputs()
        launches = self.p["tiny_batch"]
        try:
            from cthreads.gpu import capture  # noqa: PLC0415 - v3.md section 5
        except Exception as exc:
            capture = None
            self.unsupported["capture_ours_us"] = (
                f"not available: from cthreads.gpu import capture failed ({P._short(exc)})")
        torch = self.have.mods.get("torch")

        def ours():
            dx, dy, done = to_device(x), to_device(np.ones(n, np.float32)), [0]
            with capture() as graph:
                for _ in range(launches):
                    gpu(K.saxpy, n, A, dx, dy)

            def sample():
                graph.replay().join()
                done[0] += launches
            return sample, lambda: _saxpy_check(x, done)(dy.numpy())

        def loop():
            dx, dy, done = to_device(x), to_device(np.ones(n, np.float32)), [0]

            def sample():
                _ours_queued(lambda: gpu(K.saxpy, n, A, dx, dy), launches)
                done[0] += launches
            return sample, lambda: _saxpy_check(x, done)(dy.numpy())

        def on_graph():
            tx = torch.from_numpy(x).cuda()
            ty, done = torch.ones(n, dtype=torch.float32, device="cuda"), [0]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):            # warm-up off the default stream
                for _ in range(3):
                    ty.add_(tx, alpha=A)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            done[0] += 3
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(launches):
                    ty.add_(tx, alpha=A)

            def sample():
                graph.replay()
                torch.cuda.synchronize()
                done[0] += launches
            return sample, lambda: _saxpy_check(x, done)(ty.cpu().numpy())

        entries = {"oursloop": ("ours", loop),
                   "torch": ("torch", lambda: self._torch_eager(x, launches)),
                   "torchgraph": ("torch", on_graph)}
        if capture is not None:
            entries = {"ours": ("ours", ours), **entries}
        self.race("capture", "us", entries, lambda s: s * 1e6)


V3_CASES = ("ga_saxpy", "ga_relaunch", "vec_saxpy", "vec_step", "tinyq", "capture")
