"""``func.accumulate``: inclusive scans on the device against numpy (``np.cumsum``,
``np.maximum.accumulate``, a Python fold for a non-commutative operation), for every input form
(numpy, lists, GpuArrays staying on the device, arena-bound arrays), axes, sizes around the
block edges, and every refusal with the caller's data unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArray, GpuDeviceError, GpuIndexError, GpuInvalidArgument,
    float64, gpu, int64, to_device,
)
from tests.device.func_kernels import add_by_counting, fadd, fmax, iadd, uadd

U32 = 2.0**-24          # float32's unit roundoff
U64 = 2.0**-53
SIZES = [1, 2, 63, 64, 65, 1023, 1024, 1025, 4095, 4096, 4097, 70_001, 2**20 + 3]


@Gpu.func
def imin(a: int, b: int) -> int:
    return min(a, b)


@Gpu.func
def ladd(a: int64, b: int64) -> int64:
    return a + b


@Gpu.func
def dadd(a: float64, b: float64) -> float64:
    return a + b


@Gpu.func
def bor(a: bool, b: bool) -> bool:
    return a or b


@Gpu.func
def cmul(a: complex, b: complex) -> complex:
    return a * b


@Gpu.func
def affine(p: int, q: int) -> int:
    """Composition of affine maps x -> a*x + b (mod 2**15), a map packed as a << 15 | b: first
    p, then q. Associative and not commutative."""
    a1 = p >> 15
    b1 = p & 32767
    a2 = q >> 15
    b2 = q & 32767
    return (((a2 * a1) & 32767) << 15) | ((a2 * b1 + b2) & 32767)


def _affine_py(p, q):
    a1, b1, a2, b2 = p >> 15, p & 32767, q >> 15, q & 32767
    return (((a2 * a1) & 32767) << 15) | ((a2 * b1 + b2) & 32767)


def float_tolerance(x, axis=None, unit=U32):
    """What any order of the additions may round by: n * u * the prefix sums of |x| (plus a
    floor for sums that cancel to nothing)."""
    a = np.abs(x.astype(np.float64))
    n = x.size if axis is None else x.shape[axis]
    return n * unit * np.cumsum(a, axis=axis) + 1e-30


@pytest.mark.parametrize("n", SIZES)
def test_int_sums_are_exact(device_name, n):
    x = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    keep = x.copy()
    got = iadd.accumulate(x)
    assert got.dtype == np.int32 and got.shape == (n,)
    np.testing.assert_array_equal(got, np.cumsum(x, dtype=np.int32))
    np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("n", [1, 65, 4097, 2**20 + 3])
def test_float_sums_within_rounding(device_name, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = fadd.accumulate(x)
    assert got.dtype == np.float32
    want = np.cumsum(x.astype(np.float64))
    assert (np.abs(got - want) <= float_tolerance(x)).all()


@pytest.mark.parametrize("n", [1, 4096, 4097, 70_001])
def test_max_min(device_name, n):
    rng = np.random.default_rng(n + 1)
    x = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(fmax.accumulate(x), np.maximum.accumulate(x))
    i = rng.integers(-10**9, 10**9, n).astype(np.int32)
    np.testing.assert_array_equal(imin.accumulate(i), np.minimum.accumulate(i))


@pytest.mark.parametrize("n", [1, 64, 65, 1025, 4097, 20_000])
def test_non_commutative_operation_keeps_order(device_name, n):
    rng = np.random.default_rng(n + 2)
    x = ((rng.integers(0, 2**15, n) << 15) | rng.integers(0, 2**15, n)).astype(np.int32)
    want = np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object)).astype(np.int32)
    np.testing.assert_array_equal(affine.accumulate(x), want)


def test_other_types(device_name):
    rng = np.random.default_rng(3)
    u = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(uadd.accumulate(u), np.cumsum(u, dtype=np.uint32))
    big = rng.integers(-2**40, 2**40, 5000).astype(np.int64)
    np.testing.assert_array_equal(ladd.accumulate(big), np.cumsum(big))
    np.testing.assert_array_equal(iadd.accumulate(big), np.cumsum(big))   # plain int: int64
    d = rng.standard_normal(5000)
    got = dadd.accumulate(d)
    assert got.dtype == np.float64
    assert (np.abs(got - np.cumsum(d)) <= float_tolerance(d, unit=U64)).all()
    got = fadd.accumulate(d)                     # a plain-float operation on float64: float64
    assert got.dtype == np.float64
    assert (np.abs(got - np.cumsum(d)) <= float_tolerance(d, unit=U64)).all()
    flags = np.zeros(5000, bool)
    flags[3001] = True
    got = bor.accumulate(flags)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.logical_or.accumulate(flags))
    z = np.exp(1j * rng.uniform(0, 6.3, 3000))              # unit numbers: |prefix| stays 1
    got = cmul.accumulate(z)                                # complex128 in complex128
    assert got.dtype == np.complex128
    assert np.abs(got - np.cumprod(z)).max() <= 3000 * 8 * U64
    got = cmul.accumulate(z.astype(np.complex64))
    assert got.dtype == np.complex64
    assert np.abs(got - np.cumprod(z)).max() <= 3000 * 8 * U32


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_two_d_axes(device_name, axis):
    x = np.random.default_rng(4).integers(-50, 50, (300, 77)).astype(np.int32)
    np.testing.assert_array_equal(iadd.accumulate(x, axis=axis), np.cumsum(x, axis=axis))
    f = x.astype(np.float32) / 7
    got = fadd.accumulate(f, axis=axis)
    want = np.cumsum(f.astype(np.float64), axis=axis)
    assert got.shape == want.shape
    assert (np.abs(got - want) <= float_tolerance(f, axis)).all()


def test_three_d_and_long_lines(device_name):
    x = np.random.default_rng(5).integers(-9, 9, (3, 5000, 4)).astype(np.int32)
    for axis in (0, 1, 2):
        np.testing.assert_array_equal(iadd.accumulate(x, axis=axis), np.cumsum(x, axis=axis))
    c = np.ascontiguousarray(x.transpose(1, 0, 2)[::-1])        # a copy: not C order at first
    np.testing.assert_array_equal(iadd.accumulate(x.transpose(1, 0, 2)[::-1], axis=0),
                                  np.cumsum(c, axis=0))
    s = np.int32(7)
    np.testing.assert_array_equal(iadd.accumulate(np.array(s)), np.cumsum(s))


def test_empty_and_tiny(device_name):
    for shape, axis in [((0,), None), ((0,), 0), ((0, 3), 1), ((3, 0), 0), ((0, 3), None)]:
        x = np.zeros(shape, np.float32)
        got = fadd.accumulate(x, axis=axis)
        assert got.shape == np.cumsum(x, axis=axis).shape and got.dtype == np.float32
    assert iadd.accumulate([]).shape == (0,)
    np.testing.assert_array_equal(iadd.accumulate([5]), [5])
    g = iadd.accumulate(to_device(np.zeros((2, 0), np.int32)), axis=0)
    assert isinstance(g, GpuArray) and g.shape == (2, 0)


def test_lists(device_name):
    got = fadd.accumulate([1.0, 2.5, -0.5])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 3.5, 3.0])
    np.testing.assert_array_equal(iadd.accumulate([[1, 2], [3, 4]], axis=0), [[1, 2], [4, 6]])
    np.testing.assert_array_equal(fadd.accumulate([1, 2, 3]), [1.0, 3.0, 6.0])


def test_gpu_array_in_and_out(device_name):
    x = np.random.default_rng(6).integers(-100, 100, (40, 3000)).astype(np.int32)
    g = to_device(x)
    out = iadd.accumulate(g, axis=1)
    assert isinstance(out, GpuArray) and out.shape == x.shape and out.dtype == np.int32
    again = iadd.accumulate(out, axis=0)          # chained on the device
    np.testing.assert_array_equal(again.numpy(), np.cumsum(np.cumsum(x, axis=1), axis=0))
    np.testing.assert_array_equal(g.numpy(), x)                 # the input unchanged
    flat = iadd.accumulate(g)
    assert flat.shape == (x.size,)
    np.testing.assert_array_equal(flat.numpy(), np.cumsum(x))
    view = g[8:16]                                # a row view bound from its offset
    np.testing.assert_array_equal(iadd.accumulate(view, axis=1).numpy(),
                                  np.cumsum(x[8:16], axis=1))


@Gpu
def scale_floats(n: int, k: float, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = y[i] * k


@Gpu
def poke_past_end(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i + 1] = 7.0          # the last index is out of range


def test_a_writers_bounds_error_is_raised_not_scanned(device_name):
    y = np.zeros(1000, np.float32)
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(poke_past_end, 1000, y)
        with pytest.raises(GpuIndexError, match="poke_past_end"):
            fadd.accumulate(y)
        want = np.cumsum(np.r_[0.0, np.full(999, 7.0)])
        np.testing.assert_array_equal(fadd.accumulate(y), want)     # reported once
    g = to_device(np.zeros(1000, np.float32))
    gpu(poke_past_end, 1000, g)
    out = fadd.accumulate(g)                       # on the device: raised when read back
    with pytest.raises(GpuIndexError, match="poke_past_end"):
        out.numpy()


def test_arena_bound_array_reads_its_device_copy(device_name):
    y = (np.arange(5000) % 16).astype(np.float32)       # every prefix sum exact in float32
    keep = y.copy()
    with GpuArena() as arena:
        arena.bind(y=y)
        np.testing.assert_array_equal(fadd.accumulate(y), np.cumsum(y))
        gpu(scale_floats, y.size, 3.0, y)        # queued, never joined: the device copy changes
        np.testing.assert_array_equal(fadd.accumulate(y), np.cumsum(np.float32(3.0) * y))
        np.testing.assert_array_equal(y, keep)                  # the host's values
        np.testing.assert_array_equal(fadd.accumulate(y.reshape(50, 100), axis=1),
                                      np.cumsum(3 * y.reshape(50, 100), axis=1))
    ints = list(range(100))
    with GpuArena() as arena:
        arena.bind(v=ints)
        got = fadd.accumulate(ints)        # unused yet: taken as floats, as kernels do
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.cumsum(np.arange(100.0)))
        with pytest.raises(GpuInvalidArgument, match="holds float elements"):
            iadd.accumulate(ints)
    assert ints == list(range(100))
    grid = [[1, 2, 3], [4, 5, 6]]
    with GpuArena() as arena:
        arena.bind(g=grid)
        np.testing.assert_array_equal(iadd.accumulate(grid, axis=0), [[1, 2, 3], [5, 7, 9]])
    assert grid == [[1, 2, 3], [4, 5, 6]]
    lst = list(range(3000))
    with GpuArena() as arena:
        arena.bind(v=lst)
        np.testing.assert_array_equal(iadd.accumulate(lst), np.cumsum(lst))
    assert lst == list(range(3000))


def test_refusals_leave_the_data_unchanged(device_name):
    x = np.arange(10, dtype=np.float32)
    keep = x.copy()
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*float32"):
        iadd.accumulate(x)
    with pytest.raises(np.exceptions.AxisError):
        fadd.accumulate(x, axis=1)
    with pytest.raises(TypeError, match="axis must be an int"):
        fadd.accumulate(x, axis=(0,))
    with pytest.raises(TypeError, match="expects a list"):
        fadd.accumulate("abc")
    with pytest.raises(TypeError, match="not a @Gpu.func"):
        from cthreads.accumulate import accumulate_values
        accumulate_values(len, x)
    with pytest.raises(GpuInvalidArgument, match="holds float64 values"):
        iadd.accumulate([1.5, 2.0])
    np.testing.assert_array_equal(x, keep)
    with config.override(binding_bytes=4096):
        two_d = np.ones((50, 40), np.float32)               # 8,000 bytes: two parts
        with pytest.raises(GpuInvalidArgument, match="along an axis are not supported"):
            fadd.accumulate(two_d, axis=0)
        np.testing.assert_array_equal(two_d, 1.0)


@pytest.mark.parametrize("n", [1025, 2048, 2049, 5000, 10_001])
def test_flat_scans_past_the_binding_limit(device_name, n):
    """Parts of 1,024 float32 (a 4,096-byte binding): numpy in, a split GpuArray in and out,
    the previous part's last value carried into each part; the non-commutative operation
    checks the order across parts."""
    rng = np.random.default_rng(n)
    ints = rng.integers(-1000, 1000, n).astype(np.int32)
    maps = ((rng.integers(0, 2**15, n) << 15) | rng.integers(0, 2**15, n)).astype(np.int32)
    want_maps = np.frompyfunc(_affine_py, 2, 1).accumulate(maps.astype(object)).astype(np.int32)
    with config.override(binding_bytes=4096):
        np.testing.assert_array_equal(iadd.accumulate(ints), np.cumsum(ints, dtype=np.int32))
        np.testing.assert_array_equal(affine.accumulate(maps), want_maps)
        np.testing.assert_array_equal(iadd.accumulate(ints.tolist()), np.cumsum(ints))
        g = to_device(ints.reshape(1, n))
        assert len(g._slot.parts) > 1
        out = iadd.accumulate(g)
        assert isinstance(out, GpuArray) and out.shape == (n,) and len(out._slot.parts) > 1
        np.testing.assert_array_equal(out.numpy(), np.cumsum(ints, dtype=np.int32))
        np.testing.assert_array_equal(g.numpy().ravel(), ints)
        again = iadd.accumulate(out)                        # split in, split out, chained
        np.testing.assert_array_equal(again.numpy(),
                                      np.cumsum(np.cumsum(ints, dtype=np.int32), dtype=np.int32))
        d = rng.standard_normal(n)                          # float64: 512 a part
        got = dadd.accumulate(d)
        assert (np.abs(got - np.cumsum(d)) <= float_tolerance(d, unit=U64)).all()


def test_operation_with_loops_and_the_cpu_drivers_cap(device_name):
    np.testing.assert_array_equal(add_by_counting.accumulate(np.ones(3000, np.int32)),
                                  np.arange(1, 3001))
    long = np.full(100, 30_000, np.int32)
    keep = long.copy()
    if device_name.startswith("llvmpipe"):
        with pytest.raises(GpuDeviceError, match=r"add_by_counting.*ended a loop.*65,535"):
            add_by_counting.accumulate(long)
    else:
        np.testing.assert_array_equal(add_by_counting.accumulate(long), np.cumsum(long))
    np.testing.assert_array_equal(long, keep)
    np.testing.assert_array_equal(add_by_counting.accumulate(np.ones(70, np.int32)),
                                  np.arange(1, 71))


@pytest.mark.parametrize("shape, axis", [((300, 1100), 0), ((5000, 3), 1), ((3, 5000), 0),
                                         ((5, 4097), 1), ((4097, 5), 0)])
def test_line_forms_keep_order(device_name, shape, axis):
    """One line a thread (short lines; many lines side by side) and a workgroup a block: the
    non-commutative composition along each."""
    rng = np.random.default_rng(sum(shape))
    x = ((rng.integers(0, 2**15, shape) << 15) | rng.integers(0, 2**15, shape)).astype(np.int32)
    want = np.frompyfunc(_affine_py, 2, 1).accumulate(x.astype(object), axis=axis)
    np.testing.assert_array_equal(affine.accumulate(x, axis=axis), want.astype(np.int32))


def test_loop_cap_in_one_line_a_thread(device_name):
    long = np.full((5, 100), 30_000, np.int32)   # lines of five, one a thread: 120,000 passes
    if device_name.startswith("llvmpipe"):
        with pytest.raises(GpuDeviceError, match=r"add_by_counting.*ended a loop"):
            add_by_counting.accumulate(long, axis=0)
    else:
        np.testing.assert_array_equal(add_by_counting.accumulate(long, axis=0),
                                      np.cumsum(long, axis=0))
    np.testing.assert_array_equal(add_by_counting.accumulate(np.ones((3, 100), np.int32), axis=0),
                                  np.cumsum(np.ones((3, 100), np.int32), axis=0))
