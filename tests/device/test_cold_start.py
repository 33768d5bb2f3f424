"""The cold-start caches: wgpu.h's parsed declarations are cached on disk and rebuilt when bad."""

from __future__ import annotations

import glob
import os

from tests.conftest import run_python

CODE = "import cthreads.gpu as g; g.init(); print('ok')"


def _entries(folder) -> list[str]:
    return [p for p in glob.glob(os.path.join(folder, "cffi-decls-*")) if not p.endswith(".tmp")]


def test_declarations_cache_is_written_reused_and_rebuilt(tmp_path, device_name):
    env = {"CTHREADS_CACHE_DIR": str(tmp_path)}
    first = run_python(CODE, env)
    assert first.returncode == 0, first.stderr
    entries = _entries(tmp_path)
    assert len(entries) == 1
    stamp = os.path.getmtime(entries[0])
    second = run_python(CODE, env)
    assert second.returncode == 0, second.stderr
    assert os.path.getmtime(entries[0]) == stamp                 # reused, not rewritten
    with open(entries[0], "wb") as f:                             # a corrupt entry ...
        f.write(b"not an entry")
    third = run_python(CODE, env)
    assert third.returncode == 0, third.stderr                    # ... is parsed afresh
    with open(entries[0], "rb") as f:
        assert f.read(12) != b"not an entry"                     # and rewritten


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


CONST = ("from cthreads.backend.native.header_cache import import_native_ffi; "
         "print(import_native_ffi().lib.WGPU_COPY_STRIDE_UNDEFINED)")



def test_a_planted_entry_cannot_run_code(tmp_path, device_name):
    import pickle

    first = run_python(CONST, {"CTHREADS_CACHE_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    [entry] = _entries(tmp_path)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    with open(entry, "wb") as f:                  # what an attacker able to write there plants
        pickle.dump(Payload(), f)
    out = run_python(CONST, {"CTHREADS_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4294967295"
    assert not marker.exists()                     # nothing of the file was executed
    with open(entry, "rb") as f:
        assert f.read() != pickle.dumps(Payload())  # it was parsed afresh and rewritten


def test_an_entry_others_can_write_is_not_trusted(tmp_path, device_name):
    env = {"CTHREADS_CACHE_DIR": str(tmp_path)}
    assert run_python(CONST, env).stdout.strip() == "4294967295"
    [entry] = _entries(tmp_path)

    def plant():
        with open(entry) as f:
            text = f.read()
        assert "4294967295" in text
        with open(entry, "w") as f:
            f.write(text.replace("4294967295", "12345"))

    plant()                                       # a private entry is the user's own: loaded
    assert run_python(CONST, env).stdout.strip() == "12345"
    os.chmod(entry, 0o666)                        # writable by others: ignored and replaced
    out = run_python(CONST, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4294967295"
    assert os.stat(entry).st_mode & 0o022 == 0
    plant()
    os.chmod(tmp_path, 0o777)                     # a folder others can write: not used at all
    try:
        out = run_python(CONST, env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "4294967295"
        with open(entry) as f:
            assert "12345" in f.read()            # and not written either
    finally:
        os.chmod(tmp_path, 0o700)


FULL_DISK = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
"""


def test_a_full_disk_leaves_no_temporary_file(tmp_path, device_name):
    out = run_python(FULL_DISK + CODE, {"CTHREADS_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert os.listdir(tmp_path) == []


DECLS = """
import json
from cthreads.backend.native.header_cache import import_native_ffi, speed_up_type_parsing
ffi = import_native_ffi().ffi
speed_up_type_parsing(ffi)
decls = ffi._parser._declarations
sizes = {n: ffi.sizeof(n[8:]) for n in decls if n.startswith("typedef WGPU") and "Callback" not in n
         and "Proc" not in n and not n.endswith("Flags")}
print(json.dumps([sorted((k, repr(v)) for k, v in decls.items()), sizes], sort_keys=True))
"""


def test_a_cached_parse_equals_a_fresh_one(tmp_path, device_name):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    fresh = run_python(DECLS, {"CTHREADS_CACHE_DIR": str(blocker / "sub")})
    assert fresh.returncode == 0, fresh.stderr
    env = {"CTHREADS_CACHE_DIR": str(tmp_path / "cache")}
    assert run_python(DECLS, env).stdout == fresh.stdout          # parsed, entry written
    assert len(_entries(tmp_path / "cache")) == 1
    cached = run_python(DECLS, env)                                 # read from the entry
    assert cached.returncode == 0, cached.stderr
    assert cached.stdout == fresh.stdout
    assert len(fresh.stdout) > 10_000
