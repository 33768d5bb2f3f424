"""Issue 27's compute-bound set: each kernel as an ordinary cthreads kernel (the default,
bounds-checked), the same with ``@Gpu(boundscheck=False)``, hand-written WGSL on wgpu-py
(``raw_wgpu.Raw``, a second device in this process) and CUDA C for CuPy's ``RawKernel`` (where
CuPy imports and sees a GPU), in one process on the same data.

    python bench/compute_bound.py [--small] [--only matmul_flat,nbody] [--reps R] [--k K]
                                  [--out FILE]

Kernels (``compute_kernels.py``; the same arithmetic in every form): naive matmul n x n float32
(flat ``a[r * n + k]`` and 2-D ``a[r, k]``, both a 2-D launch), a 1-D convolution of m taps, a
2-D convolution with an m x m filter, N-body all-pairs accelerations over x/y/z arrays, a 9-point
stencil with two loops over the neighbourhood, Mandelbrot with a 2-D launch.

Timing: per form, ``k`` launches queued on resident arrays (ours: ``GpuArray``s, ``gpu()`` k
times and a ``join()`` of the last job, which waits for all of them: the queue runs in order;
raw WGSL: k submits then wgpu-native's blocking poll; CuPy: k launches then
``Device().synchronize()``), after one untimed warm-up sample; the figure is the best of
``reps`` samples (ms per launch), the forms alternating (the order rotates each sample).
The hand WGSL's shader modules are made as cthreads makes its own on the device (GPUs: wgpu-native's
trusted creation, naga's bounds checks kept, its loop counter dropped; CPU drivers: wgpu-py's
``create_shader_module``; ``--wgsl-module`` picks). Every form's result is then checked against numpy (float64 with an error bound; Mandelbrot:
99 % of the checked pixels equal to numpy's float32 iteration), a wrong one is ``FAIL``,
never a time. Printed per kernel: the times, checked / unchecked (what the checks cost), and
the target: the checked kernel's speed >= 0.9x CUDA's (a GPU with CuPy) or >= 0.9x the hand
WGSL's (no CuPy, e.g. lavapipe), pass / miss.

Sizes: the default with a GPU (matmul 2048, ...); ``--small`` (the default on a CPU driver):
sizes that take seconds on lavapipe.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402

import compute_kernels as CK  # noqa: E402
from cthreads.gpu import device_name, gpu, to_device  # noqa: E402

TARGET = 0.9
MANDEL_AGREE = 0.99
ORDER = ("matmul_flat", "matmul_2d", "conv1d", "conv2d", "nbody", "stencil9", "mandel")

#: per kernel: its sizes (small, default) and launches per sample (small, default)
SIZES = {
    "matmul_flat": ({"n": 384}, {"n": 2048}),
    "matmul_2d": ({"n": 384}, {"n": 2048}),
    "conv1d": ({"n": 1 << 20, "m": 31}, {"n": 1 << 23, "m": 63}),
    "conv2d": ({"w": 1024, "h": 1024, "m": 5}, {"w": 4096, "h": 4096, "m": 5}),
    "nbody": ({"n": 4096}, {"n": 32768}),
    "stencil9": ({"w": 1024, "h": 1024}, {"w": 4096, "h": 4096}),
    "mandel": ({"w": 512, "h": 512, "it": 256}, {"w": 4096, "h": 4096, "it": 256}),
}
#: (GPU: enough launches that a sample is milliseconds of device work, the sustained rate)
LAUNCHES = {"matmul_flat": (3, 10), "matmul_2d": (3, 10), "conv1d": (4, 50),
            "conv2d": (4, 50), "nbody": (3, 5), "stencil9": (8, 200), "mandel": (8, 50)}


def log(msg: str) -> None:
    print(f"compute_bound: {msg}", file=sys.stderr, flush=True)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


# -- the problems ----------------------------------------------------------------------------

class Problem:
    """One kernel's inputs: ``args`` (the kernel's parameters in order, numpy arrays for the
    lists, Python numbers for the scalars), ``out`` (names of the outputs), ``threads`` (the
    launch), ``check(name -> array)`` (None or what is wrong), ``label`` and ``work``."""

    def __init__(self, name: str, size: dict):
        self.name, self.size = name, size
        rng = np.random.default_rng(27)
        f32 = np.float32
        make = getattr(self, f"_{name.split('_')[0]}")
        make(rng, f32, **size)

    # matmul (both forms: the same data; the 2-D form takes (n, n) arrays)
    def _matmul(self, rng, f32, n):
        a = rng.standard_normal((n, n)).astype(f32)
        b = rng.standard_normal((n, n)).astype(f32)
        flat = self.name == "matmul_flat"
        shape = (n * n,) if flat else (n, n)
        self.args = [("n", n), ("a", a.reshape(shape)), ("b", b.reshape(shape)),
                     ("c", np.zeros(shape, f32))]
        self.out, self.threads = ["c"], (n, n)
        self.label, self.work = f"{n}^2 f32", (2 * n ** 3, "GFLOP/s")
        want = a.astype(np.float64) @ b.astype(np.float64)
        bound = 2 * n * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b)) + 1e-30
        self.check = lambda got: _within(got["c"].reshape(n, n), want, bound)

    def _conv1d(self, rng, f32, n, m):
        x = rng.standard_normal(n + m - 1).astype(f32)
        f = rng.standard_normal(m).astype(f32)
        self.args = [("n", n), ("m", m), ("x", x), ("f", f), ("out", np.zeros(n, f32))]
        self.out, self.threads = ["out"], n
        self.label, self.work = f"n={n:,} m={m}", (2 * n * m, "GFLOP/s")
        x64, f64 = x.astype(np.float64), f.astype(np.float64)
        want = np.correlate(x64, f64, "valid")
        bound = 2 * m * 2.0 ** -24 * np.correlate(np.abs(x64), np.abs(f64), "valid") + 1e-30
        self.check = lambda got: _within(got["out"], want, bound)

    def _conv2d(self, rng, f32, w, h, m):
        img = rng.standard_normal((h + m - 1, w + m - 1)).astype(f32)
        f = rng.standard_normal((m, m)).astype(f32)
        self.args = [("w", w), ("h", h), ("m", m), ("img", img), ("f", f),
                     ("out", np.zeros((h, w), f32))]
        self.out, self.threads = ["out"], (w, h)
        self.label, self.work = f"{w}x{h} {m}x{m}", (2 * w * h * m * m, "GFLOP/s")
        want, mag = np.zeros((h, w)), np.zeros((h, w))
        for dy in range(m):
            for dx in range(m):
                win = img[dy:dy + h, dx:dx + w].astype(np.float64)
                want += win * float(f[dy, dx])
                mag += np.abs(win) * abs(float(f[dy, dx]))
        bound = 2 * m * m * 2.0 ** -24 * mag + 1e-30
        self.check = lambda got: _within(got["out"], want, bound)

    def _nbody(self, rng, f32, n):
        pos = rng.standard_normal((n, 3)).astype(f32)
        mass = (rng.uniform(0.5, 1.5, n) / n).astype(f32)
        x, y, z = (np.ascontiguousarray(pos[:, c]) for c in range(3))
        self.args = [("n", n), ("soft2", CK.SOFT2), ("x", x), ("y", y), ("z", z), ("m", mass),
                     ("ax", np.zeros(n, f32)), ("ay", np.zeros(n, f32)),
                     ("az", np.zeros(n, f32))]
        self.out, self.threads = ["ax", "ay", "az"], n
        self.label, self.work = f"{n:,} bodies", (20 * n * n, "GFLOP/s (20/pair)")
        rows = np.unique(np.concatenate([[0, n - 1], rng.choice(n, min(n, 256), replace=False)]))
        p64 = pos.astype(np.float64)
        d = p64[None, :, :] - p64[rows, None, :]
        r2 = (d * d).sum(axis=2) + np.float32(CK.SOFT2)
        want = (d * (mass.astype(np.float64)[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(1)
        scale = float(np.abs(want).max())

        def check(got):
            acc = np.stack([got["ax"], got["ay"], got["az"]], axis=1)[rows].astype(np.float64)
            err = float(np.abs(acc - want).max())
            return None if err <= 1e-4 * scale else \
                f"accelerations {err:.3g} from numpy float64's (largest {scale:.3g})"
        self.check = check

    def _stencil9(self, rng, f32, w, h):
        u = rng.random((h, w), dtype=f32)
        self.args = [("w", w), ("h", h), ("u", u), ("v", np.zeros((h, w), f32))]
        self.out, self.threads = ["v"], (w, h)
        self.label, self.work = f"{w}x{h}", (8 * w * h, "GB/s at 8 B/point")
        want = u.astype(np.float64)
        acc = np.zeros((h - 2, w - 2))
        for dy in range(3):
            for dx in range(3):
                acc += want[dy:dy + h - 2, dx:dx + w - 2]
        want[1:-1, 1:-1] = acc / 9.0
        self.check = lambda got: _within(got["v"], want, np.full(want.shape, 2e-6))

    def _mandel(self, rng, f32, w, h, it):
        from examples.samples import mandelbrot_numpy  # noqa: PLC0415
        self.args = [("width", w), ("height", h), ("max_iter", it),
                     ("counts", np.zeros((h, w), np.int32))]
        self.out, self.threads = ["counts"], (w, h)
        self.label, self.work = f"{w}x{h} {it} it", None
        rows = np.arange(h) if h <= 1024 else np.arange(0, h, 16)
        want = mandelbrot_numpy(w, h, it, rows=rows)

        def check(got):
            agree = float(np.mean(np.asarray(got["counts"]).reshape(h, w)[rows] == want))
            return None if agree >= MANDEL_AGREE else \
                f"only {agree:.2%} of the checked pixels equal numpy's float32 iteration"
        self.check = check

    def lists(self) -> list:
        return [(k, v) for k, v in self.args if isinstance(v, np.ndarray)]

    def scalars(self) -> list:
        return [(k, v) for k, v in self.args if not isinstance(v, np.ndarray)]


def _within(got, want, bound) -> str | None:
    err = np.abs(np.asarray(got, np.float64) - want)
    bad = ~(err <= bound)
    if bad.any():
        at = np.unravel_index(int(np.argmax(np.where(bad, err / bound, 0))), want.shape)
        return (f"{int(bad.sum())} values past the bound; at {list(at)}: {got[at]!r}, numpy "
                f"float64 says {want[at]!r} (bound {bound[at]:.3g})")
    return None


# -- the forms -------------------------------------------------------------------------------

def ours_form(prob: Problem, kernel, k: int):
    """(sample, result): ``sample()`` queues k launches on GpuArrays and joins the last."""
    dev = [(name, to_device(v)) if isinstance(v, np.ndarray) else (name, v)
           for name, v in prob.args]
    args = [v for _, v in dev]
    threads = prob.threads
    held: list = []

    def sample():
        jobs = [gpu(kernel, *args, threads=threads) for _ in range(k)]
        jobs[-1].join()
        held[:] = jobs                 # the others are joined after the clock stops

    def result():
        for job in held:
            job.join()
        return {name: v.numpy() for name, v in dev if name in prob.out}
    return sample, result


class RawForms:
    """The hand-written WGSL forms on one ``raw_wgpu.Raw`` device."""

    def __init__(self, module: str = "auto"):
        """``module``: how shader modules are made: ``public`` (wgpu-py's
        ``create_shader_module``: naga's bounds checks and its loop counter), ``trusted``
        (wgpu-native's trusted creation, as cthreads makes them on GPUs: naga's bounds checks,
        no loop counter), ``auto``: as cthreads does on this device (trusted on GPUs)."""
        from raw_wgpu import Raw  # noqa: PLC0415
        self.raw = Raw()
        self.cpu = self.raw.info["adapter_type"].endswith("CPU")
        self.trusted = module == "trusted" or (module == "auto" and not self.cpu)
        self.module = "trusted (no naga loop counter)" if self.trusted else "public"
        self._pipes: dict = {}

    def pipeline(self, text: str):
        if not self.trusted:
            return self.raw.pipeline(text)
        if text not in self._pipes:
            from cthreads.backend.pipeline import _shader_module  # noqa: PLC0415
            module = _shader_module(self.raw.device, text, "main")
            self._pipes[text] = self.raw.device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": "main"})
        return self._pipes[text]

    def form(self, prob: Problem, k: int):
        raw = self.raw
        two_d = isinstance(prob.threads, tuple)
        wg = ((64, 1) if self.cpu else (16, 16)) if two_d else ((64, 1) if self.cpu else (256, 1))
        pipe = self.pipeline(CK.wgsl(prob.name, wg))
        words = []
        for _, v in prob.scalars():
            words.append(np.array([v], np.float32 if isinstance(v, float) else
                                  (np.int32 if prob.name == "mandel" else np.uint32)).view(np.uint32))
        params = np.concatenate(words + [np.zeros(4, np.uint32)])[:max(4, len(words))]
        bufs = {}
        for name, v in prob.lists():
            bufs[name] = raw.storage(v.nbytes)
            raw.upload(bufs[name], np.ascontiguousarray(v))
        bg = raw.bind_group(pipe, [raw.uniform(params.tobytes())] + list(bufs.values()))
        w, h = prob.threads if two_d else (prob.threads, 1)
        gx, gy = -(-w // wg[0]), -(-h // wg[1])
        if gx > raw.max_groups or gy > raw.max_groups:
            raise ValueError(f"{gx} x {gy} workgroups: past the device's limit per dimension")

        def sample():
            for _ in range(k):
                raw.dispatch(pipe, bg, gx, gy)
            raw.wait()

        def result():
            out = {}
            for name, v in prob.lists():
                if name in prob.out:
                    stage = raw.staging(v.nbytes)
                    out[name] = raw.read(bufs[name], stage, v.nbytes, v.dtype).reshape(v.shape)
            return out
        return sample, result


def cupy_form(cp, module, prob: Problem, k: int):
    fn = module.get_function(CK.CUDA_NAME[prob.name])
    dev = []
    for name, v in prob.args:
        if isinstance(v, np.ndarray):
            dev.append((name, cp.asarray(v)))
        else:
            dev.append((name, np.float32(v) if isinstance(v, float) else np.int32(v)))
    args = tuple(v for _, v in dev)
    if isinstance(prob.threads, tuple):
        w, h = prob.threads
        grid, block = (-(-w // 16), -(-h // 16)), (16, 16)
    else:
        grid, block = (-(-prob.threads // 256),), (256,)
    sync = cp.cuda.Device().synchronize

    def sample():
        for _ in range(k):
            fn(grid, block, args)
        sync()

    def result():
        return {name: cp.asnumpy(v) for name, v in dev if name in prob.out}
    return sample, result


def _cupy():
    try:
        import cupy as cp  # noqa: PLC0415
        cp.cuda.Device(0).compute_capability
        return cp, None
    except Exception as exc:
        return None, f"cupy not usable ({_short(exc)})"


# -- the run ---------------------------------------------------------------------------------

def measure(prob: Problem, forms: dict, reps: int) -> dict:
    """Best seconds per sample of each form (name -> (sample, result)), alternating, after
    one warm-up sample each; then every result checked. Returns name -> seconds or 'FAIL: ...'."""
    out, live = {}, {}
    for name, make in forms.items():
        try:
            sample, result = make()
            sample()
            live[name] = (sample, result)
        except Exception as exc:
            out[name] = f"FAIL: set-up: {_short(exc)}"
            traceback.print_exc(file=sys.stderr)
    best = {name: float("inf") for name in live}
    names = list(live)
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)] if names else []:
            if name not in live:
                continue
            try:
                t0 = time.perf_counter()
                live[name][0]()
                best[name] = min(best[name], time.perf_counter() - t0)
            except Exception as exc:
                out[name] = f"FAIL: sample {r}: {_short(exc)}"
                del live[name]
    for name, (_, result) in live.items():
        try:
            err = prob.check(result())
        except Exception as exc:
            err = f"check raised {_short(exc)}"
        out[name] = f"FAIL: {err}" if err else best[name]
    return out


def run_set(names=ORDER, small: bool = False, reps: int = 5, k: int | None = None,
            want_raw: bool = True, want_cuda: bool = True, wgsl_module: str = "auto",
            info: dict | None = None) -> list:
    """Runs the set; a list of rows: {"kernel", "label", "work", "ms": {form: ms or 'FAIL'},
    "why": {form: reason it did not run}}. ``wgsl_module``: ``RawForms``'; ``info`` (a dict)
    receives how the WGSL modules were made."""
    cp, cp_why = _cupy() if want_cuda else (None, "not asked")
    module = cp.RawModule(code=CK.CUDA_SOURCE) if cp is not None else None
    raw, raw_why = None, None
    if want_raw:
        try:
            raw = RawForms(wgsl_module)
            if info is not None:
                info["wgsl_module"] = raw.module
        except Exception as exc:
            raw_why = f"raw wgpu-py device: {_short(exc)}"
    else:
        raw_why = "not asked"
    rows = []
    for name in names:
        t0 = time.perf_counter()
        size = SIZES[name][0 if small else 1]
        kk = k or LAUNCHES[name][0 if small else 1]
        row = {"kernel": name, "size": size, "k": kk, "ms": {}, "why": {}}
        try:
            prob = Problem(name, size)
        except Exception as exc:
            row["why"]["all"] = f"FAIL: inputs: {_short(exc)}"
            rows.append(row)
            continue
        row["label"], row["work"] = prob.label, prob.work
        forms = {"checked": lambda: ours_form(prob, CK.CHECKED[name], kk),
                 "unchecked": lambda: ours_form(prob, CK.UNCHECKED[name], kk)}
        if raw is not None:
            forms["wgsl"] = lambda: raw.form(prob, kk)
        else:
            row["why"]["wgsl"] = raw_why
        if module is not None:
            forms["cuda"] = lambda: cupy_form(cp, module, prob, kk)
        else:
            row["why"]["cuda"] = cp_why
        for form, got in measure(prob, forms, reps).items():
            row["ms"][form] = got * 1e3 / kk if isinstance(got, float) else got
        rows.append(row)
        log(f"{name} {prob.label}: {row['ms']} ({time.perf_counter() - t0:.1f} s)")
        del prob
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
    return rows


def _num(v) -> float | None:
    return v if isinstance(v, float) else None


def report(rows: list, device: str) -> list:
    """The printed table: times, checked/unchecked, checked vs the target's peer."""
    have_cuda = any(isinstance(r["ms"].get("cuda"), float) for r in rows)
    peer = "cuda" if have_cuda else "wgsl"
    head = ["kernel", "size", "checked ms", "unchecked ms", "WGSL ms", "CUDA ms",
            "checked/unchecked", "checked vs WGSL", "checked vs CUDA", "target"]
    table = [head]
    for r in rows:
        ms = r["ms"]

        def cell(form):
            v = ms.get(form)
            if v is None:
                return "n/a"
            return f"{v:.4g}" if isinstance(v, float) else "FAIL"
        c, u, p = _num(ms.get("checked")), _num(ms.get("unchecked")), _num(ms.get(peer))
        w, g = _num(ms.get("wgsl")), _num(ms.get("cuda"))
        cost = f"{c / u:.2f}x" if c and u else "-"
        verdict = ("pass" if p / c >= TARGET else "MISS") if c and p else "-"
        table.append([r["kernel"], r.get("label", "?"), cell("checked"), cell("unchecked"),
                      cell("wgsl"), cell("cuda"), cost, f"{w / c:.2f}x" if c and w else "-",
                      f"{g / c:.2f}x" if c and g else "-",
                      f">= {TARGET}x vs {peer.upper()} {verdict}" if verdict != "-" else "-"])
    widths = [max(len(t[k]) for t in table) for k in range(len(head))]
    lines = [f"device: {device}; ms per launch (best of the samples, k queued launches "
             f"each); checked/unchecked: what the checks cost (time ratio); checked vs X: X's "
             f"time / the checked kernel's (speed); the target: >= {TARGET}x {peer.upper()}'s "
             "speed"]
    for t in table[:1] + [["-" * w for w in widths]] + table[1:]:
        lines.append("  ".join(c.ljust(widths[k]) if k < 2 else c.rjust(widths[k])
                               for k, c in enumerate(t)))
    said = set()
    for r in rows:
        for form, v in r["why"].items():           # forms that did not run: said once
            if (form, v) not in said:
                said.add((form, v))
                lines.append(f"  {form}: {v}")
        for form, v in r["ms"].items():
            if isinstance(v, str):
                lines.append(f"  {r['kernel']} {form}: {v}")
        if r.get("work") and _num(r["ms"].get("checked")):
            work, unit = r["work"]
            rates = ", ".join(f"{form} {work / (v / 1e3) / 1e9:.1f}"
                              for form, v in r["ms"].items() if isinstance(v, float))
            lines.append(f"  {r['kernel']}: {unit}: {rates}")
    return lines


def _is_cpu_driver(name: str) -> bool:
    return any(s in name.lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="lavapipe sizes (the default there)")
    ap.add_argument("--only", default=",".join(ORDER))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--k", type=int, default=None, help="launches per sample")
    ap.add_argument("--no-wgsl", action="store_true")
    ap.add_argument("--wgsl-module", choices=("auto", "public", "trusted"), default="auto",
                    help="how the hand WGSL's shader modules are made (auto: as cthreads "
                         "makes its own on this device)")
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args(argv)
    name = device_name()
    small = args.small or _is_cpu_driver(name)
    only = [w for w in args.only.split(",") if w]
    bad = [w for w in only if w not in SIZES]
    if bad:
        raise SystemExit(f"--only: unknown kernel(s) {bad}; known: {', '.join(ORDER)}")
    env = {k: v for k, v in os.environ.items() if k.startswith("CTHREADS_")}
    print(f"compute-bound set on {name} ({'small' if small else 'default'} sizes, best of "
          f"{args.reps}; CTHREADS_* settings: {env or 'none'})", flush=True)
    info: dict = {}
    rows = run_set(only, small, args.reps, args.k, want_raw=not args.no_wgsl,
                   wgsl_module=args.wgsl_module, info=info)
    lines = report(rows, name)
    if "wgsl_module" in info:
        lines.insert(1, f"  hand WGSL shader modules: {info['wgsl_module']}")
    print("\n".join(lines), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")
    return rows


if __name__ == "__main__":
    main()
