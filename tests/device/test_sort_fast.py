"""The sort's third-round form (``CTHREADS_SORT`` unset on GPUs, or ``new``): sorted 32-bit
keys of one row mapped back in order instead of gathered by index (only the keys the map
merges, both zeros and every NaN, read at their input place), and the passes' bind groups
kept from sort to sort. Bit for bit against numpy's stable sort, with NaN payloads, signed
zeros, infinities and denormals, in the 8-bit form (``new``, forced here on every device) and
in the CPU drivers' 4-bit form (``""``), and the previous forms (``8bit``, ``old``) still
gathering by index."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import argsort, sort, to_device
from tests.device.test_sort import keys_of, same_bits


@pytest.fixture(params=["new", "", "8bit", "old"])
def form(request, monkeypatch, device_name):
    from cthreads.runtime import sorter

    monkeypatch.setattr(sorter, "FORM", request.param)
    monkeypatch.setattr(sorter._STATE, "states", {})
    return request.param, sorter


def _odd_floats(n: int, seed: int) -> np.ndarray:
    """float32 keys with many ties, NaNs of several payloads and signs, both zeros, the
    infinities and denormals, shuffled."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(-30, 30, n) / 8).astype(np.float32)
    bits = np.array([0x7fc00001, 0xffc01234, 0x7f800001, 0xff800003, 0x80000000, 0,
                     0x7f800000, 0xff800000, 1, 0x80000001, 0x007fffff], np.uint32)
    pick = rng.integers(0, len(bits), n)
    mask = rng.random(n) < 0.3
    x.view(np.uint32)[mask] = bits[pick[mask]]
    return x


def test_keys_mapped_back_bit_for_bit(form):
    name, sorter = form
    s = sorter._sorter_now()
    assert s.unmap == (name not in ("old", "8bit"))
    assert ("mapped back" in s.form()) == s.unmap
    for n in (1, 3, 4096, 4097, 20_001):
        x = _odd_floats(n, n)
        keep = x.copy()
        same_bits(sort(x), np.sort(x, kind="stable"))
        same_bits(x, keep)
        d = to_device(x)
        same_bits(sort(d).numpy(), np.sort(x, kind="stable"))
        np.testing.assert_array_equal(argsort(d).numpy(), np.argsort(x, kind="stable"))
    for dtype in ("int32", "uint32"):
        x = keys_of(dtype, 9001, seed=3, spread=2**31 - 1)
        same_bits(sort(x), np.sort(x, kind="stable"))


def test_pairs_rows_and_wide_keys_still_gather(form):
    """Rows (the last passes sort by row), 64-bit keys and the values of pairs are read
    through the indexes in every form."""
    x = _odd_floats(3 * 1500, 5).reshape(3, 1500)
    same_bits(sort(x), np.sort(x, axis=-1, kind="stable"))
    w = keys_of("float64", 5000, seed=6)
    same_bits(sort(w), np.sort(w, kind="stable"))
    k = _odd_floats(6000, 7)
    v = np.arange(6000, dtype=np.int32)[::-1].copy()
    sk, sv = sort(k, v)
    same_bits(sk, np.sort(k, kind="stable"))
    np.testing.assert_array_equal(sv, v[np.argsort(k, kind="stable")])


def test_passes_bind_groups_are_kept(form, monkeypatch):
    """A second sort of the same size makes one bind group (its gather's), not one a pass."""
    name, sorter = form
    s = sorter._sorter_now()
    d = to_device(_odd_floats(10_000, 8))
    sort(d).numpy()
    made = []
    real = s.queue.bind_group
    monkeypatch.setattr(s.queue, "bind_group", lambda *a: made.append(1) or real(*a))
    got = sort(d).numpy()
    same_bits(got, np.sort(d.numpy(), kind="stable"))
    assert len(made) == 1
