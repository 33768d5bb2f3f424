"""The element-type table: each row's spellings agree with each other and with numpy/struct,
and the compiler's output uses them."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from cthreads.codegen.types import ELEM_TYPES, LATTICE_HEIGHT, elem, join

from . import golden_kernels


@pytest.mark.parametrize("name", sorted(ELEM_TYPES))
def test_row_sizes_agree(name):
    row = elem(name)
    assert row.name == name
    assert struct.calcsize("<" + row.code) == row.size
    assert np.dtype(row.host_dtype).itemsize == row.size
    assert np.dtype(row.host_dtype) == np.dtype("<" + row.code)
    np.dtype(row.array_dtype)                      # a dtype numpy knows


def test_promotion_follows_the_rank():
    names = sorted(ELEM_TYPES, key=lambda n: ELEM_TYPES[n].rank)
    assert names == ["bool", "int", "float"]
    assert join(None, "bool") == "bool" and join("int", "float") == "float"
    assert join("float", "bool") == "float"
    assert LATTICE_HEIGHT == len(ELEM_TYPES)


def test_golden_kernels_declare_the_table_spellings():
    text = golden_kernels.python_semantics.wgsl
    for name in ("int", "float", "bool"):
        assert f"array<{elem(name).storage}>" in text
