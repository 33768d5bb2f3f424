"""The element-type table: each row's spellings agree with each other and with numpy/struct,
and the compiler's output uses them."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from cthreads.codegen.types import ELEM_TYPES, LATTICE_HEIGHT, arith, elem, join, promote

from . import golden_kernels


@pytest.mark.parametrize("name", sorted(ELEM_TYPES))
def test_row_sizes_agree(name):
    row = elem(name)
    assert row.name == name
    assert struct.calcsize("<" + row.code) == row.size
    assert np.dtype(row.host_dtype).itemsize == row.size
    if row.kind == "c":                            # two float fields: (real, imag)
        assert np.dtype(row.host_dtype) == np.dtype(f"<c{row.size}")
        assert row.code == 2 * row.code[0]
    else:
        assert np.dtype(row.host_dtype) == np.dtype("<" + row.code)
    np.dtype(row.array_dtype)                      # a dtype numpy knows


def test_promotion_follows_numpy():
    names = sorted(ELEM_TYPES, key=lambda n: ELEM_TYPES[n].rank)
    assert names == ["bool", "int", "uint32", "int64", "float", "float64", "complex",
                     "complex128"]
    assert join(None, "bool") == "bool" and join("int", "float") == "float"
    assert join("float", "bool") == "float"
    # numpy's promotion of typed values (numpy.result_type), with ints meeting a float
    # giving that float (a kernel's int and float32 stay float32)
    for a in ("int", "uint32", "int64", "float", "float64"):
        for b in ("int", "uint32", "int64", "float", "float64"):
            got = promote(a, b)
            want = np.result_type(elem(a).array_dtype, elem(b).array_dtype).name
            if elem(a).kind == "f" and elem(b).kind != "f":
                want = elem(a).array_dtype
            elif elem(b).kind == "f" and elem(a).kind != "f":
                want = elem(b).array_dtype
            assert elem(got).array_dtype == want, (a, b, got)
    assert arith("bool", "bool") == "int"
    # complex with a float: numpy's result; with an int: that complex (as floats do)
    for a in ("complex", "complex128"):
        for b in ("bool", "int", "uint32", "int64", "float", "float64", "complex",
                  "complex128"):
            want = np.result_type(elem(a).array_dtype, elem(b).array_dtype).name
            if elem(b).kind in "biu":
                want = elem(a).array_dtype
            assert elem(promote(a, b)).array_dtype == want, (a, b)
            assert promote(b, a) == promote(a, b)
    # unknown -> bool -> int -> int64 -> float -> float64 -> complex -> complex128: the
    # longest chain of widenings
    assert LATTICE_HEIGHT == 7


def test_golden_kernels_declare_the_table_spellings():
    text = golden_kernels.python_semantics.wgsl
    for name in ("int", "float", "bool"):
        assert f"array<{elem(name).storage}>" in text


def test_int_ranges_and_bits_come_from_the_rows():
    import numpy as np
    from cthreads.codegen.types import ELEM_TYPES, INT_BITS, INT_RANGE
    for name, row in ELEM_TYPES.items():
        if row.is_int:
            info = np.iinfo(row.array_dtype)
            assert INT_RANGE[name] == (int(info.min), int(info.max)) == row.int_range
            assert INT_BITS[name] == info.bits
        assert row.is_float == (row.kind == "f") and not (row.is_int and row.is_float)
    assert INT_RANGE["bool"] == (0, 1) and INT_BITS["bool"] == 1
