"""The examples in examples/ run, at small sizes, and give numpy's answers.

Each example checks itself; these tests do not rely on that: they recompute every expected value
with numpy from the inputs the example returns, and add cases the examples do not show (exact
integer-valued sums, hot bins, out-of-range histogram data).
"""

from __future__ import annotations

import inspect
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

from cthreads.gpu import CThreadsGPUError, GpuIndexError, gpu
from examples import (blur_image, bounds_error, debug_print, heat2d, histogram, nbody,
                      numpy_saxpy, reduce_sum, volume)
from tests.conftest import run_python
from tests.device.kernels import assert_saxpy

U = 2.0**-24
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# -- reduce_sum ------------------------------------------------------------------------------

def test_reduce_sum_main_matches_numpy(device_name):
    n = 100_003
    r = reduce_sum.main(n, seed=3)
    x = r["x"]
    assert x.dtype == np.float32 and x.size == n
    exact = math.fsum(x.astype(np.float64).tolist())
    abs_sum = float(np.abs(x.astype(np.float64)).sum())
    # each value rounded at most 16 times in its thread's sequence, then ceil(log2 n) times in
    # trees, plus a few per pass
    bound = (16 + math.ceil(math.log2(n)) + 8) * U * abs_sum
    assert abs(r["sum"] - exact) <= bound
    assert r["max"] == float(x.max()) and r["min"] == float(x.min())
    # doubled on the device, then reduced there: twice the values, exactly twice the max
    assert abs(r["resident_sum"] - 2 * exact) <= 2 * bound
    assert r["resident_max"] == 2 * float(x.max())
    assert r["ok"] is True


@pytest.mark.parametrize("n", [1, 64, 65, 4097, 262_145])
def test_reduce_sum_is_exact_on_integer_values(device_name, n):
    # small integers: every partial sum is exactly representable, so any order gives the sum
    x = np.random.default_rng(n).integers(-8, 9, n).astype(np.float32)
    exact = int(x.astype(np.int64).sum())
    assert reduce_sum.add.reduce(x) == exact
    assert reduce_sum.add.reduce(x.tolist()) == exact
    assert reduce_sum.biggest.reduce(x) == float(x.max())
    assert reduce_sum.smallest.reduce(x, init=-100.0) == -100.0
    doubled = x.copy()
    assert reduce_sum.resident_sum(doubled) == (2 * exact, 2 * float(x.max()))
    np.testing.assert_array_equal(doubled, 2 * x)


def test_reduce_sum_leaves_the_input_alone(device_name):
    x = np.arange(1000, dtype=np.float32)
    before = x.copy()
    reduce_sum.add.reduce(x)
    reduce_sum.biggest.reduce(x)
    np.testing.assert_array_equal(x, before)


# -- histogram -------------------------------------------------------------------------------

def test_histogram_main_matches_bincount(device_name):
    r = histogram.main(50_001, seed=7, repeats=1)
    data = r["data"]
    assert data.dtype == np.int32 and data.size == 50_001
    expect = np.bincount(data.astype(np.int64), minlength=256)
    assert r["bins"].tolist() == expect.tolist()
    assert r["private"].tolist() == expect.tolist()
    assert r["ok"] is True


@pytest.mark.parametrize("groups", [1, 3, 200])
def test_histogram_private_hot_and_edge_bins(device_name, groups):
    # one very hot bin, the two edge bins, and a tail: contention and both ends of the range
    data = np.concatenate([np.full(20_000, 17), np.zeros(300), np.full(299, 255),
                           np.arange(256)]).astype(np.int32)
    np.random.default_rng(groups).shuffle(data)
    expect = np.bincount(data, minlength=256).tolist()
    assert histogram.run_private(data, groups).tolist() == expect
    assert histogram.run_global(data).tolist() == expect


def test_histogram_value_out_of_range_raises_and_keeps_bins(device_name):
    data = np.array([1, 2, 256, 3], np.int32)
    bins = np.full(256, 5, np.int32)
    with pytest.raises(GpuIndexError) as info:
        gpu(histogram.histogram, data.size, data, bins).join()
    msg = str(info.value)
    assert "histogram" in msg and "'bins'" in msg and "index 256" in msg
    assert bins.tolist() == [5] * 256


# -- numpy_saxpy -----------------------------------------------------------------------------

def test_numpy_saxpy_main_matches_numpy(device_name):
    steps = 7
    r = numpy_saxpy.main(10_001, steps=steps, seed=11)
    a, x, y0 = r["a"], r["x"], r["y0"]
    for arr in (r["y"], r["z"]):
        assert isinstance(arr, np.ndarray) and arr.dtype == np.float32 and arr.size == 10_001
    assert_saxpy(r["y"], a, x, y0)
    # the resident loop against numpy's own float32 loop
    ref = y0.copy()
    for _ in range(steps):
        ref = np.float32(a) * x + ref
    scale = np.abs(y0) + steps * np.abs(np.float32(a) * x)
    assert np.all(np.abs(r["z"].astype(np.float64) - ref) <= 4 * steps * U * scale + 1e-30)
    assert "float64" in r["refusal"] and "'y'" in r["refusal"] and "float32" in r["refusal"]
    assert r["ok"] is True


# -- bounds_error ----------------------------------------------------------------------------

def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_bounds_error_main(device_name):
    n = 1000
    r = bounds_error.main(n, seed=2, repeats=1)
    err = r["error"]
    assert isinstance(err, GpuIndexError) and isinstance(err, IndexError)
    assert isinstance(err, CThreadsGPUError)
    msg = r["message"]
    bad_line = _line_of(bounds_error.smooth_buggy, "x[i + 1]")
    assert "smooth_buggy" in msg and f"line {bad_line}" in msg
    assert "bounds_error.py" in msg and f"index {n}" in msg and "'x'" in msg
    np.testing.assert_array_equal(r["y_after_error"], np.full(n, -1.0, np.float32))
    x = r["x"]
    expect = x.copy()
    expect[:-1] = np.float32(0.5) * (x[:-1] + x[1:])
    np.testing.assert_array_equal(r["fixed"], expect)
    np.testing.assert_array_equal(r["unchecked"], expect)
    assert r["ok"] is True


def test_bounds_error_kernels_checked_and_unchecked():
    assert bounds_error.smooth.program.checks and bounds_error.smooth.program.status_binding
    assert bounds_error.smooth_unchecked.program.checks == ()
    assert bounds_error.smooth_unchecked.program.status_binding is None


# -- debug_print ------------------------------------------------------------------------------

def test_debug_print_names_the_stuck_threads_in_order(device_name, capsys):
    r = debug_print.main(48)
    x, steps, stuck = r["x"], r["steps"], r["stuck"]
    np.testing.assert_array_equal(stuck, np.flatnonzero(steps == debug_print.CAP))
    assert len(stuck) > 4                    # (how many depends on the driver's float rounding)
    lines = r["printed"].splitlines()
    shown = [int(line.split()[1].rstrip(":")) for line in lines[:-1]]
    if len(stuck) <= 16:                     # within the buffer: the kept lines are the first
        assert shown == list(stuck[:4])      # the stuck threads, in thread order
    else:                                    # past it: 4 of the stuck threads, in thread order
        assert len(shown) == 4 and shown == sorted(shown) and set(shown) <= set(stuck)
    for line, i in zip(lines, shown):       # each thread's own value, as Python formats it
        assert f"x = {float(x[i]):<10.6g} " in line
    assert lines[-1].startswith(f"[cthreads] kernel newton_buggy: {len(stuck) - 4} more "
                                "print() line(s) dropped")
    assert capsys.readouterr().out.count("\n") == len(lines) + 2
    # the fix: every thread stops early, at float32's square root
    assert r["fixed_steps"].max() < debug_print.CAP
    np.testing.assert_allclose(r["fixed_root"], np.sqrt(x.astype(np.float64)), rtol=1e-6)
    assert r["ok"] is True


def test_examples_run_as_scripts(device_name):
    code = textwrap.dedent(f"""
        import runpy, sys
        for name in ("reduce_sum", "histogram", "numpy_saxpy", "bounds_error", "debug_print"):
            sys.argv = [name, "3000" if name != "debug_print" else "48"]
            try:
                runpy.run_path(f"{EXAMPLES}/{{name}}.py", run_name="__main__")
            except SystemExit as exc:
                print(name, "exit", exc.code)
    """)
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name in ("reduce_sum", "histogram", "numpy_saxpy", "bounds_error", "debug_print"):
        assert f"{name} exit 0" in lines, out.stdout + out.stderr


# -- nbody (device functions) -----------------------------------------------------------------

def test_nbody_matches_a_numpy_integration(device_name):
    r = nbody.main(300, steps=4, seed=5)
    pos = r["start_pos"].astype(np.float64)
    vel = r["start_vel"].astype(np.float64)
    m = r["m"].astype(np.float64)
    for _ in range(r["steps"]):
        acc = np.zeros_like(pos)
        for k in range(len(m)):                 # body by body, unlike the example's broadcast
            d = pos - pos[k]
            r2 = np.einsum("ij,ij->i", d, d) + nbody.SOFTENING2
            acc[k] = (d * (m / (r2 * np.sqrt(r2)))[:, None]).sum(axis=0)
        vel += acc * r["dt"]
        pos += vel * r["dt"]
    np.testing.assert_allclose(r["pos"], pos, atol=1e-5)
    np.testing.assert_allclose(r["vel"], vel, atol=1e-5)
    assert r["ok"]


# -- particles (struct, vectors, matrix) -----------------------------------------------------

def test_particles_agree_with_simulate_and_a_numpy_step(device_name):
    from examples import particles
    r = particles.main(3000, steps=30, check=200)
    assert r["ok"]
    # one step written with numpy from the start state, for the particles that neither bounce
    # nor retire in it: the device's first step must match
    start = r["start"].copy()
    from cthreads.gpu import gpu, to_device
    d = to_device(start)
    gpu(particles.step, len(start), 0.01, particles.rotation_y(0.02), d).join()
    got = d.numpy()
    c, s = np.cos(0.02), np.sin(0.02)
    rot = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    vel = start["vel"].astype(np.float64) @ rot.T + [0.0, particles.GRAVITY * 0.01, 0.0]
    pos = start["pos"].astype(np.float64) + vel * 0.01
    keep = (pos[:, 1] >= 0.0) & (start["age"] + 0.01 <= particles.LIFETIME - 1e-3)
    assert keep.sum() > 1000
    np.testing.assert_allclose(got["vel"][keep], vel[keep], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["pos"][keep], pos[keep], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["age"], start["age"] + np.float32(0.01), rtol=1e-6)


# -- N-D examples ----------------------------------------------------------------------------

def test_heat2d_matches_numpy_and_conserves_heat_away_from_the_edges(device_name):
    r = heat2d.main(64, steps=20)
    u = heat2d.initial(64).astype(np.float64)
    for _ in range(20):                    # the explicit scheme, written out once more
        v = u.copy()
        for y in range(1, 63):
            v[y, 1:-1] = u[y, 1:-1] + heat2d.ALPHA * (u[y - 1, 1:-1] + u[y + 1, 1:-1]
                                                      + u[y, :-2] + u[y, 2:] - 4 * u[y, 1:-1])
        u = v
    np.testing.assert_allclose(r["u"], u, atol=1e-3)
    assert r["ok"]


def test_blur_image_matches_a_loop_over_offsets(device_name):
    r = blur_image.main(1)
    img = r["image"].astype(np.float64)
    h, w = img.shape
    want = np.zeros_like(img)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            ys = np.clip(np.arange(h) + dy, 0, h - 1)
            xs = np.clip(np.arange(w) + dx, 0, w - 1)
            want += img[np.ix_(ys, xs)]
    np.testing.assert_allclose(r["blurred"], want / 9.0, rtol=1e-6, atol=1e-4)


def test_volume_matches_a_direct_distance(device_name):
    r = volume.main(24)
    vol = r["volume"]
    z, y, x = 5, 11, 17
    p = ((x + 0.5) / 24, (y + 0.5) / 24, (z + 0.5) / 24)
    want = min(math.dist(p, (cx, cy, cz)) - rad for cx, cy, cz, rad in volume.SPHERES)
    assert abs(vol[z, y, x] - want) < 1e-6
    assert r["inside"] == int((vol < 0).sum())


# -- jacobi_gpuarray -------------------------------------------------------------------------

@pytest.mark.parametrize("float64", [False, True])
def test_jacobi_gpuarray_matches_numpy_and_downloads_the_grid_once(device_name, monkeypatch,
                                                                   float64):
    from cthreads.gpu import GpuArray
    from cthreads.runtime import readback

    jacobi_gpuarray = __import__("examples.jacobi_gpuarray", fromlist=["main"])
    pulls, listed = [], []
    real_numpy, real_add = GpuArray.numpy, readback.Readback.add_list

    def numpy_spy(self):
        pulls.append(self.shape)
        return real_numpy(self)

    def add_spy(self, source, target, *rest, **kw):
        listed.append(target)
        return real_add(self, source, target, *rest, **kw)

    monkeypatch.setattr(GpuArray, "numpy", numpy_spy)
    monkeypatch.setattr(readback.Readback, "add_list", add_spy)
    n, steps = 24, 60
    r = jacobi_gpuarray.main(n, steps, tol=0.0, check=20, float64=float64, compare_steps=0)
    assert r["steps"] == steps and len(r["residuals"]) == steps // 20
    assert pulls == [(n, n)]        # the grid came back once, at the end
    # read-backs: the reductions' answers (no host array) and the one numpy() of the grid
    assert [t.shape for t in listed if t is not None] == [(n, n)]
    u = jacobi_gpuarray.initial(n).astype(np.float64)    # the sweeps written out once more
    for _ in range(steps):
        v = u.copy()
        for y in range(1, n - 1):
            v[y, 1:-1] = 0.25 * (u[y - 1, 1:-1] + u[y + 1, 1:-1] + u[y, :-2] + u[y, 2:])
        u = v
    assert r["u"].dtype == (np.float64 if float64 else np.float32)
    # 3 roundings per sweep of values in [0, 1]; averaging never grows the error made before
    unit = 2.0**-53 if float64 else 2.0**-24
    assert np.abs(r["u"] - u).max() <= 3 * unit * steps + 2.0**-100
    assert r["ok"]


def test_jacobi_gpuarray_stops_at_the_tolerance(device_name):
    from examples import jacobi_gpuarray

    r = jacobi_gpuarray.main(8, 5000, tol=1e-5, check=10, compare_steps=0)
    assert r["change"] < 1e-5 and r["steps"] < 5000 and r["steps"] % 10 == 0
    done, change = r["residuals"][-1]
    want = jacobi_gpuarray.numpy_steps(jacobi_gpuarray.initial(8), done)
    before = jacobi_gpuarray.numpy_steps(jacobi_gpuarray.initial(8), done - 1)
    # the device's change of the last checked step, against numpy's (float32 rounding of a
    # sum of 64 squares of changes near 1e-6: a relative 1e-2 is loose)
    assert change == pytest.approx(float(np.sqrt(((want - before) ** 2).sum())), rel=1e-2,
                                   abs=1e-7)
    assert r["ok"]
