"""mat22/mat33/mat44 in kernels: list[mat33] over (n, 3, 3) arrays, matrix parameters, locals,
device-function parameters and results, @ with vectors and matrices, transpose, determinant,
inverse, outer; N-D lists, GpuArrays, bounds checks, wrong shapes, both float widths -- against
numpy and simulate()."""

from __future__ import annotations

import builtins
import pickle
import textwrap

import numpy as np
import pytest

from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuIndexError, GpuInvalidArgument, determinant, gpu, inverse,
    mat22, mat33, mat44, outer, prepare, to_device, transpose, vec3, vec4,
)

from tests.conftest import run_python

TOL = {np.float32: 2e-5, np.float64: 1e-12}


def _conditioned(rng, n, k, dtype):
    """n well-conditioned k x k matrices (a random rotation-ish plus k on the diagonal)."""
    return (rng.standard_normal((n, k, k)) + k * np.eye(k)).astype(dtype)


@Gpu
def rotate(n: int, m: list[mat33], p: list[vec3], out: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = m[i] @ p[i]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rotate_points_by_per_element_matrices(dtype):
    rng = np.random.default_rng(1)
    n = 500
    angle = rng.uniform(0, 2 * np.pi, n)
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros((n, 3, 3))
    m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1], m[:, 2, 2] = c, -s, s, c, 1.0
    m = m.astype(dtype)
    p = rng.standard_normal((n, 3)).astype(dtype)
    out = np.zeros_like(p)
    gpu(rotate, n, m, p, out).join()
    want = np.einsum("nij,nj->ni", m.astype(np.float64), p.astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), np.linalg.norm(p, axis=1),
                               rtol=TOL[dtype] * 10)
    sim = np.zeros_like(p)
    rotate.simulate(n, m, p, sim)
    np.testing.assert_allclose(out, sim, rtol=TOL[dtype], atol=TOL[dtype])
    g_out = to_device(np.zeros_like(p))
    gpu(rotate, n, to_device(m), to_device(p), g_out).join()     # GpuArrays
    np.testing.assert_array_equal(g_out.numpy(), out)


@Gpu
def invert2(n: int, m: list[mat22], inv: list[mat22], det: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        inv[i] = inverse(m[i])
        det[i] = determinant(m[i])


@Gpu
def invert3(n: int, m: list[mat33], inv: list[mat33], det: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        inv[i] = inverse(m[i])
        det[i] = determinant(m[i])


@Gpu
def invert4(n: int, m: list[mat44], inv: list[mat44], det: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        a = m[i]
        inv[i] = inverse(a)
        det[i] = determinant(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, kernel", [(2, invert2), (3, invert3), (4, invert4)])
def test_inverse_and_determinant_match_numpy(k, kernel, dtype):
    rng = np.random.default_rng(k)
    n = 300
    m = _conditioned(rng, n, k, dtype)
    inv, det = np.zeros_like(m), np.zeros(n, dtype)
    gpu(kernel, n, m, inv, det).join()
    m64 = m.astype(np.float64)
    np.testing.assert_allclose(det, np.linalg.det(m64), rtol=TOL[dtype] * 10)
    np.testing.assert_allclose(inv, np.linalg.inv(m64), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)
    s_inv, s_det = np.zeros_like(m), np.zeros(n, dtype)
    kernel.simulate(n, m, s_inv, s_det)
    np.testing.assert_allclose(inv, s_inv, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(det, s_det, rtol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_of_a_singular_matrix_is_inf_and_nan_as_in_simulate(dtype):
    m = np.array([[[1, 2], [2, 4]], [[0, 0], [0, 0]], [[2, 0], [0, 4]]], dtype)
    inv, det = np.zeros_like(m), np.zeros(3, dtype)
    gpu(invert2, 3, m, inv, det).join()
    s_inv, s_det = np.zeros_like(m), np.zeros(3, dtype)
    invert2.simulate(3, m, s_inv, s_det)
    np.testing.assert_array_equal(inv[0], [[np.inf, -np.inf], [-np.inf, np.inf]])
    assert np.isnan(inv[1]).all()
    np.testing.assert_array_equal(inv[2], [[0.5, 0], [0, 0.25]])
    np.testing.assert_array_equal(inv, s_inv)
    np.testing.assert_array_equal(det, [0, 0, 8])


@Gpu
def transform(n: int, t: mat44, w: list[vec4], out: list[vec4], back: list[vec4]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = t @ w[i]
    back[i] = w[i] @ transpose(t) - out[i] * 2.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mat44_parameter_transforms_vec4(dtype):
    rng = np.random.default_rng(4)
    n = 200
    t = rng.standard_normal((4, 4))
    w = rng.standard_normal((n, 4)).astype(dtype)
    want = w.astype(np.float64) @ t.T
    for given in (mat44(*t.ravel()), t, t.tolist()):      # a mat44, a (4, 4) array, nested lists
        out, back = np.zeros_like(w), np.zeros_like(w)
        gpu(transform, n, given, w, out, back).join()
        np.testing.assert_allclose(out, want, rtol=TOL[dtype] * 5, atol=TOL[dtype] * 5)
        np.testing.assert_allclose(back, -want, rtol=TOL[dtype] * 5, atol=TOL[dtype] * 5)
    sim, sim_back = np.zeros_like(w), np.zeros_like(w)
    transform.simulate(n, mat44(*t.ravel()), w, sim, sim_back)
    np.testing.assert_allclose(out, sim, rtol=TOL[dtype] * 5, atol=TOL[dtype] * 5)
    before = w.copy()
    with pytest.raises(GpuInvalidArgument, match=r"parameter 't' \(mat44\) takes a mat44"):
        gpu(transform, n, vec4(1.0), w, out, back).join()
    np.testing.assert_array_equal(w, before)


@Gpu.func
def compose(a: mat33, b: mat33) -> mat33:
    c = a @ b
    c = transpose(c)             # reads what it overwrites: computed before it is stored
    return c * 2.0


@Gpu.func
def frame(u: vec3, v: vec3) -> mat33:
    return outer(u, v) + mat33(1.0)


@Gpu
def matrix_locals(n: int, r: mat33, m: list[mat33], out: list[mat33], d: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    q = compose(r, m[i])
    q -= mat33(1.0)
    q[1] = vec3(1.0, 2.0, 3.0) @ q
    q[2, 0] = -q[0, 2]
    q = q @ q / 4.0
    if determinant(compose(q, r)) > 0.0:
        q += frame(m[i][0], m[i][1])
    out[i] = q
    out[i][0, 1] = -m[i][1].z
    m[i] @= r
    m[i] = transpose(m[i])
    d[i] = m[i][0, 1]


def _locals_reference(r, m):
    out, d, m2 = np.zeros_like(m), np.zeros(len(m)), m.copy()
    for i in range(len(m)):
        q = (r @ m[i]).T * 2 - np.eye(3)
        q[1] = np.array([1.0, 2.0, 3.0]) @ q
        q[2, 0] = -q[0, 2]
        q = q @ q / 4
        if np.linalg.det((q @ r).T * 2) > 0:
            q = q + np.outer(m[i][0], m[i][1]) + np.eye(3)
        out[i] = q
        out[i][0, 1] = -m[i][1][2]
        m2[i] = (m[i] @ r).T
        d[i] = m2[i][0, 1]
    return out, d, m2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_locals_device_functions_and_in_place_updates(dtype):
    rng = np.random.default_rng(5)
    n = 64
    r = rng.standard_normal((3, 3)) * 0.5
    m = rng.standard_normal((n, 3, 3)).astype(dtype) * 0.5
    want_out, want_d, want_m = _locals_reference(r, m.astype(np.float64))
    sim_m, m0 = m.copy(), m.copy()
    out, d = np.zeros_like(m), np.zeros(n, dtype)
    gpu(matrix_locals, n, r, m, out, d).join()
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(out, want_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(m, want_m, rtol=tol, atol=tol)
    np.testing.assert_allclose(d, want_d, rtol=tol, atol=tol)
    sim_out, sim_d = np.zeros_like(m), np.zeros(n, dtype)
    matrix_locals.simulate(n, mat33(*r.ravel()), sim_m, sim_out, sim_d)
    np.testing.assert_allclose(out, sim_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(m, sim_m, rtol=tol, atol=tol)
    again, sim_out2 = m0.copy(), np.zeros_like(m)
    matrix_locals.simulate(n, r, again, sim_out2, sim_d)    # a (3, 3) array, as gpu() takes
    np.testing.assert_array_equal(sim_out2, sim_out)


@Gpu
def swaps(v: list[vec3], m: list[mat22]) -> None:
    i: int = GlobalIdx.x
    if i < len(v):
        v[i] = vec3(v[i].y, v[i].x, v[i].z)
        w = v[i]
        w = vec3(w.z, w.x, w.y)
        v[i] = w * 1.0
        m[i] = transpose(m[i])


def test_assignments_that_read_what_they_overwrite():
    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    m = np.arange(16, dtype=np.float32).reshape(4, 2, 2)
    want_v = v[:, [2, 1, 0]]
    want_m = m.transpose(0, 2, 1).copy()
    gpu(swaps, v, m).join()
    np.testing.assert_array_equal(v, want_v)
    np.testing.assert_array_equal(m, want_m)


@Gpu
def grid_inverse(a: list[list[mat22]], out: list[list[mat22]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(a) and x < a.shape[1]:
        out[y, x] = inverse(a[y][x]) * a[y, x][0, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nd_lists_of_matrices(dtype):
    rng = np.random.default_rng(6)
    h, w = 9, 13
    a = _conditioned(rng, h * w, 2, dtype).reshape(h, w, 2, 2)
    out = np.zeros_like(a)
    gpu(grid_inverse, a, out, threads=(w, h)).join()
    want = np.linalg.inv(a.astype(np.float64)) * a[:, :, :1, :1]
    np.testing.assert_allclose(out, want, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    sim = np.zeros_like(a)
    grid_inverse.simulate(a, sim, threads=(w, h))
    np.testing.assert_allclose(out, sim, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


@Gpu
def read_next(n: int, m: list[mat33], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = m[i + 1][2, 2]


def test_bounds_check_reports_the_element_index():
    m = np.ones((4, 3, 3), np.float32)
    out = np.full(4, 7.0, np.float32)
    with pytest.raises(GpuIndexError, match="index 4 is out of range for list 'm' of length 4"):
        gpu(read_next, 4, m, out).join()
    np.testing.assert_array_equal(out, 7.0)
    gpu(read_next, 3, m, out).join()
    np.testing.assert_array_equal(out, [1, 1, 1, 7])


@pytest.mark.parametrize("shape", [(10, 9), (10, 3), (10, 3, 2), (10, 2, 3, 3)])
def test_wrong_trailing_shape_names_the_expected_shape(shape):
    m = np.zeros(shape, np.float32)
    p = np.zeros((10, 3), np.float32)
    out = np.zeros((10, 3), np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'm' \(list\[mat33\]\) takes an "
                                                 r"array of shape \(n, 3, 3\)"):
        gpu(rotate, 10, m, p, out).join()
    assert not out.any()
    strided = np.zeros((10, 3, 6), np.float32)[:, :, :3]
    with pytest.raises(GpuInvalidArgument, match="C-contiguous"):
        gpu(rotate, 10, strided, p, out).join()


PICKLED = '''
import numpy as np
from cthreads.gpu import Gpu, GlobalIdx, mat33, vec3, inverse

@Gpu
def solve(m: list[mat33], b: list[vec3], x: list[vec3]) -> None:
    i = GlobalIdx.x
    if i < len(m):
        x[i] = inverse(m[i]) @ b[i]
'''


def test_a_matrix_kernel_pickles_by_value(tmp_path, device_name):
    path = tmp_path / "script.py"
    path.write_text(PICKLED)
    namespace = {"__name__": "__main__"}
    exec(builtins.compile(PICKLED, str(path), "exec"), namespace)  # noqa: S102
    path.unlink()
    blob = tmp_path / "kernel.pickle"
    blob.write_bytes(pickle.dumps(namespace["solve"]))
    out = run_python(textwrap.dedent(f'''
        import pickle
        import numpy as np
        from cthreads.gpu import gpu
        kernel = pickle.loads(open({str(blob)!r}, "rb").read())
        rng = np.random.default_rng(0)
        m = (rng.standard_normal((50, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
        b = rng.standard_normal((50, 3)).astype(np.float32)
        x = np.zeros_like(b)
        gpu(kernel, m, b, x).join()
        print(float(np.abs(np.einsum("nij,nj->ni", m, x) - b).max()))
    '''))
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip().splitlines()[-1]) < 1e-4


@Gpu
def rows_and_entries(n: int, m: list[mat33], out: list[vec3], s: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    a: mat33 = m[i] * 2.0
    out[i] = m[i, 1] + a[2]                 # p[i, r] and m[r]: rows
    s[i] = a[1][2] + m[i][0][1] + m[i][2].x
    m[i, 0] = out[i]                        # a row stored into the list
    b = mat33(a)
    y: float = s[i]
    b[0, 0] = y                             # an entry from a local
    s[i] = b[0, 0] - a[0, 0]


def test_rows_entries_annotated_locals_and_prepare():
    prepare()                               # compiles the kernels above, including these
    m = np.random.default_rng(7).random((5, 3, 3))
    m0 = m.copy()
    out, s = np.zeros((5, 3)), np.zeros(5)
    gpu(rows_and_entries, 5, m, out, s).join()
    np.testing.assert_allclose(out, m0[:, 1] + 2 * m0[:, 2], rtol=1e-15)
    s_want = 2 * m0[:, 1, 2] + m0[:, 0, 1] + m0[:, 2, 0]
    np.testing.assert_allclose(s, s_want - 2 * m0[:, 0, 0], rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(m[:, 0], out)
    np.testing.assert_array_equal(m[:, 1:], m0[:, 1:])
    sim_m, sim_out, sim_s = m0.copy(), np.zeros((5, 3)), np.zeros(5)
    rows_and_entries.simulate(5, sim_m, sim_out, sim_s)
    np.testing.assert_array_equal(sim_m, m)
    np.testing.assert_array_equal(sim_out, out)


@Gpu
def turn(n: int, r: mat22, m: list[mat22]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        m[i] = r @ m[i]


def test_matrices_bound_in_an_arena_stay_on_the_device_between_launches():
    n = 10
    m = np.tile(np.eye(2), (n, 1, 1)).astype(np.float32)
    m[:, 0, 1] = np.arange(n)
    r = np.array([[0.0, -1.0], [1.0, 0.5]])
    want = np.linalg.matrix_power(r, 3) @ m.astype(np.float64)
    with GpuArena() as arena:
        arena.bind(m=m)
        for _ in range(3):
            gpu(turn, n, r, m).join(download=False)
        arena.sync()
    np.testing.assert_allclose(m, want, rtol=1e-6, atol=1e-6)
