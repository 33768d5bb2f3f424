"""@Gpu.struct classes on the host: construction, defaults, repr, equality, pickling, the numpy
layout (one word per scalar at the float width), and struct arrays in plain Python."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cthreads.gpu import Gpu, ivec2, vec3
from cthreads.lang.structs import StructList, leaf_words


@Gpu.struct
class Inner:
    a: float
    k: int


@Gpu.struct
class Particle:
    pos: vec3
    vel: vec3
    mass: float = 1.0
    alive: bool = True


@Gpu.struct
class Cell:
    corner: ivec2
    inner: Inner
    weight: float


def test_keyword_positional_defaults_repr_and_equality():
    p = Particle(vec3(1, 2, 3), vel=(0, 0, 1))
    assert p.mass == 1.0 and p.alive is True
    assert isinstance(p.vel, vec3) and tuple(p.vel) == (0.0, 0.0, 1.0)
    assert repr(p) == ("Particle(pos=vec3(1.0, 2.0, 3.0), vel=vec3(0.0, 0.0, 1.0), mass=1.0, "
                       "alive=True)")
    assert p == Particle(pos=vec3(1, 2, 3), vel=vec3(0, 0, 1), mass=1, alive=1)
    assert p != Particle(pos=vec3(1, 2, 3), vel=vec3(0, 0, 2))
    q = Particle(p)                         # a copy, not the same vectors
    q.pos.x = 9.0
    assert p.pos.x == 1.0 and q.pos.x == 9.0
    assert pickle.loads(pickle.dumps(p)) == p


def test_construction_errors_name_the_fields():
    with pytest.raises(TypeError, match="has no field 'speed'; its fields are pos, vel, mass"):
        Particle(vec3(0.0), vec3(0.0), speed=1.0)
    with pytest.raises(TypeError, match="missing field 'vel'"):
        Particle(vec3(0.0))
    with pytest.raises(TypeError, match=r"Inner.k is an int, not float"):
        Inner(1.0, 2.5)
    with pytest.raises(TypeError, match="field 'x' has the annotation"):
        @Gpu.struct
        class Bad:
            x: str


def test_dtype_is_one_word_per_scalar_at_both_widths():
    d32, d64 = Particle.dtype, Particle.dtype_for(np.float64)
    assert d32.itemsize == 8 * 4 and d64.itemsize == 8 * 8
    assert d32.fields["pos"][0] == np.dtype((np.float32, (3,)))
    assert d32.fields["alive"] == (np.dtype(np.bool_), 28)
    assert d64.fields["mass"] == (np.dtype(np.float64), 48)
    c = Cell.dtype_for(np.float64)
    assert c.fields["corner"][0] == np.dtype((np.int64, (2,)))
    assert c.fields["inner"][0].fields["k"] == (np.dtype(np.int64), 8)
    assert c.itemsize == 5 * 8
    assert [kind for _, kind in leaf_words(Cell)] == ["int", "int", "float", "int", "float"]
    assert Particle.dtype_for(np.float32) is Particle.dtype


def test_struct_list_reads_and_writes_the_array_in_place():
    a = np.zeros(3, Particle.dtype)
    p = StructList(a, Particle)
    p[1].vel += vec3(1.0, 2.0, 3.0) * 2.0
    p[1].pos.y = 5.0
    p[2] = Particle(vec3(7.0), vec3(0.0), mass=3.0)
    p[0].alive = True
    np.testing.assert_array_equal(a["vel"][1], [2.0, 4.0, 6.0])
    assert a["pos"][1][1] == 5.0 and a["mass"][2] == 3.0 and bool(a["alive"][0])
    assert p[2] == Particle(vec3(7.0), vec3(0.0), mass=3.0)
    q = Particle(p[1])                      # a copy of the element
    q.mass = 8.0
    assert a["mass"][1] == 0.0
    with pytest.raises(AttributeError, match="no field 'speed'"):
        p[0].speed
    n = np.zeros((2, 2), Cell.dtype)
    cells = StructList(n, Cell)
    cells[1][0].inner.k = 4
    cells[1, 1].corner = ivec2(1, 2)
    assert n["inner"]["k"][1, 0] == 4 and list(n["corner"][1, 1]) == [1, 2]
