"""Complex numbers in kernels: what Python does not allow with complex values (ordering,
complex indexes, atomics, math's real functions, // and %) fails at decoration, located at the
user's line with the way out; and the WGSL of complex operations (codegen/complexes.py)."""

from __future__ import annotations

import cmath
import inspect
import math

import pytest

from cthreads.codegen import complexes
from cthreads.errors import GpuKernelTypeError
from cthreads.lang.indexes import GlobalIdx
from cthreads.lang.intrinsics import atomic_add
from cthreads.kernel import Gpu

HERE = __file__


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _located(info, bad: int, source: str, *hints: str) -> None:
    text = str(info.value)
    assert f'File "{HERE}", line {bad}' in text, text
    assert source in text
    for hint in hints:
        assert hint in text, text
    assert info.value.lineno == bad


def test_ordering_complex_values_is_a_located_error():
    bad = line() + 6
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, a: list[complex], out: list[int]) -> None:
            i: int = GlobalIdx.x
            z = a[i]
            if z < 2.0:
                out[i] = 1
    _located(info, bad, "if z < 2.0:", "complex numbers have no order",
             "hint: compare abs(z) (or z.real) instead")


def test_min_of_complex_values_is_a_located_error():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex]) -> None:
            i: int = GlobalIdx.x
            a[i] = min(a[i], 1j)
    _located(info, bad, "min(a[i], 1j)", "min() is not defined for complex values")


def test_complex_list_index_is_a_located_error():
    bad = line() + 6
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex], out: list[float]) -> None:
            i: int = GlobalIdx.x
            z = a[i]
            out[z] = 1.0
    _located(info, bad, "out[z] = 1.0", "list index must be an int, got a complex",
             "int(z.real)")


def test_atomics_on_complex_lists_are_a_located_error():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex]) -> None:
            i: int = GlobalIdx.x
            atomic_add(a, 0, 1j)
    _located(info, bad, "atomic_add(a, 0, 1j)", "atomic_add() on a list[complex]",
             "complex numbers have no atomics", "two list[float]")


def test_math_functions_refuse_complex_values_naming_cmath():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex]) -> None:
            i: int = GlobalIdx.x
            a[i] = math.sqrt(a[i])
    _located(info, bad, "math.sqrt(a[i])", "takes real numbers", "cmath.sqrt(z)")


def test_floor_division_of_complex_is_a_located_error():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex]) -> None:
            i: int = GlobalIdx.x
            a[i] = a[i] // 2
    _located(info, bad, "a[i] // 2", "unsupported operand type for '//': complex")


def test_a_complex_value_into_a_float_is_a_located_error():
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(a: list[complex], out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = a[i]
    assert "out[i] = a[i]" in str(info.value)


def test_complex_wgsl_is_a_vec2_of_the_float_width():
    @Gpu
    def k(n: int, a: list[complex], b: list[complex]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            b[i] = a[i] * a[i] / (1.0 + 2j) + cmath.exp(a[i]) + abs(a[i])
    for widths, vec, suffix in ((("float", "int"), "vec2<f32>", "_f"),
                                (("float64", "int"), "vec2<f64>", "_d")):
        text = k.program_for(widths).wgsl()
        assert f"array<{vec}>" in text
        for name in ("ct_cmul", "ct_cdiv", "ct_cexp"):
            assert name + suffix + "(" in text


def test_every_complex_call_has_both_forms():
    for name, row in complexes.COMPLEX_CALLS.items():
        assert row.f32 is not None and row.f64 is not None, name
        assert ("_d(" in row.f64.template) == bool(row.f64.helpers) or name in (
            "c_make", "c_real", "c_imag", "c_eq", "c_ne"), name


def test_abs_against_a_constant_compares_the_squared_magnitude():
    @Gpu
    def k(n: int, a: list[complex], lim: float, out: list[int]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            out[i] = int(abs(a[i]) <= 2.0) + int(0.5 < abs(a[i])) + int(abs(a[i]) <= lim) + \
                int(abs(a[i]) <= -1.0) + int(abs(a[i]) < 0.1)
    text = k.program_for(("float", "int")).wgsl()
    assert text.count("ct_cnorm_f(") == 1 + 2          # the definition, <= 2.0 and 0.5 <
    assert "4.0f" in text and "0.25f" in text
    # a parameter, a negative constant, 0.1 (whose square float32 does not hold): the hypot
    assert text.count("ct_cabs_f(") == 1 + 3


@pytest.mark.parametrize("body, says", [
    ("out[i] = int(a[i])", "int() of a complex value is not defined"),
    ("out[i] = float(a[i])", "float() of a complex value is not defined"),
    ("out[i] = round(a[i])", "round() of a complex value is not defined"),
    ("a[i] = a[i] & 1", "unsupported operand type for '&': complex"),
    ("a[i] = ~a[i]", "unsupported operand type for '~': complex"),
    ("a[i] = a[i] ** 3", "only z ** 2"),
    ("out[i] = 1.0 if a[i] == a[i] == 1.0 else 0.0", "chained comparisons of complex"),
])
def test_what_python_refuses_for_complex_values_is_located(tmp_path, body, says):
    import importlib.util
    src = tmp_path / "kern.py"
    src.write_text("from cthreads.kernel import Gpu\nfrom cthreads.lang.indexes import GlobalIdx\n"
                   "\n@Gpu\ndef k(a: list[complex], out: list[float]) -> None:\n"
                   "    i: int = GlobalIdx.x\n"
                   f"    {body}\n")
    spec = importlib.util.spec_from_file_location("kern_complex_errors", src)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(GpuKernelTypeError) as info:
        spec.loader.exec_module(module)
    assert says in str(info.value) and info.value.lineno == 7 and body in str(info.value)


def test_mixed_literals_take_the_complex_type():
    @Gpu
    def k(n: int, x: list[float], a: list[complex]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            a[i] = x[i] if x[i] > 0.0 else 2j
            a[i] += 1
            a[i] = bool(a[i]) + a[i]
    assert "vec2<f32>" in k.program_for(("float", "int")).wgsl()
