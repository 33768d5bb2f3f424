"""The cold-start caches: wgpu.h's parsed declarations are cached on disk and rebuilt when bad."""

from __future__ import annotations

import glob
import os

from tests.conftest import run_python

CODE = ("import cthreads.gpu as g, json; g.init(); "
        "from cthreads.backend import device as d; print(json.dumps(d.timings()))")


def test_declarations_cache_is_written_reused_and_rebuilt(tmp_path, device_name):
    env = {"CTHREADS_CACHE_DIR": str(tmp_path)}
    first = run_python(CODE, env)
    assert first.returncode == 0, first.stderr
    entries = glob.glob(os.path.join(tmp_path, "cffi-decls-*.pickle"))
    assert len(entries) == 1
    stamp = os.path.getmtime(entries[0])
    second = run_python(CODE, env)
    assert second.returncode == 0, second.stderr
    assert os.path.getmtime(entries[0]) == stamp                 # reused, not rewritten
    with open(entries[0], "wb") as f:                             # a corrupt entry ...
        f.write(b"not a pickle")
    third = run_python(CODE, env)
    assert third.returncode == 0, third.stderr                    # ... is parsed afresh
    with open(entries[0], "rb") as f:
        assert f.read(12) != b"not a pickle"                     # and rewritten


def test_unwritable_cache_dir_is_harmless(tmp_path, device_name):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = run_python(CODE, {"CTHREADS_CACHE_DIR": str(blocker / "sub")})
    assert out.returncode == 0, out.stderr


def test_first_launch_works_in_fresh_processes_in_parallel(tmp_path, device_name):
    import subprocess
    import sys

    code = ("from cthreads.gpu import gpu; import sys; sys.path.insert(0, '.'); "
            "from tests.device.kernels import add_one; y = [1.0] * 8; gpu(add_one, 8, y).join(); "
            "print(y[0])")
    env = dict(os.environ, CTHREADS_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [o[0].strip() for o in outs] == ["2.0"] * 3, [o[1] for o in outs]
