"""Struct combinations (issue 24, "structmore"): what is refused fails at decoration, at the
user's line, with the fix; the WGSL of a struct list used atomically."""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, atomic_add, vec3


@Gpu.struct
class Cell:
    total: float
    count: int
    flag: bool


@Gpu.struct
class Other:
    pos: vec3


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_an_atomic_on_a_field_value_names_the_spelling():
    bad = line() + 5
    with _raises(r"'b\[i\].count' is a value, not a place") as info:
        @Gpu
        def k(b: list[Cell]) -> None:
            i: int = GlobalIdx.x
            atomic_add(b[i].count, 1)
    assert info.value.lineno == bad
    assert 'write atomic_add(b[i], "count", ...)' in str(info.value)


def test_atomics_take_int_fields_named_by_a_string():
    with _raises("field 'total' of a Cell, a float, is not supported") as info:
        @Gpu
        def k(b: list[Cell]) -> None:
            atomic_add(b[0], "total", 1)
    assert "its int fields are count" in str(info.value)
    with _raises("Cell has no field 'cnt'"):
        @Gpu
        def k2(b: list[Cell]) -> None:
            atomic_add(b[0], "cnt", 1)
    with _raises("takes the field's name as a string"):
        @Gpu
        def k3(b: list[Cell]) -> None:
            atomic_add(b[0], 1, 1)
    with _raises("needs an int value, got a float"):
        @Gpu
        def k4(b: list[Cell]) -> None:
            atomic_add(b[0], "count", 1.5)
    with _raises("a bool, is not supported"):
        @Gpu
        def k5(b: list[Cell]) -> None:
            atomic_add(b[0], "flag", 1)


def test_wgsl_of_a_struct_list_used_atomically():
    @Gpu
    def k(b: list[Cell]) -> None:
        i: int = GlobalIdx.x
        atomic_add(b[i], "count", 2)
        b[i].total = 1.0

    text = k.wgsl
    assert "array<atomic<i32>>" in text
    assert "atomicAdd(&b[" in text and "atomicStore(&b[" in text and "bitcast<i32>(" in text
    assert "(i * 3i) + 1i" in text


def test_device_function_struct_list_parameters_check_the_struct():
    @Gpu.func
    def total(b: list[Cell], i: int) -> float:
        return b[i].total

    bad = line() + 4
    with _raises(r"cannot take 'o', a list\[Other\]") as info:
        @Gpu
        def k(o: list[Other], out: list[float]) -> None:
            out[0] = total(o, 0)
    assert info.value.lineno == bad


def test_tuple_results_check_struct_members():
    @Gpu.func
    def pair(c: Cell) -> tuple[Cell, float]:
        return c, c.total

    with _raises(r"cannot store a float value into value 1 of the result of bad\(\)"):
        @Gpu.func
        def bad(c: Cell) -> tuple[Cell, float]:
            return c.total, c.total

    with _raises(r"cannot store a Cell into value 2 of the result of bad2\(\)"):
        @Gpu.func
        def bad2(c: Cell) -> tuple[float, float]:
            return c.total, c
    with _raises(r"cannot store a Other into 'q', a Cell"):
        @Gpu
        def k(b: list[Cell], o: list[Other]) -> None:
            q, t = pair(b[0])
            q = o[0]


def test_float64_struct_atomics_without_64_bit_atomics_name_the_float32_layout():
    from cthreads.runtime.kernel_runtime import _atomic64_fix

    @Gpu
    def k(b: list[Cell]) -> None:
        atomic_add(b[0], "count", 1)

    prog = k.program_for(("float64", "int64"))
    assert "Cell.dtype" in _atomic64_fix(prog) and "'b'" in _atomic64_fix(prog)
    sites = dict(prog.feature_sites)                 # the launch's error points at the line
    assert 'atomic_add(b[0], "count", 1)' in sites["shader-int64-atomic-all-ops"]


def test_a_returned_parameter_whose_fields_the_caller_assigns_is_refused():
    @Gpu.func
    def pick(a: Cell, b: Cell) -> tuple[Cell, float]:
        return a if a.total > b.total else b, 1.0

    @Gpu.func
    def same(c: Cell) -> Cell:
        return c

    bad = line() + 4
    with _raises(r"pick\(\) may return its Cell parameter itself") as info:
        @Gpu
        def k(b: list[Cell]) -> None:
            s, w = pick(b[0], b[1])
            s.total = w
            b[2] = s
    assert info.value.lineno == bad
    assert "return a copy in pick (return Cell(...))" in str(info.value)
    with _raises(r"copy it: r = Cell\(same\(b\[0\]\)\)"):
        @Gpu
        def k2(b: list[Cell]) -> None:
            r = same(b[0])
            r.count = 3
            b[1] = r

    @Gpu
    def k3(b: list[Cell]) -> None:            # no field assigned: the same in both
        r = same(b[0])
        s, w = pick(b[0], b[1])
        b[1] = r
        b[2] = s
