"""Shared test set-up: tests run on a real Vulkan device; a missing device fails, never skips."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

IN_CI = bool(os.environ.get("CI"))


@pytest.fixture(autouse=True)
def _numpy_errors_raise():
    with np.errstate(all="raise"):
        yield


@pytest.fixture(scope="session")
def device_name() -> str:
    """The device the suite runs on; fails (not skips) when there is none."""
    from cthreads.gpu import CThreadsGPUError, device_name

    try:
        return device_name()
    except CThreadsGPUError as exc:  # pragma: no cover - a broken machine
        pytest.fail(f"no usable Vulkan device: {exc}. Run `make test`, which installs lavapipe.")


def run_python(code: str, env_extra: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (for cold-start, crash and environment tests)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout)
