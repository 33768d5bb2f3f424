"""Structs in kernels: what is refused fails at decoration, at the user's line, with the fix;
and the WGSL of a list[Particle] kernel addresses the caller's words (one per scalar)."""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, vec3


@Gpu.struct
class Particle:
    pos: vec3
    vel: vec3
    mass: float
    alive: bool


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_a_missing_field_is_located_and_names_the_fields():
    bad = line() + 5
    with _raises("Particle has no field 'speed'") as info:
        @Gpu
        def k(p: list[Particle], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = p[i].speed
    assert info.value.lineno == bad
    assert "its fields are pos, vel, mass, alive" in str(info.value)
    with _raises("Particle has no field 'v'"):
        @Gpu
        def k2(p: list[Particle]) -> None:
            q = Particle(p[0])
            q.v = 1.0


def test_struct_arithmetic_and_wrong_stores_are_refused():
    bad = line() + 5
    with _raises("a Particle is used where a number belongs") as info:
        @Gpu
        def k(p: list[Particle], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = p[i] * 2.0
    assert info.value.lineno == bad
    with _raises(r"cannot store a float value into 'p\[i\]', a Particle"):
        @Gpu
        def k2(p: list[Particle]) -> None:
            i: int = GlobalIdx.x
            p[i] = 1.0
    with _raises("cannot store a float value into a bool field"):
        @Gpu
        def k3(p: list[Particle]) -> None:
            p[0].alive = 1.5
    with _raises("a vec3 has no component 'w'"):
        @Gpu
        def k4(p: list[Particle], out: list[float]) -> None:
            out[0] = p[0].pos.w


def test_constructor_errors():
    with _raises(r"Particle\(\) is missing field .alive."):
        @Gpu
        def k(p: list[Particle]) -> None:
            p[0] = Particle(pos=vec3(0.0), vel=vec3(0.0), mass=1.0)
    with _raises("Particle has no field 'speed'"):
        @Gpu
        def k2(p: list[Particle]) -> None:
            p[0] = Particle(pos=vec3(0.0), vel=vec3(0.0), mass=1.0, alive=True, speed=2.0)


def test_aliasing_a_list_element_then_assigning_a_field_is_refused():
    bad = line() + 5
    with _raises(r"'q = p\[i\]' makes 'q' the same Particle") as info:
        @Gpu
        def k(p: list[Particle]) -> None:
            i: int = GlobalIdx.x
            q: Particle = p[i]
            q.mass = 2.0
            p[i + 1] = q
    assert info.value.lineno == bad
    assert r"copy it: q = Particle(p[i])" in str(info.value)

    with _raises("assigns a field of the parameter 'q'"):
        @Gpu.func
        def heavier(q: Particle) -> Particle:
            q.mass = q.mass * 2.0
            return q


def test_wgsl_reads_words_of_the_flat_list():
    @Gpu
    def k(p: list[Particle]) -> None:
        i: int = GlobalIdx.x
        if p[i].alive:
            p[i].mass = p[i].pos.z

    text = k.wgsl
    assert "(i * 8i) + 7i" in text and "(i * 8i) + 6i" in text and "(i * 8i) + 2i" in text
    assert "bitcast<u32>" in text and "& 0xffu" in text
