#!/usr/bin/env python3
"""W4 in fresh cache folders: import -> first correct tiny saxpy, ours against the original.

    .venv/bin/python bench/cold_fresh.py [--rounds 7] [--impls ours,original] [--ours ROOT ...]

``bench/run.py``'s W4 warms the caches once and then measures re-runs; this measures both:
"cold", a new process with new, empty ``CTHREADS_CACHE_DIR``, ``XDG_CACHE_HOME`` and
``MESA_SHADER_CACHE_DIR`` each time (a fresh machine), and "warm", a new process reusing one set
of those folders. Implementations alternate within each round; medians and ratios to the
original are printed. ``--ours ROOT`` adds another checkout of cthreads as ``ours:ROOT`` (to
compare two versions in the same run). The original (``bench/.venv-original``, made by
``bench/run.py``) keeps its compiled shaders next to the kernel's source, in a scratch folder
shared by all its runs, as an installed program would.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
MARK = "@@RESULT "


def run(impl: str, cache: str, scratch: str) -> float:
    env = dict(os.environ, XDG_CACHE_HOME=cache, MESA_SHADER_CACHE_DIR=os.path.join(cache, "mesa"),
               CTHREADS_CACHE_DIR=os.path.join(cache, "cthreads"))
    if impl == "original":
        env.pop("PYTHONPATH", None)
        py, here = os.path.join(BENCH, ".venv-original", "bin", "python"), scratch
    else:
        root = impl.partition(":")[2] or ROOT
        env["PYTHONPATH"] = root
        py, here = sys.executable, os.path.join(root, "bench")
    out = subprocess.run([py, os.path.join(here, "worker.py"), "--impl", impl.partition(":")[0],
                          "--workload", "W4"], env=env, cwd=here, capture_output=True, text=True,
                         timeout=300)
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            res = json.loads(line[len(MARK):])
            if res.get("error"):
                raise SystemExit(f"{impl}: {res['error']}")
            return res["metrics"]["s"]
    raise SystemExit(f"{impl} gave no result:\n{out.stderr[-2000:]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--impls", default="ours,original")
    ap.add_argument("--ours", action="append", default=[], help="another checkout to compare")
    args = ap.parse_args()
    impls = [i for i in args.impls.split(",") if i] + [f"ours:{r}" for r in args.ours]
    tmp = tempfile.mkdtemp(prefix="cthreads-cold-")
    try:
        scratch = os.path.join(tmp, "original-src")
        os.makedirs(scratch)
        for f in ("worker.py", "kernels_cold.py"):
            shutil.copy(os.path.join(BENCH, f), scratch)
        warm = {i: os.path.join(tmp, f"warm-{k}") for k, i in enumerate(impls)}
        for i in impls:
            run(i, warm[i], scratch)                  # fills the warm caches
        res: dict = {}
        for r in range(args.rounds):
            for i in impls[r % len(impls):] + impls[:r % len(impls)]:
                res.setdefault((i, "cold"), []).append(
                    run(i, os.path.join(tmp, f"cold-{r}-{impls.index(i)}"), scratch))
                res.setdefault((i, "warm"), []).append(run(i, warm[i], scratch))
        for mode in ("cold", "warm"):
            base = res.get(("original", mode))
            for i in impls:
                v = res[(i, mode)]
                ratio = (f"  {statistics.median(v) / statistics.median(base):.2f}x original"
                         if base else "")
                print(f"{mode} {i:<24} median {statistics.median(v):.3f} s{ratio}   "
                      + " ".join(f"{x:.3f}" for x in v))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
