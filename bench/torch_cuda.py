"""torch on CUDA: the device's bandwidth as torch measures it, for W5big's target (H200)."""

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


WORKLOADS = {"W5big": w5big}
