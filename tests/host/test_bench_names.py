"""bench/run.py's result files: each run gets a name of its own (device, date, mode, workloads,
then -2, -3 ...), and --json refuses to overwrite an existing file."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_device_names_become_file_names():
    run = _run_module()
    assert run.device_slug("llvmpipe (LLVM 15.0.6, 256 bits)") == "llvmpipe"
    assert run.device_slug("NVIDIA H200") == "nvidia-h200"
    assert run.device_slug("  ") == "unknown-device"
    assert run.device_slug("a/b\\\\c:d") == "a-b-c-d"


def test_runs_of_one_day_get_names_of_their_own(tmp_path):
    run = _run_module()
    res = tmp_path / "results"
    day = "2026-12-01"
    full = run.result_path(str(res), "NVIDIA H200", day, False, None)
    quick = run.result_path(str(res), "NVIDIA H200", day, True, None)
    only = run.result_path(str(res), "NVIDIA H200", day, True, ["W1", "W3"])
    again = run.result_path(str(res), "NVIDIA H200", day, False, None)
    lava = run.result_path(str(res), "llvmpipe (LLVM 15.0.6, 256 bits)", day, False, None)
    names = [Path(p).name for p in (full, quick, only, again, lava)]
    assert names == ["nvidia-h200-2026-12-01-full.json", "nvidia-h200-2026-12-01-quick.json",
                     "nvidia-h200-2026-12-01-quick-W1-W3.json",
                     "nvidia-h200-2026-12-01-full-2.json", "llvmpipe-2026-12-01-full.json"]
    assert all(Path(p).exists() for p in (full, quick, only, again, lava))   # reserved
    # a report left without its JSON keeps its name too
    (res / "llvmpipe-2026-12-01-quick.txt").write_text("an earlier report\n")
    assert Path(run.result_path(str(res), "llvmpipe", day, True, None)).name == \
        "llvmpipe-2026-12-01-quick-2.json"
    assert (res / "llvmpipe-2026-12-01-quick.txt").read_text() == "an earlier report\n"


def test_an_explicit_json_path_is_not_overwritten(tmp_path):
    run = _run_module()
    taken = tmp_path / "h200.json"
    taken.write_text('{"kept": true}\n')
    assert run.refuse_to_overwrite(str(tmp_path / "new.json")) is None
    message = run.refuse_to_overwrite(str(taken))
    assert message.startswith(f"{taken} exists: pass another --json path, or --overwrite")
    (tmp_path / "other.txt").write_text("report\n")
    assert run.refuse_to_overwrite(str(tmp_path / "other.json")).startswith(
        f"{tmp_path / 'other.txt'} exists")
    # the command stops before any work, the file unchanged
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--json", str(taken),
                          "--only", "W1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--overwrite" in out.stderr, out.stderr
    assert taken.read_text() == '{"kept": true}\n'
