"""The parse of wgpu.h built at install time: used in a fresh cache folder, verified, and ignored
(the header parsed afresh) when it does not match the installed wgpu or its digest."""

from __future__ import annotations

import json
import os

import pytest

from cthreads import prebuild
from cthreads.backend.native import shipped_cache
from tests.conftest import run_python

#: counts the header parses and the slow type-string parses of a child process, then runs a
#: tiny kernel and prints the counts, a constant of the header and the kernel's result
CHILD = """
import json, sys
from cffi import cparser
import cthreads.backend.native.shipped_cache as shipped
shipped.FOLDER = {folder!r}
{setup}
calls = {{"header": 0, "slow": 0}}
internal, slow = cparser.Parser._internal_parse, cparser.Parser._parse
def count_header(self, *a, **k):
    calls["header"] += 1
    return internal(self, *a, **k)
def count_slow(self, *a, **k):
    calls["slow"] += 1
    return slow(self, *a, **k)
cparser.Parser._internal_parse, cparser.Parser._parse = count_header, count_slow
from cthreads.backend.native.header_cache import import_native_ffi
const = import_native_ffi().lib.WGPU_COPY_STRIDE_UNDEFINED
counted = dict(calls)
from cthreads.gpu import gpu
sys.path.insert(0, ".")
from tests.device.kernels import add_one
y = [1.0, 2.5, -3.0]
gpu(add_one, 3, y).join()
print(json.dumps([counted, const, y]))
"""

RIGHT = [4294967295, [2.0, 3.5, -2.0]]


def _child(tmp_path, folder, setup="", cache="cache"):
    out = run_python(CHILD.format(folder=str(folder), setup=setup),
                     {"CTHREADS_CACHE_DIR": str(tmp_path / cache)})
    assert out.returncode == 0, out.stderr
    calls, const, y = json.loads(out.stdout.strip().splitlines()[-1])
    return calls, [const, y]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shipped")
    path = prebuild.build(str(folder))
    assert os.path.dirname(path) == str(folder)
    return path


def _entry_copy(built, tmp_path):
    folder = tmp_path / "shipped"
    folder.mkdir(mode=0o755, parents=True)
    name = os.path.basename(built)
    for suffix in (".json", ".sha256"):
        src = built[:-5] + suffix
        with open(src, "rb") as f:
            (folder / (name[:-5] + suffix)).write_bytes(f.read())
    return folder, folder / name


def test_a_fresh_cache_folder_reads_the_shipped_entry(built, tmp_path, device_name):
    folder, entry = _entry_copy(built, tmp_path)
    calls, result = _child(tmp_path, folder)
    assert result == RIGHT
    assert calls == {"header": 0, "slow": 0}          # no parse of the header nor of types
    # ... and the user's folder got its copy, read by the next start
    assert (tmp_path / "cache" / entry.name).read_bytes() == entry.read_bytes()


def test_without_a_shipped_entry_the_header_is_parsed(tmp_path, device_name):
    empty = tmp_path / "none"
    empty.mkdir()
    calls, result = _child(tmp_path, empty)
    assert result == RIGHT
    assert calls["header"] == 1


def test_type_strings_of_wgpus_module_are_parsed_fast(tmp_path, device_name):
    """Also a fresh parse hands the type strings parsed while wgpu's modules load (callback
    signatures) to the short-preamble parser: one slow parse, the header's own."""
    empty = tmp_path / "none"
    empty.mkdir()
    calls, result = _child(tmp_path, empty)
    assert result == RIGHT
    assert calls == {"header": 1, "slow": 1}


def test_an_entry_of_another_wgpu_version_is_not_used(built, tmp_path, device_name):
    folder, _ = _entry_copy(built, tmp_path)
    calls, result = _child(tmp_path, folder, setup="import wgpu; wgpu.__version__ = '0.0.1'")
    assert result == RIGHT
    assert calls["header"] == 1


def _plant(entry, digest_too: bool):
    text = entry.read_text()
    assert "4294967295" in text
    data = text.replace("4294967295", "12345").encode()
    entry.write_bytes(data)
    if digest_too:
        import hashlib
        entry.with_suffix(".sha256").write_text(hashlib.sha256(data).hexdigest() + "\n")


def test_an_entry_is_used_only_when_it_matches_its_digest(built, tmp_path, device_name):
    folder, entry = _entry_copy(built, tmp_path)
    _plant(entry, digest_too=True)                 # verified: its value is what the child sees
    calls, result = _child(tmp_path, folder, cache="a")
    assert calls["header"] == 0 and result[0] == 12345
    folder, entry = _entry_copy(built, tmp_path / "again")
    _plant(entry, digest_too=False)                # the digest of the entry as built
    calls, result = _child(tmp_path, folder, cache="b")
    assert calls["header"] == 1 and result == RIGHT
    entry.write_bytes(b'{"key": "cut')              # a cut file, whatever the digest says
    calls, result = _child(tmp_path, folder, cache="c")
    assert calls["header"] == 1 and result == RIGHT


def test_an_entry_others_can_write_is_not_used(built, tmp_path, device_name):
    folder, entry = _entry_copy(built, tmp_path)
    os.chmod(entry, 0o666)
    calls, result = _child(tmp_path, folder, cache="a")
    assert calls["header"] == 1 and result == RIGHT
    os.chmod(entry, 0o644)
    os.chmod(folder, 0o777)
    try:
        calls, result = _child(tmp_path, folder, cache="b")
        assert calls["header"] == 1 and result == RIGHT
    finally:
        os.chmod(folder, 0o755)


DECLS = """
import json
import cthreads.backend.native.shipped_cache as shipped
shipped.FOLDER = {folder!r}
from cthreads.backend.native import header_cache
ffi = header_cache.import_native_ffi().ffi
parser = ffi._parser
state = header_cache._encode(header_cache.parser_state(parser), header_cache._model_classes())
def c_type(s):
    return ffi._typeof(s, consider_function_as_funcptr=True)
types = {{s: [repr(parser.parse_type_and_quals(s)), repr(c_type(s)), ffi.sizeof(c_type(s))
              if not s.endswith("[]") and "(" not in s else 0] for s in {strings!r}}}
sizes = {{n: ffi.sizeof(n[8:]) for n in parser._declarations if n.startswith("typedef WGPU")
          and "Callback" not in n and "Proc" not in n and not n.endswith("Flags")}}
print(json.dumps([state, types, sizes], sort_keys=True))
"""


def test_the_shipped_parse_equals_a_fresh_one(built, tmp_path, device_name):
    """Every attribute of every declaration, and each type string the entry holds."""
    with open(built) as f:
        strings = [k for k, _ in json.load(f)["types"]["D"]]
    assert "WGPUBufferDescriptor *" in strings and len(strings) > 30
    folder, _ = _entry_copy(built, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    empty = tmp_path / "none"
    empty.mkdir()
    outs = []
    for where in (empty, folder):
        out = run_python(DECLS.format(folder=str(where), strings=strings),
                         {"CTHREADS_CACHE_DIR": str(blocker / "sub")})
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[1] == outs[0] and len(outs[0]) > 100_000


def test_the_package_folder_holds_an_entry_for_the_installed_wgpu(tmp_path, device_name):
    """`make test` (ci/setup.sh) builds it: a fresh cache folder does not parse the header."""
    calls, result = _child(tmp_path, shipped_cache.FOLDER)
    assert result == RIGHT
    assert calls == {"header": 0, "slow": 0}
