"""The wheel's build hook: the start-up entry of ``cthreads/backend/native/shipped_cache.py`` (wgpu.h's
parse and the C type strings of a first launch), built for the build environment's wgpu, cffi,
pycparser and Python, goes into the wheel's ``cthreads/backend/shipped/``.

Without it, a process started from a pip install parses wgpu.h before its first launch
(``ci/setup.sh`` builds the same entry into a checkout with ``python -m cthreads.prebuild``).
An entry is keyed to those versions: where the installed ones differ, it is not used and the
first process parses and caches as before. A build where wgpu cannot be imported (or its entry
cannot be built) gets a warning and a wheel without the entry; an editable install skips it
(``ci/setup.sh`` builds the entry into the source tree). ``CTHREADS_NO_PREBUILD=1`` leaves it
out on purpose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: where the entry goes inside the wheel
SHIPPED = "cthreads/backend/shipped"


class StartupCacheHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        # the build runs cthreads itself (two tiny launches): its run-time requirements, so an
        # isolated build (pip install ., python -m build) parses with the versions pip picks
        return list(self.metadata.core.dependencies)

    def initialize(self, version: str, build_data: dict) -> None:
        self._tmp = None
        if self.target_name != "wheel" or version == "editable":
            return
        if os.environ.get("CTHREADS_NO_PREBUILD") == "1":
            self.app.display_info("cthreads: start-up entry left out (CTHREADS_NO_PREBUILD=1)")
            return
        self._tmp = tempfile.mkdtemp(prefix="cthreads-prebuild-")
        env = dict(os.environ, PYTHONPATH=self.root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("PYTHONHOME", None)
        try:
            subprocess.run([sys.executable, "-m", "cthreads.prebuild", "--into", self._tmp],
                           cwd=self.root, env=env, check=True, capture_output=True, text=True,
                           timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            err = getattr(exc, "stderr", None) or str(exc)
            self.app.display_warning(
                "cthreads: no start-up entry in this wheel (a first start will parse wgpu.h; "
                f"cthreads works without it): {err.strip().splitlines()[-1] if err.strip() else exc}")
            return
        for name in sorted(os.listdir(self._tmp)):
            build_data["force_include"][os.path.join(self._tmp, name)] = f"{SHIPPED}/{name}"
            self.app.display_info(f"cthreads: start-up entry {name} in the wheel")

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
