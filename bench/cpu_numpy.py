"""numpy on the CPU: the same computations on arrays (and from lists where the workload is lists)."""

from __future__ import annotations

import numpy as np

from reference import (
    A, check_mandelbrot, check_mandelbrot_sized, check_saxpy, check_stencil, check_sum, gbps,
    mandelbrot_numpy, saxpy_arrays, saxpy_lists, stencil_input, stencil_numpy, sum_input,
)
from timing import median_ms, timed


def w1(p: dict) -> dict:
    n, launches = p["n"], p["launches"]
    x, y = saxpy_arrays(n)
    a = np.float32(A)

    def loop():
        for _ in range(launches):
            y[:] = a * x + y

    t = timed(loop)
    return {"error": check_saxpy(y, n, launches), "metrics": {"each_us": t / launches * 1e6}}


def w2(p: dict) -> dict:
    metrics = {}
    a = np.float32(A)
    for label, n, calls in p["sizes"]:
        x, y = saxpy_lists(n)

        def loop():
            for _ in range(calls):
                y[:] = (a * np.array(x, np.float32) + np.array(y, np.float32)).tolist()

        metrics[f"{label}_ms"] = timed(loop) / calls * 1e3
        err = check_saxpy(y, n, calls)
        if err:
            return {"error": err}
    return {"error": None, "metrics": metrics}


def _resident(p: dict) -> dict:
    n, launches = p["n"], p["launches"]
    x, y = saxpy_arrays(n)
    a = np.float32(A)
    tmp = np.empty_like(x)

    def loop():
        for _ in range(launches):
            np.multiply(x, a, out=tmp)
            np.add(tmp, y, out=y)

    t = timed(loop) / launches
    return {"error": check_saxpy(y, n, launches), "metrics": {"ms": t * 1e3, "GBps": gbps(n, t)}}


def w3(p: dict) -> dict:
    return _resident(p)


def w5(p: dict) -> dict:
    r = _resident(p)
    r.get("metrics", {}).pop("ms", None)
    return r


def w6(p: dict) -> dict:
    holder = {}
    t = timed(lambda: holder.setdefault("k", mandelbrot_numpy()))
    return {"error": check_mandelbrot(holder["k"]), "metrics": {"ms": t * 1e3}}


def cpu(p: dict) -> dict:
    """The CPU table's four kernels with numpy (one thread), on arrays already in memory."""
    reps, n, width = p["reps"], p["n"], p["grid"]
    m = {}
    x, y = saxpy_arrays(n)
    a = np.float32(A)
    tmp = np.empty_like(x)

    def saxpy():
        np.multiply(x, a, out=tmp)
        np.add(tmp, y, out=y)

    m["saxpy_ms"] = median_ms(saxpy, reps)
    err = check_saxpy(y, n, reps)
    u = stencil_input(width)
    v = np.empty_like(u)
    m["stencil_ms"] = median_ms(lambda: stencil_numpy(u, width, out=v), reps)
    err = err or check_stencil(v, u, width)
    xs = sum_input(n)
    got = []
    m["sum_ms"] = median_ms(lambda: got.append(float(np.sum(xs))), reps)
    err = err or check_sum(got[-1], xs)
    mw, mh, it = p["mandel"]
    holder = {}
    m["mandel_ms"] = median_ms(lambda: holder.update(k=mandelbrot_numpy(mw, mh, it)),
                                max(1, reps // 3))
    err = err or check_mandelbrot_sized(holder["k"], mw, mh, it)
    return {"error": err, "metrics": m}


def red(p: dict) -> dict:
    """RED (``reduction.py``): ``x.sum()`` and ``x.max()``; the host's arrays are where numpy
    reads them, so the resident and from-numpy figures are the same calls."""
    m: dict = {}
    for label, n in p["sizes"]:
        x = sum_input(n)
        got = []
        for name, fn in (("sum", x.sum), ("max", x.max)):
            fn()
            ms = median_ms(lambda fn=fn: got.append(float(fn())), p["reps"])
            m[f"{name}_res_{label}_GBps"] = m[f"{name}_np_{label}_GBps"] = 4 * n / ms / 1e6
        err = check_sum(got[0], x)
        if err:
            return {"error": f"numpy sum n={n}: {err}", "metrics": m}
    return {"error": None, "metrics": m}


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W5": w5, "W6": w6, "CPU": cpu, "RED": red}
