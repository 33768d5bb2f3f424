"""bench/gpuarray.py runs every row at small sizes and checks its results (a smoke test of the
benchmark's code paths: no timing is asserted). ``--binding-bytes`` makes cthreads treat a few
KiB as the storage-binding limit, so rows c and d (and b past the limit) take the split paths
where cthreads has them; where it refuses them, the row says why ("not available: ...")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_gives_a_checked_figure_or_says_why(tmp_path, device_name):
    out = tmp_path / "ga.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpuarray.py"), "--quick",
                           "--binding-bytes", "4096", "--json", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    figures, why = res["figures"], res["not_measured"]
    assert not [k for k, v in why.items() if "FAIL" in v], why     # no wrong result, no crash
    for key in ("a_ours_GBps", "a_arena_GBps", "a_host_ours_us", "a_host_arena_us",
                "b_raw_up_GBps", "b_raw_down_GBps", "c_under_GBps", "d_under_GBps"):
        assert figures[key] > 0, key
    for key in ("b_to_device_GBps", "b_numpy_GBps", "c_big_GBps", "d_big_GBps"):
        assert key in figures or why[key].startswith(("not available", "not run")), key
    assert (figures["b_bytes"], figures["c_n_big"], figures["d_n_big"]) == (8192, 4096, 4096)
    assert "Targets" in res["report"] and (tmp_path / "ga.txt").exists()
