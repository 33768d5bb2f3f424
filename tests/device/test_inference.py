"""Kernels whose local types need many inference passes, and the most negative int literal,
compile to WGSL the device accepts and give the plain-Python results."""

from __future__ import annotations

import pytest

from cthreads.gpu import Gpu, gpu

from tests.codegen.test_inference import copy_chain, min_int_literal

chain = Gpu(copy_chain)
min_int = Gpu(min_int_literal)


@pytest.mark.parametrize("n", [0, 1, 3, 8, 20])
def test_copy_chain_matches_python(device_name, n):
    want = [9.0] * 8
    copy_chain(n, want)
    got = [9.0] * 8
    gpu(chain, n, got).join()
    assert got == want


def test_most_negative_int_literal_matches_python(device_name):
    want = [0, 0, 0]
    min_int_literal(want)
    assert want == [-2**31, -2**31 + 5, 1]
    got = [7, 7, 7]
    gpu(min_int, got).join()
    assert got == want
