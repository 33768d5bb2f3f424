"""Start-up caches built at install time and kept inside the package.

The first process on a machine parses wgpu.h (``header_cache.import_native_ffi``), which a later
process reads back from the user's cache folder. With a new cache folder (a fresh machine, a
container, CI) every start paid that parse again. This module keeps the same entry, built once
at install time (with the C type strings of a first launch: ``header_cache.write_build_entry``),
in the package's own ``shipped/`` folder, and reads it back:

    python -m cthreads.prebuild      # ci/setup.sh runs it after installing

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
import tempfile

# the data folder stays in backend/ (the wheel hook and ci/setup.sh name it)
FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shipped")
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


def write_atomically(path: str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so that a reader sees
    the old file or the new one; the temporary file never stays behind, even when the write
    fails (a full disk). ``mode``: the file's permissions (None: owner-only)."""
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
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


def build(child: list, folder: str | None = None) -> str:
    """Run ``child`` (a command that ends by calling ``header_cache.write_build_entry`` with the
    path appended to it) with empty cache folders, and keep the entry it wrote in ``folder``
    (default: the package's), replacing any former one; returns its path."""
    folder = folder or FOLDER
    os.makedirs(folder, exist_ok=True)
    _remove_entries(folder)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "entry.json")
        env = dict(os.environ, CTHREADS_CACHE_DIR=tmp, XDG_CACHE_HOME=tmp,
                   MESA_SHADER_CACHE_DIR=os.path.join(tmp, "mesa"))
        subprocess.run([*child, out], env=env, check=True)
        with open(out, "rb") as f:
            data = f.read()
    name = PREFIX + json.loads(data)["key"] + ".json"
    path = os.path.join(folder, name)
    write_atomically(path, data, 0o644)
    write_atomically(_digest_path(path), hashlib.sha256(data).hexdigest().encode() + b"\n",
                     0o644)
    return path
