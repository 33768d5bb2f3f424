"""``func.reduce`` of data past the storage-binding limit: uploaded in parts of at most one
binding each, a first pass per part, the later passes over every part's partials, one readback.

``config.override(binding_bytes=...)`` lowers the limit so that a few thousand elements make
2..5 parts; one test crosses lavapipe's real 128 MiB limit. Every result is checked against
numpy (integers and small-integer floats exactly, float sums within the tree's rounding), and
the caller's data is unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads import config
from cthreads.codegen.reduction import plan_parts
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuDeviceError, GpuIndexError, GpuInvalidArgument, gpu, to_device,
)
from cthreads.runtime import reducer
from tests.device.func_kernels import add_by_counting, gcd

LIMIT = 4096                   # the binding limit the tests set: 1024 float32, 512 float64
UNIT = {"float32": 2.0**-24, "float64": 2.0**-53}


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu.func
def fmin(a: float, b: float) -> float:
    return min(a, b)


@Gpu.func
def fmax(a: float, b: float) -> float:
    return max(a, b)


@Gpu.func
def fabsmax(a: float, b: float) -> float:          # a user operation: the largest magnitude
    if abs(b) > abs(a):
        return abs(b)
    return abs(a)


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


@Gpu.func
def imin(a: int, b: int) -> int:
    return min(a, b)


@Gpu.func
def imax(a: int, b: int) -> int:
    return max(a, b)


@Gpu.func
def iabsmax(a: int, b: int) -> int:
    if abs(b) > abs(a):
        return abs(b)
    return abs(a)


@Gpu.func
def either(a: bool, b: bool) -> bool:
    return a or b


@Gpu
def poke_past_end(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i + 1] = 7.0          # the last index is out of range


OPS = {"float": (add, fmin, fmax, fabsmax), "int": (iadd, imin, imax, iabsmax)}
REFS = (np.sum, np.min, np.max, lambda x: np.abs(x).max())


def sizes(dtype, parts: int) -> int:
    """An element count making ``parts`` parts under LIMIT, the last one partial."""
    per = LIMIT // np.dtype(dtype).itemsize
    return (parts - 1) * per + (per // 3 + 1 if parts % 2 else 5)


def counting_parts(monkeypatch) -> list:
    """The number of parts each host upload was split into, appended as reductions run."""
    seen = []
    real = reducer.host_parts

    def spy(*a):
        out = real(*a)
        seen.append(len(out))
        return out

    monkeypatch.setattr(reducer, "host_parts", spy)
    return seen


def tolerance(x: np.ndarray) -> float:
    """How far a float sum of ``x`` in parts may be from the exact sum: each addition rounds
    by at most u times the value it makes, at most as often as a value is added on its way
    through the deepest part's first pass and the later passes (as test_reduce.py counts)."""
    red = reducer._reducer_now()
    per = reducer.part_elems(red.queue.pool, x.size, x.itemsize)
    counts = tuple(min(per, x.size - at) for at in range(0, x.size, per))
    firsts, rest = plan_parts(counts, red.size, *red.shape)

    def depth(p):
        return 2 + -(-p.quads // (p.groups * red.size)) + 1 + int(math.log2(red.size))

    total = 1 + max(depth(p) for p in firsts) + sum(depth(p) for p in rest)
    return total * UNIT[x.dtype.name] * float(np.abs(x.astype(np.float64)).sum())


def test_part_plans_cover_every_element():
    for counts in ((1,), (5,), (1024, 1024, 3), (2**20, 2**20, 2**20, 7), (4, 1)):
        for size, shape in ((64, reducer.SHAPE_CPU), (256, reducer.SHAPE_GPU)):
            firsts, rest = plan_parts(counts, size, *shape)
            whole = reducer.codegen.plan_passes(counts[0], size, *shape)
            if len(counts) == 1:                 # one part: the unsplit passes
                assert firsts + rest == whole
            assert [p.count for p in firsts] == list(counts)
            partials = sum(p.groups for p in firsts)
            assert rest == (() if partials == 1 else
                            reducer.codegen.plan_passes(partials, size, *shape))


# -- results against numpy -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("parts", [2, 3, 5])
def test_arrays_in_parts_match_numpy(device_name, monkeypatch, dtype, parts):
    seen = counting_parts(monkeypatch)
    n = sizes(dtype, parts)
    rng = np.random.default_rng(parts)
    small = rng.integers(-1000, 1000, n)
    x = small.astype(dtype)          # small integers: every partial sum is exact in floats too
    keep = x.copy()
    ops = OPS["float" if x.dtype.kind == "f" else "int"]
    with config.override(binding_bytes=LIMIT):
        got = [op.reduce(x) for op in ops]
    want = [ref(small).item() for ref in REFS]
    assert got == want
    assert all(type(g) is (float if x.dtype.kind == "f" else int) for g in got)
    assert seen == [parts] * len(ops)
    np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_sums_in_parts_within_the_trees_rounding(device_name, dtype):
    n = sizes(dtype, 5)
    x = np.random.default_rng(7).standard_normal(n).astype(dtype)
    exact = math.fsum(x.astype(np.float64).tolist())
    with config.override(binding_bytes=LIMIT):
        got = add.reduce(x)
        assert abs(got - exact) <= tolerance(x)
        assert add.reduce(x) == got                  # the same tree every call


def test_lists_in_parts(device_name, monkeypatch):
    seen = counting_parts(monkeypatch)
    floats = np.random.default_rng(3).integers(-50, 50, sizes("float32", 4))
    values = [float(v) for v in floats]
    ints = list(range(-2000, sizes("int32", 3) - 2000))
    keep = (list(values), list(ints))
    with config.override(binding_bytes=LIMIT):
        assert add.reduce(values) == float(floats.sum())
        assert fmax.reduce(values) == float(floats.max())
        assert iadd.reduce(ints) == sum(ints)
        assert iabsmax.reduce(ints) == 2000
        flags = [False] * 3000 + [True] + [False] * 10
        assert either.reduce(flags) is True
        assert add.reduce(ints) == float(sum(ints))        # ints in a float operation
    assert seen == [4, 4, 3, 3, 3, 3]
    assert (values, ints) == keep and flags.count(True) == 1


def test_the_extreme_sits_anywhere(device_name):
    n = sizes("int32", 4)
    per = LIMIT // 4
    for at in (0, per - 1, per, 2 * per + 17, n - 4, n - 1):
        x = np.zeros(n, np.int32)
        x[at] = 5
        with config.override(binding_bytes=LIMIT):
            assert imin.reduce(-x) == -5, at
            assert fmax.reduce(x.astype(np.float32)) == 5.0, at


def test_nd_arrays_views_and_bools(device_name):
    grid = np.random.default_rng(4).integers(-9, 10, (7, 333)).astype(np.int32)
    flags = np.zeros(5 * 1024 + 3, bool)
    flags[-2] = True
    with config.override(binding_bytes=LIMIT):
        assert iadd.reduce(grid) == int(grid.sum())              # every element, 3 parts
        assert imin.reduce(grid[:, ::-1]) == int(grid.min())     # a view: copied, then split
        assert either.reduce(flags) is True
        assert either.reduce(flags[:-3]) is False


@pytest.mark.parametrize("variant", ["subgroup", "shared"])
def test_both_tree_variants(device_name, variant):
    if variant == "subgroup" and "subgroup" not in reducer._reducer_now().ctx.features:
        pytest.skip("the device lacks the subgroup feature")
    x = np.random.default_rng(5).integers(-99, 99, sizes("int32", 5)).astype(np.int32)
    with config.override(binding_bytes=LIMIT):
        got = reducer.run_reduction(iadd.reduce_op(), x, None, "iadd", variant)
    assert got == int(x.sum())


def test_one_part_is_the_unsplit_tree(device_name, monkeypatch):
    # data within the limit: the unchanged passes (the same bits as without the setting)
    seen = counting_parts(monkeypatch)
    x = np.random.default_rng(6).standard_normal(LIMIT // 4).astype(np.float32)
    plain = add.reduce(x)
    with config.override(binding_bytes=LIMIT):
        assert add.reduce(x) == plain
    assert seen == [1, 1]


# -- init, empty input, the loop probe, writers' bounds checks -------------------------------

def test_init_with_parts(device_name):
    x = np.random.default_rng(8).integers(-9, 10, sizes("int64", 3)).astype(np.int64)
    with config.override(binding_bytes=LIMIT):
        assert iadd.reduce(x, 2**40) == int(x.sum()) + 2**40
        assert imin.reduce(x, -100) == -100
        assert imin.reduce(x, 100) == int(x.min())
        assert fmax.reduce(x.astype(np.float32), math.inf) == math.inf
        assert add.reduce(x.astype(np.float64), 0.25) == float(x.sum()) + 0.25
        assert add.reduce([], 1.5) == 1.5
        with pytest.raises(ValueError, match="empty"):
            add.reduce(np.zeros(0, np.float32))


def test_operations_with_loops_in_parts(device_name):
    values = (np.random.default_rng(10).integers(1, 1000, sizes("int32", 3)) * 6).astype(np.int32)
    want = 0
    for v in values.tolist():
        want = math.gcd(want, v)
    long = np.full(3 * 1024 + 1, 30_000, np.int32)
    keep = long.copy()
    with config.override(binding_bytes=LIMIT):
        assert gcd.reduce(values) == want
        if device_name.startswith("llvmpipe"):
            with pytest.raises(GpuDeviceError, match=r"add_by_counting.*ended a loop"):
                add_by_counting.reduce(long)
        assert add_by_counting.reduce(np.ones(3 * 1024 + 1, np.int32)) == 3 * 1024 + 1
    np.testing.assert_array_equal(long, keep)


@Gpu
def scale(n: int, k: float, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = k * y[i]


@pytest.mark.parametrize("where", ["split gpuarray", "gpuarray", "arena"])
def test_writers_bounds_error_is_raised(device_name, where):
    n = 3000
    y = np.zeros(n, np.float32)
    with GpuArena() as arena, config.override(binding_bytes=LIMIT):
        if where == "arena":
            arena.bind(y=y)
            target = y
        elif where == "gpuarray":                  # one buffer (made without the setting)
            with config.override(binding_bytes=None):
                target = to_device(y)
            assert len(target._slot.parts) == 1
        else:
            target = to_device(y)
            assert len(target._slot.parts) == 3
        gpu(poke_past_end, n, target)
        with pytest.raises(GpuIndexError, match="poke_past_end"):
            add.reduce(target)
        assert add.reduce(target) == 7.0 * (n - 1)     # reported once; the rest written
    if where != "arena":
        np.testing.assert_array_equal(y, 0.0)            # the host array was only copied


def test_launches_on_a_split_gpuarray_come_first(device_name):
    x = np.random.default_rng(13).integers(-50, 50, sizes("float32", 4)).astype(np.float32)
    with config.override(binding_bytes=LIMIT):
        d = to_device(x)
        for _ in range(3):
            gpu(scale, x.size, 2.0, d)               # queued, never joined
        assert add.reduce(d) == 8.0 * float(x.sum())
        assert fmax.reduce(d) == 8.0 * float(x.max())
    np.testing.assert_array_equal(d.numpy(), 8.0 * x)


# -- past lavapipe's real limit --------------------------------------------------------------

def test_past_the_devices_binding_limit(device_name):
    # 144 MiB: past lavapipe's 128 MiB storage-binding limit (two parts there)
    n = 36_000_000
    x = np.random.default_rng(11).random(n, dtype=np.float32)
    keep = x[:1000].copy(), x[-1000:].copy()
    pool = reducer._reducer_now().queue.pool
    got = add.reduce(x)
    assert abs(got - float(x.sum(dtype=np.float64))) <= tolerance(x)
    if device_name.startswith("llvmpipe"):
        assert x.nbytes > pool.binding_bytes()
    np.testing.assert_array_equal(x[:1000], keep[0])
    np.testing.assert_array_equal(x[-1000:], keep[1])


# -- GpuArrays split into parts --------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("parts", [2, 5])
def test_split_gpuarrays_reduce_where_they_live(device_name, monkeypatch, dtype, parts):
    seen = counting_parts(monkeypatch)
    n = sizes(dtype, parts)
    small = np.random.default_rng(parts + 20).integers(-1000, 1000, n)
    x = small.astype(dtype)
    ops = OPS["float" if x.dtype.kind == "f" else "int"]
    with config.override(binding_bytes=LIMIT):
        d = to_device(x)
        assert len(d._slot.parts) == parts
        got = [op.reduce(d) for op in ops]
        assert seen == []                            # nothing uploaded: reduced in place
        noisy = np.random.default_rng(1).standard_normal(n).astype(dtype)
        if x.dtype.kind == "f":                      # the same tree as the host array's
            d.set(noisy)
            assert add.reduce(d) == add.reduce(noisy)
    assert got == [ref(small).item() for ref in REFS]
    np.testing.assert_array_equal(d.numpy(), noisy if x.dtype.kind == "f" else x)


def test_split_gpuarray_nd_init_and_refusals(device_name):
    grid = np.random.default_rng(12).integers(-9, 10, (9, 300)).astype(np.int64)
    with config.override(binding_bytes=LIMIT):
        d = to_device(grid)                          # 2,700 int64: 6 parts of 512
        assert len(d._slot.parts) == 6
        assert iadd.reduce(d) == int(grid.sum())
        assert iadd.reduce(d, 2**40) == int(grid.sum()) + 2**40
        assert imax.reduce(d, 100) == 100
        with pytest.raises(GpuInvalidArgument, match=r"\(9, 300\) and dtype int32"):
            add.reduce(to_device(grid.astype(np.int32)))
    np.testing.assert_array_equal(d.numpy(), grid)


def test_parts_on_a_second_device(monkeypatch, device_name):
    from cthreads.gpu import devices, shutdown, use_device

    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    assert len(devices()) >= 2
    x = np.random.default_rng(14).integers(-99, 99, sizes("int32", 3)).astype(np.int32)
    try:
        with config.override(binding_bytes=LIMIT):
            with use_device(1):
                assert iadd.reduce(x) == int(x.sum())
                d = to_device(x)
                assert len(d._slot.parts) == 3
                assert imax.reduce(d) == int(x.max())
            with pytest.raises(GpuInvalidArgument, match="device"):
                iadd.reduce(d)                      # an array belongs to its device
    finally:
        shutdown()
