"""The onesweep form of the 8-bit sort (``CTHREADS_SORT=onesweep``, ``runtime/sort_onesweep.py``),
forced here on every device through the same code path as on a GPU: one histogram of the four
digits a key word, then one look-back dispatch a digit. Bit for bit against numpy's stable
sort for every key dtype (64-bit keys and rows run the passes again after their rekey), pairs
and argsort, with the fallback forced (no status taken as ready: each thread counts the
earlier tiles' digit itself), and sorts past the CPU driver's loop budget taking the 8-bit
passes instead."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import argsort, sort, to_device
from tests.device.test_sort import DTYPES, check, keys_of, same_bits
from tests.device.test_sort_fast import _odd_floats


@pytest.fixture(params=[(64, 4), None], ids=["64x4", "default"])
def sweep(request, monkeypatch, device_name):
    """The onesweep form forced (a fresh sorter), with small tiles (many of them) or the
    device's own; counts the key words sorted by onesweep passes."""
    from cthreads.codegen import sorting
    from cthreads.runtime import sort_onesweep, sorter

    if request.param is not None:
        monkeypatch.setattr(sorting, "SHAPE_CPU", request.param)
        monkeypatch.setattr(sorting, "SHAPE_GPU", request.param)
    monkeypatch.setattr(sorter, "FORM", "onesweep")
    monkeypatch.setattr(sorter._STATE, "states", {})
    words = []
    real = sort_onesweep.add_passes

    def spy(plan, count):
        words.append(count)
        return real(plan, count)

    monkeypatch.setattr(sort_onesweep, "add_passes", spy)
    s = sorter._sorter_now()
    assert s.sweep and "onesweep" in s.form()
    tile = s.shape[0] * s.shape[1]
    # the most keys a CPU driver sorts this way (its loop budget), a few tiles on a GPU
    most = 4 * tile
    while not sort_onesweep.usable(s, -(-most // tile), sorter.LOOP_BUDGET):
        most -= tile
    return tile, most, words, sort_onesweep


def test_every_dtype_rows_and_pairs(sweep):
    tile, most, words, _ = sweep
    for n in sorted({1, 7, tile - 1, tile, tile + 1, most}):
        for dtype in DTYPES:
            check(keys_of(dtype, n, seed=n))
    check(keys_of("uint32", most - most % 3).reshape(3, -1))
    k = _odd_floats(most, 3)
    v = np.arange(most, dtype=np.int32)
    sk, sv = sort(k, v)
    same_bits(sk, np.sort(k, kind="stable"))
    np.testing.assert_array_equal(sv, np.argsort(k, kind="stable"))
    assert words and all(c in (1, 2, 4) for c in words)


def test_fallback_counts_the_earlier_tiles_itself(sweep, monkeypatch):
    tile, most, words, sort_onesweep = sweep
    monkeypatch.setattr(sort_onesweep, "CPU_SPINS", 0)
    monkeypatch.setattr(sort_onesweep, "GPU_SPINS", 0)
    x = _odd_floats(most, 4)
    d = to_device(x)
    same_bits(sort(d).numpy(), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(argsort(d).numpy(), np.argsort(x, kind="stable"))
    assert len(words) == 2


def test_past_the_budget_takes_the_8bit_passes(sweep):
    tile, most, words, sort_onesweep = sweep
    from cthreads.runtime import sorter
    s = sorter._sorter_now()
    if not s.ctx.is_cpu:
        pytest.skip("GPUs have no loop budget")
    over = 1
    while sort_onesweep.usable(s, over, sorter.LOOP_BUDGET):
        over += 1
    x = _odd_floats(over * tile, 5)
    same_bits(sort(x), np.sort(x, kind="stable"))
    assert words == []
