"""Vectors in kernels (issue 24 slice): list[vec3] over (n, 3) / (h, w, 3) numpy arrays and
GpuArrays, vector locals, component access and assignment, the vector functions, ivec
arithmetic, both float widths, bounds checks, prepare() -- against numpy and simulate()."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import (
    GlobalIdx, Gpu, GpuIndexError, GpuInvalidArgument, cross, dot, gpu, ivec3, length,
    normalize, prepare, to_device, vec3,
)
from cthreads.gpu import abs as vabs, max as vmax, min as vmin, sqrt

G = vec3(0.0, -9.8, 0.0)


@Gpu
def particle_step(n: int, dt: float, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += vec3(0.0, -9.8, 0.0) * dt
    p[i] += v[i] * dt


@Gpu
def geometry(a: list[vec3], b: list[vec3], out: list[vec3], d: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        c = cross(a[i], b[i])
        m: vec3 = normalize(c)
        m.y = m.y * 2.0
        m[0] += 1.0
        out[i] = m
        out[i][2] = -out[i].z
        out[i].x -= 0.5
        d[i] = dot(a[i], b[i]) + length(c) + a[-1].y


@Gpu
def int_vectors(a: list[ivec3], b: list[ivec3], out: list[ivec3]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        q: ivec3 = a[i] * 2 + ivec3(1, 2, 3) - b[i]
        out[i] = vmax(vabs(q), vmin(a[i], b[i])) * 3


@Gpu.func
def triple_product(a: vec3, b: vec3, c: vec3) -> float:
    a2 = vec3(a)                                     # a copy: its components are assignable
    a2.x += 0.0
    return dot(a2, cross(b, c))


@Gpu
def triple_products(a: list[vec3], b: list[vec3], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        out[i] = triple_product(a[i], b[i], vec3(0.0, 0.0, 1.0)) + triple_product(b[i], a[i],
                                                                                  a[i] * 2.0)


@Gpu
def push(n: int, g: vec3, dt: float, v: list[vec3], o: ivec3, out: list[ivec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        v[i] += g * dt
        out[i] = o * i + ivec3(len(v))


@Gpu.func
def reflect(d: vec3, n: vec3) -> vec3:
    return d - n * (2.0 * dot(d, n))


@Gpu.func
def damped_bounce(d: vec3, n: vec3) -> vec3:
    if d.y > 0.0:
        return d
    r = reflect(d, n)                                # a vector result inside a device function
    return r * 0.5


@Gpu
def bounce_all(d: list[vec3], out: list[vec3], s: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(d):
        nn = normalize(vec3(0.0, 1.0, 0.1))
        out[i] = damped_bounce(d[i], nn) - reflect(d[i], nn) * 0.25
        if reflect(d[i], nn).y > 0.0:                # hoisted before the if
            s[i] = damped_bounce(d[i], nn).x
        else:
            s[i] = -1.0


@Gpu
def write_n(n: int, p: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] = vec3(1.0)


@Gpu
def blur_image(img: list[list[vec3]], out: list[list[vec3]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(img) and x < img.shape[1]:
        out[y, x] = img[y][x] * 0.5 + vec3(float(x), float(y), 1.0)
        out[y][x].z += img[y, x].x


@Gpu.func
def softened_inverse(ax: float, ay: float, az: float, bx: float, by: float, bz: float) -> float:
    d = vec3(ax, ay, az) - vec3(bx, by, bz)          # vectors inside a device function
    return 1.0 / sqrt(dot(d, d) + 0.01)


@Gpu
def nbody_accel(n: int, p: list[vec3], acc_out: list[vec3], potential: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc = vec3(0.0)                                  # an inferred vector local, in a loop
    pi: vec3 = p[i]
    e = 0.0
    for j in range(n):
        d = p[j] - pi
        r2 = dot(d, d) + 0.01
        acc += d * (1.0 / (r2 * sqrt(r2)))
        e += softened_inverse(pi.x, pi.y, pi.z, p[j].x, p[j].y, p[j].z)
    acc_out[i] = acc
    potential[i] = e


def _step_reference(p, v, dt):
    dt = p.dtype.type(dt)
    v2 = v + np.array([0.0, -9.8, 0.0], p.dtype) * dt
    return p + v2 * dt, v2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_particle_step_matches_numpy_and_simulate(dtype):
    rng = np.random.default_rng(3)
    n = 1000
    p = rng.standard_normal((n, 3)).astype(dtype)
    v = rng.standard_normal((n, 3)).astype(dtype)
    want_p, want_v = _step_reference(p, v, 0.01)
    sim_p, sim_v = p.copy(), v.copy()
    gpu(particle_step, n, 0.01, p, v).join()         # in place: the caller's arrays
    assert p.dtype == dtype and p.shape == (n, 3)
    tol = 1e-6 if dtype is np.float32 else 1e-14
    np.testing.assert_allclose(v, want_v, rtol=tol, atol=tol)
    np.testing.assert_allclose(p, want_p, rtol=tol, atol=tol)
    particle_step.simulate(n, 0.01, sim_p, sim_v)
    np.testing.assert_allclose(p, sim_p, rtol=1e-5 if dtype is np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_geometry_functions_and_component_assignment(dtype):
    rng = np.random.default_rng(4)
    n = 300
    a = rng.standard_normal((n, 3)).astype(dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    out, d = np.zeros((n, 3), dtype), np.zeros(n, dtype)
    gpu(geometry, a, b, out, d).join()
    c = np.cross(a.astype(np.float64), b)
    m = c / np.linalg.norm(c, axis=1, keepdims=True)
    m[:, 1] *= 2
    m[:, 0] += 1
    m[:, 2] *= -1
    m[:, 0] -= 0.5
    tol = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(out, m, rtol=tol, atol=tol)
    want_d = (a.astype(np.float64) * b).sum(1) + np.linalg.norm(c, axis=1) + a[-1, 1]
    np.testing.assert_allclose(d, want_d, rtol=tol, atol=tol)
    sim_out, sim_d = np.zeros_like(out), np.zeros_like(d)
    geometry.simulate(a, b, sim_out, sim_d)
    np.testing.assert_allclose(out, sim_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(d, sim_d, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nbody_accelerations(dtype):
    n = 150
    p = np.random.default_rng(9).standard_normal((n, 3)).astype(dtype)
    acc, pot = np.zeros_like(p), np.zeros(n, dtype)
    gpu(nbody_accel, n, p, acc, pot).join()
    d = p[None, :, :].astype(np.float64) - p[:, None, :]
    r2 = (d * d).sum(-1) + 0.01
    want = (d / (r2 * np.sqrt(r2))[..., None]).sum(1)
    tol = 1e-5 if dtype is np.float32 else 1e-13
    np.testing.assert_allclose(acc, want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(pot, (1 / np.sqrt(r2)).sum(1), rtol=tol)
    sim_acc, sim_pot = np.zeros_like(acc), np.zeros_like(pot)
    nbody_accel.simulate(n, p, sim_acc, sim_pot)
    np.testing.assert_allclose(sim_acc, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_device_function_vector_parameters(dtype):
    rng = np.random.default_rng(10)
    a = rng.standard_normal((99, 3)).astype(dtype)
    b = rng.standard_normal((99, 3)).astype(dtype)
    out = np.zeros(99, dtype)
    gpu(triple_products, a, b, out).join()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.einsum("ij,ij->i", a64, np.cross(b64, [0.0, 0.0, 1.0])) + \
        np.einsum("ij,ij->i", b64, np.cross(a64, 2 * a64))
    tol = 1e-5 if dtype is np.float32 else 1e-13
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    sim = np.zeros_like(out)
    triple_products.simulate(a, b, sim)
    np.testing.assert_allclose(sim, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_scalar_parameters(dtype):
    n = 70
    v = np.ones((n, 3), dtype)
    out = np.zeros((n, 3), np.int32)
    gpu(push, n, vec3(1.0, -2.0, 0.5), 0.5, v, ivec3(1, 2, 3), out).join()
    np.testing.assert_array_equal(v, np.ones((n, 3)) + np.array([0.5, -1.0, 0.25]))
    np.testing.assert_array_equal(out, np.arange(n)[:, None] * [1, 2, 3] + n)
    gpu(push, n, (1.0, -2.0, 0.5), 0.5, v, [0, 0, 1], out).join()   # or n numbers
    np.testing.assert_array_equal(v, np.ones((n, 3)) + np.array([1.0, -2.0, 0.5]))
    sim_v, sim_out = np.ones((n, 3), dtype), np.zeros_like(out)
    push.simulate(n, vec3(1.0, -2.0, 0.5), 0.5, sim_v, ivec3(1, 2, 3), sim_out)
    np.testing.assert_array_equal(sim_v, np.ones((n, 3)) + np.array([0.5, -1.0, 0.25]))
    np.testing.assert_array_equal(sim_out, np.arange(n)[:, None] * [1, 2, 3] + n)
    before = v.copy()
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'g' \(vec3\) takes a vec3 \(or 3 "
                                                 r"numbers\), got float"):
        gpu(push, n, 1.0, 0.5, v, ivec3(1, 2, 3), out).join()
    with pytest.raises(TypeError, match=r"takes 6 kernel argument\(s\) \(n, g, dt, v, o, "
                                        r"out\), got 5"):
        gpu(push, n, 0.5, v, ivec3(1, 2, 3), out).join()
    np.testing.assert_array_equal(v, before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_device_function_vector_results(dtype):
    d = np.random.default_rng(11).standard_normal((200, 3)).astype(dtype)
    out, s = np.zeros_like(d), np.zeros(200, dtype)
    gpu(bounce_all, d, out, s).join()
    d64 = d.astype(np.float64)
    nn = np.array([0.0, 1.0, 0.1]) / np.linalg.norm([0.0, 1.0, 0.1])
    refl = d64 - nn * (2 * d64 @ nn)[:, None]
    bounce = np.where(d64[:, 1:2] > 0, d64, refl * 0.5)
    tol = 1e-5 if dtype is np.float32 else 1e-13
    np.testing.assert_allclose(out, bounce - refl * 0.25, rtol=tol, atol=tol)
    np.testing.assert_allclose(s, np.where(refl[:, 1] > 0, bounce[:, 0], -1.0), rtol=tol,
                               atol=tol)
    sim_out, sim_s = np.zeros_like(out), np.zeros_like(s)
    bounce_all.simulate(d, sim_out, sim_s)
    np.testing.assert_allclose(sim_out, out, rtol=tol, atol=tol)


def test_int_vector_arithmetic():
    rng = np.random.default_rng(5)
    n = 257
    a = rng.integers(-1000, 1000, (n, 3), dtype=np.int32)
    b = rng.integers(-1000, 1000, (n, 3), dtype=np.int32)
    out = np.zeros((n, 3), np.int32)
    gpu(int_vectors, a, b, out).join()
    want = np.maximum(np.abs(a * 2 + np.array([1, 2, 3]) - b), np.minimum(a, b)) * 3
    np.testing.assert_array_equal(out, want)
    sim = np.zeros_like(out)
    int_vectors.simulate(a, b, sim)
    np.testing.assert_array_equal(sim, want)


def test_bounds_check_names_the_element_index():
    p = np.zeros((10, 3), np.float32)
    with pytest.raises(GpuIndexError, match=r"index 10 is out of range for list 'p' of length "
                                            r"10") as info:
        gpu(write_n, 11, p).join()
    assert "p[i] = vec3(1.0)" in str(info.value)
    assert not p.any()                  # nothing written back
    gpu(write_n, 10, p).join()
    assert (p == 1.0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_image_of_vectors_nd(dtype):
    rng = np.random.default_rng(6)
    h, w = 7, 45
    img = rng.standard_normal((h, w, 3)).astype(dtype)
    out = np.zeros_like(img)
    gpu(blur_image, img, out, threads=(w, h)).join()
    ys, xs = np.mgrid[0:h, 0:w]
    want = img * dtype(0.5) + np.stack([xs, ys, np.ones_like(xs)], axis=-1).astype(dtype)
    want[..., 2] += img[..., 0]
    tol = 1e-6 if dtype is np.float32 else 1e-14
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    sim = np.zeros_like(img)
    blur_image.simulate(img, sim, threads=(w, h))
    np.testing.assert_allclose(sim, want, rtol=tol, atol=tol)


def test_gpuarrays_of_vectors():
    rng = np.random.default_rng(8)
    n = 500
    p = rng.standard_normal((n, 3)).astype(np.float32)
    v = rng.standard_normal((n, 3)).astype(np.float32)
    want_p, want_v = _step_reference(p, v, 0.02)
    dp, dv = to_device(p), to_device(v)
    for _ in range(2):
        gpu(particle_step, n, 0.01, dp, dv).join()
    assert dp.shape == (n, 3)
    np.testing.assert_allclose(dv.numpy(), want_v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dp.numpy(), _step_reference(*_step_reference(p, v, 0.01), 0.01)[0],
                               rtol=1e-5, atol=1e-6)
    sim_p, sim_v = to_device(p), to_device(v)
    particle_step.simulate(n, 0.01, sim_p, sim_v)
    np.testing.assert_allclose(sim_p.numpy(), _step_reference(p, v, 0.01)[0], rtol=1e-5)


def test_prepare_then_launch():
    prepare()
    p, v = np.zeros((3, 3), np.float32), np.ones((3, 3), np.float32)
    gpu(particle_step, 3, 0.5, p, v).join()
    np.testing.assert_allclose(v, [[1.0, 1.0 - 4.9, 1.0]] * 3, rtol=1e-6)


@pytest.mark.parametrize("shape", [(10,), (10, 4), (10, 3, 1), (2, 5, 3)])
def test_wrong_trailing_shape_names_the_expected_shape(shape):
    p = np.zeros(shape, np.float32)
    v = np.zeros((10, 3), np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'p' \(list\[vec3\]\) takes an "
                                                 r"array of shape \(n, 3\)"):
        gpu(particle_step, 10, 0.1, p, v).join()
    assert not v.any() and not p.any()
    img = np.zeros((4, 5, 3), np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"shape \(h, w, 3\)"):
        gpu(blur_image, img, np.zeros((20, 3), np.float32)).join()


def test_strided_and_non_array_arguments_are_refused():
    base = np.zeros((10, 6), np.float32)
    v = np.zeros((10, 3), np.float32)
    with pytest.raises(GpuInvalidArgument, match="C-contiguous"):
        gpu(particle_step, 10, 0.1, base[:, ::2], v).join()
    with pytest.raises(GpuInvalidArgument, match=r"numpy array or GpuArray of shape \(n, 3\)"):
        gpu(particle_step, 10, 0.1, ((0.0, 0.0, 0.0),) * 10, v).join()   # (lists: taken)
    assert not base.any() and not v.any()
