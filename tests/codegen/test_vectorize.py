"""Which kernels get the four-lane variant (codegen/vectorize.py), and what it looks like."""

from __future__ import annotations

import math

import pytest

from cthreads.codegen.program import Variant
from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu
from examples.samples import saxpy


@Gpu
def blend(n: int, t: float, x: list[float], y: list[float], out: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        d = y[i] - x[i]
        t = t * 0.5
        out[i] = math.sqrt(abs(x[i] + t * d)) / 2.0
        out[i] += -d


@Gpu
def shifted(n: int, x: list[float], y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = x[i + 1]


@Gpu
def branchy(n: int, x: list[float], y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    if x[i] > 0.0:
        y[i] = x[i]


@Gpu
def ints(n: int, x: list[int], y: list[int]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = x[i] + 1


@Gpu
def unguarded(n: int, y: list[float]) -> None:
    i = GlobalIdx.x
    y[i] = 2.0


@Gpu
def index_value(n: int, y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = float(i)


@Gpu
def float_guard(n: int, m: float, y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = min(y[i], m)


@pytest.mark.parametrize("kernel, lists", [(saxpy, ("x", "y")), (blend, ("x", "y", "out"))],
                         ids=["saxpy", "blend"])
def test_lane_wise_kernels_get_the_variant(kernel, lists):
    p = kernel.program
    assert p.vec_guard == "n"
    assert sorted(p.vec_lists) == sorted(lists)
    text = p.render(Variant(form="vec_tail", workgroup=(256, 1, 1)))
    assert "array<vec4<f32>>" in text and "array<f32>" not in text
    assert "ct_status" not in text                 # nothing can go out of range
    assert "if (ct_i >= n) { return; }" in text and "if (n - ct_i >= 4i) {" in text
    assert "select(" in text and "ct_mask)" in text          # the last, partial step
    whole = p.render(Variant(form="vec_whole", workgroup=(256, 1, 1)))
    assert "ct_mask" not in whole and "if (ct_i >= n) { return; }" in whole


def test_variant_text_for_saxpy():
    text = saxpy.program.render(Variant(form="vec_whole", coarsen=2))
    assert "var<storage, read> x: array<vec4<f32>>;" in text
    assert "var<storage, read_write> y: array<vec4<f32>>;" in text
    assert "y[ct_j] = ((a * x[ct_j]) + y[ct_j]);" in text
    assert "ct_k < 2u" in text and "@workgroup_size(64)" in text


def test_blend_keeps_python_order_and_reassigned_parameters():
    text = blend.program.render(Variant(form="vec_whole"))
    assert "var t: vec4<f32> = vec4<f32>(ct_u.t);" in text
    assert "var d: vec4<f32>;" in text
    body = text[text.index("fn ct_vbody"):]
    assert body.index("d = ") < body.index("t = vec4<f32>((t") < body.index("ct_v_out[ct_j] = ct_div4(vec4<f32>(sqrt")
    assert "ct_v_out[ct_j] = (ct_v_out[ct_j] + (-d));" in body  # out: renamed, reserved


@Gpu
def constant_math(n: int, y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = y[i] + math.sqrt(-1.0)


@Gpu
def constant_overflow(n: int, y: list[float]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    y[i] = -(1e38) * 10.0


@pytest.mark.parametrize("kernel", [shifted, branchy, ints, unguarded, index_value, float_guard,
                                    constant_math, constant_overflow],
                         ids=lambda k: k.__name__)
def test_other_kernels_keep_only_the_scalar_form(kernel):
    assert kernel.program.vec_guard is None
    with pytest.raises(ValueError):
        kernel.program.render(Variant(form="vec_whole"))
