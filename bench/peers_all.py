#!/usr/bin/env python3
"""The whole PEERS comparison in one command: ours against torch, CuPy and Triton (a GPU) or
numpy and hand-written WGSL (no CUDA: lavapipe), in one process, one table.

    python bench/peers_all.py [--quick] [--only a,b] [--skip a,b] [--json PATH] [--out PATH]
    bash bench/h200_issue27.sh                   # on the H200, with the Vulkan environment

Sections (``--only`` / ``--skip`` take these names):

* ``saxpy32 saxpy64 sum32 sum64 hist stencil mandel tiny nbody``: the benchmark's PEERS cases
  (``peers.py``, the sizes of ``run.py``'s ``FULL["PEERS"]``);
* ``ga_saxpy ga_relaunch vec_saxpy vec_step tinyq capture``: GpuArray relaunches, vectors,
  100 tiny launches queued, capture/replay (``peers_v3.py``);
* ``matmul axis_reduce accumulate sort``: the library calls, by the functions of
  ``bench/matmul.py``, ``axis_reduce.py``, ``accumulate.py``, ``sort.py`` (their own reports go
  to stderr);
* ``compute``: the compute-bound set (``compute_bound.py``).

Every row: ours, each peer, and the speed ratio (> 1x: ours faster, whatever the unit), with
the issues' targets marked pass / MISS. A peer that is not installed is named with the reason;
a row with none says "no peer". A wrong result is FAIL (never a figure). Sizes: the GPU set
on a GPU, small ones on a CPU driver; ``--quick`` takes fewer samples.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import time
import traceback

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, ROOT)
sys.path.insert(0, BENCH)

from cthreads.gpu import device_name  # noqa: E402

import peers as P  # noqa: E402
import peers_v3  # noqa: E402
import run as R  # noqa: E402

OLD = ("saxpy32", "saxpy64", "sum32", "sum64", "hist", "stencil", "mandel", "tiny", "nbody")
LIBRARY = ("matmul", "axis_reduce", "accumulate", "sort")
SECTIONS = OLD + peers_v3.V3_CASES + LIBRARY + ("compute",)

#: the v3 cases' sizes, beside run.py's FULL["PEERS"]
V3_PARAMS = {
    "cpu": {"ga_n": 1 << 22, "relaunch_n": 1024, "relaunch_k": 200, "vec_n": 1 << 20,
            "vec_k": 5, "tiny_batch": 100, "matmul_n": 512, "axis_n": 2048,
            "scan_n": 1 << 22, "sort_n": 1 << 20, "lib_reps": 3},
    "gpu": {"ga_n": 1 << 26, "relaunch_n": 1024, "relaunch_k": 2000, "vec_n": 1 << 24,
            "vec_k": 50, "tiny_batch": 100, "matmul_n": 4096, "axis_n": 8192,
            "scan_n": 1 << 26, "sort_n": 1 << 24, "lib_reps": 5},
}

#: (case, implementation) -> (minimum speed ratio ours / it, where it comes from); "gpu" /
#: "cpu": only on that kind of device
TARGETS = {
    ("saxpy32", "torch"): (0.97, "issue 22"), ("saxpy64", "torch"): (0.95, "issue 27"),
    ("sum32", "torch"): (0.9, "issue 27"), ("sum64", "torch"): (0.9, "issue 27"),
    ("stencil", "cupy"): (1.0, "issue 27"), ("mandel", "cupy"): (1 / 1.1, "issue 22"),
    ("tiny", "torch"): (1 / 2.5, "issue 27"), ("hist", "torch"): (0.8, "issue 22"),
    ("capture", "torch"): (1.0, "issue 27"), ("capture", "oursloop:cpu"): (2.0, "issue 27"),
    ("vec_saxpy", "oursscalar"): (0.95, "issue 24"), ("vec_step", "oursxyz"): (1 / 1.05,
                                                                             "issue 24"),
    ("matmul32", "torch"): (0.5, "issue 26"), ("matmul64", "torch"): (0.5, "issue 26"),
    ("matmul32", "numpy:cpu"): (0.2, "issue 26"),
    ("axis1", "torch"): (0.8, "issue 26"), ("axis1", "numpy:cpu"): (1.0, "issue 26"),
    ("scan", "torch"): (0.7, "issue 26"), ("sort", "torch"): (0.5, "issue 26"),
}
for _k in ("matmul_flat", "matmul_2d", "conv1d", "conv2d", "nbody", "stencil9", "mandel"):
    TARGETS[(f"cb_{_k}", "cuda")] = (0.9, "issue 27")
    TARGETS[(f"cb_{_k}", "wgsl:cpu")] = (0.9, "issue 27")

PEER_LABEL = {"torch": "torch", "cupy": "CuPy", "triton": "Triton", "numpy": "numpy",
              "oursarena": "ours, arena lists", "oursscalar": "ours, scalar over 3n",
              "oursxyz": "ours, x/y/z arrays", "oursloop": "ours, one by one",
              "torchgraph": "torch.cuda.graph replay", "unchecked": "ours boundscheck=False",
              "wgsl": "hand WGSL (wgpu-py)", "cuda": "CUDA C (CuPy RawKernel)",
              "oursglobal": "ours, global atomics", "cupyglobal": "CuPy, global atomics",
              "cupybincount": "cp.bincount"}
HIGHER = {"GBps", "Geps", "GFLOPs", "Mkeys"}
UNITS = dict(R.PEER_UNITS, GFLOPs="GFLOP/s", Mkeys="M keys/s", us100="us per 100")


def log(msg: str) -> None:
    print(f"peers_all: {msg}", file=sys.stderr, flush=True)


class Table:
    """The rows: (case, label, unit, ours, [(peer, value)]); a value is a number or a reason."""

    def __init__(self, on_gpu: bool, missing: dict):
        """``missing``: peer -> why it is not installed (said once, not on every row)."""
        self.on_gpu, self.rows, self.missing = on_gpu, [], missing
        self.notes: list = []

    def add(self, case: str, label: str, unit: str, ours, peers: list) -> None:
        self.rows.append({"case": case, "label": label, "unit": unit, "ours": ours,
                          "peers": peers})

    def target(self, case: str, peer: str):
        for key in (peer, f"{peer}:{'gpu' if self.on_gpu else 'cpu'}"):
            if (case, key) in TARGETS:
                return TARGETS[(case, key)]
        return None

    def render(self) -> list:
        head = ["case", "unit", "ours", "peer", "peer's", "speed", "target"]
        out = [head]
        for r in self.rows:
            ours = r["ours"]
            peers = [(n, v) for n, v in r["peers"] if v not in self.missing.values()]
            if ours in (None, "-") and not peers:
                continue                          # a peers-only row with no peer here
            peers = peers or [("no peer", None)]
            for k, (peer, v) in enumerate(peers):
                speed, verdict = "", ""
                if isinstance(ours, float) and isinstance(v, float) and v > 0 and ours > 0:
                    s = ours / v if r["unit"] in HIGHER else v / ours
                    speed = f"{s:.2f}x"
                    t = self.target(r["case"], peer)
                    if t is not None:
                        verdict = f">= {t[0]:.2f}x {'pass' if s >= t[0] else 'MISS'} ({t[1]})"
                out.append([r["label"] if k == 0 else "", UNITS.get(r["unit"], r["unit"])
                            if k == 0 else "", _fmt(ours) if k == 0 else "",
                            PEER_LABEL.get(peer, peer), _fmt(v) if v is not None else "",
                            speed, verdict])
        widths = [min(max(len(t[c]) for t in out), 60) for c in range(len(head))]
        lines = []
        for t in out[:1] + [["-" * w for w in widths]] + out[1:]:
            lines.append("  ".join(c.ljust(widths[k]) if k in (0, 1, 3, 6) else c.rjust(widths[k])
                                   for k, c in enumerate(t)).rstrip())
        notes = []
        for r in self.rows:
            for who, v in [("ours", r["ours"])] + r["peers"]:
                if isinstance(v, str) and len(v) > 12 and v not in self.missing.values():
                    notes.append(f"  {r['label']}: {PEER_LABEL.get(who, who)}: {v}")
        lines += [""] + self.notes
        lines += ["not installed here: " + ("; ".join(
            f"{k} ({v})" for k, v in self.missing.items()) or "none")]
        return lines + (["", "not measured:"] + sorted(set(notes)) if notes else [])


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if v is None:
        return ""
    text = str(v)
    return "FAIL" if text.startswith("FAIL") else ("n/a*" if len(text) > 12 else text)


# -- sections -------------------------------------------------------------------------------

def old_rows(run: P.Peers, table: Table, p: dict, cases: list) -> None:
    """The peers.py cases' metrics as rows (labels of run.py's PEER_ROWS)."""
    fields = {k: R._count(v) for k, v in p.items()}
    for case, label, unit, names in R.PEER_ROWS + [
            ("hist", f"histogram: ours' shared bins, {g:,} workgroups of 64", "Geps",
             {"ours": f"oursg{g}"}) for g in p.get("hist_groups", [])]:
        base = case[:-1] if case.endswith("q") and case[:-1] in cases else case
        if base not in cases:
            continue
        names = names or {c: c for c in ("ours", "torch", "cupy", "triton")}

        def value(name):
            key = f"{case}_{name}_{unit}"
            return run.metrics.get(key, run.unsupported.get(key))
        ours = value(names["ours"]) if "ours" in names else "-"
        peers = [(col if names[col] == col else names[col], value(names[col]))
                 for col in names if col != "ours" and value(names[col]) is not None]
        table.add(case, label.format(**fields), unit, ours, peers)


V3_LABELS = {
    "ga_saxpy": ("saxpy n={ga_n} float32 on GpuArrays, {k} queued", "GBps",
                 ("oursarena", "torch", "numpy")),
    "ga_relaunch": ("relaunch n={relaunch_n} on GpuArrays, {relaunch_k} queued + join",
                    "us", ("torch",)),
    "vec_saxpy": ("saxpy list[vec3] n={vec_n}, {vec_k} queued", "GBps", ("oursscalar", "torch")),
    "vec_step": ("particle step list[vec3] n={vec_n}", "ms", ("oursxyz", "torch")),
    "tinyq": ("{tiny_batch} tiny launches (n=64) queued, one join", "us", ("torch",)),
    "capture": ("capture: {tiny_batch} tiny launches replayed, one join", "us",
                ("oursloop", "torch", "torchgraph")),
}


def v3_rows(run: P.Peers, table: Table, p: dict, case: str) -> None:
    label, unit, peers = V3_LABELS[case]
    fields = {k: R._count(v) for k, v in p.items()}

    def value(name):
        key = f"{case}_{name}_{unit}"
        return run.metrics.get(key, run.unsupported.get(key))
    table.add(case, label.format(**fields), "us100" if case in ("tinyq", "capture") else unit,
              value("ours"), [(n, value(n)) for n in peers if value(n) is not None])


@contextlib.contextmanager
def _to_stderr():
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _lib(name: str):
    return importlib.import_module(f"bench.{name}")


def section_matmul(table: Table, p: dict) -> None:
    M = _lib("matmul")
    n = p["matmul_n"]
    for dtype in ("float32", "float64"):
        with _to_stderr():
            r = M.bench_one(n, dtype, p["lib_reps"])
        peers = [(peer, r[key]) for peer, key in (("torch", f"torch.matmul {dtype}"),
                                                   ("numpy", f"numpy {dtype}")) if key in r]
        table.add(f"matmul{dtype[-2:]}", f"matmul {n}^2 {dtype} (torch: TF32 off)", "GFLOPs",
                  r[f"cthreads {dtype}"], peers)


def section_axis_reduce(table: Table, p: dict) -> None:
    AR = _lib("axis_reduce")
    n = p["axis_n"]
    with _to_stderr():
        g = AR.main(["--n", str(n), "--reps", str(p["lib_reps"])])
    for axis in (1, 0):
        peers = [(peer, g[f"{peer} axis={axis}"]) for peer in ("torch", "numpy")
                 if f"{peer} axis={axis}" in g]
        table.add(f"axis{axis}", f"add.reduce axis={axis} of {n}^2 float32 (torch.sum(dim))",
                  "GBps", g[f"cthreads axis={axis}"], peers)


def section_accumulate(table: Table, p: dict) -> None:
    AC = _lib("accumulate")
    n = p["scan_n"]
    with _to_stderr():
        g = AC.main(["--n", str(n), "--reps", str(p["lib_reps"])])["GBps"]
    peers = [(peer, g[key]) for peer, key in (("torch", "torch.cumsum"),
                                               ("numpy", "numpy cumsum")) if key in g]
    table.add("scan", f"add.accumulate n={R._count(n)} float32 (torch.cumsum)", "GBps",
              g["cthreads device"], peers)


def section_sort(table: Table, p: dict) -> None:
    SO = _lib("sort")
    n = p["sort_n"]
    with _to_stderr():
        ms = SO.main(["--n", str(n), "--reps", str(p["lib_reps"])])
    rate = {k: n / v / 1e3 for k, v in ms.items()}
    peers = [(peer, rate[key]) for peer, key in (("torch", "torch.sort"), ("numpy", "np.sort"))
             if key in rate]
    table.add("sort", f"sort n={R._count(n)} float32 (torch.sort stable)", "Mkeys",
              rate["cthreads sort (GpuArray)"], peers)


def section_compute(table: Table, p: dict, quick: bool) -> None:
    CB = _lib("compute_bound")
    info: dict = {}
    rows = CB.run_set(small=not p["on_gpu"], reps=3 if quick else 5, info=info)
    if "wgsl_module" in info:
        table.notes.append(f"compute set: hand WGSL shader modules {info['wgsl_module']}; "
                           "ms per launch, best of the samples")
    for r in rows:
        ms = r["ms"]
        peers = [(form, ms[form]) for form in ("unchecked", "wgsl", "cuda") if form in ms]
        peers += [(form, why) for form, why in r["why"].items() if form != "all"]
        table.add(f"cb_{r['kernel']}", f"{r['kernel']} {r.get('label', '')} (checked)", "ms",
                  ms.get("checked", r["why"].get("all", "FAIL: not run")), peers)


# -- the run ---------------------------------------------------------------------------------

def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer samples")
    ap.add_argument("--only", default="", help=f"sections: {','.join(SECTIONS)}")
    ap.add_argument("--skip", default="")
    ap.add_argument("--json", help="write the rows and the parameters here")
    ap.add_argument("--out", help="also write the printed report here")
    args = ap.parse_args(argv)
    wanted = [s for s in args.only.split(",") if s] or list(SECTIONS)
    skip = [s for s in args.skip.split(",") if s]
    bad = [s for s in wanted + skip if s not in SECTIONS]
    if bad:
        raise SystemExit(f"unknown section(s) {bad}; known: {', '.join(SECTIONS)}")
    wanted = [s for s in SECTIONS if s in wanted and s not in skip]
    name = device_name()
    on_gpu = not any(s in name.lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    dev = "gpu" if on_gpu else "cpu"
    p = dict((R.QUICK if args.quick else R.FULL)["PEERS"][dev], **V3_PARAMS[dev])
    p["on_gpu"] = on_gpu
    if args.quick:
        p["lib_reps"] = 3
    run = peers_v3.V3(p)
    table = Table(on_gpu and "torch" in run.have.mods, dict(run.have.why))
    t_all = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k.startswith("CTHREADS_")}
    head = (f"PEERS, all rows: {name} ({dev} sizes{', quick' if args.quick else ''}); peers: "
            f"{run.have.info or 'none'}; CTHREADS_* settings: {env or 'none'}")
    print(head, flush=True)
    if on_gpu:
        run.case("spin-up", P.spin_up, p)
    timings: dict = {}
    lines, result = save(args, head, table, t_all, name, p, timings, run)
    for s in wanted:
        t0 = time.perf_counter()
        try:
            if s in OLD:
                fn, *arg = {"saxpy32": (run.saxpy, 32), "saxpy64": (run.saxpy, 64),
                            "sum32": (run.sums, 32), "sum64": (run.sums, 64)}.get(s, (None,))
                run.case(s, fn or getattr(run, s), *arg)
                old_rows(run, table, p, [s])
            elif s in peers_v3.V3_CASES:
                run.case(s, getattr(run, s))
                v3_rows(run, table, p, s)
            elif s == "compute":
                section_compute(table, p, args.quick)
            else:
                globals()[f"section_{s}"](table, p)
        except BaseException as exc:            # a library script's SystemExit too
            if isinstance(exc, KeyboardInterrupt):
                raise
            traceback.print_exc(file=sys.stderr)
            table.add(s, s, "", f"FAIL: {P._short(exc)}", [])
        timings[s] = time.perf_counter() - t0
        log(f"{s}: {timings[s]:.1f} s")
        lines, result = save(args, head, table, t_all, name, p, timings, run)   # so far
    print("\n".join(lines[1:]), flush=True)
    return result


def save(args, head, table, t_all, name, p, timings, run) -> tuple:
    """The report and the result so far, written to --out / --json (after every section: a
    run cut short by a time limit keeps the rows it made)."""
    lines = [head, f"{time.perf_counter() - t_all:.0f} s; medians (compute set: best of the "
             "samples); speed = ours / peer for rates, peer / ours for times (> 1x: ours "
             "faster)", ""] + table.render()
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    result = {"device": name, "params": p, "rows": table.rows, "seconds": timings,
              "info": {"peers": run.have.info, "skipped": run.have.why}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=str)
    return lines, result


if __name__ == "__main__":
    main()
