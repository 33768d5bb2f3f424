"""list[vecN] arguments as Python lists (runtime/vector_rows.py): rows of numbers and vector
objects, written back in place at the join, against numpy and the plain-Python run of the same
kernel; refusals with nothing changed; and (n, 3) arrays bound in a GpuArena stay resident."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuIndexError, GpuInvalidArgument, gpu,
    ivec3, vec2, vec3,
)


@Gpu
def step(n: int, dt: float, g: vec3, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += g * dt
    p[i] += v[i] * dt
    p[i].y = p[i].y * 0.5


@Gpu
def image_rows(img: list[list[vec3]], out: list[list[vec3]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = img[y, x] * 2.0 + vec3(float(x), float(y), 0.0)


@Gpu
def int_rows(a: list[ivec3], b: list[ivec3]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        b[i] = a[i] * 3 - ivec3(1, 2, 3)


@Gpu
def flip2(n: int, p: list[vec2]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] = vec2(p[i].y, -p[i].x)


G = vec3(0.0, -9.8, 0.0)


def _sample(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)).round(3), rng.standard_normal((n, 3)).round(3)


def test_rows_of_numbers_written_back_into_the_same_rows(device_name):
    n = 300
    p0, v0 = _sample(n)
    p, v = p0.tolist(), v0.tolist()
    rows = list(p)                              # the row objects
    gpu(step, n, 0.01, G, p, v).join()
    assert all(a is b for a, b in zip(p, rows)) and all(type(r) is list for r in p)
    sp, sv = p0.tolist(), v0.tolist()
    step.simulate(n, 0.01, G, sp, sv)           # the plain run on rows: RowVecList
    np.testing.assert_allclose(np.array(p), np.array(sp), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(v), np.array(sv), rtol=1e-5, atol=1e-6)
    # and numpy: p.y halved after the step
    want_v = v0 + np.array([0.0, -9.8, 0.0]) * 0.01
    want_p = p0 + want_v * 0.01
    want_p[:, 1] *= 0.5
    np.testing.assert_allclose(np.array(p), want_p, rtol=1e-5, atol=1e-6)


def test_vector_objects_written_back_into_the_same_objects(device_name):
    n = 100
    p0, v0 = _sample(n, 1)
    p = [vec3(*r) for r in p0]
    v = [vec3(*r) for r in v0]
    objects = list(p)
    gpu(step, n, 0.01, G, p, v).join()
    assert all(a is b for a, b in zip(p, objects))
    sp = [vec3(*r) for r in p0]
    sv = [vec3(*r) for r in v0]
    step.simulate(n, 0.01, G, sp, sv)          # every thread in plain Python
    np.testing.assert_allclose([list(a) for a in p], [list(a) for a in sp], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([list(a) for a in v], [list(a) for a in sv], rtol=1e-5, atol=1e-6)


def test_float64_width_of_rows(device_name):
    """Python lists adopt the launch's width: with a float64 array for v, rows of p hold
    doubles."""
    p0, v0 = _sample(50, 2)
    p, v = p0.tolist(), v0.copy()
    gpu(step, 50, 0.01, G, p, v).join()
    sp, sv = p0.tolist(), v0.copy()
    step.simulate(50, 0.01, G, sp, sv)
    np.testing.assert_allclose(np.array(p), np.array(sp), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(v, sv, rtol=1e-13, atol=1e-15)


def test_nested_rows_of_an_image(device_name):
    h, w = 4, 9
    img0 = np.arange(h * w * 3, dtype=np.float64).reshape(h, w, 3) / 7.0
    img = img0.tolist()
    out = np.zeros_like(img0).tolist()
    gpu(image_rows, img, out, threads=(w, h)).join()
    ys, xs = np.mgrid[0:h, 0:w]
    want = img0 * 2 + np.stack([xs, ys, np.zeros_like(xs)], axis=-1)
    np.testing.assert_allclose(np.array(out), want, rtol=1e-6)
    sim = np.zeros_like(img0).tolist()
    image_rows.simulate(img0.tolist(), sim, threads=(w, h))
    np.testing.assert_allclose(np.array(sim), want, rtol=1e-12)


def test_int_vector_rows_and_objects(device_name):
    a = [[1, 2, 3], [4, 5, 6]]
    b = [[0, 0, 0], [0, 0, 0]]
    gpu(int_rows, a, b).join()
    assert b == [[2, 4, 6], [11, 13, 15]] and all(type(x) is int for r in b for x in r)
    bo = [ivec3(0), ivec3(0)]
    gpu(int_rows, [ivec3(1, 2, 3), ivec3(4, 5, 6)], bo).join()
    assert [list(x) for x in bo] == [[2, 4, 6], [11, 13, 15]]


def test_vec2_rows(device_name):
    p = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    gpu(flip2, 3, p).join()
    assert p == [[2.0, -1.0], [4.0, -3.0], [6.0, -5.0]]


def test_refusals_change_nothing(device_name):
    good = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    for bad, err, match in [
        ([[1.0, 2.0], [3.0, 4.0]], GpuInvalidArgument, r"rows of 3 components, got rows of 2"),
        ([[1.0, 2.0, 3.0], [4.0, 5.0]], GpuInvalidArgument, r"\[1\] has 2 elements"),
        ([vec3(1.0), vec2(1.0)], GpuArgumentTypeError, r"element 1 .* is vec2"),
        ([ivec3(1), ivec3(2)], GpuArgumentTypeError, r"holds ivec3 objects; pass vec3"),
        ([[1.0, "x", 3.0], [4.0, 5.0, 6.0]], GpuArgumentTypeError, r"'p'\)?\[0\]\[1\]"),
    ]:
        v = copy.deepcopy(good)
        before = copy.deepcopy(bad)
        with pytest.raises(err, match=match):
            gpu(step, 2, 0.01, G, bad, v).join()
        assert v == good
        assert [list(x) if not isinstance(x, list) else x for x in bad] == \
            [list(x) if not isinstance(x, list) else x for x in before]


def test_bounds_check_on_rows_names_the_element(device_name):
    p = [[0.0, 0.0, 0.0]] * 1 + [[1.0, 1.0, 1.0]]
    p = [list(r) for r in p]
    v = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    with pytest.raises(GpuIndexError, match=r"index 2 is out of range for list '[pv]' of "
                                            r"length 2"):
        gpu(step, 3, 0.01, G, p, v).join()
    assert p == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]] and v == [[1.0, 1.0, 1.0]] * 2


# -- GpuArena residency of (n, 3) arrays -----------------------------------------------------
def test_bound_vec3_arrays_stay_resident(device_name):
    """Launches on bound (n, 3) arrays run on the device copies: the host arrays change only
    at sync(), host edits after binding are not uploaded, and nothing is allocated."""
    from cthreads.backend import get_queue

    n = 500
    p0, v0 = _sample(n, 3)
    p, v = p0.astype(np.float32), v0.astype(np.float32)
    with GpuArena() as arena:
        arena.bind(p=p, v=v)
        gpu(step, n, 0.01, G, p, v).join(download=False)
        before = get_queue().pool.allocations
        v[:] = 1000.0                      # a host edit: not uploaded (the device copy rules)
        for _ in range(4):
            gpu(step, n, 0.01, G, p, v).join(download=False)
        assert get_queue().pool.allocations == before
        assert (v == 1000.0).all()         # not written back before sync
        arena.sync()
    sp, sv = p0.astype(np.float32), v0.astype(np.float32)
    for _ in range(5):
        step.simulate(n, 0.01, G, sp, sv)
    np.testing.assert_allclose(p, sp, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(v, sv, rtol=1e-4, atol=1e-5)


@Gpu
def swap_xy(n: int, p: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] = vec3(p[i].y, p[i].x, p[i].z + p[i].x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_vector_store_reads_its_element_before_writing(device_name, dtype):
    """Python builds vec3(p[i].y, p[i].x, ...) before the store: no component sees the
    components stored before it (numpy arrays, rows and simulate agree)."""
    p0 = np.arange(30, dtype=dtype).reshape(10, 3)
    want = np.stack([p0[:, 1], p0[:, 0], p0[:, 2] + p0[:, 0]], axis=1)
    p = p0.copy()
    gpu(swap_xy, 10, p).join()
    np.testing.assert_array_equal(p, want)
    rows = p0.tolist()
    gpu(swap_xy, 10, rows).join()
    np.testing.assert_array_equal(np.array(rows, dtype), want)
    sim = p0.copy()
    swap_xy.simulate(10, sim)
    np.testing.assert_array_equal(sim, want)


def test_vector_parameter_as_numbers_in_every_run(device_name):
    """g given as a tuple: the launch, simulate() and the plain call all take it."""
    p0, v0 = _sample(20, 5)
    p, v = p0.astype(np.float32), v0.astype(np.float32)
    gpu(step, 20, 0.01, (0.0, -9.8, 0.0), p, v).join()
    sp, sv = p0.astype(np.float32), v0.astype(np.float32)
    step.simulate(20, 0.01, (0.0, -9.8, 0.0), sp, sv)
    np.testing.assert_allclose(v, sv, rtol=1e-5, atol=1e-6)
    cp, cv = p0.astype(np.float32), v0.astype(np.float32)
    step(20, 0.01, [0.0, -9.8, 0.0], cp, cv)            # the plain call: GlobalIdx.x = 0
    np.testing.assert_allclose(cv[0], sv[0], rtol=1e-5)
