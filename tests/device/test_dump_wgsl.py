"""CTHREADS_DUMP_WGSL=<dir>: every variant compiled for the device is written, one file per
kernel, widths and variant, holding the text the device compiled."""

from __future__ import annotations

import numpy as np

from cthreads import config
from cthreads.codegen.float_ops import device_form
from cthreads.gpu import GlobalIdx, Gpu, gpu
from tests.conftest import run_python


@Gpu
def dumped_saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


def test_every_compiled_variant_is_written(tmp_path, device_name):
    folder = tmp_path / "wgsl"
    x = np.arange(1001, dtype=np.float32)
    y = np.ones(1001, np.float32)
    with config.override(dump_wgsl=str(folder)):
        dumped_saxpy.forget_runtimes()
        gpu(dumped_saxpy, 1001, 2.0, x, y).join()     # four lanes, a partial last step
        gpu(dumped_saxpy, 1000, 2.0, x, y).join()     # four lanes, whole steps
        rt = dumped_saxpy.runtime_for()
        compiled = rt.compiled_variants()
    want = np.ones(1001, np.float32) + np.float32(2) * x
    want[:1000] += np.float32(2) * x[:1000]
    np.testing.assert_array_equal(y, want)
    assert {v.form for v in compiled} == {"vec_tail", "vec_whole"}
    files = sorted(p.name for p in folder.iterdir())
    stem = f"{__name__}.dumped_saxpy.float-int"
    assert files == sorted(f"{stem}.{v.name}.wgsl" for v in compiled)
    for v in compiled:
        text = (folder / f"{stem}.{v.name}.wgsl").read_text()
        assert text == device_form(dumped_saxpy.program.render(v), rt.ctx.exact_f32_in_f64)
    dumped_saxpy.forget_runtimes()


def test_prepare_writes_every_variant_a_launch_may_pick(tmp_path):
    code = ("import os, cthreads.gpu as g\n"
            "from tests.device.kernels import saxpy\n"
            "g.prepare()\n"
            "print(len(saxpy.runtime_for().variants()), len(os.listdir(os.environ['CTHREADS_DUMP_WGSL'])))")
    out = run_python(code, env_extra={"CTHREADS_DUMP_WGSL": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    count, files = out.stdout.split()
    saxpy_files = [p for p in tmp_path.iterdir() if ".saxpy." in p.name]
    assert int(count) == len(saxpy_files) >= 4 and int(files) >= len(saxpy_files)


def test_unset_writes_nothing(tmp_path, monkeypatch, device_name):
    monkeypatch.chdir(tmp_path)
    dumped_saxpy.forget_runtimes()
    gpu(dumped_saxpy, 8, 1.0, np.ones(8, np.float32), np.ones(8, np.float32)).join()
    assert list(tmp_path.iterdir()) == []
    dumped_saxpy.forget_runtimes()
