"""torch on CUDA: the device's bandwidth as torch measures it, for W5big's target (H200), and
its sums and maxima for RED's (``reduction.py``)."""

from __future__ import annotations

import time


def w5big(p: dict) -> dict:
    import torch

    if not torch.cuda.is_available():
        return {"error": None, "metrics": {}, "unsupported": {"GBps": "torch has no CUDA here"}}
    n, launches = p["n"], p["launches"]
    dev = torch.device("cuda")
    x = (torch.arange(n, device=dev, dtype=torch.int64) % 7).to(torch.float32)
    y = torch.ones(n, device=dev, dtype=torch.float32)
    metrics = {}

    def bench(fn, bytes_per_element):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        torch.cuda.synchronize()
        per = (time.perf_counter() - t0) / launches
        return n * bytes_per_element / per / 1e9

    metrics["GBps"] = bench(lambda: y.add_(x, alpha=0.5), 12)         # saxpy: read 2, write 1
    z = torch.empty_like(x)
    metrics["copy_GBps"] = bench(lambda: z.copy_(x), 8)
    want = 1.0 + (3 + launches) * 0.5 * x
    ok = bool(torch.equal(y, want))
    return {"error": None if ok else "torch saxpy result wrong", "metrics": metrics,
            "info": {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}}


def red(p: dict) -> dict:
    """RED: ``x.sum().item()`` and ``x.max().item()`` on a tensor on the GPU (a Python number
    per call, as ``func.reduce`` returns), ``x.sum()`` queued ``reps`` times then one
    synchronize (torch's throughput), and from the numpy array (copied to the GPU per call)."""
    import numpy as np
    import torch

    from reference import check_sum, sum_input
    from timing import median_ms

    if not torch.cuda.is_available():
        return {"error": None, "metrics": {},
                "unsupported": {"sum_res_64M_GBps": "torch has no CUDA here"}}
    dev = torch.device("cuda")
    reps = p["reps"]
    m: dict = {}
    for label, n in p["sizes"]:
        host = sum_input(n)
        x = torch.from_numpy(host).to(dev)
        gb = 4 * n / 1e6
        got = []
        for name in ("sum", "max"):
            fn = getattr(x, name)
            fn().item()
            m[f"{name}_res_{label}_GBps"] = gb / median_ms(
                lambda fn=fn: got.append(fn().item()), reps)
            m[f"{name}_np_{label}_GBps"] = gb / median_ms(
                lambda name=name: getattr(torch.from_numpy(host).to(dev), name)().item(),
                max(3, reps // 3))
            x.sum()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            torch.cuda.synchronize()
            m[f"{name}_queued_{label}_GBps"] = gb / ((time.perf_counter() - t0) / reps * 1e3)
        err = check_sum(got[0], host)
        if err is None and got[-1] != float(np.max(host)):
            err = f"max {got[-1]!r}, numpy says {float(np.max(host))!r}"
        if err:
            return {"error": f"torch n={n}: {err}", "metrics": m}
    return {"error": None, "metrics": m,
            "info": {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}}


WORKLOADS = {"W5big": w5big, "RED": red}
