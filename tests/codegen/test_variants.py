"""KernelProgram.render(Variant): one text per variant, rendered once, checked against the
variant's meaning (the golden files pin the default variant's text byte for byte)."""

from __future__ import annotations

import pytest

from cthreads.codegen.program import FORMS, Variant
from cthreads.kernel import Gpu
from cthreads.lang.indexes import GlobalIdx

from . import golden_kernels


@Gpu
def shift(n: int, k: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        total: float = 0.0
        j: int = 0
        while j < k:
            total += x[i]
            j += 1
        y[i] = total


def test_wgsl_is_the_default_variant():
    p = golden_kernels.saxpy.program
    assert p.wgsl() == p.render(Variant()) == golden_kernels.saxpy.wgsl
    assert p.wgsl(256) == p.render(Variant(workgroup=(256, 1, 1)))
    assert "@compute @workgroup_size(256)" in p.wgsl(256)


def test_render_keeps_each_text():
    p = shift.program
    for v in (Variant(), Variant(checks="proven", coarsen=4), Variant(loop_report=True)):
        assert p.render(v) is p.render(Variant(v.checks, v.loop_report, v.form, v.coarsen,
                                               v.workgroup))


def test_variants_differ_where_their_fields_say():
    p = shift.program
    assert p.has_loops and p.fast_requires
    plain, proven = p.render(Variant()), p.render(Variant(checks="proven"))
    assert "ct_ld_" in plain and "ct_ld_" not in proven
    report = p.render(Variant(loop_report=True))
    assert "ct_loop_probe" in report and "ct_loop_probe" not in plain
    assert [(rec.lineno, rec.source) for rec in p.loops] == [(shift.fn.__code__.co_firstlineno + 6, "while j < k:")]
    four = p.render(Variant(coarsen=4))
    assert "for (var ct_k: u32 = 0u; ct_k < 4u; ct_k++) {" in four
    assert "for (var ct_k" not in plain


def test_nd_forms():
    p = shift.program
    rows = p.render(Variant(form="nd_grid", coarsen=8))
    assert ("for (var ct_k: u32 = 0u; ct_k < 8u; ct_k++) { let ct_r: u32 = ct_row0 + ct_k; "
            "if (ct_r >= ct_u.ct_nd_gz) { break; } { ct_body(") in rows
    one = p.render(Variant(form="nd_grid"))
    assert "let ct_r: u32 = ct_row0; if (ct_r < ct_u.ct_nd_gz) { ct_body(" in one
    tile = p.render(Variant(form="nd_tile", workgroup=(32, 8, 1)))
    assert "@compute @workgroup_size(32, 8, 1)" in tile
    assert "{W" not in tile and "{ND_" not in rows and "{STEPS}" not in four_lanes()


def four_lanes() -> str:
    return golden_kernels.saxpy.program.render(Variant(form="vec_tail", coarsen=2))


def test_what_a_program_renders_a_variant_as():
    p = golden_kernels.saxpy.program              # no loops; the four-lane form checks nothing
    assert p.variant(Variant(loop_report=True)) == Variant()
    assert p.variant(Variant(checks="proven", form="vec_whole")) == Variant(form="vec_whole")
    assert p.render(Variant(checks="proven", form="vec_whole")) is \
        p.render(Variant(form="vec_whole"))
    fixed = golden_kernels.reduce_sum.program
    assert fixed.variant(Variant(checks="proven")) == Variant()    # nothing proven per launch


@pytest.mark.parametrize("variant, message", [
    (Variant(form="tiles"), "Variant form 'tiles': use one of " + ", ".join(FORMS)),
    (Variant(checks="none"), "Variant checks 'none': use 'all' or 'proven'"),
])
def test_unknown_fields_are_refused(variant, message):
    with pytest.raises(ValueError, match=message):
        golden_kernels.saxpy.program.render(variant)


def test_kernels_that_observe_workgroups_keep_64():
    p = golden_kernels.reduce_sum.program
    with pytest.raises(ValueError, match="needs workgroup size 64, one index each"):
        p.render(Variant(workgroup=(128, 1, 1)))
    with pytest.raises(ValueError, match="its N-D form is nd_tile"):
        p.render(Variant(form="nd_grid"))
    with pytest.raises(ValueError, match="has no four-lane variant"):
        p.render(Variant(form="vec_whole"))
    assert "@compute @workgroup_size(8, 8, 1)" in p.render(Variant(form="nd_tile",
                                                                  workgroup=(8, 8, 1)))


def test_variant_names_say_every_field():
    assert Variant().name == "all-flat-c1-wg64x1x1"
    assert Variant("proven", True, "nd_tile", 1, (32, 4, 2)).name == \
        "proven-loops-nd_tile-c1-wg32x4x2"
