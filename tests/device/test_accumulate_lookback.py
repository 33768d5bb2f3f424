"""``func.accumulate``'s one-pass look-back form (``runtime/scan_lookback.py``, the default on
GPUs), forced here on every device through the same code path as on a GPU (``FORM =
"lookback"``): against numpy and a Python fold of a non-commutative operation, around tile
edges, with the default tiles and small ones (many tiles), with the fallback forced (no look
waits: each waiting thread folds the earlier tiles' input itself), and across the epoch
numbers coming round again (the status words must be zeroed then).

On a CPU driver the form runs only for a few tiles (the loop budget; ``CPU_TILES``), so the
sizes here stay within it; the lead runs this file on the H200 too, where it runs unbounded."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.codegen import scan_lookback as look_codegen
from cthreads.gpu import to_device
from cthreads.runtime import scan_lookback, scanner
from tests.device.test_accumulate import _affine_py, affine, bor, fadd, float_tolerance, iadd
from tests.device.func_kernels import uadd

#: (threads, groups of four a lane): the default tiles of 8,192 elements, and tiles of 256
SHAPES = [scan_lookback.SHAPE, (64, 1)]


@pytest.fixture(params=SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def look(request, monkeypatch, device_name):
    """The look-back form forced, with the tile shape given; counts its dispatches (a fresh
    scanner, so that nothing comes from an earlier test's cache)."""
    from cthreads.backend import device
    if "subgroup" not in device.get_context().features:
        pytest.skip("the look-back form needs subgroups")
    calls = []
    real = scan_lookback.dispatch

    def spy(*args, **kwargs):
        calls.append(args[6])
        return real(*args, **kwargs)

    monkeypatch.setattr(scanner, "FORM", "lookback")
    monkeypatch.setattr(scan_lookback, "SHAPE", request.param)
    monkeypatch.setattr(scan_lookback, "CPU_TILES", 16 if request.param[1] > 1 else 48)
    monkeypatch.setattr(scan_lookback, "dispatch", spy)
    scanner._STATE.states.clear()
    yield request.param[0] * request.param[1] * 4, calls
    scanner._STATE.states.clear()


def _maps(rng, n):
    return ((rng.integers(0, 2**15, n) << 15) | rng.integers(0, 2**15, n)).astype(np.int32)


def _edges(tile):
    return sorted({4, 8, 32, 36, tile - 4, tile, tile + 4, 2 * tile - 4, 2 * tile + 8,
                   5 * tile + 4, 12 * tile})


def _affine_want(x):
    return np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object)).astype(np.int32)


def test_non_commutative_around_tile_edges(look):
    tile, calls = look
    rng = np.random.default_rng(tile)
    for n in _edges(tile):
        x = _maps(rng, n)
        keep = x.copy()
        np.testing.assert_array_equal(affine.accumulate(x), _affine_want(x), err_msg=f"n={n}")
        np.testing.assert_array_equal(x, keep)
    assert len(calls) == len(_edges(tile))          # every size took the look-back form


def test_sums_of_each_type(look):
    tile, calls = look
    n = 7 * tile + 12
    rng = np.random.default_rng(n)
    i = rng.integers(-1000, 1000, n).astype(np.int32)
    np.testing.assert_array_equal(iadd.accumulate(i), np.cumsum(i, dtype=np.int32))
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(uadd.accumulate(u), np.cumsum(u, dtype=np.uint32))
    b = rng.random(n) < 0.001
    np.testing.assert_array_equal(bor.accumulate(b), np.logical_or.accumulate(b))
    f = rng.standard_normal(n).astype(np.float32)
    got = fadd.accumulate(f)
    want = np.cumsum(f.astype(np.float64))
    assert np.all(np.abs(got - want) <= float_tolerance(f))
    assert len(calls) == 4


def test_device_arrays_in_and_out(look):
    tile, calls = look
    n = 3 * tile + 4
    x = np.random.default_rng(5).integers(-9, 9, n).astype(np.float32)
    g = to_device(x)
    out = fadd.accumulate(g)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x))
    np.testing.assert_array_equal(g.numpy(), x)
    assert len(calls) == 1


def test_other_shapes_take_the_reduce_then_scan_forms(look):
    """Lengths not a multiple of four, axis scans and 64-bit values: the fast form, right."""
    tile, calls = look
    x = np.random.default_rng(6).integers(-9, 9, 2 * tile + 3).astype(np.int32)
    np.testing.assert_array_equal(iadd.accumulate(x), np.cumsum(x))
    y = x[:2 * tile].reshape(8, -1)
    np.testing.assert_array_equal(iadd.accumulate(y, axis=1), np.cumsum(y, axis=1))
    assert calls == []


def test_fallback_folds_the_earlier_tiles_itself(look, monkeypatch):
    """Spins 0: no status is taken as ready, every waiting thread folds all the earlier
    tiles' input itself (the path that keeps a workgroup from waiting on one that does not
    run)."""
    monkeypatch.setattr(scan_lookback, "CPU_SPINS", 0)
    monkeypatch.setattr(scan_lookback, "GPU_SPINS", 0)
    tile, calls = look
    n = 9 * tile + 8
    x = _maps(np.random.default_rng(7), n)
    np.testing.assert_array_equal(affine.accumulate(x), _affine_want(x))
    assert len(calls) == 1


def test_long_windows_of_aggregates(look, monkeypatch):
    """Only tile 0 publishes its inclusive prefix: each look-back folds every earlier tile's
    aggregate, windows of a subgroup's width at a time, in order."""
    monkeypatch.setattr(scan_lookback, "AGG_ONLY", True)
    tile, calls = look
    rng = np.random.default_rng(9)
    for n in (2 * tile, 5 * tile + 4, 12 * tile - 8):
        x = _maps(rng, n)
        np.testing.assert_array_equal(affine.accumulate(x), _affine_want(x), err_msg=f"n={n}")
    assert len(calls) == 3


def test_epochs_coming_round_again(look, monkeypatch):
    """With three epoch numbers the fourth scan reuses the first's: its words must have been
    zeroed, or the stale flags of an earlier scan would be read as this one's."""
    monkeypatch.setattr(look_codegen, "EPOCHS", 3)
    tile, calls = look
    zeroed, epochs = [], []
    real_next = scan_lookback.LookWords.next

    def next_(self, ntiles):
        real_write = self.queue.write
        self.queue.write = lambda buf, data: (zeroed.append(len(epochs)), real_write(buf, data))
        try:
            got = real_next(self, ntiles)
        finally:
            del self.queue.write
        epochs.append(got[2])
        return got

    monkeypatch.setattr(scan_lookback.LookWords, "next", next_)
    n = 6 * tile
    rng = np.random.default_rng(8)
    for k in range(8):
        x = rng.integers(-50, 50, n).astype(np.int32)
        np.testing.assert_array_equal(iadd.accumulate(x), np.cumsum(x), err_msg=f"scan {k}")
    assert len(calls) == 8
    assert epochs == [1, 2, 3, 1, 2, 3, 1, 2]
    assert zeroed == [0, 3, 6]         # before the first scan, and before each epoch 1 again


def test_wgsl_refuses_other_types():
    with pytest.raises(ValueError, match="32-bit"):
        look_codegen.lookback_wgsl("f", "float64", "", 64, 1)
