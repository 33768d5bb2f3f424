"""Where the compiler hides a fold-prone float constant that reaches arithmetic through a name
(codegen/literal_entry.py), and where it leaves constants visible."""

from __future__ import annotations

import math

from cthreads.codegen import compile_kernel
from cthreads.codegen.program import Variant
from cthreads.kernel import Gpu
from cthreads.lang.indexes import GlobalIdx
from cthreads.lang.vectors import vec3

G_ZERO = 0.0


@Gpu.func
def scaled(v: float, k: float) -> float:
    return v * k


@Gpu.func
def nothing() -> float:
    return 0.0


def stored(n: int, x: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    t = 0.0
    z = -0.0
    u = 1.0
    h = math.inf
    c = 2.5
    g = G_ZERO
    o[i] = x[i] * t + x[i] * z + x[i] * u + x[i] * h + x[i] * c + x[i] * g


def test_fold_prone_constants_stored_in_locals_are_hidden():
    body = compile_kernel(stored).wgsl()
    for name, value in (("t", "0.0f"), ("z", "(-0.0f)"), ("u", "1.0f"),
                        ("h", "bitcast<f32>(0x7f800000u)"), ("g", "0.0f"), ("c", "2.5f")):
        assert f"{name} = ct_enter_f({value});" in body, name     # (c - 2.5 is a zero too)
    assert "fn ct_enter_f(" in body


def test_float64_locals_use_the_float64_helper():
    def k64(n: int, x: list[float], o: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            t = 0.0
            o[i] = x[i] * t
    from cthreads.codegen.types import Widths
    body = compile_kernel(k64, widths=Widths(float="float64")).wgsl()
    assert "t = ct_enter_d(0.0lf);" in body


def calls(n: int, x: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    o[i] = scaled(x[i], 0.0) + scaled(x[i], 3.0) + x[i] * nothing()


def test_device_function_arguments_and_results():
    text = compile_kernel(calls).wgsl()
    body = text.split("fn ct_body")[1]
    assert "ct_f0_scaled(ct_ld_x(i, 1u), ct_enter_f(0.0f))" in body     # the driver inlines
    assert "ct_f0_scaled(ct_ld_x(i, 2u), ct_enter_f(3.0f))" in body
    assert "return ct_enter_f(0.0f);" in text           # the constant result


def shapes(n: int, x: list[float], k: list[int], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    m = 0
    o[i] = x[i] * m + x[i] * 1.0 + 0.0 / x[i] + x[i] * min(1.0, 0.0)
    o[i + 1] = x[i] * k[i] + x[i] * 2.0
    if x[i] > 0.0:
        o[i] = 1.0


def test_fold_guard_shapes():
    body = compile_kernel(shapes).wgsl().split("fn ct_body")[1]
    assert "ct_enter_f(f32(m))" in body                 # an int the driver may know
    assert "ct_enter_f(1.0f)" in body                   # x * 1.0 (then x - x)
    assert "ct_div_f(ct_enter_f(0.0f)," in body         # 0.0 / x
    assert "ct_enter_f(ct_min_f(" in body               # a constant expression
    # an int read from a list, a literal 2.0, a comparison's and a store's constant: visible
    assert "ct_enter_f(f32(ct_ld_k" not in body and "ct_enter_f(f32(k[" not in body
    assert "ct_enter_f(2.0f)" not in body
    assert "> 0.0f" in body


def ints(n: int, x: list[int], o: list[int]) -> None:
    i = GlobalIdx.x
    if i < n:
        t = 0
        o[i] = x[i] * t + x[i] + t


def test_int_locals_stay_visible():
    assert "ct_enter" not in compile_kernel(ints).wgsl()


def step(n: int, dt: float, v: list[vec3]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    g = vec3(0.0, -9.8, 0.0)
    v[i] += g * dt


def test_vector_components_and_the_four_lane_form():
    program = compile_kernel(step)
    scalar = program.wgsl()
    assert scalar.count("= ct_enter_f(0.0f);") == 2 and "= ct_enter_f((-9.8f));" in scalar
    lanes = program.render(Variant(form="vec_whole"))
    assert lanes.count("= vec4<f32>(ct_enter_f(0.0f));") == 2
    assert "= vec4<f32>(ct_enter_f((-9.8f)));" in lanes
    assert "fn ct_enter_f(" in lanes and "fn ct_zero(" in lanes


def test_kernels_without_such_constants_are_unchanged():
    def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            y[i] = a * x[i] + y[i]
    assert "ct_enter" not in compile_kernel(saxpy).wgsl()


@Gpu.func
def zero_and(v: float) -> tuple[float, float]:
    return 0.0, v


def tuples_and_complex(n: int, x: list[float], o: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    a, b = zero_and(x[i])
    z = 0j
    o[i] = x[i] * a + (z * complex(x[i], 0.0)).real


def test_tuple_members_and_complex_constants():
    text = compile_kernel(tuples_and_complex).wgsl()
    assert "return ct_tup_f32_f32(ct_enter_f(0.0f), v);" in text
    assert "z = ct_center_f(vec2<f32>(0.0f, 0.0f));" in text
