"""bench/compute_bound.py and bench/peers_all.py at small sizes: every form of every
compute-bound kernel (checked, unchecked, hand WGSL) gives a result that agrees with numpy, a
wrong result is caught by the check, and the PEERS table runs its rows (a smoke test of the
benchmarks' code paths: no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SMALL_SET = r"""
import json, sys
import numpy as np
sys.path.insert(0, "bench")
import compute_bound as CB
CB.SIZES.update({
    "matmul_flat": ({"n": 24}, None), "matmul_2d": ({"n": 24}, None),
    "conv1d": ({"n": 1000, "m": 7}, None), "conv2d": ({"w": 40, "h": 24, "m": 3}, None),
    "nbody": ({"n": 100}, None), "stencil9": ({"w": 40, "h": 24}, None),
    "mandel": ({"w": 48, "h": 32, "it": 64}, None)})
rows = CB.run_set(small=True, reps=1, k=2)
bad = {}
for name in CB.ORDER:
    p = CB.Problem(name, CB.SIZES[name][0])
    out = {k: np.zeros_like(v) for k, v in p.lists() if k in p.out}
    bad[name] = p.check(out)
print(json.dumps({"rows": [{"kernel": r["kernel"], "ms": r["ms"]} for r in rows],
                  "zeros": bad, "report": CB.report(rows, "test")}))
"""


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def test_every_form_of_the_compute_set_agrees_with_numpy(device_name):
    proc = subprocess.run([sys.executable, "-c", SMALL_SET], capture_output=True, text=True,
                          env=_env(), cwd=ROOT, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [r["kernel"] for r in res["rows"]] == list(
        ("matmul_flat", "matmul_2d", "conv1d", "conv2d", "nbody", "stencil9", "mandel"))
    for r in res["rows"]:
        for form in ("checked", "unchecked", "wgsl"):
            assert isinstance(r["ms"][form], float), (r["kernel"], form, r["ms"][form])
    # all-zero outputs are wrong for every kernel: the checks would report them
    assert all(isinstance(v, str) for v in res["zeros"].values()), res["zeros"]
    assert any("target" in line for line in res["report"])


def test_peers_all_runs_its_rows(tmp_path, device_name):
    out = tmp_path / "pa.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "peers_all.py"), "--quick",
                           "--only", "tiny,ga_relaunch,vec_step,tinyq,capture",
                           "--json", str(out)],
                          capture_output=True, text=True, env=_env(), timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {r["case"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"tiny", "ga_relaunch", "vec_step", "tinyq", "capture"}
    for case in ("tiny", "ga_relaunch", "vec_step", "tinyq"):
        assert isinstance(rows[case]["ours"], float), rows[case]
    ours = rows["capture"]["ours"]
    assert isinstance(ours, float) or str(ours).startswith("not available"), ours
    assert not [r for r in rows.values() for _, v in r["peers"] if str(v).startswith("FAIL")]
    assert "capture: 100 tiny launches replayed" in proc.stdout
