"""The benchmark's workloads, written once against the public ``cthreads.gpu`` API.

The same file runs under our cthreads and under the original (PyPI ``cthreads-gpu`` 0.2.1, in its
own virtual environment): it imports nothing but ``from cthreads.gpu import gpu, GpuArena``,
numpy, ``reference`` (inputs and checks) and the kernels: ours from ``examples.samples``, the
original's from ``kernels_original.py`` (the same source: it has no samples module). Each
workload is a function taking a dict of parameters and returning ``{"error": None | str,
"metrics": {...}, "unsupported": {...}}``; ``worker.py`` runs them and prints JSON. A wrong
result is an error, never a time.

Kernel parameter names avoid GLSL reserved words (``out``, ``in``, ...): the original translates
to GLSL and rejects them.
"""

from __future__ import annotations

import importlib.util

from cthreads.gpu import GpuArena, gpu

from reference import (
    A, MANDEL_H, MANDEL_ITER, MANDEL_W, W7_DT, W7_STEPS, check_mandelbrot, check_saxpy,
    check_w7, gbps, saxpy_arrays, saxpy_lists, w7_inputs,
)
from timing import timed


if importlib.util.find_spec("examples.samples") is not None:
    # ours: the very kernels the demo and the tests run
    from examples.samples import mandelbrot, saxpy
else:
    # the original (PyPI cthreads-gpu) has no samples module: the same source, copied
    from kernels_original import mandelbrot, saxpy


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    for code in ("\x1b[91m", "\x1b[0m", "[91m", "[0m"):
        text = text.replace(code, "")
    return f"{type(exc).__name__}: {text[:200]}"


def _queued(n: int, x, y, launches: int) -> tuple[int, str | None]:
    """``launches`` saxpy launches with no join in between, then every job joined.

    Returns (launches made, None) or, where the implementation refuses a launch while an
    earlier one on the same resident lists is in flight, (launches made, the error).
    """
    jobs = []
    err = None
    try:
        for _ in range(launches):
            jobs.append(gpu(saxpy, n, A, x, y))
    except Exception as exc:  # the original: "GpuState buffer already in use"
        err = _short(exc)
    for job in jobs:
        job.join(download=False)
    return len(jobs), err


# -- W1 tiny launch ------------------------------------------------------------------------------

def w1(p: dict) -> dict:
    n, launches = p["n"], p["launches"]
    x, y = saxpy_lists(n)
    metrics, unsupported = {}, {}
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        for _ in range(p["warmup"]):
            gpu(saxpy, n, A, x, y).join(download=False)
        done = p["warmup"]

        def each():
            for _ in range(launches):
                gpu(saxpy, n, A, x, y).join(download=False)

        metrics["each_us"] = timed(each) / launches * 1e6
        done += launches
        arena.sync("y")
        err = check_saxpy(y, n, done)
        if err:
            return {"error": f"join each: {err}"}

        made = [0, None]

        def once():
            made[:] = _queued(n, x, y, launches)

        t = timed(once)
        done += made[0]
        if made[1] is None:
            metrics["once_us"] = t / launches * 1e6
        else:
            unsupported["once_us"] = made[1]
        arena.sync("y")
        err = check_saxpy(y, n, done)
        if err:
            return {"error": f"joined once: {err}"}
    return {"error": None, "metrics": metrics, "unsupported": unsupported}


# -- W2 list round trip --------------------------------------------------------------------------

def w2(p: dict) -> dict:
    metrics = {}
    for label, n, calls in p["sizes"]:
        x, y = saxpy_lists(n)
        gpu(saxpy, n, A, x, y).join()            # warm-up

        def loop():
            for _ in range(calls):
                gpu(saxpy, n, A, x, y).join()

        metrics[f"{label}_ms"] = timed(loop) / calls * 1e3
        err = check_saxpy(y, n, calls + 1)
        if err:
            return {"error": f"n={n}: {err}"}
    unsupported = {}
    n, calls = p["sizes"][0][1], p["sizes"][0][2]
    xa, ya = saxpy_arrays(n)                     # numpy float32 arrays, written in place
    try:
        gpu(saxpy, n, A, xa, ya).join()

        def loop_arrays():
            for _ in range(calls):
                gpu(saxpy, n, A, xa, ya).join()

        t = timed(loop_arrays)
        err = check_saxpy(ya, n, calls + 1)
        if err and _has_array_support():
            return {"error": f"numpy arrays: {err}"}
        if err:                   # the original accepts arrays but never writes them back
            unsupported["np1M_ms"] = f"numpy arrays are not written back ({err[:80]})"
        else:
            metrics["np1M_ms"] = t / calls * 1e3
    except Exception as exc:
        unsupported["np1M_ms"] = _short(exc)
    return {"error": None, "metrics": metrics, "unsupported": unsupported}


# -- W3 resident loop (and W5, W5big) -----------------------------------------------------------

def _resident(p: dict, queued: bool, each: bool) -> dict:
    """Bind x and y, one warm-up launch, then the timed loop(s), then one sync of y.

    A tiny launch first brings up the device and the kernel, as raw wgpu creates its device and
    pipeline before its timed upload (in a fresh process, bind would otherwise include them).
    """
    n, launches = p["n"], p["launches"]
    x, y = saxpy_lists(n)
    metrics, unsupported = {}, {}
    gpu(saxpy, 4, A, [0.0] * 4, [0.0] * 4).join()
    with GpuArena() as arena:
        metrics["bind_s"] = timed(lambda: arena.bind(x=x, y=y))
        gpu(saxpy, n, A, x, y).join(download=False)
        done = 1
        if queued:
            # the GPU's clocks ramp up under load: a first timed loop right after a fresh
            # process's start measured 1.7 TB/s where the next ones gave 3.9 (H200)
            warm = _queued(n, x, y, p.get("warmup", 10))
            done += warm[0]
            made = [0, None]

            def loop_queued():
                made[:] = _queued(n, x, y, launches)

            t = timed(loop_queued)
            done += made[0]
            if made[1] is None:
                metrics["ms"] = t / launches * 1e3
                metrics["GBps"] = gbps(n, t / launches)
            else:
                unsupported["ms"] = unsupported["GBps"] = made[1]
        if each:
            def loop_each():
                for _ in range(launches):
                    gpu(saxpy, n, A, x, y).join(download=False)

            t = timed(loop_each)
            done += launches
            metrics["each_ms"] = t / launches * 1e3
            metrics["each_GBps"] = gbps(n, t / launches)
        metrics["sync_s"] = timed(lambda: arena.sync("y"))
    err = check_saxpy(y, n, done)
    return {"error": err, "metrics": metrics, "unsupported": unsupported}


def _has_array_support() -> bool:
    """cthreads documents numpy arrays wherever a list goes; the original does not."""
    import cthreads.gpu as g  # noqa: PLC0415
    return hasattr(g, "GpuKernel")


def _unchecked():
    """The checks-off kernels, or the reason this implementation has none."""
    try:
        import kernels_unchecked  # noqa: PLC0415 - cthreads only (boundscheck=False)
        return kernels_unchecked, None
    except Exception as exc:
        return None, _short(exc)


def w3(p: dict) -> dict:
    """W3: 200 launches with no join in between, one sync; W3 each: join(download=False) each;
    and the same 'each' loop with bounds checks off, where the implementation has the option."""
    r = _resident(p, queued=True, each=True)
    for k in ("bind_s", "sync_s"):
        r.get("metrics", {}).pop(k, None)
    if r.get("error"):
        return r
    mod, why = _unchecked()
    if mod is None:
        r.setdefault("unsupported", {})["nb_each_GBps"] = why
        return r
    n, launches = p["n"], p["launches"]
    x, y = saxpy_lists(n)
    best = {"on": [], "off": []}
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        kernels = {"on": saxpy, "off": mod.saxpy_unchecked}
        for k in kernels.values():
            gpu(k, n, A, x, y).join(download=False)
        for _ in range(3):                      # alternate, so drift hits both alike
            for key, k in kernels.items():
                def loop_each(k=k):
                    for _ in range(launches):
                        gpu(k, n, A, x, y).join(download=False)
                best[key].append(timed(loop_each))
        arena.sync("y")
    err = check_saxpy(y, n, 2 + 6 * launches)
    if err:
        return {"error": f"checks on/off: {err}"}
    r["metrics"]["on_each_GBps"] = gbps(n, min(best["on"]) / launches)
    r["metrics"]["nb_each_GBps"] = gbps(n, min(best["off"]) / launches)
    return r


def w5(p: dict) -> dict:
    """W5: bind, launches joined each (tens of ms each), sync; GB/s of the launch loop."""
    r = _resident(p, queued=False, each=True)
    m = r.get("metrics", {})
    if "each_GBps" in m:
        m["GBps"] = m.pop("each_GBps")
        m.pop("each_ms")
    return r


def w5big(p: dict) -> dict:
    """W5 at n >= 64M on a real GPU: queued launches, one join (the bandwidth figure)."""
    r = _resident(p, queued=True, each=False)
    r.get("metrics", {}).pop("ms", None)
    return r


# -- W6 Mandelbrot -------------------------------------------------------------------------------

def w6(p: dict) -> dict:
    n = MANDEL_W * MANDEL_H
    counts = [0] * n
    launches = p["launches"]
    with GpuArena() as arena:
        arena.bind(counts=counts)
        gpu(mandelbrot, n, MANDEL_W, MANDEL_H, MANDEL_ITER, counts).join(download=False)

        def loop():
            for _ in range(launches):
                gpu(mandelbrot, n, MANDEL_W, MANDEL_H, MANDEL_ITER, counts).join(download=False)

        t = timed(loop)
        arena.sync()
    err = check_mandelbrot(counts)
    metrics, unsupported = {"ms": t / launches * 1e3}, {}
    mod, why = _unchecked()
    if err or mod is None:
        if why:
            unsupported["nb_ms"] = why
        return {"error": err, "metrics": metrics, "unsupported": unsupported}
    best = {"on": [], "off": []}
    kernels = {"on": mandelbrot, "off": mod.mandelbrot_unchecked}
    counts = [0] * n
    with GpuArena() as arena:
        arena.bind(counts=counts)
        for k in kernels.values():
            gpu(k, n, MANDEL_W, MANDEL_H, MANDEL_ITER, counts).join(download=False)
        for _ in range(3):                      # alternate, so drift hits both alike
            for key, k in kernels.items():
                def loop(k=k):
                    for _ in range(launches):
                        gpu(k, n, MANDEL_W, MANDEL_H, MANDEL_ITER, counts).join(download=False)
                best[key].append(timed(loop))
        arena.sync()
    metrics["on_ms"] = min(best["on"]) / launches * 1e3
    metrics["nb_ms"] = min(best["off"]) / launches * 1e3
    return {"error": check_mandelbrot(counts), "metrics": metrics, "unsupported": unsupported}


# -- W7 compile ----------------------------------------------------------------------------------

def w7_first_launch(n: int) -> dict:
    """Other launches first; then define a new kernel (import) and time its first launch."""
    w1({"n": 64, "launches": 20, "warmup": 5})
    pos, vel = w7_inputs(n)
    res = [0.0] * n
    holder = {}

    def first():
        import kernels_w7  # noqa: PLC0415 - defined only now, after other launches
        holder["k"] = kernels_w7.w7_step
        gpu(kernels_w7.w7_step, n, W7_STEPS, W7_DT, pos, vel, res).join()

    try:
        t = timed(first)
    except Exception as exc:  # the original cannot launch a kernel defined after a launch
        return {"error": None, "metrics": {}, "unsupported": {"ms": _short(exc)}}
    err = check_w7(res, pos, vel)
    again = timed(lambda: gpu(holder["k"], n, W7_STEPS, W7_DT, pos, vel, res).join())
    return {"error": err, "metrics": {"ms": t * 1e3, "steady_ms": again * 1e3}}


def red(p: dict) -> dict:
    """RED: reductions with ``func.reduce`` (``reduction.py``; cthreads of this repository only,
    imported on first use)."""
    from reduction import red as run

    return run(p)


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W5": w5, "W5big": w5big, "W6": w6, "RED": red}
