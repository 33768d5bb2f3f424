"""Random(seed, stream)'s generator on the host: Philox-4x32-10 against the published
known-answer vectors (Random123's tests/kat_vectors), the numpy form against the pure-Python
one, and statistical checks at fixed seeds (deterministic: the same numbers every run)."""

import math

import numpy as np
import pytest

from cthreads.gpu import Random
from cthreads.lang.random import launch_float32, philox4x32, philox_block, streams_random

# Random123 tests/kat_vectors, the "philox4x32 10" lines: counter (4 words), key (2), result (4)
KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff),
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def _chi2_critical(df: int, z: float = 3.09) -> float:
    """The chi-square value exceeded with probability about 0.001 (Wilson-Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_known_answers(ctr, key, want):
    assert philox_block(ctr, key) == want
    assert tuple(int(w) for w in philox4x32(ctr, key)) == want


def test_numpy_form_equals_the_scalar_form():
    rng = np.random.default_rng(1)
    ctr = rng.integers(0, 2 ** 32, (200, 4), dtype=np.uint64)
    key = rng.integers(0, 2 ** 32, (200, 2), dtype=np.uint64)
    got = philox4x32(ctr, key)
    for c, k, g in zip(ctr, key, got):
        assert philox_block(tuple(int(x) for x in c), tuple(int(x) for x in k)) == \
            tuple(int(x) for x in g)


def test_draw_layout_counter_stream_seed():
    """Block b of stream s under seed: philox((b, 0, s_lo, s_hi), (seed_lo, seed_hi)), four
    words; a float64 random() takes two (the 53-bit float made as CPython makes it), a float32
    one one; negative values in two's complement."""
    seed, stream = -5, 2 ** 40 + 7
    r = Random(seed, stream)
    key = ((seed & 0xFFFFFFFF), (seed >> 32) & 0xFFFFFFFF)
    words = [w for b in range(3) for w in philox_block((b, 0, stream & 0xFFFFFFFF,
                                                         stream >> 32), key)]
    for j in range(5):
        want = ((words[2 * j] >> 5) * 2 ** 26 + (words[2 * j + 1] >> 6)) / 2 ** 53
        assert r.random() == want
    assert r.n == 10
    r32 = Random(seed, stream)
    assert [r32.random32() for _ in range(9)] == [(w >> 8) / 2 ** 24 for w in words[:9]]
    assert r32.n == 9


def test_multi_word_draws_start_at_a_multiple_of_their_count():
    """1-word draws in order; a 2-word draw at an odd word skips one, a 4-word draw (normal()
    at float64) starts the next block; randint takes one word."""
    r = Random(3, 4)
    b0, b1, b2, b3 = (r.block(b) for b in range(4))
    f24 = [(w >> 8) / 2 ** 24 for w in b0 + b1 + b2 + b3]
    assert r.random32() == f24[0]
    assert r.random() == ((b0[2] >> 5) * 2 ** 26 + (b0[3] >> 6)) / 2 ** 53   # words 2-3
    assert r.random32() == f24[4]
    r.normal()                                                            # skips 5-7: block 2
    assert r.n == 12
    assert r.random32() == f24[12]
    s = Random(3, 4)
    s.random32()
    z = s.normal32()                                  # words 2-3
    u1, v = 1.0 - (b0[2] >> 8) / 2 ** 24, 2.0 * (b0[3] >> 8) / 2 ** 24 - 1.0
    assert z == -math.sqrt(-2.0 * math.log(u1)) * math.cos(math.pi * v)
    t = Random(3, 4)
    t.random32()
    assert (b0[1] * 6) & 0xFFFFFFFF >= (2 ** 32 - 6) % 6        # not rejected at this seed
    assert t.randint(1, 6) == 1 + ((b0[1] * 6) >> 32)
    assert t.n == 2
    assert t.randint(0, 2 ** 40) < 2 ** 40 + 1 and t.n == 4            # two words, 2-3


def test_simulate_width_flag():
    """launch_float32(True) (simulate() of a float32 launch) makes random(), uniform() and
    normal() the float32 forms; plain calls are Python's doubles."""
    a, b = Random(9, 1), Random(9, 1)
    with launch_float32(True):
        got = [a.random(), a.uniform(-1.0, 3.0), a.normal()]
    want = [b.random32()]
    f = np.float32
    want.append(float(f(-1.0) + (f(3.0) - f(-1.0)) * f(b.random32())))
    want.append(b.normal32())
    assert got == want and a.n == b.n == 4
    assert Random(9, 1).random() == float(streams_random(9, [1], 1)[0, 0])


def test_streams_random_matches_the_class():
    got = streams_random(11, [0, 1, 2, 1000], 5)
    got24 = streams_random(11, [0, 1, 2, 1000], 5, bits=24)
    for row, row24, s in zip(got, got24, [0, 1, 2, 1000]):
        r, r24 = Random(11, s), Random(11, s)
        assert list(row) == [r.random() for _ in range(5)]
        assert list(row24) == [r24.random32() for _ in range(5)]


@pytest.mark.parametrize("bits", [53, 24])           # 24: float32, four draws a block
def test_uniformity_chi_square(bits):
    u = streams_random(2024, np.arange(100), 1000, bits).ravel()  # 100 000 values
    assert u.min() >= 0.0 and u.max() < 1.0
    counts = np.bincount((u * 100).astype(int), minlength=100)
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < _chi2_critical(99)


def test_randint_is_uniform_and_inclusive():
    r = Random(3, 4)
    values = [r.randint(1, 6) for _ in range(30000)]
    counts = np.bincount(values, minlength=7)[1:]
    assert counts.sum() == 30000 and len(counts) == 6
    chi2 = float(((counts - 5000.0) ** 2 / 5000.0).sum())
    assert chi2 < _chi2_critical(5)
    r = Random(3, 5)
    assert {r.randint(-1, 0) for _ in range(100)} == {-1, 0}
    assert {r.randrange(3) for _ in range(100)} == {0, 1, 2}


def test_lemire_unbiased_for_a_range_with_heavy_rejection():
    """r = 3 * 2**30 (a quarter of the words rejected): a plain ``w % r`` would give the low
    third of the range twice the weight of the rest, a plain multiply-shift ``w * r >> 32``
    twice the weight to the values divisible by 3; with rejection both splits are even."""
    r = Random(8, 1)
    n = 30000
    values = [r.randrange(3 * 2 ** 30) for _ in range(n)]
    for split in (np.bincount([v >> 30 for v in values], minlength=3),
                  np.bincount([v % 3 for v in values], minlength=3)):
        chi2 = float(((split - n / 3) ** 2 / (n / 3)).sum())
        assert chi2 < _chi2_critical(2)


def test_wide_ranges():
    r = Random(1, 2)
    for _ in range(200):
        v = r.randint(-2 ** 63, 2 ** 63 - 1)
        assert -2 ** 63 <= v < 2 ** 63
        w = r.randint(0, 2 ** 40)                      # masked rejection of 64-bit words
        assert 0 <= w <= 2 ** 40
    big = [r.randrange(3 * 2 ** 40) >> 40 for _ in range(3000)]
    thirds = np.bincount(big, minlength=3)
    assert ((thirds - 1000.0) ** 2 / 1000.0).sum() < _chi2_critical(2)


def test_refusals():
    r = Random(0, 0)
    with pytest.raises(ValueError, match="empty range"):
        r.randint(5, 4)
    with pytest.raises(ValueError, match="empty range"):
        r.randrange(0)
    with pytest.raises(ValueError, match="zero step"):
        r.randrange(0, 10, 0)
    with pytest.raises(ValueError, match="wider than 2\\*\\*64"):
        r.randint(0, 2 ** 64)
    with pytest.raises(TypeError, match="must be an int"):
        r.randint(0.5, 3)
    with pytest.raises(ValueError, match="64 bits"):
        Random(2 ** 64, 0)
    with pytest.raises(TypeError, match="seed must be an int"):
        Random(1.5, 0)
    assert r.n == 0                                   # nothing drawn by the refused calls


def test_randrange_with_step_follows_python():
    r = Random(4, 4)
    values = {r.randrange(10, 0, -3) for _ in range(200)}
    assert values == {10, 7, 4, 1}


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize("which", ["normal", "normal32"])
def test_normality_kolmogorov_smirnov(which):
    r = Random(77, 3)
    n = 20000
    z = np.sort([getattr(r, which)() for _ in range(n)])
    cdf = np.array([_normal_cdf(v) for v in z])
    k = np.arange(1, n + 1)
    d = max((k / n - cdf).max(), (cdf - (k - 1) / n).max())
    assert d < 1.95 / math.sqrt(n)                   # KS critical value at p = 0.001
    assert abs(z.mean()) < 4 / math.sqrt(n) and abs(z.std() - 1.0) < 0.03
    r2 = Random(77, 3)
    assert r2.normal(5.0, 0.5) == pytest.approx(5.0 + 0.5 * Random(77, 3).normal(), abs=1e-12)


@pytest.mark.parametrize("bits", [53, 24])           # 24: words of one block in a row
def test_neighbouring_streams_are_uncorrelated(bits):
    u = streams_random(5, np.arange(1000), 200, bits)  # (streams, draws)
    a, b = u[:-1].ravel(), u[1:].ravel()              # stream i against stream i + 1
    n = a.size
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(n)
    c, d = u[:, :-1].ravel(), u[:, 1:].ravel()        # draw k against draw k + 1
    assert abs(np.corrcoef(c, d)[0, 1]) < 4 / math.sqrt(c.size)
    for j in range(3):                                # word j against word j + 1 of a block
        c, d = u[:, j::4].ravel(), u[:, j + 1::4].ravel()
        assert abs(np.corrcoef(c, d)[0, 1]) < 4 / math.sqrt(c.size)
    seeds = np.stack([streams_random(s, [0], 5000)[0] for s in (0, 1)])   # seeds 0 and 1
    assert abs(np.corrcoef(seeds)[0, 1]) < 4 / math.sqrt(5000)
