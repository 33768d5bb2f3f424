"""The matrix classes mat22/mat33/mat44 and functions in plain Python, against numpy: the
same operations kernels have (cthreads.lang.matrices), refusals, and MatList over arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.gpu import (determinant, inverse, mat22, mat33, mat44, outer, transpose, vec2,
                          vec3, vec4)
from cthreads.lang.matrices import MatList, matrix_list

CASES = [(2, mat22, vec2), (3, mat33, vec3), (4, mat44, vec4)]


def _random(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + n * np.eye(n)        # well conditioned
    return a


@pytest.mark.parametrize("n, cls, vec", CASES)
def test_constructors_entries_and_rows(n, cls, vec):
    a = _random(n, 1)
    by_rows = cls(*[vec(*row) for row in a])
    by_entries = cls(*a.ravel())
    by_sequences = cls(*[list(row) for row in a])
    for m in (by_rows, by_entries, by_sequences, cls(by_rows)):
        np.testing.assert_array_equal(np.asarray(m), a)
    assert np.array_equal(np.asarray(cls(2.5)), 2.5 * np.eye(n))
    m = cls(by_rows)
    m[1, n - 1] = 7.0
    m[0] = vec(*range(n))
    assert m[1, n - 1] == 7.0 and m[-1, 0] == a[-1, 0]
    assert list(m[0]) == [float(k) for k in range(n)] and isinstance(m[0], vec)
    row = m[1]
    row[0] = 99.0                  # a row is a new vector: the matrix keeps its entry
    assert m[1, 0] == a[1, 0]
    assert by_rows[1, n - 1] == a[1, n - 1]        # cls(m) copied
    assert len(m) == n and [list(r) for r in m] == np.asarray(m).tolist()


@pytest.mark.parametrize("n, cls, vec", CASES)
def test_operations_match_numpy(n, cls, vec):
    a, b = _random(n, 2), _random(n, 3)
    v = np.arange(1.0, n + 1)
    A, B, V = cls(*a.ravel()), cls(*b.ravel()), vec(*v)
    close = np.testing.assert_allclose
    close(np.asarray(A + B), a + b)
    close(np.asarray(A - B), a - b)
    close(np.asarray(A * 2.0), a * 2)
    close(np.asarray(3 * A), 3 * a)
    close(np.asarray(A / 4.0), a / 4)
    close(np.asarray(-A), -a)
    close(np.asarray(A @ B), a @ b, rtol=1e-14)
    r = A @ V
    assert isinstance(r, vec)
    close(np.asarray(r), a @ v, rtol=1e-14)
    close(np.asarray(V @ A), v @ a, rtol=1e-14)
    close(np.asarray(np.float64(2.0) * A), 2 * a)     # numpy scalars defer to the class
    C = cls(A)
    C += B
    C @= B
    C *= 0.5
    close(np.asarray(C), (a + b) @ b * 0.5, rtol=1e-14)
    assert np.asarray(A).tolist() == a.tolist()       # the operands are unchanged


@pytest.mark.parametrize("n, cls, vec", CASES)
def test_functions_match_numpy(n, cls, vec):
    a = _random(n, 4)
    A = cls(*a.ravel())
    np.testing.assert_array_equal(np.asarray(transpose(A)), a.T)
    assert determinant(A) == pytest.approx(np.linalg.det(a), rel=1e-12)
    np.testing.assert_allclose(np.asarray(inverse(A)), np.linalg.inv(a), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(np.asarray(A @ inverse(A)), np.eye(n), atol=1e-13)
    u, v = np.arange(1.0, n + 1), np.arange(2.0, n + 2) ** 2
    np.testing.assert_array_equal(np.asarray(outer(vec(*u), vec(*v))), np.outer(u, v))
    assert isinstance(outer(vec(*u), vec(*v)), cls)
    assert determinant(a) == pytest.approx(np.linalg.det(a))     # a numpy (n, n) array


def test_inverse_of_a_singular_matrix_gives_inf_and_nan_as_on_the_device():
    m = inverse(mat22(1.0, 2.0, 2.0, 4.0))
    assert np.asarray(m).tolist() == [[math.inf, -math.inf], [-math.inf, math.inf]]
    z = np.asarray(inverse(mat33(0.0)))
    assert np.isnan(z).all()                          # 0 * inf
    s = np.asarray(inverse(mat33(vec3(1, 2, 3), vec3(2, 4, 6), vec3(0, 0, 1))))
    assert not np.isfinite(s).any()


def test_refusals_name_the_fix():
    a, b = mat33(1.0), mat22(1.0)
    with pytest.raises(TypeError, match="not compared as a whole"):
        _ = a == mat33(1.0)
    with pytest.raises(TypeError, match="no truth value"):
        bool(a)
    with pytest.raises(TypeError, match="matrix product is @"):
        _ = a * a
    with pytest.raises(TypeError, match=r"unsupported operand types for \+"):
        _ = a + b
    with pytest.raises(TypeError, match="diagonal"):
        _ = a + 1.0
    with pytest.raises(TypeError, match="takes @ with"):
        _ = a @ vec2(1, 2)
    with pytest.raises(TypeError):
        _ = vec2(1, 2) @ a
    with pytest.raises(TypeError, match="takes 3 rows"):
        mat33(1.0, 2.0)
    with pytest.raises(TypeError, match="rows of vec3"):
        mat33(vec2(1, 2), vec2(1, 2), vec2(1, 2))
    with pytest.raises(IndexError, match="out of range"):
        a[3, 0]
    with pytest.raises(TypeError, match="takes a vec3"):
        a[0] = vec2(1, 2)
    with pytest.raises(TypeError, match="takes two vectors of one size"):
        outer(vec2(1, 2), vec3(1, 2, 3))
    with pytest.raises(TypeError, match="takes a mat22, mat33 or mat44"):
        inverse(vec3(1, 2, 3))
    with pytest.raises(TypeError):
        hash(a)


def test_matlist_views_the_array():
    arr = np.zeros((4, 3, 3), np.float32)
    p = matrix_list(arr, 1, mat33)
    assert isinstance(p, MatList) and len(p) == 4 and p.shape == (4,)
    p[1][0, 2] = 5.0
    p[2] = mat33(2.0)
    p[3] += mat33(1.0)
    assert arr[1, 0, 2] == 5.0
    assert np.array_equal(arr[2], 2 * np.eye(3)) and np.array_equal(arr[3], np.eye(3))
    assert isinstance(p[1] @ vec3(1, 1, 1), vec3)
    grid = matrix_list(np.zeros((2, 5, 2, 2)), 2, mat22)
    grid[1][4][1, 1] = 3.0
    grid[1, 3] = mat22(1.0)
    assert grid.array[1, 4, 1, 1] == 3.0 and grid.array[1, 3, 0, 0] == 1.0
    wrong = np.zeros((4, 3))
    assert matrix_list(wrong, 1, mat33) is wrong        # left to the kernel's own errors
    with pytest.raises(TypeError, match="takes a mat33"):
        p[0] = mat22(1.0)
    p[0, 1] = vec3(1, 2, 3)                 # a row, as p[i, r] in a kernel
    p[0, 2, 2] = 4.0
    assert list(p[0, 1]) == [1.0, 2.0, 3.0] and p[0, 2, 2] == 4.0 == arr[0, 2, 2]
    assert isinstance(p[0, 1], vec3) and list(p[0][1]) == list(p[0, 1])
    with pytest.raises(TypeError, match="takes a vec3"):
        p[0, 1] = vec2(1, 2)
