"""``Random(seed, stream)``: the counter-based generator of kernels, and its plain-Python meaning.

The generator is Philox-4x32-10 (J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel
random numbers: as easy as 1, 2, 3", SC11, 2011): a keyed bijection of 128-bit counters, ten
rounds of two 32x32->64-bit multiplications, with the Weyl key schedule. Stream ``s`` under seed
``seed`` is the sequence of 32-bit words of its blocks ``b = 0, 1, 2, ...``,

    philox4x32_10(counter = (b, 0, s_lo, s_hi), key = (seed_lo, seed_hi))

four words each (``x_lo``/``x_hi``: the low and high 32-bit words of ``x`` taken modulo 2**64,
two's complement for negative values). A ``Random`` holds a word counter ``n`` (word ``n`` is
word ``n % 4`` of block ``n // 4``). A draw takes 1, 2 or 4 consecutive words, starting at the
next multiple of its word count (a 2-word draw at an odd ``n`` skips one word, a 4-word draw
starts the next block unless ``n % 4 == 0``), so a draw never spans two blocks:

* ``random()``: float32 launches 1 word, ``(w >> 8) / 2**24``; float64 launches and plain
  Python 2 words, ``((w0 >> 5) * 2**26 + (w1 >> 6)) / 2**53`` (CPython's 53-bit construction).
  Both are exact, so device and plain Python agree bit for bit.
* ``uniform(a, b)``: ``a + (b - a) * random()``, as Python's ``random.uniform``.
* ``normal(mu=0.0, sigma=1.0)`` (alias ``gauss``): Box-Muller giving one normal,
  ``mu + sigma * -sqrt(-2 log(1 - u1)) * cos(pi (2 u2 - 1))`` (the cosine's argument kept in
  [-pi, pi)): float32 2 words (``u1``, ``u2`` their 24-bit forms); float64 4 words (``u1`` from
  words 0-1, ``u2`` from 2-3 of one block). The device's log and cos differ from Python's by a
  few ulp.
* ``randint(a, b)`` / ``randrange(stop)`` / ``randrange(start, stop)``: unbiased. A range of
  ``r <= 2**32`` values takes 1 word ``w`` and uses Lemire's multiply-shift method (D. Lemire,
  "Fast random integer generation in an interval", ACM TOMACS 2019); if ``w`` is rejected
  (probability below ``r / 2**32``) the words of the side blocks ``(n_w, k, s_lo, s_hi)``,
  ``k = 1, 2, ...`` (``n_w``: the index of ``w``) are tried in order, so a draw's word count is
  fixed. A range of ``2**32 < r <= 2**64`` values takes 2 words, the 64-bit ``w0 | w1 << 32``
  masked to the range's bit length, rejected if ``>= r``, then the side blocks' ``w0 | w1 << 32``
  and ``w2 | w3 << 32``. Wider ranges raise ``ValueError``.

A stream has ``2**32`` words; then its counter wraps (the sequence repeats). Inside
``simulate()`` of a float32 launch (no float64 array for a plain ``list[float]``), ``random()``,
``uniform()`` and ``normal()`` take the float32 forms, as the device does (``launch_float32``;
``uniform`` in float32 operations: a driver fusing them into one FMA differs by an ulp);
plain calls elsewhere are Python's doubles. ``random32()``/``normal32()`` are the float32 forms
explicitly. ``philox4x32`` and ``streams_random`` are the numpy-vectorised forms (many counters,
or many streams at once).
"""

from __future__ import annotations

import contextlib
import math
import sys


M32 = 0xFFFFFFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)     # the round multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)     # the key schedule's Weyl increments
ROUNDS = 10

_FLOAT32 = [False]          # simulate() of a float32 launch is running (launch_float32)


@contextlib.contextmanager
def launch_float32(narrow: bool):
    """Draws in the ``with`` body take the float32 forms when ``narrow`` (``simulate()`` of a
    float32 launch); a plain flag, not a context variable, so that the simulator's threads of
    a kernel with barriers see it too."""
    old = _FLOAT32[0]
    _FLOAT32[0] = bool(narrow)
    try:
        yield
    finally:
        _FLOAT32[0] = old


def _is_int(value) -> bool:
    """An int or a numpy integer (without importing numpy: kernels that never draw in numpy
    keep it unloaded)."""
    np = sys.modules.get("numpy")          # a numpy integer implies numpy is loaded
    return isinstance(value, int) or (np is not None and isinstance(value, np.integer))


def _words(value: int, what: str) -> tuple:
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"Random: {what} must be an int, not {type(value).__name__}")
    value = int(value)
    if not -2 ** 63 <= value < 2 ** 64:
        raise ValueError(f"Random: {what} {value} does not fit in 64 bits; pass a value in "
                         f"[-2**63, 2**64)")
    value &= 2 ** 64 - 1
    return value & M32, value >> 32


def philox_block(ctr: tuple, key: tuple, rounds: int = ROUNDS) -> tuple:
    """Philox-4x32-``rounds`` of one counter (four u32) under one key (two u32)."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) & M32, (k1 + PHILOX_W[1]) & M32
        p0, p1 = PHILOX_M[0] * c0, PHILOX_M[1] * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
    return c0, c1, c2, c3


def philox4x32(ctr, key, rounds: int = ROUNDS):
    """Philox-4x32-``rounds`` of many counters at once: ``ctr`` of shape (..., 4) and ``key``
    of shape (..., 2) (broadcast), u32 values; a uint32 array of shape (..., 4)."""
    import numpy as np
    ctr = np.asarray(ctr, dtype=np.uint64)
    key = np.asarray(key, dtype=np.uint64)
    shape = np.broadcast_shapes(ctr.shape[:-1], key.shape[:-1])
    c = [np.broadcast_to(ctr[..., j], shape) for j in range(4)]
    k0, k1 = np.broadcast_to(key[..., 0], shape), np.broadcast_to(key[..., 1], shape)
    m0, m1, mask = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1]), np.uint64(M32)
    s32 = np.uint64(32)
    for r in range(rounds):
        if r:
            k0 = (k0 + np.uint64(PHILOX_W[0])) & mask
            k1 = (k1 + np.uint64(PHILOX_W[1])) & mask
        p0, p1 = m0 * c[0], m1 * c[2]          # < 2**64: exact in uint64
        c = [(p1 >> s32) ^ c[1] ^ k0, p1 & mask, (p0 >> s32) ^ c[3] ^ k1, p0 & mask]
    return np.stack(c, axis=-1).astype(np.uint32)


def float53(w0: int, w1: int) -> float:
    """The float64 in [0, 1) of two words (CPython's 53-bit construction)."""
    return ((w0 >> 5) * 67108864.0 + (w1 >> 6)) * (1.0 / 9007199254740992.0)


def float24(w0: int) -> float:
    """The float32 in [0, 1) of one word (its top 24 bits; exact in float32)."""
    return (w0 >> 8) * (1.0 / 16777216.0)


class Random:
    """A stream of random numbers: ``Random(seed, stream)``, the same sequence on every device
    and in plain Python (see the module docstring for the algorithm and the consumption rules).
    Mutable, as Python's ``random.Random``: each draw advances it, also when drawn in a device
    function. ``n`` counts the words consumed."""

    __slots__ = ("seed", "stream", "n", "_key", "_s", "_cache")

    def __init__(self, seed: int, stream: int = 0) -> None:
        self._key = _words(seed, "seed")
        self._s = _words(stream, "stream")
        self.seed, self.stream, self.n = int(seed), int(stream), 0
        self._cache = (-1, ())

    def __repr__(self) -> str:
        return f"Random(seed={self.seed}, stream={self.stream}, words={self.n})"

    def block(self, b: int, k: int = 0) -> tuple:
        """Block ``b`` of the stream (``k`` > 0: the side blocks of a rejected ``randint``
        word ``b``), not advancing the stream."""
        return philox_block((b & M32, k & M32) + self._s, self._key)

    def take(self, count: int) -> tuple:
        """The next ``count`` (1, 2 or 4) words: they start at the next multiple of ``count``
        (skipped words are lost), all in one block. Returns (words, index of the first)."""
        start = (self.n + count - 1) & ~(count - 1) & M32
        b = start >> 2
        if self._cache[0] != b:
            self._cache = (b, self.block(b))
        self.n = (start + count) & M32
        p = start & 3
        return self._cache[1][p:p + count], start

    def next_words(self) -> tuple:
        """The next block's four u32 words (the next word at position 0 of a block)."""
        return self.take(4)[0]

    def random(self) -> float:
        if _FLOAT32[0]:
            return self.random32()
        return float53(*self.take(2)[0])

    def random32(self) -> float:
        """``random()`` as a float32 launch gives it: one word, 24 bits."""
        return float24(self.take(1)[0][0])

    def uniform(self, a: float, b: float) -> float:
        if _FLOAT32[0]:
            import numpy as np
            f = np.float32
            return float(f(a) + (f(b) - f(a)) * f(self.random32()))
        return a + (b - a) * self.random()

    def normal(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        if _FLOAT32[0]:
            return self.normal32(mu, sigma)
        w = self.take(4)[0]
        u1, v = 1.0 - float53(w[0], w[1]), 2.0 * float53(w[2], w[3]) - 1.0
        return mu + sigma * (-math.sqrt(-2.0 * math.log(u1)) * math.cos(math.pi * v))

    gauss = normal

    def normal32(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """``normal()`` as a float32 launch makes it: two words, the 24-bit forms (computed
        here in float64: the device's float32 log and cos differ by a few ulp)."""
        w = self.take(2)[0]
        u1, v = 1.0 - float24(w[0]), 2.0 * float24(w[1]) - 1.0
        return mu + sigma * (-math.sqrt(-2.0 * math.log(u1)) * math.cos(math.pi * v))

    def _below(self, r: int) -> int:
        """An unbiased int in [0, r), 1 <= r <= 2**64: one word (two for r > 2**32), then
        the side blocks of that word if it is rejected."""
        k = 0
        if r <= 2 ** 32:
            (w,), start = self.take(1)
            t = (2 ** 32 - r) % r
            cand = (w,)
            while True:
                for w in cand:
                    m = w * r
                    if m & M32 >= t:
                        return m >> 32
                k += 1
                cand = self.block(start, k)
        mask = (1 << (r - 1).bit_length()) - 1
        w, start = self.take(2)
        cand = (w[0] | w[1] << 32,)
        while True:
            for x in cand:
                if x & mask < r:
                    return x & mask
            k += 1
            w = self.block(start, k)
            cand = (w[0] | w[1] << 32, w[2] | w[3] << 32)

    def randint(self, a: int, b: int) -> int:
        a, b = _int(a, "a", "randint"), _int(b, "b", "randint")
        if b < a:
            raise ValueError(f"empty range in randint({a}, {b})")
        return a + self._below_checked(b - a + 1, f"randint({a}, {b})")

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        start = _int(start, "start", "randrange")
        if stop is None:
            start, stop = 0, start
        stop, step = _int(stop, "stop", "randrange"), _int(step, "step", "randrange")
        if step == 0:
            raise ValueError("zero step for randrange()")
        count = (stop - start + step - (1 if step > 0 else -1)) // step
        if count <= 0:
            raise ValueError(f"empty range in randrange({start}, {stop}, {step})")
        return start + step * self._below_checked(count, f"randrange({start}, {stop})")

    def _below_checked(self, r: int, what: str) -> int:
        if r > 2 ** 64:
            raise ValueError(f"{what}: a range of {r} values is wider than 2**64; split it "
                             "(draw the high and the low part separately)")
        return self._below(r)


def _int(value, name: str, method: str) -> int:
    if _is_int(value) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, bool):
        return int(value)
    raise TypeError(f"{method}(): {name} must be an int, not {type(value).__name__}")


def streams_random(seed: int, streams, draws: int, bits: int = 53):
    """``random()`` of many streams at once: an array of shape (len(streams), draws) whose row
    ``i`` is what ``Random(seed, streams[i])`` gives on its first ``draws`` calls (``bits``
    53: float64, two words a draw; 24: the float32 values, one word a draw)."""
    import numpy as np
    streams = np.asarray(streams, dtype=np.int64).astype(np.uint64)
    key = np.array(_words(seed, "seed"), dtype=np.uint64)
    per = 4 if bits == 24 else 2                     # draws per block
    blocks = -(-draws // per)
    ctr = np.zeros(streams.shape + (blocks, 4), dtype=np.uint64)
    ctr[..., 0] = np.arange(blocks, dtype=np.uint64)
    ctr[..., 2] = (streams & np.uint64(M32))[:, None]
    ctr[..., 3] = (streams >> np.uint64(32))[:, None]
    w = philox4x32(ctr, key).astype(np.uint64).reshape(streams.shape + (blocks * 4,))
    if bits == 24:
        return (w[..., :draws] >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
    return ((w[..., 0::2][..., :draws] >> np.uint64(5)).astype(np.float64) * 67108864.0 +
            (w[..., 1::2][..., :draws] >> np.uint64(6)).astype(np.float64)) * 2.0 ** -53


__all__ = ["Random", "launch_float32", "philox4x32", "philox_block", "streams_random"]
