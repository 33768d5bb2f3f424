#!/usr/bin/env python3
"""The cthreads benchmark: every workload, every implementation, in the same run.

    python bench/run.py [--quick] [--only W1,W3] [--repeats K] [--json PATH [--overwrite]]

Implementations: ``ours`` (cthreads from this repository), ``raw`` (the same computation
hand-written in WGSL on wgpu-py: the expert's floor on the same driver), ``original`` (PyPI
``cthreads-gpu`` 0.2.1 in its own virtual environment ``bench/.venv-original``, created on first
use; skipped with a note where it cannot be installed), ``numpy`` on the CPU where it makes sense,
and ``torch`` (CUDA) for W5big's bandwidth reference when it is importable. PEERS (``peers.py``)
runs ours against torch, CuPy and Triton, whichever are installed, inside our worker's process.

Each implementation runs in its own worker process (``bench/worker.py``); workloads alternate
between implementations (the order rotates every round) and repeat; the table shows medians.
W4, W5 and W7 use a fresh process per measurement (cold start, peak RSS, compile caches).
Results go to ``bench/results/<device>-<date>-<mode>[-<workloads>].json`` (and ``.txt``, the
printed report; ``result_path``), with ``-2``, ``-3`` ... when that name is taken: one run never
overwrites another's results. ``--json PATH`` names the file; an existing one is refused unless
``--overwrite`` is given.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MARK = "@@RESULT "
ORIGINAL_SPEC = "cthreads-gpu==0.2.1"
#: files the original's workers need, copied into a scratch folder: the original writes its
#: compile cache, a __Gpu__/ folder and a .gitignore next to the kernels' source files.
WORKER_FILES = ("worker.py", "workloads.py", "reference.py", "timing.py", "kernels_w7.py",
                "kernels_cold.py", "kernels_unchecked.py", "kernels_original.py")

IMPLS = ("ours", "raw", "original", "numpy", "torch")
LABEL = {"ours": "ours", "raw": "raw wgpu", "original": "original", "numpy": "numpy",
         "torch": "torch"}
SERVED = ("W1", "W2", "W3", "W6", "W8", "CPU")   # run in long-lived workers
FRESH = ("W4", "W5", "W7", "W5big", "RED", "V2", "ND", "PEERS")   # a fresh process each
ALL = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "CPU", "RED", "V2", "ND", "PEERS",
       "W5big")
WHO = {"W1": ("ours", "raw", "original", "numpy"), "W2": ("ours", "raw", "original", "numpy"),
       "W3": ("ours", "raw", "original", "numpy"), "W4": ("ours", "raw", "original"),
       "W5": ("ours", "raw", "original", "numpy"), "W6": ("ours", "raw", "original", "numpy"),
       "W7": ("ours", "raw", "original"), "W5big": ("ours", "raw", "original", "torch"),
       "W8": ("ours",), "CPU": ("ours", "numpy"), "RED": ("ours", "numpy", "torch"),
       "V2": ("ours",), "ND": ("ours",), "PEERS": ("ours",)}

FULL = {
    "W1": {"n": 64, "launches": 2000, "warmup": 200},
    "W2": {"sizes": [["1M", 1_000_000, 5], ["10k", 10_000, 50]]},
    "W3": {"n": 1_000_000, "launches": 200},
    "W5": {"n": 16_777_216, "launches": 20, "rss": True},
    "W5big": {"n": 67_108_864, "launches": 100, "rss": True},
    "W6": {"launches": 20},
    "W7": {"n": 4096},
    "W4": {},
    "W8": {"jobs": 6, "mandel": [512, 512, 256], "on_time_ms": 2.0},
    "CPU": {"n": 1_048_576, "grid": 1024, "mandel": [512, 512, 256], "reps": 9},
    "RED": {"sizes_cpu": [["1M", 1 << 20], ["16M", 1 << 24]],
            "sizes_gpu": [["1M", 1 << 20], ["64M", 1 << 26]], "reps": 15},
    "V2": {"cpu": {"n_mem": 1 << 22, "bodies": 2048, "n_saxpy": 1 << 24,
                   "mandel": [512, 512, 256], "reps": 11},
           "gpu": {"n_mem": 1 << 26, "bodies": 32768, "n_saxpy": 1 << 26,
                   "mandel": [4096, 4096, 256], "reps": 21}},
    "ND": {"cpu": {"n": 1024, "reps": 11}, "gpu": {"n": 4096, "reps": 31}},
    "PEERS": {"cpu": {"n": 1 << 22, "k": 5, "sum_calls": 3, "hist_n": 1 << 22, "hist_k": 3,
                      "hist_groups": [64, 256], "grid": 1024, "stencil_k": 5,
                      "mandel": [512, 512, 256], "mandel_k": 3, "tiny_launches": 100,
                      "bodies": 2048, "nbody_k": 2, "torch_rows": 512, "reps": 7, "warm": 1,
                      "spinup_s": 0},
              "gpu": {"n": 1 << 26, "k": 200, "sum_calls": 10, "hist_n": 1 << 26, "hist_k": 20,
                      "hist_groups": [1056, 4224, 16896], "grid": 4096, "stencil_k": 200,
                      "mandel": [4096, 4096, 256], "mandel_k": 20, "tiny_launches": 200,
                      "bodies": 32768, "nbody_k": 3, "torch_rows": 1024, "reps": 11, "warm": 2,
                      "spinup_s": 1.0}},
}
QUICK = {
    "W1": {"n": 64, "launches": 500, "warmup": 50},
    "W2": {"sizes": [["1M", 1_000_000, 2], ["10k", 10_000, 20]]},
    "W3": {"n": 1_000_000, "launches": 50},
    "W5": {"n": 16_777_216, "launches": 5, "rss": True},
    "W5big": {"n": 67_108_864, "launches": 20, "rss": True},
    "W6": {"launches": 5},
    "W7": {"n": 4096},
    "W4": {},
    "W8": {"jobs": 6, "mandel": [512, 512, 256], "on_time_ms": 2.0},
    "CPU": {"n": 1_048_576, "grid": 1024, "mandel": [512, 512, 256], "reps": 3},
    "RED": {"sizes_cpu": [["1M", 1 << 20], ["16M", 1 << 24]],
            "sizes_gpu": [["1M", 1 << 20], ["64M", 1 << 26]], "reps": 7},
    "V2": {"cpu": {"n_mem": 1 << 22, "bodies": 1024, "n_saxpy": 1 << 24,
                   "mandel": [256, 256, 256], "reps": 5},
           "gpu": {"n_mem": 1 << 26, "bodies": 16384, "n_saxpy": 1 << 26,
                   "mandel": [4096, 4096, 256], "reps": 9}},
    "ND": {"cpu": {"n": 1024, "reps": 5}, "gpu": {"n": 4096, "reps": 11}},
}
#: PEERS' quick sizes are its full ones, with fewer samples
QUICK["PEERS"] = {dev: dict(FULL["PEERS"][dev], reps=reps)
                  for dev, reps in (("cpu", 3), ("gpu", 5))}

# (workload, metric, label, unit, higher is better)
ROWS = [
    ("W1", "each_us", "W1 tiny launch n=64, join each", "us/launch", False),
    ("W1", "each_block_us", "W1 raw: blocking poll each", "us/launch", False),
    ("W1", "each_spin_us", "W1 raw: spin 2 ms, then block, each", "us/launch", False),
    ("W1", "once_us", "W1 tiny launch n=64, joined once", "us/launch", False),
    ("W2", "1M_ms", "W2 list round trip n=1M", "ms/call", False),
    ("W2", "10k_ms", "W2 list round trip n=10k", "ms/call", False),
    ("W2", "np1M_ms", "W2 numpy float32 arrays n=1M", "ms/call", False),
    ("W3", "ms", "W3 resident n=1M, launches then one join", "ms/launch", False),
    ("W3", "GBps", "W3 resident n=1M, launches then one join", "GB/s", True),
    ("W3", "vec4_GBps", "W3 raw, vec4 saxpy by hand (one join)", "GB/s", True),
    ("W3", "each_ms", "W3 resident n=1M, join(download=False) each", "ms/launch", False),
    ("W3", "each_GBps", "W3 resident n=1M, join(download=False) each", "GB/s", True),
    ("W3", "on_each_GBps", "W3 each, checks on (alternating with off)", "GB/s", True),
    ("W3", "nb_each_GBps", "W3 each, boundscheck=False (alternating)", "GB/s", True),
    ("W4", "s", "W4 cold start: import -> first result", "s", False),
    ("W4", "process_s", "W4 cold start: whole process", "s", False),
    ("W5", "GBps", "W5 resident n=16,777,216", "GB/s", True),
    ("W5", "vec4_GBps", "W5 raw, vec4 saxpy by hand", "GB/s", True),
    ("W5", "bind_s", "W5 bind (raw: upload)", "s", False),
    ("W5", "sync_s", "W5 sync (raw: download)", "s", False),
    ("W5", "peak_rss_MB", "W5 peak RSS", "MB", False),
    ("W5", "rss_growth_MB", "W5 RSS growth during the workload", "MB", False),
    ("W5big", "GBps", "W5big resident n>=64M, queued launches", "GB/s", True),
    ("W5big", "GBps_wg64", "W5big raw, workgroup 64", "GB/s", True),
    ("W5big", "GBps_wg256", "W5big raw, workgroup 256", "GB/s", True),
    ("W5big", "GBps_wgvec4", "W5big raw, vec4 saxpy by hand (256)", "GB/s", True),
    ("W5big", "copy_GBps", "W5big torch device copy", "GB/s", True),
    ("W5big", "bind_s", "W5big bind", "s", False),
    ("W5big", "sync_s", "W5big sync", "s", False),
    ("W6", "ms", "W6 Mandelbrot 256x256, 200 iterations", "ms/launch", False),
    ("W6", "on_ms", "W6 checks on (alternating with off)", "ms/launch", False),
    ("W6", "nb_ms", "W6 boundscheck=False (alternating)", "ms/launch", False),
    ("W7", "first_ms", "W7 new kernel: define + first launch", "ms", False),
    ("W7", "second_ms", "W7 same kernel, second process", "ms", False),
    ("W7", "steady_ms", "W7 same kernel, next launch", "ms", False),
] + [
    ("RED", f"{metric}_{label}_GBps", f"RED {text} n={label}", "GB/s", True)
    for label in ("1M", "16M", "64M")
    for metric, text in (("sum_res", "sum, resident"), ("max_res", "max, resident"),
                         ("sum_np", "sum from numpy"), ("max_np", "max from numpy"),
                         ("sum_queued", "torch x.sum() queued, one sync"),
                         ("saxpy_res", "our resident saxpy, bytes read"))
] + [
    ("V2", "fn_mem_helper_ms", "V2 element-wise kernel with helpers", "ms/launch", False),
    ("V2", "fn_mem_inline_ms", "V2 the same kernel written inline", "ms/launch", False),
    ("V2", "fn_nbody_helper_ms", "V2 N-body accelerations with helpers", "ms/launch", False),
    ("V2", "fn_nbody_inline_ms", "V2 N-body accelerations inline", "ms/launch", False),
    ("V2", "saxpy32_GBps", "V2 resident saxpy, float32 arrays", "GB/s", True),
    ("V2", "saxpy64_GBps", "V2 resident saxpy, float64 arrays", "GB/s", True),
    ("V2", "mandel32_ms", "V2 Mandelbrot in float32", "ms/launch", False),
    ("V2", "mandel64_ms", "V2 Mandelbrot in float64", "ms/launch", False),
    ("ND", "st2d_GBps", "ND 2-D 5-point stencil, threads=(n, n)", "GB/s", True),
    ("ND", "st1d_GBps", "ND the same stencil flattened by hand (1-D)", "GB/s", True),
    ("ND", "saxpy_GBps", "ND resident saxpy over n*n, same process", "GB/s", True),
    ("ND", "numpy_GBps", "ND numpy slices", "GB/s", True),
    ("ND", "torch_GBps", "ND torch slices (CUDA)", "GB/s", True),
]

# (label, workload, metric, against, op, lavapipe bound, GPU bound); against "self:<metric>"
# compares two of our own figures. None: no target in that column.
TARGETS = [
    ("W1 join each <= {b}x original", "W1", "each_us", "original", "<=", 1.0, 0.25),
    ("W1 joined once <= {b}x raw wgpu", "W1", "once_us", "raw", "<=", 1.2, 1.2),
    ("W2 n=1M <= {b}x original", "W2", "1M_ms", "original", "<=", 0.8, 0.6),
    ("W3 throughput >= {b}x raw wgpu", "W3", "GBps", "raw", ">=", 0.95, 0.95),
    ("W2 numpy arrays <= {b}x raw wgpu", "W2", "np1M_ms", "raw", "<=", 1.3, 1.3),
    ("W3 bounds checks on >= {b}x checks off", "W3", "on_each_GBps", "self:nb_each_GBps", ">=",
     0.95, 0.95),
    ("W6 bounds checks on <= {b}x checks off", "W6", "on_ms", "self:nb_ms", "<=", 1.05, 1.05),
    ("W4 cold start <= {b}x original", "W4", "s", "original", "<=", 1.0, None),
    ("W5 bind <= {b}x raw upload", "W5", "bind_s", "raw", "<=", 1.5, None),
    ("W5 sync <= {b}x raw download", "W5", "sync_s", "raw", "<=", 1.5, None),
    ("W5 GB/s >= {b}x raw wgpu", "W5", "GBps", "raw", ">=", 0.95, None),
    ("W5 peak RSS <= {b}x raw wgpu", "W5", "peak_rss_MB", "raw", "<=", 1.3, None),
    ("W5big GB/s >= {b}x torch", "W5big", "GBps", "torch", ">=", None, 0.8),
    ("W6 <= {b}x hand-written WGSL", "W6", "ms", "raw", "<=", 1.05, 1.05),
    ("W7 new kernel <= {b}x raw wgpu", "W7", "first_ms", "raw", "<=", 1.3, None),
    ("W7 second process faster than first", "W7", "second_ms", "self:first_ms", "<", 1.0, None),
    ("RED sum n=16M >= {b}x resident saxpy bytes read", "RED", "sum_res_16M_GBps",
     "self:saxpy_res_16M_GBps", ">=", 0.8, None),
    ("RED sum n=64M >= {b}x resident saxpy bytes read", "RED", "sum_res_64M_GBps",
     "self:saxpy_res_64M_GBps", ">=", None, None),
    ("RED sum n=64M >= {b}x torch x.sum().item()", "RED", "sum_res_64M_GBps", "torch", ">=",
     None, 0.8),
    ("V2 element-wise kernel with helpers <= {b}x inline", "V2", "fn_mem_helper_ms",
     "self:fn_mem_inline_ms", "<=", 1.02, 1.02),
    ("V2 N-body with helpers <= {b}x inline", "V2", "fn_nbody_helper_ms",
     "self:fn_nbody_inline_ms", "<=", 1.02, 1.02),
    ("V2 float64 saxpy GB/s >= {b}x float32's", "V2", "saxpy64_GBps", "self:saxpy32_GBps",
     ">=", 0.9, 0.9),
    ("ND 2-D stencil GB/s >= {b}x the flattened 1-D", "ND", "st2d_GBps", "self:st1d_GBps",
     ">=", 0.95, 0.95),
    ("ND 2-D stencil GB/s >= {b}x resident saxpy GB/s", "ND", "st2d_GBps", "self:saxpy_GBps",
     ">=", 0.7, 0.7),
    # the CUDA peers (a real GPU with torch / CuPy installed; same process, same data)
    ("PEERS saxpy float32 GB/s >= {b}x torch add_", "PEERS", "saxpy32_ours_GBps",
     "self:saxpy32_torch_GBps", ">=", None, 0.97),
    ("PEERS saxpy float64 GB/s >= {b}x torch add_", "PEERS", "saxpy64_ours_GBps",
     "self:saxpy64_torch_GBps", ">=", None, None),
    ("PEERS sum float32 >= {b}x torch x.sum().item()", "PEERS", "sum32_ours_GBps",
     "self:sum32_torch_GBps", ">=", None, 0.9),
    ("PEERS sum float64 >= {b}x torch x.sum().item()", "PEERS", "sum64_ours_GBps",
     "self:sum64_torch_GBps", ">=", None, 0.9),
    ("PEERS histogram >= {b}x torch bincount", "PEERS", "hist_ours_Geps", "self:hist_torch_Geps",
     ">=", None, 0.8),
    ("PEERS 2-D stencil >= {b}x CuPy RawKernel", "PEERS", "stencil_ours_GBps",
     "self:stencil_cupy_GBps", ">=", None, 1.0),
    ("PEERS Mandelbrot time <= {b}x CuPy RawKernel", "PEERS", "mandel_ours_ms",
     "self:mandel_cupy_ms", "<=", None, 1.1),
    ("PEERS tiny launch + wait <= {b}x torch add_ + sync", "PEERS", "tiny_ours_us",
     "self:tiny_torch_us", "<=", None, 2.0),
    ("PEERS N-body step time <= {b}x CuPy RawKernel", "PEERS", "nbody_ours_ms",
     "self:nbody_cupy_ms", "<=", None, None),
]

#: Figures the issue states for an implementation that cannot run in that column's machine
#: (the original has no Python 3.12 wheel for the H200 machine): used, labelled, when the
#: implementation is not in the run.
ISSUE_FIGURES = {("W1", "each_us", "original", "gpu"): 320.0}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- processes -----------------------------------------------------------------------------------

def _parse(text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    return None


def _tail(path: str, n: int = 1500) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


class Impl:
    """How to start one implementation's worker."""

    def __init__(self, name: str, python: str, script_dir: str, env: dict, cwd: str,
                 logdir: str):
        self.name, self.python, self.script_dir = name, python, script_dir
        self.env, self.cwd, self.logdir = env, cwd, logdir
        self.note = ""

    def argv(self, *extra: str, script_dir: str | None = None) -> list:
        d = script_dir or self.script_dir
        argv = [self.python, os.path.join(d, "worker.py"), "--impl", self.name]
        if self.name in ("ours", "raw"):
            argv += ["--repo", ROOT]
        return argv + list(extra)

    def one_shot(self, workload: str, params: dict, timeout: float, env: dict | None = None,
                 script_dir: str | None = None, cwd: str | None = None) -> dict:
        logf = os.path.join(self.logdir, f"{self.name}-{workload}.log")
        t0 = time.perf_counter()
        with open(logf, "a") as err:
            try:
                proc = subprocess.run(
                    self.argv("--workload", workload, "--params", json.dumps(params),
                              script_dir=script_dir),
                    env=env or self.env, cwd=cwd or self.cwd, stdout=subprocess.PIPE,
                    stderr=err, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"error": f"timed out after {timeout:.0f} s"}
        wall = time.perf_counter() - t0
        res = _parse(proc.stdout)
        if res is None:
            return {"error": f"worker exited with {proc.returncode} and no result: "
                             + " | ".join(_tail(logf, 600).splitlines()[-4:])}
        res["process_s"] = wall
        return res


class Server:
    """A long-lived worker answering one request per line."""

    def __init__(self, impl: Impl, timeout: float):
        self.impl, self.timeout = impl, timeout
        self.logf = os.path.join(impl.logdir, f"{impl.name}-serve.log")
        self.proc = None
        self.info: dict = {}
        self.error = None
        self._buf = ""

    def start(self) -> bool:
        err = open(self.logf, "a")
        self.proc = subprocess.Popen(self.impl.argv("--serve"), env=self.impl.env,
                                     cwd=self.impl.cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        err.close()
        first = self._read(self.timeout)
        if first is None or not first.get("ready"):
            self.error = (first or {}).get("error") or (
                "worker did not start: " + " | ".join(_tail(self.logf, 600).splitlines()[-4:]))
            self.stop()
            return False
        self.info = first.get("info", {})
        return True

    def _read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            while True:
                while "\n" in self._buf:
                    line, self._buf = self._buf.split("\n", 1)
                    if line.startswith(MARK):
                        return json.loads(line[len(MARK):])
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 65536).decode(errors="replace")
                if not chunk:
                    return None
                self._buf += chunk
        finally:
            sel.close()

    def request(self, workload: str, params: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            if not self.start():
                return {"error": f"worker unavailable: {self.error}"}
        try:
            self.proc.stdin.write(json.dumps({"workload": workload, "params": params}) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            self.stop()
            return {"error": f"worker died ({exc})"}
        res = self._read(self.timeout)
        if res is None:
            tail = " | ".join(_tail(self.logf, 600).splitlines()[-4:])
            self.stop()                                  # restarted on the next request
            return {"error": f"worker crashed or timed out: {tail}"}
        return res

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                try:
                    self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
                    self.proc.stdin.flush()
                    self.proc.wait(10)
                except (OSError, subprocess.TimeoutExpired):
                    self.proc.kill()
                    self.proc.wait()
        finally:
            self.proc = None


# -- the original's virtual environment ---------------------------------------------------------

def _python_for_original() -> str | None:
    """A Python 3.10/3.11 (the versions cthreads-gpu 0.2.1 has wheels for)."""
    cands = [sys.executable, shutil.which("python3.11"), shutil.which("python3.10"),
             shutil.which("python3")]
    for c in cands:
        if not c:
            continue
        try:
            out = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] in "
                                           "((3, 10), (3, 11)))"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out == "True":
            return c
    return None


def ensure_original(venv: str, setup: bool) -> tuple[str | None, str]:
    """(the original's python, note). Creates the venv when allowed and missing."""
    py = os.path.join(venv, "bin", "python")
    check = [py, "-c", "import cthreads.gpu, numpy"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if os.path.exists(py) and subprocess.run(check, env=env, capture_output=True).returncode == 0:
        return py, ""
    if not setup:
        return None, f"no {venv} (run without --no-setup-original to create it)"
    base = _python_for_original()
    if base is None:
        return None, ("cthreads-gpu 0.2.1 ships CPython 3.10/3.11 wheels only and no such "
                      "Python is here")
    log(f"setting up the original: {venv} with {ORIGINAL_SPEC} (once)")
    try:
        if not os.path.exists(py):
            subprocess.run([base, "-m", "venv", venv], check=True, capture_output=True,
                           timeout=120)
        r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "--timeout", "20", "--retries", "1", ORIGINAL_SPEC, "numpy"],
                           capture_output=True, text=True, timeout=600, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not create {venv}: {exc}"
    if r.returncode != 0:
        last = " ".join((r.stderr or r.stdout).strip().splitlines()[-1:])
        return None, f"pip could not install {ORIGINAL_SPEC}: {last[:200]}"
    if subprocess.run(check, env=env, capture_output=True).returncode != 0:
        return None, f"{ORIGINAL_SPEC} installed but `import cthreads.gpu` fails"
    return py, ""


#: the CPU workload's kernels: (key, label)
CPU_ROWS = [("saxpy", "element-wise: saxpy, n=1,048,576"),
            ("stencil", "stencil: 5-point Jacobi step, 1024x1024 flattened"),
            ("sum", "reduction: sum of n=1,048,576 (add.reduce)"),
            ("mandel", "Mandelbrot 512x512, 256 iterations")]
#: W8's ways of waiting, as the report names them
W8_WAYS = [("await", "await job"), ("await_np", "await job, numpy array result"),
           ("thread", "await asyncio.to_thread(job.join)"),
           ("blocking", "job.join() in the coroutine (blocks the loop)")]


# -- statistics and report -----------------------------------------------------------------------

def summarize(samples: dict) -> dict:
    """{workload: {impl: {"medians": {...}, "n": k, "fail": msg, "unsupported": {...}}}}"""
    out: dict = {}
    for w, per in samples.items():
        for impl, runs in per.items():
            s = {"medians": {}, "n": len(runs), "fail": None, "unsupported": {}}
            fails = [r.get("error") for r in runs if r.get("error")]
            if fails:
                s["fail"] = fails[0]
            else:
                keys = {k for r in runs for k in r.get("metrics", {})}
                for k in sorted(keys):
                    vals = [r["metrics"][k] for r in runs if k in r.get("metrics", {})]
                    s["medians"][k] = statistics.median(vals)
                    s.setdefault("spread", {})[k] = [min(vals), max(vals)]
                for r in runs:
                    s["unsupported"].update(r.get("unsupported") or {})
            out.setdefault(w, {})[impl] = s
    return out


def _fmt(v: float) -> str:
    if v != v:
        return "nan"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _cell(summary: dict, w: str, impl: str, metric: str) -> tuple[str, float | None]:
    s = summary.get(w, {}).get(impl)
    if s is None:
        return "", None
    if s["fail"] or str(s["unsupported"].get(metric, "")).startswith("FAIL"):
        return "FAIL", None
    if metric in s["medians"]:
        v = s["medians"][metric]
        return _fmt(v), v
    if metric in s["unsupported"]:
        return "n/a*", None
    return "", None


def render(summary: dict, impls: list, notes: list, meta: dict, gpu_column: bool) -> str:
    lines = []
    dev = meta.get("device", {})
    lines.append(f"cthreads benchmark - {meta['host']} - {meta['date']} - "
                 f"{dev.get('device', '?')} ({dev.get('adapter_type', '?')}) - "
                 f"{'quick' if meta['quick'] else 'full'} run, {meta['elapsed_s']:.0f} s, "
                 f"load average {meta['load_avg_start']:.1f} -> {meta['load_avg_end']:.1f}")
    lines.append("medians over repeats; ratios are ours / other (for GB/s, > 1 means ours "
                 "is faster)")
    cols = [i for i in impls]
    head = ["metric", "unit"] + [LABEL[i] for i in cols] + ["ours/raw", "ours/orig"]
    rows = []
    for w, metric, label, unit, _hi in ROWS:
        if w not in summary:
            continue
        cells = [_cell(summary, w, i, metric) for i in cols]
        if not any(c[0] for c in cells):
            continue
        vals = dict(zip(cols, (c[1] for c in cells)))
        ratios = []
        for other in ("raw", "original"):
            o, r = vals.get("ours"), vals.get(other)
            ratios.append(f"{o / r:.2f}" if o is not None and r else "")
        rows.append([label, unit] + [c[0] for c in cells] + ratios)
    widths = [max(len(str(r[k])) for r in rows + [head]) for k in range(len(head))]
    fmt_row = lambda r: "  ".join(  # noqa: E731
        (str(c).ljust(widths[k]) if k < 2 else str(c).rjust(widths[k])) for k, c in enumerate(r))
    if rows:
        lines.append(fmt_row(head))
        lines.append(fmt_row(["-" * x for x in widths]))
        lines.extend(fmt_row(r) for r in rows)
    lines.extend(render_cpu(summary, gpu_column))
    lines.extend(render_w8(summary, meta))
    lines.extend(render_peers(summary, meta))
    # failures and unsupported parts
    extra = []
    for w, per in summary.items():
        for impl, s in per.items():
            if s["fail"]:
                extra.append(f"FAIL {w} {LABEL[impl]}: {s['fail']}")
            seen = set()
            for k, msg in s["unsupported"].items():
                if str(msg).startswith("FAIL"):
                    extra.append(f"FAIL {w} {LABEL[impl]} ({k}): {msg[5:].strip()}")
                elif msg not in seen:
                    extra.append(f"n/a* {w} {LABEL[impl]} ({k}): {msg}")
                    seen.add(msg)
    if extra or notes:
        lines.append("")
        lines.extend(notes + extra)
    # targets
    col = "H200 / real GPU" if gpu_column else "lavapipe"
    lines.append("")
    lines.append(f"targets ({col} column)")
    for label, w, metric, against, op, b_cpu, b_gpu in TARGETS:
        bound = b_gpu if gpu_column else b_cpu
        ours = _cell(summary, w, "ours", metric)
        if against.startswith("self:"):
            other = _cell(summary, w, "ours", against[5:])
            name = "ours " + against[5:]
        else:
            other = _cell(summary, w, against, metric)
            name = LABEL[against]
            fig = ISSUE_FIGURES.get((w, metric, against, "gpu" if gpu_column else "cpu"))
            if other[1] is None and fig is not None and against not in impls:
                other = (_fmt(fig), fig)
                label = label + " (issue's figure: " + _fmt(fig) + ")"
        if w not in summary or bound is None and (ours[1] is None or other[1] is None):
            continue
        if bound is None:
            label = label.replace(" <= {b}x", " vs").replace(" >= {b}x", " vs")
        text = label.format(b=bound)
        if bound is None:
            status, ratio = "(no target in this column)", ""
            if ours[1] is not None and other[1]:
                ratio = f"{ours[1] / other[1]:.2f}x"
        elif ours[1] is None:
            status, ratio = f"MISS (ours: {ours[0] or 'no figure'})", ""
        elif other[1] is None:
            status, ratio = f"no comparison ({name}: {other[0] or 'not in this run'})", ""
        else:
            r = ours[1] / other[1]
            ok = {"<=": r <= bound, ">=": r >= bound, "<": r < bound}[op]
            status, ratio = ("PASS" if ok else "MISS"), f"{r:.2f}x"
        lines.append(f"  {text:<56} {ratio:>6}  {status}")
    return "\n".join(lines)


def _med_spread(s: dict | None, metric: str) -> tuple[str, float | None]:
    """'median (min-max)' of one metric, and the median."""
    if not s or s["fail"] or metric not in s["medians"]:
        return ("FAIL" if s and s["fail"] else ""), None
    v = s["medians"][metric]
    lo, hi = s.get("spread", {}).get(metric, [v, v])
    return (f"{_fmt(v)} ({_fmt(lo)}-{_fmt(hi)})" if hi > lo else _fmt(v)), v


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or not b:
        return ""
    return f"{a / b:.1f}x" if a >= b else f"{a / b:.2f}x"


def render_cpu(summary: dict, gpu_column: bool) -> list:
    """The CPU workload: ms per call, medians (min-max over rounds), and ours / numpy."""
    per = summary.get("CPU")
    if not per:
        return []
    ours, npy = per.get("ours"), per.get("numpy")
    dev = "GPU" if gpu_column else "lavapipe"
    head = ["kernel", "numpy ms", f"{dev} resident ms", f"{dev} with transfers ms",
            "resident / numpy", "transfers / numpy"]
    rows = []
    for key, label in CPU_ROWS:
        n_txt, n_v = _med_spread(npy, f"{key}_ms")
        r_txt, r_v = _med_spread(ours, f"{key}_res_ms")
        t_txt, t_v = _med_spread(ours, f"{key}_io_ms")
        rows.append([label, n_txt, r_txt, t_txt, _ratio(r_v, n_v), _ratio(t_v, n_v)])
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    out = ["", f"CPU: {dev} against numpy (ms per call; > 1x means slower than numpy)"]
    for r in [head, ["-" * w for w in widths]] + rows:
        out.append("  ".join(c.ljust(widths[k]) if k == 0 else c.rjust(widths[k])
                             for k, c in enumerate(r)))
    return out


def render_w8(summary: dict, meta: dict) -> list:
    """W8: the event loop's ticker while a gather of downloading jobs runs."""
    s = summary.get("W8", {}).get("ours")
    if not s:
        return []
    p = meta.get("params", {}).get("W8", {})
    size = "x".join(str(v) for v in p.get("mandel", []))
    head = ["way of waiting", "worst tick gap ms", f"ticks <= {p.get('on_time_ms', '?')} ms %",
            "worst gap after the launches ms", "slowest gpu() ms", "all gpu() ms",
            "gather ms"]
    rows = []
    for way, label in W8_WAYS:
        rows.append([label] + [_med_spread(s, f"{way}_{k}")[0] for k in
                               ("worst_ms", "on_time_pct", "worst_waits_ms", "gpu_max_ms",
                                "gpu_sum_ms", "total_ms")])
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    out = ["", f"W8: 1 ms asyncio ticker during asyncio.gather of {p.get('jobs', '?')} "
           f"Mandelbrot {size} jobs downloading a list (medians, min-max over rounds)"]
    for r in [head, ["-" * w for w in widths]] + rows:
        out.append("  ".join(c.ljust(widths[k]) if k == 0 else c.rjust(widths[k])
                             for k, c in enumerate(r)))
    return out


#: PEERS: (case, label, unit key, {column: the implementation's name in the metric}); metrics
#: are "<case>_<name>_<unit key>" (peers.py); labels take the run's parameters
PEER_COLUMNS = (("ours", "ours"), ("torch", "torch"), ("cupy", "CuPy"), ("triton", "Triton"))
PEER_ROWS = [
    ("saxpy32", "saxpy n={n} float32, resident, {k} queued launches", "GBps", None),
    ("saxpy64", "saxpy n={n} float64, resident, {k} queued launches", "GBps", None),
    ("sum32", "sum n={n} float32, a number per call", "GBps", None),
    ("sum32q", "sum n={n} float32, 0-d device results x{k} queued, one wait", "GBps", None),
    ("sum64", "sum n={n} float64, a number per call", "GBps", None),
    ("sum64q", "sum n={n} float64, 0-d device results x{k} queued, one wait", "GBps", None),
    ("hist", "histogram n={hist_n}, 256 bins: shared bins / bincount", "Geps", None),
    ("hist", "histogram: global atomics", "Geps", {"ours": "oursglobal", "cupy": "cupyglobal"}),
    ("hist", "histogram: cp.bincount", "Geps", {"cupy": "cupybincount"}),
    ("stencil", "2-D 5-point stencil {grid}x{grid}", "GBps", None),
    ("mandel", "Mandelbrot {mandel}, 2-D launch", "ms", None),
    ("tiny", "tiny launch n=64 + wait, each", "us", None),
    ("nbody", "N-body accelerations, {bodies} bodies", "ms", None),
]
PEER_UNITS = {"GBps": "GB/s", "Geps": "G el/s", "ms": "ms/launch", "us": "us/launch"}


def _count(v) -> str:
    if isinstance(v, list):
        return "x".join(str(x) for x in v[:2]) + (f", {v[2]} iterations" if len(v) > 2 else "")
    if isinstance(v, int) and v >= 1 << 20 and v % (1 << 20) == 0:
        return f"{v >> 20}M"
    return str(v)


def render_peers(summary: dict, meta: dict) -> list:
    """PEERS: ours against torch, CuPy and Triton on the same data in the same process."""
    if "PEERS" not in summary or "ours" not in summary["PEERS"]:
        return []
    p = meta.get("params", {}).get("PEERS", {})
    fields = {k: _count(v) for k, v in p.items()}
    rows = list(PEER_ROWS)
    for g in p.get("hist_groups", []):
        rows.append(("hist", f"histogram: ours' shared bins, {g:,} workgroups of 64", "Geps",
                     {"ours": f"oursg{g}"}))
    head = (["case", "unit"] + [label for _, label in PEER_COLUMNS]
            + [f"ours/{label}" for _, label in PEER_COLUMNS[1:]])
    out_rows = []
    for case, label, unit, names in rows:
        names = names or {col: col for col, _ in PEER_COLUMNS}
        cells = {col: _cell(summary, "PEERS", "ours", f"{case}_{names[col]}_{unit}")
                 if col in names else ("", None) for col, _ in PEER_COLUMNS}
        if not any(text for text, _ in cells.values()):
            continue
        mine = cells["ours"][1]
        ratios = [_ratio(mine, cells[col][1]) if mine is not None else ""
                  for col, _ in PEER_COLUMNS[1:]]
        try:
            text = label.format(**fields)
        except (KeyError, IndexError):
            text = label
        out_rows.append([text, PEER_UNITS.get(unit, unit)] + [cells[c][0] for c, _ in PEER_COLUMNS]
                        + ratios)
    if not out_rows:
        return []
    widths = [max(len(r[k]) for r in out_rows + [head]) for k in range(len(head))]
    out = ["", "PEERS: ours against the CUDA stack, same process, same data, alternating "
           "(medians; ratios ours / peer: > 1x is faster for GB/s and G el/s, slower for "
           "ms and us)"]
    for r in [head, ["-" * w for w in widths]] + out_rows:
        out.append("  ".join(c.ljust(widths[k]) if k < 2 else c.rjust(widths[k])
                             for k, c in enumerate(r)))
    return out


# -- where the results go --------------------------------------------------------------------------

def device_slug(name: str) -> str:
    """A file-name form of a device name: 'llvmpipe (LLVM 15.0.6, 256 bits)' -> 'llvmpipe',
    'NVIDIA H200' -> 'nvidia-h200'."""
    head = name.split("(")[0].strip().lower()
    slug = "".join(c if c.isalnum() else "-" for c in head)
    slug = "-".join(p for p in slug.split("-") if p)[:40].strip("-")
    return slug or "unknown-device"


def result_path(results: str, device: str, day: str, quick: bool, only: list | None) -> str:
    """The first free ``<results>/<device>-<day>-<full|quick>[-W1-W3].json`` (neither it nor
    its ``.txt`` exists: a suffix ``-2``, ``-3`` ... otherwise). Reserved by creating it."""
    base = f"{device_slug(device)}-{day}-{'quick' if quick else 'full'}"
    if only:
        base += "-" + "-".join(only)
    os.makedirs(results, exist_ok=True)
    for k in range(1, 10_000):
        path = os.path.join(results, base + ("" if k == 1 else f"-{k}") + ".json")
        if os.path.exists(os.path.splitext(path)[0] + ".txt"):
            continue
        try:
            with open(path, "x") as f:        # exclusive: two runs never get the same name
                f.write('{"meta": {"complete": false}}\n')
            return path
        except FileExistsError:
            continue
    raise SystemExit(f"no free result name for {base} in {results}")


def refuse_to_overwrite(path: str) -> str | None:
    """The error for ``--json PATH`` when the run would overwrite results (None: free)."""
    taken = [p for p in (path, os.path.splitext(path)[0] + ".txt") if os.path.exists(p)]
    if taken:
        return (f"{taken[0]} exists: pass another --json path, or --overwrite to replace it "
                "(without --json each run gets a new name in bench/results/)")
    return None


# -- the run -------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Benchmark ours vs raw wgpu vs the original.")
    ap.add_argument("--quick", action="store_true", help="fewer launches and repeats (~1 min)")
    ap.add_argument("--only", help="comma-separated workloads, e.g. W1,W3 (W5big: n>=64M)")
    ap.add_argument("--repeats", type=int, help="rounds of the in-process workloads "
                    "(default 5, quick 2); fresh-process workloads use min(K, 3)")
    ap.add_argument("--json", help="where to write the results (default: a new file "
                    "bench/results/<device>-<date>-<full|quick>[-<workloads>].json)")
    ap.add_argument("--overwrite", action="store_true",
                    help="let --json replace an existing file")
    ap.add_argument("--impls", default=",".join(IMPLS[:4]) + ",torch",
                    help="implementations to run (default: all available)")
    ap.add_argument("--original-venv", default=os.path.join(BENCH, ".venv-original"))
    ap.add_argument("--no-setup-original", action="store_true",
                    help="do not create the original's virtual environment")
    ap.add_argument("--w5big-n", type=int, help="W5big's n (default 67,108,864)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per worker request")
    ap.add_argument("--keep-logs", action="store_true",
                    help="copy the workers' logs next to the results (<json name>-logs/)")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load_start > 0.5:
        log(f"note: load average {load_start:.2f} before the run: other work on this machine "
            "makes the figures noisier (ratios within the run stay comparable)")
    params = json.loads(json.dumps(QUICK if args.quick else FULL))
    if args.w5big_n:
        params["W5big"]["n"] = args.w5big_n
    repeats = args.repeats or (2 if args.quick else 5)
    fresh_repeats = max(1, min(repeats, 1 if args.quick else 3))
    wanted = [i.strip() for i in args.impls.split(",") if i.strip()]
    only = [w.strip() for w in args.only.split(",")] if args.only else None
    if only:
        bad = [w for w in only if w not in ALL]
        if bad:
            ap.error(f"unknown workload(s) {bad}; choose from {', '.join(ALL)}")
    if args.json and not args.overwrite and refuse_to_overwrite(args.json):
        ap.error(refuse_to_overwrite(args.json))

    tmp = tempfile.mkdtemp(prefix="cthreads-bench-")
    logdir = os.path.join(tmp, "logs")
    os.makedirs(logdir)
    rt = os.path.join(tmp, "xdg-runtime")
    os.makedirs(rt, mode=0o700)
    notes: list = []

    def env_for(impl: str, cache: str, original: bool = False) -> dict:
        env = dict(os.environ)
        if original:
            env.pop("PYTHONPATH", None)
        else:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
        os.makedirs(cache, exist_ok=True)
        env.update(XDG_RUNTIME_DIR=rt, XDG_CACHE_HOME=cache,
                   MESA_SHADER_CACHE_DIR=os.path.join(cache, "mesa"),
                   CTHREADS_CACHE_DIR=os.path.join(cache, "cthreads"))
        return env

    def scratch_copy(dest: str) -> str:
        os.makedirs(dest, exist_ok=True)
        for f in WORKER_FILES:
            shutil.copy(os.path.join(BENCH, f), dest)
        return dest

    impls: dict = {}
    for name in wanted:
        if name not in IMPLS:
            ap.error(f"unknown implementation {name!r}")
        if name == "original":
            py, note = ensure_original(args.original_venv, not args.no_setup_original)
            if py is None:
                notes.append(f"original skipped: {note}")
                continue
            src = scratch_copy(os.path.join(tmp, "original-src"))
            impls[name] = Impl(name, py, src, env_for(name, os.path.join(tmp, "cache-original"),
                                                      original=True), src, logdir)
        elif name == "torch":
            if only is None or "W5big" in only or "RED" in only:
                r = subprocess.run([sys.executable, "-c", "import torch; "
                                    "print(torch.cuda.is_available())"],
                                   capture_output=True, text=True)
                if r.stdout.strip() == "True":
                    impls[name] = Impl(name, sys.executable, BENCH,
                                       env_for(name, os.path.join(tmp, "cache-torch")), ROOT,
                                       logdir)
        else:
            impls[name] = Impl(name, sys.executable, BENCH,
                               env_for(name, os.path.join(tmp, f"cache-{name}")), ROOT, logdir)
    order = [i for i in IMPLS if i in impls]

    # the long-lived workers; the raw worker tells us the device
    servers = {}
    device = {}
    for name in order:
        if name == "torch":
            continue
        srv = Server(impls[name], args.timeout)
        log(f"starting the {LABEL[name]} worker")
        if srv.start():
            servers[name] = srv
            if name == "raw":
                device = dict(srv.info)
            if name == "ours" and not device:
                device = {"device": srv.info.get("device", "?")}
        else:
            notes.append(f"{LABEL[name]} worker could not start: {srv.error}")
    if "adapter_type" not in device:
        # without the raw worker (which reports it): CPU drivers name themselves
        name = device.get("device", "")
        cpu = any(w in name.lower() for w in ("llvmpipe", "lavapipe", "swiftshader"))
        device.setdefault("adapter_type", "CPU" if cpu else ("GPU" if name else "?"))
    on_gpu = device.get("adapter_type") not in ("CPU", "?")
    params["RED"]["sizes"] = params["RED"]["sizes_gpu" if on_gpu else "sizes_cpu"]
    params["V2"] = params["V2"]["gpu" if on_gpu else "cpu"]
    params["ND"] = params["ND"]["gpu" if on_gpu else "cpu"]
    params["PEERS"] = params["PEERS"]["gpu" if on_gpu else "cpu"]
    workloads = only or [w for w in ALL if w != "W5big" or on_gpu]
    if "W5big" in workloads and not on_gpu and only is None:
        workloads.remove("W5big")

    samples: dict = {w: {} for w in workloads}

    def record(w: str, impl: str, res: dict, t: float) -> None:
        if res.get("skipped"):
            return
        samples[w].setdefault(impl, []).append(res)
        state = "FAIL" if res.get("error") else "ok"
        log(f"  {w:<6} {LABEL[impl]:<9} {state} ({t:.1f} s)"
            + (f": {res['error'][:160]}" if res.get("error") else ""))

    def rotate(names: list, r: int) -> list:
        k = r % len(names) if names else 0
        return names[k:] + names[:k]

    def runnable(w: str) -> list:
        return [i for i in order if i in WHO[w] and (i in servers or w in FRESH)
                and (i != "torch" or w in ("W5big", "RED"))]

    # W4's caches warm up once (the figure is a re-run of an installed program)
    if "W4" in workloads:
        for impl in runnable("W4"):
            impls[impl].one_shot("W4", {}, args.timeout)

    path = args.json or result_path(os.path.join(BENCH, "results"),
                                    device.get("device") or socket.gethostname(),
                                    _dt.date.today().isoformat(), args.quick, only)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def save(final: bool) -> str:
        """Write the JSON and the report (after every round, so a killed run leaves results)."""
        summary = summarize({w: s for w, s in samples.items() if s})
        meta = {
            "host": socket.gethostname(),
            "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "complete": final, "quick": args.quick, "repeats": repeats,
            "fresh_repeats": fresh_repeats, "params": params, "device": device,
            "platform": platform.platform(), "cpus": os.cpu_count(),
            "workers": {n: s.info for n, s in servers.items()}, "notes": notes,
            "elapsed_s": time.perf_counter() - t_start, "load_avg_start": load_start,
            "load_avg_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0,
        }
        report = render(summary, order, notes, meta, on_gpu)
        if not final:
            report = "(partial: the run was still going)\n" + report
        with open(path + ".tmp", "w") as f:
            json.dump({"meta": meta, "summary": summary, "samples": samples,
                       "report": report}, f, indent=1)
        os.replace(path + ".tmp", path)
        with open(os.path.splitext(path)[0] + ".txt", "w") as f:
            f.write(report + "\n")
        return report

    rounds = max(repeats, fresh_repeats)
    for r in range(rounds):
        log(f"round {r + 1}/{rounds}")
        for w in workloads:
            if w in SERVED and r >= repeats or w in FRESH and r >= fresh_repeats:
                continue
            for impl in rotate(runnable(w), r):
                t0 = time.perf_counter()
                p = params[w]
                if w in SERVED:
                    res = servers[impl].request(w, p)
                elif w == "W7":
                    res = run_w7(impls[impl], p, tmp, r, env_for, scratch_copy, args.timeout)
                else:
                    res = impls[impl].one_shot(w, p, args.timeout)
                    if w == "W4" and "process_s" in res:
                        res.setdefault("metrics", {})["process_s"] = res["process_s"]
                record(w, impl, res, time.perf_counter() - t0)
        if r + 1 < rounds:
            save(final=False)
    for srv in servers.values():
        srv.stop()
    print(save(final=True))
    if args.keep_logs:
        logdir = shutil.copytree(logdir, os.path.splitext(path)[0] + "-logs", dirs_exist_ok=True)
    log(f"results: {path} and {os.path.splitext(path)[0]}.txt; worker logs: {logdir}")
    for entry in os.listdir(tmp):              # keep the logs, drop caches and scratch copies
        if entry != "logs":
            shutil.rmtree(os.path.join(tmp, entry), ignore_errors=True)
    return 0


def run_w7(impl: Impl, p: dict, tmp: str, r: int, env_for, scratch_copy, timeout: float) -> dict:
    """Two fresh processes sharing a fresh cache: the new kernel's first launch in each."""
    cache = os.path.join(tmp, f"w7-{impl.name}-{r}")
    env = env_for(impl.name, cache, original=impl.name == "original")
    src = scratch_copy(os.path.join(cache, "src")) if impl.name == "original" else None
    first = impl.one_shot("W7", p, timeout, env=env, script_dir=src, cwd=src)
    if first.get("error"):
        return first
    if "ms" not in first.get("metrics", {}):
        msg = next(iter((first.get("unsupported") or {"ms": "no figure"}).values()))
        return {"error": None, "metrics": {}, "unsupported": {"first_ms": msg, "second_ms": msg}}
    second = impl.one_shot("W7", p, timeout, env=env, script_dir=src, cwd=src)
    if second.get("error"):
        return second
    m = {"first_ms": first["metrics"]["ms"], "steady_ms": first["metrics"].get("steady_ms")}
    if "ms" in second.get("metrics", {}):
        m["second_ms"] = second["metrics"]["ms"]
    if m["steady_ms"] is None:
        del m["steady_ms"]
    out = {"error": None, "metrics": m}
    if second.get("unsupported"):
        out["unsupported"] = {"second_ms": next(iter(second["unsupported"].values()))}
    return out


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
