"""Vectors in kernels: what is refused fails at decoration, at the user's line, with the fix;
and the WGSL of a list[vec3] kernel addresses the caller's packed components (3 per element)."""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, ivec3, vec2, vec3
from cthreads.lang.vectors import normalize


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_comparing_vectors_is_refused_with_the_component_wise_hint():
    bad = line() + 5
    with _raises("vectors cannot be compared") as info:
        @Gpu
        def k(p: list[vec3], out: list[int]) -> None:
            i: int = GlobalIdx.x
            if p[i] == p[i + 1]:
                out[i] = 1
    assert info.value.lineno == bad
    assert "compare components (a.x < b.x)" in str(info.value)


def test_vector_plus_scalar_is_refused():
    bad = line() + 5
    with _raises(r"unsupported operand types for \+: vec3 and float") as info:
        @Gpu
        def k(p: list[vec3]) -> None:
            i: int = GlobalIdx.x
            p[i] = p[i] + 1.0
    assert info.value.lineno == bad
    assert "vec3(s)" in str(info.value)


def test_component_index_out_of_range_is_located():
    bad = line() + 5
    with _raises(r"component index 3 is out of range for a vec3") as info:
        @Gpu
        def k(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = p[i][3]
    assert info.value.lineno == bad
    with _raises(r"a vec2 has no component 'z'"):
        @Gpu
        def k2(out: list[float]) -> None:
            v = vec2(1.0, 2.0)
            out[0] = v.z


def test_vector_where_a_scalar_belongs():
    with _raises(r"a vec3 is used where a scalar belongs"):
        @Gpu
        def k(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = p[i]
    with _raises(r"cannot store a float value into an element of 'p', a vec3"):
        @Gpu
        def k2(p: list[vec3]) -> None:
            p[0] = 1.0


def test_int_vectors_refuse_floats():
    with _raises(r"ivec3 holds ints, not a float"):
        @Gpu
        def k(out: list[ivec3]) -> None:
            out[0] = ivec3(1.5, 2, 3)
    with _raises(r"'/' of an int vector gives floats"):
        @Gpu
        def k2(out: list[ivec3]) -> None:
            out[0] = out[0] / 2


def test_vector_results_where_they_cannot_be_hoisted():
    @Gpu.func
    def f(x: float) -> vec3:
        return vec3(x)

    bad = line() + 5
    with _raises(r"a call of f\(\) \(a vec3 result\) inside 'and', 'or'") as info:
        @Gpu
        def k2(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = 1.0 if i > 3 else f(1.0).x
    assert info.value.lineno == bad
    assert "assign the result to a local first" in str(info.value)
    with _raises(r"cannot store a float value into the result of g\(\), a vec3"):
        @Gpu.func
        def g(x: float) -> vec3:
            return x

        @Gpu
        def k3(p: list[vec3]) -> None:
            p[0] = g(1.0)


def test_device_function_vector_argument_is_checked():
    @Gpu.func
    def f(a: vec3) -> float:
        return a.x

    bad = line() + 4
    with _raises(r"cannot store a float value into argument 1 of f\(\) \('a: vec3'\)") as info:
        @Gpu
        def k(p: list[vec3], out: list[float]) -> None:
            out[0] = f(p[0].x)
    assert info.value.lineno == bad


def test_list_of_vec3_is_a_flat_list_of_components():
    @Gpu
    def k(p: list[vec3], v: list[vec3]) -> None:
        i: int = GlobalIdx.x
        if i < len(p):
            p[i] += normalize(v[i]) * 2.0
    wgsl = k.program.wgsl()
    assert "vec3<f32>" not in wgsl.split("fn ct_body")[1].split("fn ct_main")[0]
    assert "(i * 3i)" in wgsl and "((i * 3i) + 2i)" in wgsl
    assert k.program.params[0].vec == 3 and k.program.params[0].kind == "list[vec3]"


def test_aliasing_component_assignment_is_refused():
    bad = line() + 5
    with _raises(r"'q = p\[i\]' makes 'q' the same vector as 'p\[i\]' in Python") as info:
        @Gpu
        def k(p: list[vec3], out: list[vec3]) -> None:
            i: int = GlobalIdx.x
            q = p[i]
            q.x = 0.0
            out[i] = q
    assert info.value.lineno == bad
    assert "copy it: q = vec3(p[i])" in str(info.value)

    @Gpu
    def k_copy(p: list[vec3], out: list[vec3]) -> None:      # the copy is accepted
        i: int = GlobalIdx.x
        q = vec3(p[i])
        q.x = 0.0
        out[i] = q

    with _raises(r"assigns a component of the parameter 'a'"):
        @Gpu.func
        def f(a: vec3) -> float:
            a.x = 1.0
            return a.y

        @Gpu
        def k2(p: list[vec3], out: list[float]) -> None:
            out[0] = f(p[0])


def test_vectors_with_complex_are_located():
    with _raises(r"a vec3 holds real numbers, not a complex value"):
        @Gpu
        def k(p: list[vec3]) -> None:
            p[0] = vec3(1j)
    with _raises(r"a vec3 holds real numbers, not a complex value"):
        @Gpu
        def k2(p: list[vec3]) -> None:
            z = 2j
            p[0] = p[0] * z
