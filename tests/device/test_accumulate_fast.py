"""``func.accumulate``'s fast form (``runtime/scanner.py``'s ``FORM``: the default on GPUs,
forced here on every device): blocks of 256 x 32 elements, the threads' totals scanned by
subgroup shuffles where the device has subgroups (32-bit types; groups of four in coalesced
subgroup chunks) -- against numpy and a Python
fold of a non-commutative operation, at sizes around the block edges, with a small block shape
too so that the totals take their own reduce-then-scan levels."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.codegen import scan as scan_codegen
from cthreads.gpu import to_device
from cthreads.runtime import scanner
from tests.device.test_accumulate import (
    U32, U64, _affine_py, affine, bor, cmul, dadd, fadd, float_tolerance, iadd, imin, ladd,
)

#: (threads, elements a thread): the default fast shape, and a small one (blocks of 256, so a
#: few tens of thousands of elements take three levels)
SHAPES = [scanner.SHAPE_FAST, (64, 4)]


@pytest.fixture(params=SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def fast(request, monkeypatch, device_name):
    """The fast form forced, with the shape given; records each compiled shader's subgroup
    flag (a fresh scanner, so that nothing comes from an earlier test's cache)."""
    seen = []
    real = scan_codegen.scan_wgsl

    def spy(*args, **kwargs):
        text = real(*args, **kwargs)
        seen.append("subgroupShuffleUp" in text)
        return text

    monkeypatch.setattr(scanner, "FORM", "new")
    monkeypatch.setattr(scanner, "SHAPE_FAST", request.param)
    monkeypatch.setattr(scan_codegen, "scan_wgsl", spy)
    scanner._STATE.states.clear()
    yield request.param, seen
    scanner._STATE.states.clear()


def _maps(rng, n):
    return ((rng.integers(0, 2**15, n) << 15) | rng.integers(0, 2**15, n)).astype(np.int32)


def _edges(block):
    return sorted({1, 2, 3, 4, 5, 31, 33, block - 1, block, block + 1, block + 4,
                   2 * block - 4, 2 * block + 3, 5 * block})


def test_subgroups_used_where_the_device_has_them(fast):
    from cthreads.backend import device
    iadd.accumulate(np.ones(100, np.int32))
    assert fast[1] and all(fast[1]) == ("subgroup" in device.get_context().features)
    fast[1].clear()
    dadd.accumulate(np.ones(100))                 # 64-bit storage: workgroup memory
    assert fast[1] and not any(fast[1])


def test_non_commutative_around_block_edges(fast):
    block = fast[0][0] * fast[0][1]
    rng = np.random.default_rng(block)
    for n in _edges(block):
        x = _maps(rng, n)
        want = np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object)).astype(np.int32)
        np.testing.assert_array_equal(affine.accumulate(x), want, err_msg=f"n={n}")


def test_non_commutative_three_levels(fast):
    """More blocks than one block holds: the totals are scanned by blocks too."""
    block = fast[0][0] * fast[0][1]
    n = block * block + 3 if block <= 256 else 3 * block + 5
    rng = np.random.default_rng(n)
    x = _maps(rng, n)
    want = np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object)).astype(np.int32)
    np.testing.assert_array_equal(affine.accumulate(x), want)


def test_sums_min_and_types(fast):
    block = fast[0][0] * fast[0][1]
    rng = np.random.default_rng(7)
    for n in (block - 1, block + 1, 3 * block + 2):
        i = rng.integers(-1000, 1000, n).astype(np.int32)
        np.testing.assert_array_equal(iadd.accumulate(i), np.cumsum(i, dtype=np.int32))
        np.testing.assert_array_equal(imin.accumulate(i), np.minimum.accumulate(i))
        f = rng.standard_normal(n).astype(np.float32)
        got = fadd.accumulate(f)
        assert (np.abs(got - np.cumsum(f.astype(np.float64))) <= float_tolerance(f)).all()
        big = rng.integers(-2**40, 2**40, n).astype(np.int64)
        np.testing.assert_array_equal(ladd.accumulate(big), np.cumsum(big))
        d = rng.standard_normal(n)
        assert (np.abs(dadd.accumulate(d) - np.cumsum(d)) <= float_tolerance(d, unit=U64)).all()
        flags = np.zeros(n, bool)
        flags[n // 2] = True
        np.testing.assert_array_equal(bor.accumulate(flags), np.logical_or.accumulate(flags))
        z = np.exp(1j * rng.uniform(0, 6.3, n)).astype(np.complex64)
        assert np.abs(cmul.accumulate(z) - np.cumprod(z)).max() <= n * 8 * U32


@pytest.mark.parametrize("shape, axis", [((300, 1100), 0), ((5, 8193), 1), ((3, 9000), 1),
                                         ((4097, 5), 0), ((2, 300, 70), 1)])
def test_axes_and_device_arrays(fast, shape, axis):
    rng = np.random.default_rng(sum(shape))
    x = _maps(rng, shape)
    want = np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object), axis=axis)
    np.testing.assert_array_equal(affine.accumulate(x, axis=axis), want.astype(np.int32))
    out = iadd.accumulate(to_device(x & 1023), axis=axis)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x & 1023, axis=axis, dtype=np.int32))


def test_parts_past_the_binding_limit(fast):
    n = 10_001
    rng = np.random.default_rng(n)
    maps = _maps(rng, n)
    want = np.frompyfunc(_affine_py, 2, 1).accumulate(maps.astype(object)).astype(np.int32)
    with config.override(binding_bytes=4096):
        np.testing.assert_array_equal(affine.accumulate(maps), want)
        g = to_device(maps.reshape(1, n))
        assert len(g._slot.parts) > 1
        np.testing.assert_array_equal(affine.accumulate(g).numpy(), want)
