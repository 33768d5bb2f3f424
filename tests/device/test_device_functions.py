"""``@Gpu.func`` device functions on the device, against numpy and the plain-Python run."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cthreads.gpu import (GpuArena, GpuDeviceError, GpuFunc, GpuIndexError, compile, gpu,
                          prepare)

from examples import samples

from . import func_kernels as fk


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_the_spec_example_against_numpy(device_name):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal(1000).astype(np.float32)
    ys = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros(1000, np.float32)
    gpu(samples.lengths, 1000, xs, ys, out).join()
    np.testing.assert_allclose(out, np.hypot(xs, ys), rtol=1e-6)
    assert isinstance(samples.sq, GpuFunc) and samples.sq(3.0) == 9.0 and samples.norm2(3.0, 4.0) == 25.0


def test_a_function_defined_after_its_kernel(device_name):
    x = [0.5 * k for k in range(100)]
    out = [0.0] * 100
    gpu(fk.late_caller, 100, x, out).join()
    assert out == [v * 3.0 + 1.0 for v in x]


def test_writes_returns_and_integers_agree_with_python(device_name):
    n = 200
    rng = np.random.default_rng(2)
    x = [float(v) for v in rng.random(n).astype(np.float32)]
    args = [n, x, 0.9, [7.0] * n, [5] * n, [5] * n]
    expected = [list(a) if isinstance(a, list) else a for a in args]
    fk.writes_through.simulate(*expected)
    gpu(fk.writes_through, *args).join()
    assert args[3] == expected[3]
    assert args[4] == expected[4]
    assert args[5] == expected[5]
    assert min(args[4]) == -1 and max(args[4]) > 0          # both kinds of return happened


def test_atomics_on_a_list_parameter(device_name):
    rng = np.random.default_rng(3)
    v = rng.integers(0, 1000, 5000).astype(np.int32)
    h = np.zeros(16, np.int32)
    gpu(fk.histogram, len(v), 16, v, h).join()
    np.testing.assert_array_equal(h, np.bincount(v % 16, minlength=16))


def test_shared_array_passed_to_a_function_with_barriers_in_the_kernel(device_name):
    x = np.arange(200, dtype=np.float32)
    out = np.zeros(200, np.float32)
    gpu(fk.tile_sums, 200, x, out).join()
    expected = np.zeros(200, np.float32)
    for start in range(0, 200, 64):
        tile = np.zeros(64, np.float32)
        tile[:min(64, 200 - start)] = x[start:start + 64]
        padded = np.concatenate([[0.0], tile, [0.0]])
        sums = padded[:-2] + padded[1:-1] + padded[2:]
        expected[start:start + 64] = sums[:min(64, 200 - start)]
    np.testing.assert_array_equal(out, expected)


def test_index_builtins_inside_functions(device_name):
    gid = [-1] * 150
    lid = [-1] * 150
    gpu(fk.indexes_in_functions, 150, gid, lid).join()
    assert gid == list(range(150))
    assert lid == [k % 64 for k in range(150)]


def test_out_of_range_index_inside_a_function_names_its_line(device_name):
    x = [1.0] * 10
    out = [0.0] * 10
    with pytest.raises(GpuIndexError) as info:
        gpu(fk.reads_shifted, 10, 3, x, out).join()
    msg = str(info.value)
    assert "index 12 is out of range for list 'xs' of length 10" in msg or \
        "is out of range for list 'xs' of length 10" in msg
    assert f'line {_line(fk.shifted.fn, "return xs[i + by]")}, in shifted' in msg
    assert fk.__file__.replace(".pyc", ".py") in msg
    assert out == [0.0] * 10
    gpu(fk.reads_shifted, 7, 3, x, out).join()           # in range: works, nothing stale
    assert out == [1.0] * 7 + [0.0] * 3


def test_boundscheck_false_kernel_calls_functions(device_name):
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(16, np.float32)
    gpu(fk.reads_shifted_unchecked, 16, 4, x, out).join()
    np.testing.assert_array_equal(out, x[4:20])
    assert "ct_ld_" not in fk.reads_shifted_unchecked.wgsl


def test_simulate_runs_the_python_bodies(device_name):
    rng = np.random.default_rng(4)
    xs = [float(v) for v in rng.random(100).astype(np.float32)]
    ys = [float(v) for v in rng.random(100).astype(np.float32)]
    dev = [0.0] * 100
    sim = [0.0] * 100
    samples.lengths.simulate(100, xs, ys, sim)
    gpu(samples.lengths, 100, xs, ys, dev).join()
    np.testing.assert_allclose(dev, sim, rtol=1e-6)


def test_arena_lists_through_functions(device_name):
    x = [float(k) for k in range(300)]
    out = [-1.0] * 300
    with GpuArena() as arena:
        arena.bind(x=x, out=out)
        gpu(fk.writes_through, 300, x, 2.0, out, [0] * 300, [0] * 300).join(download=False)
        assert out == [-1.0] * 300
        arena.sync("out")
    assert out == [max(v - 0.5, 0.0) for v in x]


def test_helper_kernel_matches_inline_kernel(device_name):
    rng = np.random.default_rng(5)
    xs = rng.standard_normal(4096).astype(np.float32)
    ys = rng.standard_normal(4096).astype(np.float32)
    a, b = np.zeros(4096, np.float32), np.zeros(4096, np.float32)
    gpu(samples.lengths, 4096, xs, ys, a).join()
    gpu(samples.lengths_inline, 4096, xs, ys, b).join()
    np.testing.assert_allclose(a, np.hypot(xs, ys), rtol=1e-6)
    np.testing.assert_array_equal(a, b)


def test_four_lane_variant_with_a_helper(device_name):
    prog = fk.saxpy_helper.program
    assert prog.vec_guard == "n", "an element-wise kernel with a helper keeps four lanes"
    x = np.arange(1001, dtype=np.float32)
    y = np.ones(1001, np.float32)
    expected = 2.5 * x + y
    gpu(fk.saxpy_helper, 1001, 2.5, x, y).join()
    np.testing.assert_array_equal(y, expected)


def test_prepare_and_compile_cover_kernels_with_functions(device_name):
    compile()
    prepare()
    out = [0.0] * 4
    gpu(fk.late_caller, 4, [1.0, 2.0, 3.0, 4.0], out).join()
    assert out == [4.0, 7.0, 10.0, 13.0]


def test_loop_in_a_function_past_the_cpu_loop_cap(device_name):
    out = [-1] * 8
    try:
        gpu(fk.counts, 8, 70000, out).join()
    except GpuDeviceError as exc:
        msg = str(exc)
        assert "llvmpipe" in device_name or "lavapipe" in device_name.lower()
        assert out == [-1] * 8
        assert f'line {_line(fk.count_to.fn, "while k < m")}, in count_to' in msg
        assert "65,535" in msg
    else:
        assert out == [70000] * 8
    out = [-1] * 8
    gpu(fk.counts, 8, 1000, out).join()
    assert out == [1000] * 8


def test_gpu_refuses_a_device_function():
    with pytest.raises(TypeError, match=r"sq is a device function \(@Gpu.func\)"):
        gpu(samples.sq, 1.0)
