"""Integer // and % follow Python for every sign combination and at the int32 extremes.

(NVIDIA's Vulkan driver computed signed `%` wrongly for negative divisors; the compiler's
helpers work on magnitudes, and this sweep keeps them honest on every driver.)
"""

from __future__ import annotations

from cthreads.gpu import GlobalIdx, Gpu, gpu


@Gpu
def floor_divmod(n: int, a: list[int], b: list[int], q: list[int], r: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


def _wrap(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def _check(a, b):
    n = len(a)
    q, r = [0] * n, [0] * n
    gpu(floor_divmod, n, a, b, q, r).join()
    bad = [(x, y, qq, rr) for x, y, qq, rr in zip(a, b, q, r)
           if qq != _wrap(x // y) or rr != _wrap(x % y)]
    assert not bad, bad[:10]


def test_all_sign_combinations(device_name):
    vals = range(-60, 61)
    pairs = [(x, y) for x in vals for y in vals if y != 0]
    _check([x for x, _ in pairs], [y for _, y in pairs])


def test_int32_extremes(device_name):
    ext = [-2**31, -2**31 + 1, -65536, -7, -1, 1, 7, 65536, 2**31 - 1]
    _check([x for x in ext for _ in ext], [y for _ in ext for y in ext])


def test_division_by_zero_gives_zero(device_name):
    n = 4
    q, r = [9] * n, [9] * n
    gpu(floor_divmod, n, [5, -5, 0, 2**31 - 1], [0] * n, q, r).join()
    assert q == [0] * n and r == [0] * n
