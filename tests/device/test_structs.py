"""Structs in kernels (issue 24 slice): list[Struct] over structured numpy arrays written in
place, fields read and updated, struct locals and constructors, nested structs, device
functions taking and returning structs, float32 and float64 layouts, 2-D struct arrays,
bounds checks, prepare(), pickled kernels -- against numpy and simulate()."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cthreads.gpu import GpuIndexError, GpuInvalidArgument, gpu, prepare
from tests.device.struct_kernels import (
    Particle, Tracked, grid_mass, integrate, nested, write_n,
)

WIDTHS = [np.float32, np.float64]


def _particles(n, dtype, seed=1):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, Particle.dtype_for(dtype))
    a["pos"] = rng.random((n, 3))
    a["vel"] = rng.standard_normal((n, 3))
    a["mass"] = rng.random(n) + 0.5
    a["alive"] = rng.random(n) > 0.3
    return a


def _integrate_reference(a, dt):
    f = a["pos"].dtype.type
    b = a.copy()
    live = b["alive"].copy()
    b["vel"][live, 1] += f(-9.8) * f(dt)
    b["pos"][live] += b["vel"][live] * f(dt)
    below = live & (b["pos"][:, 1] < 0)
    b["pos"][below, 1] = 0
    b["alive"][below] = False
    b["mass"] *= f(0.5)
    return b


def _assert_same(got, want, tol):
    for name in got.dtype.names:
        g, w = got[name], want[name]
        if g.dtype.names:
            _assert_same(g, w, tol)
        elif g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_particle_update_in_place_matches_numpy_and_simulate(dtype):
    n = 1000
    a = _particles(n, dtype)
    want = _integrate_reference(a, 0.05)
    sim = a.copy()
    gpu(integrate, n, 0.05, a).join()
    tol = 1e-6 if dtype is np.float32 else 1e-14
    _assert_same(a, want, tol)
    integrate.simulate(n, 0.05, sim)
    _assert_same(sim, want, tol)
    # the bool's padding bytes stay zero: numpy sees exactly True / False
    assert set(np.unique(a["alive"].view(np.uint8))) <= {0, 1}


@pytest.mark.parametrize("dtype", WIDTHS)
def test_nested_structs_locals_constructors_and_device_functions(dtype):
    n = 300
    t = np.zeros(n, Tracked.dtype_for(dtype))
    t["p"] = _particles(n, dtype, seed=2)
    t["stats"]["hits"] = np.arange(n)
    out = np.zeros(n, Particle.dtype_for(dtype))
    t_sim, out_sim = t.copy(), out.copy()
    gpu(nested, n, 0.5, t, out).join()
    nested.simulate(n, 0.5, t_sim, out_sim)
    tol = 1e-6 if dtype is np.float32 else 1e-14
    _assert_same(t, t_sim, tol)
    _assert_same(out, out_sim, tol)
    # and against numpy
    f = dtype
    p0 = _particles(n, dtype, seed=2)
    pos = p0["pos"] + p0["vel"] * f(0.5)
    low = pos[:, 1] < 0.25
    vel = p0["vel"].copy()
    vel[low] *= f(-0.5)
    pos[low, 1] = 0.25
    np.testing.assert_allclose(t["p"]["pos"], pos, rtol=tol, atol=tol)
    np.testing.assert_allclose(t["p"]["vel"], vel, rtol=tol, atol=tol)
    np.testing.assert_array_equal(t["stats"]["hits"], np.arange(1, n + 1))
    np.testing.assert_allclose(t["stats"]["total"], p0["mass"] * np.arange(1, n + 1), rtol=tol)
    np.testing.assert_allclose(out["pos"][::-1], pos, rtol=tol, atol=tol)
    np.testing.assert_array_equal(out["vel"][::-1, 0], np.arange(n))
    np.testing.assert_array_equal(out["alive"][::-1], pos[:, 1] > 0.5)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_two_dimensional_struct_arrays(dtype):
    h, w = 5, 37
    g = np.zeros((h, w), Particle.dtype_for(dtype))
    g["mass"] = np.arange(h * w).reshape(h, w)
    g["pos"][..., 2] = 0.5
    out = np.zeros((h, w), dtype)
    gpu(grid_mass, g, out, threads=(w, h)).join()
    np.testing.assert_array_equal(out, g["mass"] + dtype(0.5))
    ys, xs = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(g["vel"][..., 0], xs + 10 * ys)
    sim, sim_out = np.zeros_like(g), np.zeros_like(out)
    sim["mass"], sim["pos"] = g["mass"], g["pos"]
    grid_mass.simulate(sim, sim_out, threads=(w, h))
    np.testing.assert_array_equal(sim_out, out)


def test_wrong_dtype_names_the_expected_one_and_changes_nothing():
    plain = np.zeros((10, 8), np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"structured array .* Particle's dtype"):
        gpu(write_n, 10, plain).join()
    other = np.zeros(10, [("pos", np.float32, 3), ("mass", np.float32)])
    with pytest.raises(GpuInvalidArgument, match=r"takes an array of dtype .*Particle.dtype"):
        gpu(write_n, 10, other).join()
    assert not plain.any() and not other["mass"].any()
    strided = np.zeros(20, Particle.dtype)[::2]
    with pytest.raises(GpuInvalidArgument, match="C-contiguous"):
        gpu(write_n, 10, strided).join()


def test_bounds_check_names_the_element_index():
    p = np.zeros(10, Particle.dtype)
    with pytest.raises(GpuIndexError, match=r"index 10 is out of range for list 'p' of length "
                                            r"10") as info:
        gpu(write_n, 11, p).join()
    assert "p[i].mass = 1.0" in str(info.value)
    assert not p["mass"].any()
    gpu(write_n, 10, p).join()
    assert (p["mass"] == 1.0).all()


def test_prepare_and_pickled_kernels():
    prepare()
    assert pickle.loads(pickle.dumps(integrate)) is integrate
    assert pickle.loads(pickle.dumps(Particle.dtype)) == Particle.dtype
    a = _particles(64, np.float32)
    want = _integrate_reference(a, 0.01)
    gpu(pickle.loads(pickle.dumps(integrate)), 64, 0.01, a).join()
    _assert_same(a, want, 1e-6)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_gpuarrays_of_structs_stay_on_the_device(dtype):
    from cthreads.gpu import to_device, zeros
    n = 500
    a = _particles(n, dtype)
    d = to_device(a)
    assert d.shape == (n,) and d.dtype == a.dtype and d.nbytes == a.nbytes
    gpu(integrate, n, 0.05, d).join()
    gpu(integrate, n, 0.05, d).join()
    tol = 1e-6 if dtype is np.float32 else 1e-13
    _assert_same(d.numpy(), _integrate_reference(_integrate_reference(a, 0.05), 0.05), tol)
    s = to_device(a)
    integrate.simulate(n, 0.05, s)                     # on a host copy, written back
    _assert_same(s.numpy(), _integrate_reference(a, 0.05), tol)
    _assert_same(pickle.loads(pickle.dumps(d)).numpy(), d.numpy(), 0)
    z = zeros(3, dtype=Particle.dtype_for(dtype))
    assert not z.numpy()["mass"].any()
    z.set(a[:3])
    gpu(write_n, 3, z).join()
    want = a[:3].copy()
    want["mass"] = 1.0
    _assert_same(z.numpy(), want, 0)
    with pytest.raises(GpuInvalidArgument, match="nothing was changed"):
        z.set(a[:4])


def test_struct_arrays_stay_resident_in_an_arena():
    from cthreads.gpu import GpuArena
    n = 200
    a = _particles(n, np.float32)
    before = a.copy()
    want = _integrate_reference(_integrate_reference(a, 0.05), 0.05)
    with GpuArena() as arena:
        arena.bind(p=a)
        gpu(integrate, n, 0.05, a).join(download=False)
        gpu(integrate, n, 0.05, a).join(download=False)
        _assert_same(a, before, 0)                   # resident: the host copy not synced yet
        arena.sync()
        _assert_same(a, want, 1e-6)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_struct_kernel_parameters(dtype):
    from cthreads.gpu import vec3
    from tests.device.struct_kernels import Stats, fill_from
    q = Particle(vec3(1.0, 2.0, 3.0), vec3(4.0, 5.0, 6.0), 2.5, True)
    t = Tracked(q, Stats(3, 0.5))
    a = np.zeros(5, Particle.dtype_for(dtype))
    gpu(fill_from, 5, q, t, a).join()
    np.testing.assert_array_equal(a["pos"][:, 0], np.arange(5) + 0.5)
    np.testing.assert_array_equal(a["pos"][:, 1:], [[2.0, 3.0]] * 5)
    np.testing.assert_array_equal(a["vel"], [[4.0, 5.0, 6.0]] * 5)
    assert (a["mass"] == 7.5).all() and a["alive"].all()
    sim = np.zeros_like(a)
    fill_from.simulate(5, q, t, sim, n=5)
    _assert_same(sim, a, 0)
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'q' \(Particle\) takes a Particle"):
        gpu(fill_from, 5, 1.0, t, a).join()


MAIN_SCRIPT = """
import pickle, sys
from cthreads.gpu import Gpu, GlobalIdx, vec3

@Gpu.struct
class P:
    pos: vec3
    mass: float = 2.0

@Gpu
def k(n: int, p: list[P]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i].pos.y = p[i].mass + float(i)
        p[i] = P(pos=p[i].pos)

open(sys.argv[1], "wb").write(pickle.dumps((k, P(vec3(1.0)))))
"""


def test_a_main_kernel_and_its_struct_travel_by_value(tmp_path):
    import subprocess
    import sys
    script, blob = tmp_path / "main_kernel.py", tmp_path / "kernel.pickle"
    script.write_text(MAIN_SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(blob)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    kernel, q = pickle.loads(blob.read_bytes())
    cls = type(q)
    assert cls.__name__ == "P" and q.mass == 2.0 and tuple(q.pos) == (1.0, 1.0, 1.0)
    a = np.zeros(3, cls.dtype)
    a["mass"] = 5.0
    gpu(kernel, 3, a).join()
    np.testing.assert_array_equal(a["pos"][:, 1], [5.0, 6.0, 7.0])
    np.testing.assert_array_equal(a["mass"], [2.0, 2.0, 2.0])      # the default, rebuilt


@pytest.mark.parametrize("dtype", WIDTHS)
def test_uint32_and_int_fields_wrap_as_numpy(dtype):
    from tests.device.struct_kernels import Tagged, retag
    a = np.zeros(4, Tagged.dtype_for(dtype))
    a["tag"] = [0, 1, 2 ** 31, 4_000_000_000]
    a["n"] = [1, -2, 3, 2 ** 31 - 1]
    sim = a.copy()
    tags = ((a["tag"].astype(np.uint64) * 3 + 1) % 2 ** 32).astype(np.uint32)
    gpu(retag, a).join()
    np.testing.assert_array_equal(a["tag"], tags)
    np.testing.assert_array_equal(a["n"], [-4, -7, -2, 2 ** 31 - 6])
    np.testing.assert_array_equal(a["x"], tags.astype(dtype))
    retag.simulate(sim)
    _assert_same(sim, a, 0)
