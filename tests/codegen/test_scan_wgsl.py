"""``codegen/scan.py``: the scan shaders' text (the device tests run them against numpy)."""

from __future__ import annotations

import pytest

from cthreads.codegen import scan

ADD = "fn add(a: f32, b: f32) -> f32 { return a + b; }"


@pytest.mark.parametrize("quad", [None, 0, 1])
def test_every_placeholder_is_filled(quad):
    text = scan.scan_wgsl("add", "float", ADD, 64, 16, quad=quad)
    assert "$" not in text and "fn ct_scan(" in text and "add(" in text
    assert ("array<vec4<f32>>" in text) == (quad is not None)
    # the totals step writes scalars, the scan step groups of four
    assert ("ct_dst: array<vec4<f32>>" in text) == (quad == 1)


def test_probe_and_its_binding():
    text = scan.scan_wgsl("add", "float", ADD, 64, 2, probe=True)
    assert "@binding(4)" in text and "ct_loop_probe();" in text
    assert "@binding(4)" not in scan.scan_wgsl("add", "float", ADD, 64, 2)


def test_refusals():
    with pytest.raises(ValueError, match="groups-of-four"):
        scan.scan_wgsl("add", "complex", ADD, 64, 16, quad=1)
    with pytest.raises(ValueError, match="groups-of-four"):
        scan.scan_wgsl("add", "float", ADD, 64, 2, quad=0)
    with pytest.raises(ValueError, match="empty"):
        scan.scan_wgsl("add", "float", ADD, 0, 16)


def test_blocks_and_uniforms():
    assert [scan.blocks(n, 1024) for n in (1, 1024, 1025)] == [1, 1, 2]
    assert len(scan.uniform_bytes(10, 1, 1, 0, 1)) == scan.UNIFORM_SIZE
