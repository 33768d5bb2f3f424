"""Shader modules without naga's loop counter (the path GPUs take, backend/pipeline.py): made
here on lavapipe too, they compile, run kernels with loops to numpy's results, and invalid WGSL
still raises our error instead of ending the process."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.backend import pipeline
from cthreads.backend.device import get_context
from cthreads.backend.pipeline import ShaderCompileError, make_pipeline
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu
from examples.samples import mandelbrot2d, mandelbrot_numpy


@Gpu
def prefix(n: int, xs: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    s: float = 0.0
    for k in range(i + 1):
        s += xs[k]
    out[i] = s


@pytest.fixture
def trusted():
    """Shader modules made as on GPUs; the kernels' runtimes and pipelines made afresh."""
    for k in (mandelbrot2d, prefix):
        k.forget_runtimes()
    pipeline.clear_cache()
    with config.override(trusted_shaders_on_cpu=True):
        yield
    for k in (mandelbrot2d, prefix):
        k.forget_runtimes()
    pipeline.clear_cache()


def test_loops_without_the_counter_match_numpy(trusted):
    w, h, it = 96, 64, 200
    counts = np.zeros((h, w), np.int32)
    gpu(mandelbrot2d, w, h, it, counts, threads=(w, h)).join()
    want = mandelbrot_numpy(w, h, it).reshape(h, w)
    assert np.count_nonzero(counts != want) <= w * h // 500   # boundary pixels may differ
    xs = np.random.default_rng(5).random(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    with GpuArena() as arena:
        arena.bind(xs=xs, out=out)
        gpu(prefix, 300, xs, out).join()
    np.testing.assert_allclose(out, np.cumsum(xs.astype(np.float64)), rtol=1e-5)


def test_invalid_wgsl_raises_our_error(trusted):
    ctx = get_context()
    with pytest.raises(ShaderCompileError) as info:
        make_pipeline(ctx, "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }",
                      "main", ())
    assert "u32" in str(info.value) or "1.5" in str(info.value), str(info.value)
    # the device still works afterwards
    counts = np.zeros((4, 4), np.int32)
    gpu(mandelbrot2d, 4, 4, 10, counts, threads=(4, 4)).join()
    assert np.array_equal(counts, mandelbrot_numpy(4, 4, 10).reshape(4, 4))


def test_the_module_comes_from_the_trusted_entry_point(trusted, monkeypatch):
    made = []
    real = pipeline._shader_module
    monkeypatch.setattr(pipeline, "_shader_module",
                        lambda *a: made.append(a[2]) or real(*a))
    out = np.zeros(8, np.float32)
    gpu(prefix, 8, np.ones(8, np.float32), out).join()
    assert made and np.array_equal(out, np.arange(1, 9, dtype=np.float32))
