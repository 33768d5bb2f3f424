"""The element-type table (``codegen/types.py``): for every row, the host spellings (Python
type, struct code, numpy dtypes, size) and the WGSL spellings describe the same bytes; checked
against struct, numpy and the WGSL scalar sizes, and through the argument packing that reads it."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from cthreads.runtime import args, convert
from cthreads.codegen.types import ELEM_TYPES, elem

#: bytes of WGSL's host-shareable scalar types (WGSL spec, "Alignment and Size")
WGSL_SIZES = {"i32": 4, "u32": 4, "f32": 4, "f16": 2, "i64": 8, "u64": 8, "f64": 8,
              "vec2<f32>": 8, "vec2<f64>": 16}
#: values each row's type can hold exactly, its extremes included
SAMPLES = {"bool": [True, False, True], "int": [0, -1, 2**31 - 1, -(2**31), 7],
           "uint32": [0, 1, 2**32 - 1, 7], "int64": [0, -1, 2**63 - 1, -(2**63), 7],
           "float": [0.0, -0.0, 1.5, -2.25, 2.0**127, float("inf")],
           "float64": [0.0, -0.0, 1.5, 1e300, -5e-324, float("inf")],
           "complex": [0j, complex(-0.0, 1.5), -2.25 + 2.0**127 * 1j, complex(float("inf"), 0)],
           "complex128": [0j, complex(1e300, -5e-324), complex(-0.0, float("inf"))]}
NAMES = sorted(ELEM_TYPES)


def _struct_pack(row, values) -> bytes:
    """struct's bytes of ``values`` of ``row`` (a complex one as its (real, imag) parts)."""
    if row.kind == "c":
        parts = [p for v in values for p in (v.real, v.imag)]
        return struct.pack(f"<{len(parts)}{row.code[0]}", *parts)
    return struct.pack(f"<{len(values)}{row.code}", *values)


def test_the_rows_are_the_documented_kinds():
    assert NAMES == ["bool", "complex", "complex128", "float", "float64", "int", "int64",
                     "uint32"]
    assert {n: elem(n).python for n in NAMES} == {
        "bool": bool, "int": int, "float": float, "uint32": int, "int64": int, "float64": float,
        "complex": complex, "complex128": complex}
    assert all(elem(n).name == n for n in NAMES)
    assert {n: elem(n).spelling for n in NAMES if n != "bool"} == {
        "int": "int32", "float": "float32", "uint32": "uint32", "int64": "int64",
        "float64": "float64", "complex": "complex64", "complex128": "complex128"}


@pytest.mark.parametrize("name", NAMES)
def test_struct_and_numpy_agree_on_the_bytes(name):
    row = elem(name)
    values = SAMPLES[name]
    by_struct = _struct_pack(row, values)
    by_numpy = np.asarray(values, dtype=row.host_dtype).tobytes()
    assert by_struct == by_numpy
    assert len(by_struct) == row.size * len(values)
    back = np.frombuffer(by_struct, dtype=row.host_dtype)
    assert [row.python(v) for v in back.tolist()] == values


@pytest.mark.parametrize("name", NAMES)
def test_the_callers_array_dtype_holds_the_kind(name):
    row = elem(name)
    dtype = np.dtype(row.array_dtype)
    assert dtype.kind == row.kind
    arr = np.asarray(SAMPLES[name], dtype=dtype)
    assert arr.tolist() == SAMPLES[name]                # no value lost in that dtype
    assert args.pack(arr, name, "xs").tobytes() == \
        np.asarray(SAMPLES[name], dtype=row.host_dtype).tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_wgsl_forms_have_the_host_size(name):
    row = elem(name)
    assert WGSL_SIZES[row.storage] == row.size
    assert WGSL_SIZES[row.uniform] == row.size
    core = row.storage in ("i32", "u32", "f32", "vec2<f32>")   # needs no device feature
    assert (row.feature is None) == core


@pytest.mark.parametrize("name", NAMES)
def test_packing_lists_follows_the_row(name):
    row = elem(name)
    values = SAMPLES[name]
    assert bytes(args.pack(list(values), name, "xs")) == _struct_pack(row, values)
    target = [row.python()] * len(values)
    args.writeback(target, memoryview(_struct_pack(row, values)), name)
    assert target == values and all(type(v) is row.python for v in target)


@pytest.mark.parametrize("name", NAMES)
def test_scalars_come_back_as_the_rows_python_type(name):
    row = elem(name)
    value = SAMPLES[name][-1]
    got = convert.check_scalar(value, name, "a")
    assert type(got) is row.python and got == value
    if row.kind == "c":
        assert complex(*struct.unpack("<" + row.code, _struct_pack(row, [got]))) == got
    else:
        assert struct.unpack("<" + row.code, struct.pack("<" + row.code, got))[0] == got
