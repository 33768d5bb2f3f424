"""Probes, lifecycle, adapter choice and error mapping of the device layer, on the real device."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import cthreads.gpu as cg
from cthreads.backend import device as dev
from tests.conftest import IN_CI, run_python

NO_ICD = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"}


def test_available_is_true_and_cached(device_name):
    assert cg.available() is True
    assert cg.available() is True
    assert isinstance(device_name, str) and device_name


def test_device_is_vulkan(device_name):
    ctx = dev.get_context()
    assert ctx.info.backend == "Vulkan"
    assert ctx.name == cg.device_name()
    # real limits were requested, not WebGPU's defaults (128 MiB binding on lavapipe, more on GPUs)
    assert ctx.limit("max-storage-buffer-binding-size") >= 128 * 2**20
    assert ctx.limit("max-compute-workgroup-storage-size") >= 16384
    assert "shader-float32-atomic" in ctx.features or ctx.info.adapter_type != "CPU"


@pytest.mark.skipif(not IN_CI, reason="CI asserts that it really runs on lavapipe")
def test_ci_runs_on_lavapipe_through_vulkan(device_name):
    ctx = dev.get_context()
    assert "llvmpipe" in device_name.lower(), device_name
    assert ctx.info.backend == "Vulkan" and ctx.info.adapter_type == "CPU"


def test_init_is_idempotent(device_name):
    cg.init()
    first = dev.get_context()
    cg.init()
    assert dev.get_context() is first


def test_shutdown_then_reuse(device_name):
    before = dev.generation()
    ctx = dev.get_context()
    cg.shutdown()
    assert dev.current_name() is None
    assert dev.generation() == before + 1
    cg.init()
    assert dev.get_context() is not ctx
    assert cg.available() is True


def test_import_acquires_no_device_and_no_wgpu():
    code = ("import sys, time; t=time.perf_counter(); import cthreads, cthreads.gpu; "
            "from cthreads.gpu import Gpu, gpu, GpuArena; "
            "import json; print(json.dumps({'wgpu': 'wgpu' in sys.modules, "
            "'dev': cthreads.backend.device.current_name(), 's': time.perf_counter()-t}))")
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["wgpu"] is False and info["dev"] is None


def test_adapter_env_selects_by_name(device_name):
    part = device_name.split()[0].upper()      # matching ignores case
    out = run_python("import cthreads.gpu as g; print(g.device_name())",
                     {"CTHREADS_ADAPTER": part})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == device_name


def test_adapter_env_unknown_name_raises_no_device():
    code = ("import cthreads.gpu as g\n"
            "print(g.available())\n"
            "try:\n    g.init()\nexcept g.VulkanNoDevice as e:\n    print('NoDevice:', e)\n")
    out = run_python(code, {"CTHREADS_ADAPTER": "no-such-adapter-xyz"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False"
    assert lines[1].startswith("NoDevice:") and "no-such-adapter-xyz" in lines[1]


def test_no_vulkan_driver_means_no_device_and_no_crash():
    code = ("import cthreads.gpu as g\n"
            "print(g.available())\n"
            "try:\n    g.init()\nexcept g.VulkanNoDevice as e:\n    print('NoDevice:', e)\n"
            "print('alive')\n")
    out = run_python(code, NO_ICD)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False"
    assert lines[1].startswith("NoDevice:") and "mesa-vulkan-drivers" in lines[1]
    assert lines[2] == "alive"


def test_info_cli_reports_the_device(device_name):
    plain = {k: v for k, v in os.environ.items()
             if k not in ("CTHREADS_BATCH", "CTHREADS_COARSEN", "CTHREADS_VEC")}
    out = subprocess.run([sys.executable, "-m", "cthreads.gpu", "info"], capture_output=True,
                         text=True, timeout=120, env=plain)
    assert out.returncode == 0, out.stderr
    assert f"chosen: {device_name} [Vulkan" in out.stdout
    assert "wgpu-native" in out.stdout and "max-storage-buffer-binding-size" in out.stdout
    assert "four-lane variant        on" in out.stdout
    assert "batched submissions      on: up to 64 launches" in out.stdout
    off = subprocess.run([sys.executable, "-m", "cthreads.gpu", "info"], capture_output=True,
                         text=True, timeout=120,
                         env=dict(plain, CTHREADS_BATCH="0", CTHREADS_COARSEN="2"))
    assert "batched submissions      off (CTHREADS_BATCH=0)" in off.stdout
    assert "indexes per invocation   2 (CTHREADS_COARSEN)" in off.stdout


def test_info_cli_without_driver_fails_with_hint():
    env = dict(os.environ, **NO_ICD)
    out = subprocess.run([sys.executable, "-m", "cthreads.gpu", "info"], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 1
    assert "apt-get install libvulkan1 mesa-vulkan-drivers" in out.stdout


def test_missing_wgpu_maps_to_not_built():
    code = ("import sys; sys.modules['wgpu'] = None\n"
            "import cthreads.gpu as g\n"
            "print(g.available())\n"
            "try:\n    g.init()\nexcept g.VulkanNotBuiltError as e:\n    print('NotBuilt:', e)\n")
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False" and lines[1].startswith("NotBuilt:") and "pip install" in lines[1]


def test_missing_loader_maps_to_loader_not_found():
    code = ("import cthreads.backend.device as d\n"
            "d.find_vulkan_loader = lambda: None\n"
            "import cthreads.gpu as g\n"
            "try:\n    g.init()\nexcept g.VulkanLoaderNotFound as e:\n    print('Loader:', e)\n")
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Loader:") and "libvulkan1" in out.stdout
