"""Vectors with tuples, shared arrays, atomics, device-function lists and run-time component
indexes: what is refused fails at decoration, at the user's line, with the fix; and the WGSL of
a run-time component index carries its bounds check."""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, atomic_add, ivec2, shared, vec3


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_atomic_on_a_component_value_names_the_element_form():
    bad = line() + 6
    with _raises(r"atomic_add\(\) takes the list, the index and the value: 'h\[i\]\.x' is a "
                 r"value") as info:
        @Gpu
        def k(h: list[ivec2]) -> None:
            i: int = GlobalIdx.x
            atomic_add(h[i].x, 1)
    assert info.value.lineno == bad
    assert "atomic_add(h[i], 0, ...)" in str(info.value)


def test_atomics_on_float_vector_components_are_refused():
    with _raises(r"atomic_add\(\) on a component of a vec3 is not supported"):
        @Gpu
        def k(p: list[vec3]) -> None:
            atomic_add(p[GlobalIdx.x], 0, 1.0)
    with _raises(r"atomic_add\(\) on a list of vectors takes an element and a component"):
        @Gpu
        def k2(h: list[ivec2]) -> None:
            atomic_add(h, GlobalIdx.x, 1)
    with _raises(r"'h\[i\]\[0\]' is one component, not a vector"):
        @Gpu
        def k3(h: list[ivec2]) -> None:
            i: int = GlobalIdx.x
            atomic_add(h[i][0], 0, 1)


def test_runtime_component_index_errors_are_located():
    bad = line() + 6
    with _raises(r"a vec3 component index must be an int, got a float") as info:
        @Gpu
        def k(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            x: float = 1.0
            out[i] = p[i][x]
    assert info.value.lineno == bad
    with _raises(r"a run-time component index calls a function"):
        @Gpu.func
        def pick(i: int) -> int:
            return i % 3

        @Gpu
        def k2(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            v = vec3(p[i])
            out[i] = v[pick(i)]
    with _raises(r"component index 3 is out of range for a vec3"):
        @Gpu
        def k3(p: list[vec3], out: list[float]) -> None:
            out[0] = p[0][3]                    # a literal: checked at decoration


def test_tuple_vector_member_errors_are_located():
    bad = line() + 5
    with _raises(r"cannot store a float value into value 1 of the result of f\(\) \(tuple\[vec3, "
                 r"float\]\), a vec3") as info:
        @Gpu.func
        def f(x: float) -> tuple[vec3, float]:
            return x, x
    assert info.value.lineno == bad
    with _raises(r"value 2 of the return of g is a vec3, but g returns tuple\[float, float\]"):
        @Gpu.func
        def g(x: float) -> tuple[float, float]:
            return x, vec3(x)
    with _raises(r"a vector of h\(\)'s tuple result inside 'and'"):
        @Gpu.func
        def h(x: float) -> tuple[vec3, float]:
            return vec3(x), x

        @Gpu
        def k(p: list[vec3], out: list[float]) -> None:
            i: int = GlobalIdx.x
            if out[i] > 0.0 and h(out[i])[0].x > 1.0:
                out[i] = 0.0


def test_device_function_vector_list_parameter_takes_a_vector_list():
    @Gpu.func
    def first(p: list[vec3]) -> float:
        return p[0].x

    bad = line() + 5
    with _raises(r"argument 1 of first\(\) \('p: list\[vec3\]'\) cannot take 'xs', a "
                 r"list\[float\]") as info:
        @Gpu
        def k(xs: list[float]) -> None:
            xs[0] = first(xs)
    assert info.value.lineno == bad


def test_shared_vector_arrays_are_one_dimensional():
    with _raises(r"a shared array is annotated list\[float\], list\[int\], list\[bool\] or "
                 r"list\[vec3\]"):
        @Gpu
        def k(p: list[vec3]) -> None:
            t: list[list[vec3]] = shared(64)
            t[0][0] = p[0]


def test_runtime_component_index_wgsl_has_its_check():
    @Gpu
    def k(p: list[vec3], ks: list[int], out: list[float]) -> None:
        i: int = GlobalIdx.x
        v = vec3(p[i])
        out[i] = v[ks[i]]

    @Gpu(boundscheck=False)
    def k2(p: list[vec3], ks: list[int], out: list[float]) -> None:
        i: int = GlobalIdx.x
        v = vec3(p[i])
        out[i] = v[ks[i]]

    checked, unchecked = k.program.wgsl(), k2.program.wgsl()
    assert "fn ct_comp_ck(" in checked and "ct_note(" in checked
    assert "fn ct_comp(" in unchecked and "ct_note" not in unchecked
