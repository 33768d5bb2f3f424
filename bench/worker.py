"""One implementation's benchmark worker: runs workloads and prints JSON results.

    python bench/worker.py --impl ours|original|raw|numpy|torch --workload W3 [--params JSON]
    python bench/worker.py --impl ours --serve        # JSON requests on stdin, one per line

Every result is printed on its own stdout line starting with ``@@RESULT `` (libraries may print
other lines). ``ours`` and ``original`` both import ``cthreads.gpu``: which one is used depends on
the interpreter and ``sys.path`` the driver starts this file with; the worker reports the path it
imported so the driver can check it got the right one.

W4 (cold start) imports nothing of the implementation, nor numpy, before its clock starts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "@@RESULT "


def emit(obj: dict) -> None:
    sys.stdout.write(MARK + json.dumps(obj) + "\n")
    sys.stdout.flush()


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def _peak_rss_mb() -> float:
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _module(impl: str, workload: str = ""):
    if impl == "ours" and workload == "W8":
        import responsiveness          # cthreads only (asyncio, numpy arrays, examples/)
        return responsiveness
    if impl == "ours" and workload == "CPU":
        import cpu_table
        return cpu_table
    if impl == "ours" and workload == "V2":
        import v2                      # cthreads only (device functions, float64, examples/)
        return v2
    if impl == "ours" and workload == "ND":
        import nd                      # cthreads only (N-D lists and launches)
        return nd
    if impl == "ours" and workload == "PEERS":
        import peers                   # cthreads against torch, CuPy and Triton, one process
        return peers
    if impl in ("ours", "original"):
        import workloads
        return workloads
    if impl == "raw":
        import raw_wgpu
        return raw_wgpu
    if impl == "numpy":
        import cpu_numpy
        return cpu_numpy
    if impl == "torch":
        import torch_cuda
        return torch_cuda
    raise SystemExit(f"unknown implementation {impl!r}")


def describe(impl: str) -> dict:
    """What this worker runs on: package path and version, device name."""
    info: dict = {"python": sys.version.split()[0], "executable": sys.executable}
    if impl in ("ours", "original"):
        import cthreads
        from cthreads.gpu import device_name
        info["cthreads"] = os.path.dirname(cthreads.__file__)
        info["version"] = getattr(cthreads, "__version__", "?")
        info["device"] = device_name()
    elif impl == "raw":
        import wgpu

        import raw_wgpu
        info.update(raw_wgpu.device().info)
        info["wgpu"] = wgpu.__version__
    elif impl == "torch":
        import torch
        info["torch"] = torch.__version__
        info["cuda"] = bool(torch.cuda.is_available())
        if info["cuda"]:
            info["device"] = torch.cuda.get_device_name(0)
    import numpy
    info["numpy"] = numpy.__version__
    return info


def cold_start(impl: str) -> dict:
    """W4: import -> first correct result of a tiny saxpy, in this fresh process."""
    t0 = time.perf_counter()
    if impl == "raw":
        import raw_wgpu
        err = raw_wgpu.cold_start()
    else:
        from cthreads.gpu import gpu

        import kernels_cold
        n = 64
        x = [float(i % 7) for i in range(n)]
        y = [1.0] * n
        gpu(kernels_cold.saxpy, n, 0.5, x, y).join()
        want = [1.0 + 0.5 * v for v in x]
        err = None if y == want else f"wrong result: {y[:4]} vs {want[:4]}"
    t = time.perf_counter() - t0
    return {"error": err, "metrics": {"s": t}}


def run_one(impl: str, workload: str, params: dict) -> dict:
    t0 = time.perf_counter()
    try:
        if workload == "W4":
            out = cold_start(impl)
        elif workload == "W7":
            out = _module(impl).w7_first_launch(params["n"])
        else:
            mod = _module(impl, workload)
            fn = mod.WORKLOADS.get(workload)
            if fn is None:
                return {"error": None, "skipped": f"{impl} has no {workload}"}
            base = _rss_mb()
            out = fn(params)
            if params.get("rss"):
                out.setdefault("metrics", {})
                out["metrics"]["peak_rss_MB"] = _peak_rss_mb()
                out["metrics"]["rss_growth_MB"] = _peak_rss_mb() - base
    except Exception as exc:
        traceback.print_exc()
        out = {"error": f"crash: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"}
    out["wall_s"] = time.perf_counter() - t0
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", required=True,
                    choices=["ours", "original", "raw", "numpy", "torch"])
    ap.add_argument("--workload", help="run one workload and exit (W1..W8, W5big, CPU)")
    ap.add_argument("--params", default="{}", help="workload parameters as JSON")
    ap.add_argument("--serve", action="store_true", help="read requests from stdin")
    ap.add_argument("--repo", help="repository root to import our cthreads from (ours)")
    args = ap.parse_args(argv)
    if args.repo and args.impl in ("ours", "raw"):
        sys.path.insert(1, args.repo)

    if args.workload:
        emit(run_one(args.impl, args.workload, json.loads(args.params)))
        return 0
    if not args.serve:
        ap.error("give --workload or --serve")
    try:
        emit({"ready": True, "info": describe(args.impl)})
    except Exception as exc:
        traceback.print_exc()
        emit({"ready": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"})
        return 1
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get("quit"):
            break
        emit(run_one(args.impl, req["workload"], req.get("params", {})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
