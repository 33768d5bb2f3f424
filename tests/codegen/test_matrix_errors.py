"""Matrices in kernels: what is refused fails at decoration, at the user's line, with the fix;
and the WGSL of a list[mat33] kernel addresses the caller's packed entries (9 per element)."""

from __future__ import annotations

import inspect
import re

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import (GlobalIdx, Gpu, determinant, dot, inverse, mat22, mat33, transpose,
                          vec2, vec3, vec4)


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_comparing_matrices_is_refused_with_the_entry_wise_hint():
    bad = line() + 5
    with _raises("matrices cannot be compared") as info:
        @Gpu
        def k(p: list[mat33], out: list[int]) -> None:
            i: int = GlobalIdx.x
            if p[i] == p[i + 1]:
                out[i] = 1
    assert info.value.lineno == bad
    assert "compare entries (a[0, 0] < b[0, 0])" in str(info.value)


@pytest.mark.parametrize("expr, match, hint", [
    ("m + 1.0", r"unsupported operand types for \+: mat33 and float", "on the diagonal"),
    ("m * m", r"unsupported operand types for \*: mat33 and mat33", "@ for the matrix product"),
    ("m + mat22(1.0)", r"unsupported operand types for \+: mat33 and mat22", "one size"),
    ("m @ vec2(1.0, 2.0)", r"unsupported operand types for @: mat33 and vec2", "or a vec3"),
    ("m * vec3(1.0)", r"unsupported operand types for \*: mat33 and vec3", "'@' multiplies"),
    ("2.0 @ 3.0", r"unsupported operand types for @: float value and float value",
     "for scalars write '\\*'"),
    ("m[3, 0]", "row index 3 is out of range for a mat33", "use 0 .. 2"),
    ("m[0, i]", "column index must be a literal", "select with if/else"),
    ("m.x", "a matrix has no attribute '.x'", r"m\[r, c\] for an entry"),
    ("mat33(1.0, 2.0)", r"mat33\(\) takes 3 rows \(vec3\)", r"mat33\(s\)"),
    ("mat33(vec2(1.0), vec2(1.0), vec2(1.0))", "a row of a mat33 is a vec3, not a vec2",
     "vec3 rows"),
    ("dot(m, m)", r"dot\(\) does not take a mat33", "transpose, determinant, inverse"),
    ("inverse(vec3(1.0))", r"inverse\(\) takes one matrix", r"inverse\(m\)"),
    ("mat22(m)", r"mat22\(\) cannot take a mat33", "pass a mat22"),
    ("float(m) * m", "a mat33 is used where a scalar belongs", r"an entry \(m\[0, 1\]\)"),
    ("determinant(m) + m", r"unsupported operand types for \+: float value and mat33",
     "diagonal"),
])
def test_refused_expressions_are_located(expr, match, hint, tmp_path):
    src = f'''
@Gpu
def k(n: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    m = mat33(2.0)
    out[i] = ({expr})[0, 0]
'''
    names = {"Gpu": Gpu, "GlobalIdx": GlobalIdx, "mat33": mat33, "mat22": mat22,
             "vec2": vec2, "vec3": vec3, "dot": dot, "inverse": inverse,
             "determinant": determinant}
    path = tmp_path / "kernel_source.py"           # @Gpu reads the kernel's source file
    path.write_text(src)
    with _raises(match) as info:
        exec(compile(src, str(path), "exec"), names)
    assert info.value.lineno == 6
    assert re.search(hint, str(info.value))


def test_a_vec4_is_not_a_mat22():
    bad = line() + 5
    with _raises("cannot store a vec4 into 'm', a mat22") as info:
        @Gpu
        def k(out: list[float]) -> None:
            m = mat22(1.0)
            m = vec4(1.0, 2.0, 3.0, 4.0)
            out[0] = m[0, 0]
    assert info.value.lineno == bad


def test_assigning_into_a_row_or_a_parameter_entry_is_refused():
    bad = line() + 5
    with _raises("assigns into a row") as info:
        @Gpu
        def k(out: list[float]) -> None:
            m = mat22(1.0)
            m[0][1] = 2.0
            out[0] = m[0, 0]
    assert info.value.lineno == bad
    assert "m[r, c] = ..." in str(info.value)
    bad = line() + 4
    with _raises("assigns an entry of the parameter 'g'") as info:
        @Gpu
        def k2(g: mat22, out: list[float]) -> None:
            g[0, 1] = 2.0
            out[0] = g[0, 0]
    assert info.value.lineno == bad
    assert "g2 = mat22(g)" in str(info.value)


def test_component_of_a_list_matrix_element_is_refused_but_a_row_component_reads():
    bad = line() + 4
    with _raises("a matrix has no attribute '.y'") as info:
        @Gpu
        def k(p: list[mat33], out: list[float]) -> None:
            out[0] = p[0].y
    assert info.value.lineno == bad

    @Gpu
    def ok(p: list[mat33], out: list[float]) -> None:
        i: int = GlobalIdx.x
        out[i] = p[i][1].z + p[i][2, 0]
    flat = ok.wgsl.replace("(", "").replace(")", "")
    assert "ct_ld_pi * 9i + 5i" in flat and "ct_ld_pi * 9i + 6i" in flat   # row 1 .z, entry 2,0


def test_list_matrix_parameters_of_device_functions_are_refused():
    with _raises("list\\[mat33\\] parameters of device functions are not supported"):
        @Gpu.func
        def f(p: list[mat33]) -> float:
            return p[0][0, 0]

        @Gpu
        def k(p: list[mat33], out: list[float]) -> None:
            out[0] = f(p)


def test_an_alias_of_a_list_element_is_refused_with_the_copy_hint():
    bad = line() + 5
    with _raises("makes 'q' the same matrix as 'p\\[0\\]'") as info:
        @Gpu
        def k(p: list[mat33], out: list[float]) -> None:
            y: float = out[0]
            q = p[0]
            q[1, 1] = y
            out[0] = q[0, 0]
    assert info.value.lineno == bad
    assert "q = mat33(p[0])" in str(info.value)


def test_only_stores_that_read_what_they_overwrite_go_through_hidden_locals():
    hidden = re.compile(r"\bct_s\d+\b")

    @Gpu
    def saxpy(a: float, x: list[vec3], y: list[vec3]) -> None:
        i: int = GlobalIdx.x
        y[i] = a * x[i] + y[i]             # each component reads only itself: stored directly

    @Gpu
    def swap(y: list[vec3], m: list[mat22]) -> None:
        i: int = GlobalIdx.x
        y[i] = vec3(y[i].y, y[i].x, y[i].z)
        m[i] = transpose(m[i])

    assert not hidden.search(saxpy.wgsl)
    assert len(set(hidden.findall(swap.wgsl))) >= 3
