"""CTHREADS_INDEX_FORM (issue 27, lavapipe): an N-D list's row lengths are read from the
uniform once per invocation into private values, not at each access (llvmpipe reloaded them
in every loop trip); "old" keeps the previous text. Results: tests/device/test_nd.py, run
once per form."""

from __future__ import annotations

from cthreads import config
from cthreads.gpu import GlobalIdx, Gpu


def mm2(n: int, a: list[list[float]], b: list[list[float]], c: list[list[float]]) -> None:
    col: int = GlobalIdx.x
    row: int = GlobalIdx.y
    if col >= n or row >= n:
        return
    acc: float = 0.0
    for k in range(n):
        acc += a[row, k] * b[k, col]
    c[row, col] = acc


def test_row_lengths_are_read_once_per_invocation():
    text = Gpu(mm2).wgsl
    for name in ("a", "b", "c"):
        assert f"var<private> ct_s_{name}_1: i32;" in text
        assert f"ct_s_{name}_1 = i32(ct_u.ct_n_{name}_1);" in text
        assert f"* i32(ct_u.ct_n_{name}_1)" not in text
    assert "((ct_i0) * ct_s_a_1 + (ct_i1))" in text        # the checked access helper's index


def test_old_form_reads_the_uniform_at_each_access():
    with config.override(index_form="old"):
        text = Gpu(mm2).wgsl
    assert "ct_s_a_1" not in text
    assert "((ct_i0) * i32(ct_u.ct_n_a_1) + (ct_i1))" in text
