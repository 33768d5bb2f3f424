"""Start-up caches built at install time and kept inside the package.

The first process on a machine parses wgpu.h (``cffi_types.import_native_ffi``), which a later
process reads back from the user's cache folder. With a new cache folder (a fresh machine, a
container, CI) every start paid that parse again. This module builds the same entry once, at
install time, into the package's own ``shipped/`` folder:

    python -m cthreads.backend.shipped_cache      # ci/setup.sh runs it after installing

An entry is named by the same key as a user cache entry (a hash of the wgpu version, the header
text, the cffi, pycparser and Python versions), so after an upgrade of any of them it is simply
not found and the user cache takes over. It is used only when its SHA-256 matches the digest
written beside it, and when the file and its folder belong to the user or to whoever installed
the package and nobody else can write them: the same trust as the code next to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import weakref

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shipped")
PREFIX = "cffi-decls-"


def _trusted(st) -> bool:
    """Owned by the user or by the package's installer, and writable by nobody else."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    owners = {getuid(), os.stat(__file__).st_uid}
    return st.st_uid in owners and not st.st_mode & 0o022


def read_bytes(name: str) -> bytes:
    """The bytes of the shipped entry ``name``, verified against its digest; raises when it is
    missing, untrusted or does not match."""
    folder = FOLDER
    if not _trusted(os.stat(folder)):
        raise PermissionError(f"{folder} can be written by others")
    path = os.path.join(folder, name)
    with open(path, "rb") as f:
        if not _trusted(os.fstat(f.fileno())):
            raise PermissionError(f"{path} can be written by others")
        data = f.read()
    with open(_digest_path(path), "rb") as f:
        digest = f.read().strip().decode("ascii")
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"{path} does not match its digest")
    return data


def _digest_path(path: str) -> str:
    return os.path.splitext(path)[0] + ".sha256"


def _write_atomically(path: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _remove_entries(folder: str) -> None:
    for name in os.listdir(folder):
        if name.startswith(PREFIX):
            os.unlink(os.path.join(folder, name))


def build(folder: str | None = None) -> str:
    """Build the entry in a child process with empty cache folders and keep it in ``folder``
    (default: the package's), replacing any former one; returns its path."""
    folder = folder or FOLDER
    os.makedirs(folder, exist_ok=True)
    _remove_entries(folder)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "entry.json")
        env = dict(os.environ, CTHREADS_CACHE_DIR=tmp, XDG_CACHE_HOME=tmp,
                   MESA_SHADER_CACHE_DIR=os.path.join(tmp, "mesa"))
        code = f"from cthreads.backend.shipped_cache import _child; _child({out!r})"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        with open(out, "rb") as f:
            data = f.read()
    name = PREFIX + json.loads(data)["key"] + ".json"
    path = os.path.join(folder, name)
    _write_atomically(path, data)
    _write_atomically(_digest_path(path), hashlib.sha256(data).hexdigest().encode() + b"\n")
    return path


def _child(out: str) -> None:
    """``build``'s child: parse wgpu.h afresh, make a few tiny launches while noting the C type
    strings wgpu-py parses on the way (its module-level callbacks, its descriptors), and write
    the declarations with those parsed types to ``out``. Without a device, the types noted up
    to then are kept."""
    from cffi import cparser

    from . import cffi_types

    noted: dict = {}
    parse = cparser.Parser.parse_type_and_quals

    def noting(self, cdecl):
        result = parse(self, cdecl)
        noted.setdefault(id(self), {})[cdecl] = result
        return result

    cparser.Parser.parse_type_and_quals = noting
    try:
        parser = cffi_types.import_native_ffi().ffi._parser
        try:
            _first_launches()
        except Exception as exc:
            print(f"no launch at install time ({type(exc).__name__}): fewer types kept",
                  file=sys.stderr)
    finally:
        cparser.Parser.parse_type_and_quals = parse
    strings = list(noted.get(id(parser), {}))
    # the parser's objects have changed since (cffi marks structs it has laid out): the types
    # are parsed again on a parser holding the declarations as the header's parse left them
    [name] = [n for n in os.listdir(cffi_types.cache_dir()) if n.startswith(PREFIX)]
    with open(os.path.join(cffi_types.cache_dir(), name), "rb") as f:
        parsed = json.loads(f.read())
    classes = cffi_types._model_classes()
    state, _ = cffi_types._decode(parsed, classes, cparser.Parser)
    pristine = cparser.Parser()
    vars(pristine).update(state)
    pristine._structnode2type = weakref.WeakKeyDictionary()
    cffi_types._install_fast_parse(pristine)
    declared = dict(pristine._declarations)
    types = {}
    for cdecl in strings:
        try:
            types[cdecl] = pristine.parse_type_and_quals(cdecl)
        except Exception:
            pass
    now = pristine._declarations
    doc = cffi_types._encode(cffi_types.parser_state(pristine), classes, types)
    same = (len(now) == len(declared) and all(now.get(k) is v for k, v in declared.items())
            and doc["state"] == parsed["state"]
            and doc["objects"][:len(parsed["objects"])] == parsed["objects"])
    if not same:                              # a type string changed the declarations
        doc = parsed
    doc["key"] = parsed["key"]
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


def _first_launches() -> None:
    """A tiny launch on lists and one on numpy arrays, their results checked."""
    import numpy as np

    from .. import samples
    from ..gpu import gpu

    y = [1.0, 2.0, 3.0]
    gpu(samples.saxpy, 3, 2.0, [1.0, 1.0, 1.0], y).join()
    ya = np.ones(8, np.float32)
    gpu(samples.saxpy, 8, 2.0, np.ones(8, np.float32), ya).join()
    if y != [3.0, 4.0, 5.0] or not (ya == 3.0).all():
        raise RuntimeError(f"wrong results {y}, {ya}")


if __name__ == "__main__":
    print(build())
