#!/usr/bin/env bash
# Install what `make demo` / `make test` need, and nothing that is already there:
#   1. a Vulkan loader and driver (Debian's libvulkan1 + mesa-vulkan-drivers = lavapipe) when the
#      machine has no Vulkan driver at all;
#   2. a virtual environment .venv with cthreads (editable) and its test extra.
# Idempotent; the second run takes well under a second. Where it cannot install (not root, no
# apt-get), it says what to install and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="test"
[ "${1:-}" = "bench" ] && extra="test,bench"

say() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@";
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo "$@";
  else return 1; fi
}

apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    say "cannot install $* (no apt-get here). Install them with your package manager, then re-run."
    exit 1
  fi
  say "installing $* with apt-get"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
     || ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; then
    say "could not install $* (need root or passwordless sudo). Run as root:"
    say "  apt-get update && apt-get install -y $*"
    exit 1
  fi
}

# --- Python ---------------------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  say "python3 is missing: install Python 3.11 or newer (apt-get install python3) and re-run"; exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  say "cthreads needs Python 3.11 or newer (the version CI tests, Debian 12's python3); $("$PYTHON" --version) found"; exit 1
fi

# --- Vulkan loader + driver -------------------------------------------------------------------
have_loader() { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' || [ -e /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ] || [ -e /usr/lib/aarch64-linux-gnu/libvulkan.so.1 ]; }
have_icd() {
  local f
  for f in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json /usr/local/share/vulkan/icd.d/*.json; do
    [ -e "$f" ] && return 0
  done
  [ -n "${VK_ICD_FILENAMES:-}${VK_DRIVER_FILES:-}" ]
}
if [ "$(uname -s)" = Linux ]; then
  pkgs=()
  have_loader || pkgs+=(libvulkan1)
  have_icd || pkgs+=(mesa-vulkan-drivers)
  if [ ${#pkgs[@]} -gt 0 ]; then apt_install "${pkgs[@]}"; fi
fi

# --- virtual environment ----------------------------------------------------------------------
# What a first process would otherwise compute (docs/performance.md, "Cold start"): the parse
# of wgpu.h (cthreads/prebuild.py), built after every install and whenever it is missing, and
# cthreads' bytecode, which an editable install does not compile (and which is never written
# where PYTHONDONTWRITEBYTECODE is set); a failure only costs start-up time.
shipped() {
  compgen -G 'cthreads/backend/shipped/cffi-decls-*.json' >/dev/null \
    || .venv/bin/python -m cthreads.prebuild >/dev/null \
    || say "could not build the start-up cache (cthreads works without it, starting slower)"
  .venv/bin/python -m compileall -q cthreads >/dev/null 2>&1 || true
}
stamp_want="$("$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(open("pyproject.toml","rb").read()).hexdigest()[:16])')-$extra"
if [ -x .venv/bin/python ] && [ "$(cat .setup-stamp 2>/dev/null)" = "$stamp_want" ]; then
  shipped
  exit 0
fi
if [ ! -x .venv/bin/python ]; then
  if ! "$PYTHON" -m venv .venv >/dev/null 2>&1; then
    rm -rf .venv
    pyver="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install "python${pyver}-venv"
    "$PYTHON" -m venv .venv
  fi
fi
say "installing cthreads-wgpu[$extra] into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
# This project was installed as `cthreads` before it became `cthreads-wgpu`; PyPI's `cthreads`
# and `cthreads-gpu` (the original project) provide the same import name. An existing .venv
# loses them first, so that exactly one distribution provides `import cthreads`.
for old in cthreads cthreads-gpu; do
  if .venv/bin/python -m pip show -q --disable-pip-version-check "$old" >/dev/null 2>&1; then
    say "removing $old from .venv (replaced by cthreads-wgpu, which has the same import name)"
    .venv/bin/python -m pip uninstall -y -q --disable-pip-version-check "$old" >/dev/null
  fi
done
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extra]"
rm -f cthreads/backend/shipped/cffi-decls-*
shipped
echo "$stamp_want" > .setup-stamp
