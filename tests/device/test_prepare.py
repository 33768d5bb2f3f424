"""prepare(), compile(), force=True and log=True, as the launch guide uses them."""

from __future__ import annotations

import textwrap

from cthreads.gpu import compile as compile_kernels
from cthreads.gpu import gpu, prepare
from tests.conftest import run_python
from tests.device.kernels import add_one, saxpy


def test_prepare_returns_a_summary(device_name):
    summary = prepare()
    assert summary["device"] == device_name and summary["backend"] == "Vulkan"
    assert "saxpy" in summary["kernels"] and "add_one" in summary["kernels"]
    assert compile_kernels()["kernels"] == summary["kernels"]


def test_prepare_compiles_every_variant_a_launch_picks(device_name):
    import numpy as np

    prepare()
    rt = saxpy.runtime_for()
    compiled = rt.compiled_variants()
    assert any(v.form.startswith("vec_") for v in compiled)                  # the four-lane form is among them
    big = (1 << 21) + 64                                    # a large launch on any device
    for n in (64, 63, big, big - 1):                        # small and large launches
        x = np.ones(n, np.float32)
        y = np.zeros(n, np.float32)
        gpu(saxpy, n, 2.0, x, y).join()
        assert float(y.min()) == float(y.max()) == 2.0
    assert rt.compiled_variants() == compiled


def test_prepare_with_no_kernels_defined(tmp_path):
    out = run_python("import cthreads.gpu as g; s = g.prepare(); print(s['kernels'], s['backend'])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] Vulkan"


def test_force_reinitialises_and_recompiles(device_name):
    from cthreads.backend import device as dev

    y = [0.0] * 4
    gpu(add_one, 4, y).join()
    gen = dev.generation()
    gpu(add_one, 4, y, force=True).join()
    assert dev.generation() == gen + 1 and y == [2.0] * 4
    prepare(force=True)
    assert dev.generation() == gen + 2
    y2 = [1.0] * 3
    gpu(saxpy, 3, 2.0, [1.0] * 3, y2).join()
    assert y2 == [3.0] * 3


def test_log_announces_device_once(tmp_path):
    src = tmp_path / "logged.py"
    src.write_text(textwrap.dedent('''
        from cthreads.gpu import Gpu, gpu, GlobalIdx

        @Gpu(log=True)
        def inc(y: list[float]) -> None:
            i: int = GlobalIdx.x
            if i < len(y):
                y[i] += 1.0

        @Gpu
        def quiet(y: list[float]) -> None:
            i: int = GlobalIdx.x
            if i < len(y):
                y[i] += 1.0

        y = [0.0] * 8
        gpu(inc, y).join()
        gpu(inc, y).join()
        gpu(quiet, y).join()
        print(y[0])
    '''))
    out = run_python(f"import runpy; runpy.run_path({str(src)!r}, run_name='__main__')")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("cthreads:")]
    assert len(lines) == 1 and "kernel inc" in lines[0] and "GPU device" in lines[0]
