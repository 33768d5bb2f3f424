"""Tuple results of device functions: every mistake is a located error with the fix, and the
WGSL of the four-lane variant (no device needed). Expected line numbers come from
``inspect.currentframe()``."""

from __future__ import annotations

import importlib.util
import inspect
import math
import typing

import pytest

from cthreads.codegen.program import Variant
from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu
from tests.device import tuple_kernels as tk

HERE = __file__


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _at(info, lineno: int, fn: str) -> None:
    assert f'File "{HERE}", line {lineno}, in {fn}' in str(info.value), str(info.value)


HEADER = ("import math\nfrom cthreads.gpu import GlobalIdx, Gpu\n"
          "from tests.codegen.test_tuple_errors import sincos, half\n")


def _load(tmp_path, body: str):
    """Import a module of ``body`` (after ``HEADER``: its first line is line 4)."""
    path = tmp_path / "tuple_case.py"
    path.write_text(HEADER + body)
    spec = importlib.util.spec_from_file_location("tuple_case", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@Gpu.func
def sincos(x: float) -> tuple[float, float]:
    return math.sin(x), math.cos(x)


@Gpu.func
def half(x: float) -> float:
    return x * 0.5


def test_wrong_number_of_returned_values():
    bad = line() + 4
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(x: float) -> tuple[float, float]:
            return x, x, x
    _at(info, bad, "f")
    assert "returns 2 values (tuple[float, float]), but this return gives 3" in str(info.value)
    assert "return a, b" in str(info.value)


def test_one_value_returned_from_a_tuple_function():
    bad = line() + 6
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(x: float) -> tuple[float, float]:
            if x > 0.0:
                return x, x
            return x
    _at(info, bad, "f")
    assert "but this return gives one" in str(info.value)


def test_a_member_of_the_wrong_type():
    bad = line() + 4
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(x: float) -> tuple[int, int]:
            return 1, x
    _at(info, bad, "f")
    assert "value 2 of the return of f is a float, but f returns tuple[int, int]" in \
        str(info.value)


def test_a_scalar_function_returning_a_tuple_says_how_to_annotate():
    bad = line() + 4
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(x: float, k: int) -> float:
            return x, k
    _at(info, bad, "f")
    assert "returns a float, not 2 values" in str(info.value)
    assert "-> tuple[float, int]" in str(info.value)


def test_a_path_without_return_names_the_tuple():
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(x: float) -> tuple[float, float]:
            if x > 0.0:
                return x, x
    assert "without returning a tuple[float, float]" in str(info.value)


def test_unpacking_into_the_wrong_count():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, out: list[float]) -> None:
            i: int = GlobalIdx.x
            a, b, c = sincos(out[i])
            out[i] = a + b + c
    _at(info, bad, "k")
    assert "3 names are unpacked from sincos(), which returns 2 values" in str(info.value)
    assert "'a, b = sincos(...)'" in str(info.value)


@pytest.mark.parametrize("statement", [
    "out[i] = sincos(out[i])",
    "v = sincos(out[i])",
    "out[i] = sincos(out[i]) + 1.0",
    "out[i] = half(sincos(1.0))",
])
def test_a_tuple_result_used_as_one_value(tmp_path, statement):
    with pytest.raises(GpuKernelTypeError) as info:
        _load(tmp_path, "@Gpu\ndef k(n: int, out: list[float]) -> None:\n"
              f"    i: int = GlobalIdx.x\n    {statement}\n")
    msg = str(info.value)
    assert "tuple_case.py\", line 7, in k" in msg, msg
    assert "sincos returns 2 values (tuple[float, float]), so its call is not a single " \
        "value" in msg, msg
    assert "unpack it: 'a, b = sincos(...)', or take one value: sincos(...)[0]" in msg


@pytest.mark.parametrize("index, message", [
    ("2", "tuple index 2 is out of range: sincos() returns 2 values"),
    ("-3", "tuple index -3 is out of range"),
    ("i", "a tuple result is indexed with a literal"),
])
def test_indexing_a_tuple_result(tmp_path, index, message):
    with pytest.raises(GpuKernelTypeError) as info:
        _load(tmp_path, "@Gpu\ndef k(n: int, out: list[float]) -> None:\n"
              f"    i: int = GlobalIdx.x\n    out[i] = sincos(1.0)[{index}]\n")
    assert message in str(info.value), str(info.value)
    assert "tuple_case.py\", line 7, in k" in str(info.value)


def test_unpacking_a_scalar_result():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, out: list[float]) -> None:
            i: int = GlobalIdx.x
            a, b = half(out[i])
            out[i] = a + b
    _at(info, bad, "k")
    assert "device function half returns one float value, which cannot be unpacked into 2 " \
        "names" in str(info.value)
    assert "'-> tuple[...]'" in str(info.value)


@pytest.mark.parametrize("signature, message", [
    ("def k(n: int, p: tuple[float, float]) -> None:",
     "parameter 'p' of kernel k: 'tuple[float, float]' is not a type for parameters"),
    ("def k(n: int, ps: list[tuple[float, float]]) -> None:",
     "parameter 'ps' of kernel k: 'tuple[float, float]' is not a type"),
    ("def k(n: int, p: tuple) -> None:", "parameter 'p' of kernel k: 'tuple' is not a type"),
])
def test_tuple_annotations_on_kernel_parameters(tmp_path, signature, message):
    with pytest.raises(GpuKernelTypeError) as info:
        _load(tmp_path, "@Gpu\n" + signature + "\n    pass\n")
    msg = str(info.value)
    assert "tuple_case.py\", line 5, in k" in msg, msg
    assert message in msg, msg
    assert "'a, b = f(x)'" in msg and "'xs: list[float], ys: list[float]'" in msg
    assert "list[list[float]] of shape (n, 2)" in msg


def test_tuple_annotations_on_function_parameters_and_locals():
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu.func
        def f(p: tuple[float, float]) -> float:
            return 0.0
    assert "parameter 'p' of device function f: 'tuple[float, float]' is not a type" in \
        str(info.value)
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, out: list[float]) -> None:
            i: int = GlobalIdx.x
            t: tuple[float, float] = sincos(1.0)
            out[i] = 0.0
    assert "local 't': 'tuple[float, float]' is not a type" in str(info.value)
    _at(info, bad, "k")


@pytest.mark.parametrize("result, message", [
    ("tuple", "a bare 'tuple' result does not say the members' types"),
    ("tuple[float, ...]", "a tuple result of any length ('...') cannot be compiled"),
    ("tuple[float, list[float]]", "cannot return a list inside a tuple"),
    ("tuple[float, tuple[int, int]]", "'tuple[int, int]' is not a type"),
])
def test_result_annotations_that_cannot_be_compiled(tmp_path, result, message):
    with pytest.raises(GpuKernelTypeError) as info:
        _load(tmp_path, f"@Gpu.func\ndef f(x: float) -> {result}:\n    return x, x\n")
    assert "tuple_case.py\", line 5, in f" in str(info.value)
    assert message in str(info.value), str(info.value)
    assert "the result of device function f" in str(info.value)


def test_typing_tuple_and_string_annotations_are_results_too():
    @Gpu.func
    def f(x: float) -> typing.Tuple[float, int]:
        return x, 1

    @Gpu.func
    def g(x: float) -> "tuple[int, float]":
        a, b = f(x)
        return b, a

    @Gpu
    def k(n: int, out: list[float]) -> None:
        i: int = GlobalIdx.x
        a, b = g(out[i])
        out[i] = a + b

    assert str(g.signature.returns) == "tuple[int, float]"
    assert "struct ct_tup_i32_f32 { m0: i32, m1: f32 }" in k.wgsl
    assert "struct ct_tup_f32_i32 { m0: f32, m1: i32 }" in k.wgsl
    assert g(2.0) == (1, 2.0)


# -- the four-lane variant of element-wise kernels (codegen/vectorize.py) ---------------------
def test_unpacked_lane_wise_functions_keep_the_four_lane_variant():
    p = tk.lanes.program
    assert p.vec_guard == "n"
    text = p.render(Variant(form="vec_whole"))
    body = text[text.index("fn ct_vbody"):]
    # (the literal argument hidden from the driver, as the scalar form's: literal_entry.py)
    assert "let ct_s0_m0: vec4<f32> = vec4<f32>(((x[ct_j]) * (vec4<f32>(ct_enter_f(3.0f)))));" \
        in body, body
    assert "ct_tup" not in body                    # members are vectors, no struct
    assert tk.int_member.program.vec_guard is None    # an int member: the scalar kernel only
