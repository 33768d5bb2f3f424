"""The vector classes of cthreads.gpu in plain Python (what simulate() and plain calls run):
construction, components, operators, functions against numpy, the refusals, and VecList."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.gpu import (
    cross, distance, dot, ivec2, ivec3, length, length_sq, normalize, vec2, vec3, vec4,
)
from cthreads.gpu import abs as vabs, clamp, floor, max as vmax, min as vmin, sqrt
from cthreads.lang.vectors import VecList


def test_construction_and_components():
    v = vec3(1, 2, 3)
    assert list(v) == [1.0, 2.0, 3.0] and all(type(c) is float for c in v)
    assert list(vec4(2.5)) == [2.5] * 4
    assert (v.x, v.y, v.z, v[0], v[-1], len(v)) == (1.0, 2.0, 3.0, 1.0, 3.0, 3)
    v.y = 7
    v[2] = -1
    assert list(v) == [1.0, 7.0, -1.0]
    assert repr(vec2(1, 2)) == "vec2(1.0, 2.0)" and repr(ivec2(1, 2)) == "ivec2(1, 2)"
    assert not hasattr(vec2(1, 2), "z")
    with pytest.raises(IndexError, match="component index 3 is out of range for vec3"):
        v[3]
    with pytest.raises(TypeError, match=r"vec3\(\) takes 1 or 3 numbers"):
        vec3(1, 2)
    with pytest.raises(TypeError, match="ivec3 holds ints"):
        ivec3(1.5, 2, 3)


def test_operators_match_numpy():
    a, b = vec3(1.5, -2.0, 3.25), vec3(0.5, 4.0, -1.0)
    na, nb = np.array(list(a)), np.array(list(b))
    np.testing.assert_array_equal(list(a + b), na + nb)
    np.testing.assert_array_equal(list(a - b), na - nb)
    np.testing.assert_array_equal(list(a * b), na * nb)
    np.testing.assert_array_equal(list(a * 2), na * 2)
    np.testing.assert_array_equal(list(np.float32(2) * a), na * 2)     # numpy defers to us
    np.testing.assert_array_equal(list(a / 4), na / 4)
    np.testing.assert_array_equal(list(3 / a), 3 / na)
    np.testing.assert_array_equal(list(-a), -na)
    np.testing.assert_array_equal(list(vabs(a)), np.abs(na))
    np.testing.assert_array_equal(list(math.floor(a)), np.floor(na))
    c = a
    c += b                        # rebinds: a is unchanged
    assert list(a) == [1.5, -2.0, 3.25] and list(c) == list(a + b)
    assert list(ivec3(1, 2, 3) * 2 - ivec3(1)) == [1, 3, 5]


@pytest.mark.parametrize("expr", ["a == b", "a < b", "a != b", "bool(a)", "a + 1.0",
                                  "a + vec2(1, 2)", "a / b", "ivec3(1) / 2", "ivec3(1) * 0.5"])
def test_refusals(expr):
    a, b = vec3(1.0), vec3(2.0)
    with pytest.raises(TypeError):
        eval(expr, {"a": a, "b": b, "vec2": vec2, "ivec3": ivec3})


def test_functions_match_numpy():
    rng = np.random.default_rng(2)
    na, nb = rng.standard_normal(3), rng.standard_normal(3)
    a, b = vec3(*na), vec3(*nb)
    assert dot(a, b) == pytest.approx(np.dot(na, nb), rel=1e-15)
    np.testing.assert_allclose(list(cross(a, b)), np.cross(na, nb), rtol=1e-15)
    assert length(a) == pytest.approx(np.linalg.norm(na), rel=1e-15)
    assert length_sq(a) == pytest.approx(np.dot(na, na), rel=1e-15)
    assert distance(a, b) == pytest.approx(np.linalg.norm(na - nb), rel=1e-15)
    np.testing.assert_allclose(list(normalize(a)), na / np.linalg.norm(na), rtol=1e-15)
    np.testing.assert_array_equal(list(vmin(a, b)), np.minimum(na, nb))
    np.testing.assert_array_equal(list(vmax(a, b)), np.maximum(na, nb))
    np.testing.assert_array_equal(list(clamp(a, -0.5, 0.5)), np.clip(na, -0.5, 0.5))
    np.testing.assert_array_equal(list(sqrt(vabs(a))), np.sqrt(np.abs(na)))
    np.testing.assert_array_equal(list(floor(a)), np.floor(na))
    assert dot(np.array([1.0, 2.0, 3.0]), vec3(1.0)) == 6.0       # a numpy row is a vec3
    # scalars keep their builtin / math meaning
    assert vmin(3, 1, 2) == 1 and vmax([4, 9]) == 9 and vmin([3, 1], key=lambda x: -x) == 3
    assert sqrt(4.0) == 2.0 and floor(2.5) == 2 and vabs(-3) == 3 and clamp(5, 0, 2) == 2
    with pytest.raises(TypeError, match="two vectors of one type"):
        dot(vec3(1.0), vec2(1.0))
    with pytest.raises(TypeError, match="3-vectors"):
        cross(vec2(1.0), vec2(2.0))


def test_veclist_views_write_the_array():
    arr = np.zeros((4, 3), np.float32)
    p = VecList(arr, vec3)
    p[1] = vec3(1, 2, 3)
    p[2].y = 5.0
    p[3][2] = 6.0
    p[1] += vec3(1.0) * 0.5
    assert len(p) == 4 and p.shape == (4,)
    np.testing.assert_array_equal(arr, [[0, 0, 0], [1.5, 2.5, 3.5], [0, 5, 0], [0, 0, 6]])
    img = VecList(np.zeros((2, 3, 3)), vec3)
    img[1][2].x = 1.0
    img[0, 1] = vec3(2.0)
    assert img.array[1, 2, 0] == 1.0 and (img.array[0, 1] == 2.0).all()
    with pytest.raises(TypeError, match="takes a vec3"):
        p[0] = [1.0, 2.0, 3.0]
