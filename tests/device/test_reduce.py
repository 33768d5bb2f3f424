"""``func.reduce``: reductions on the device against numpy, for every input form and both tree
variants (subgroup shuffles and the workgroup-memory tree), and every refusal with the caller's
data unchanged."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cthreads.reduce import reduce_values
from cthreads.runtime import reducer as reduction
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArgumentTypeError, GpuDeviceError, GpuIndexError,
    GpuInvalidArgument, gpu, shutdown,
)
from tests.device.func_kernels import add_by_counting, gcd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
U = 2.0**-24          # float32's unit roundoff
VARIANTS = ["subgroup", "shared"]
SIZES = [1, 2, 3, 4, 5, 63, 64, 65, 1000, 4097, 2**20 + 3]


@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


@Gpu.func
def fmax(a: float, b: float) -> float:
    return max(a, b)


@Gpu.func
def fmul(a: float, b: float) -> float:
    return a * b


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


@Gpu.func
def imin(a: int, b: int) -> int:
    if b < a:
        return b
    return a


@Gpu.func
def imul(a: int, b: int) -> int:
    return a * b


@Gpu.func
def both(a: bool, b: bool) -> bool:
    return a and b


@Gpu.func
def either(a: bool, b: bool) -> bool:
    return a or b


@Gpu.func
def twice(a: float) -> float:
    return 2.0 * a


@Gpu
def scale_floats(n: int, k: float, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = k * y[i]


@Gpu
def poke_past_end(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i + 1] = 7.0          # the last index is out of range


def run(func, values, init=None, variant=None):
    """``func.reduce`` with the tree variant forced (None: the device's own)."""
    if variant is None:
        return func.reduce(values, init)
    return reduction.run_reduction(func.reduce_op(), values, init, func.__name__, variant)


def small_ints(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-8, 9, n).astype(np.int32)


def rounding_depth(n: int) -> int:
    """The most additions any value passes through in this device's passes: per pass, its
    group of four (2), the groups its thread folds in sequence, a left-over element (1) and
    the workgroup's tree (log2 of its size); then the init value (1). The one-pass form
    (``runtime/one_pass.py``) ends with the last workgroup's fold of the first pass's partials
    (in sequence per thread, then its tree): counted too, an upper bound for both forms."""
    red = reduction._reducer_now()
    depth = 1
    passes = reduction.codegen.plan_passes(n, red.size, *red.shape)
    for p in passes:
        folds = -(-p.quads // (p.groups * red.size))
        depth += 2 + folds + 1 + int(math.log2(red.size))
    return depth + -(-passes[0].groups // red.size) + int(math.log2(red.size))


def tree_tolerance(x: np.ndarray) -> float:
    """How far a float32 sum on the device may be from the exact sum: each addition rounds by
    at most u times the value it makes, at most ``rounding_depth`` times per value."""
    return rounding_depth(x.size) * U * float(np.abs(x.astype(np.float64)).sum())


# -- results against numpy -------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", SIZES)
def test_exact_results_match_numpy(device_name, variant, n):
    xi = small_ints(n, n)
    xf = xi.astype(np.float32)        # small integers: every partial sum is exact in float32
    assert run(fadd, xf, variant=variant) == float(xi.sum())
    assert run(fmax, xf, variant=variant) == float(xi.max())
    assert run(iadd, xi, variant=variant) == int(xi.sum())
    assert run(imin, xi, variant=variant) == int(xi.min())
    flags = xi > 0
    assert run(either, flags, variant=variant) is bool(flags.any())
    assert run(both, flags | (xi > -8), variant=variant) is bool((flags | (xi > -8)).all())


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_result_sits_anywhere(device_name, variant):
    # the largest value at each position of a pass's layout: first, last, the left-over tail
    for n in (7, 1000, 65_541):
        for at in (0, 1, n // 2, n - 4, n - 1):
            x = np.zeros(n, np.int32)
            x[at] = 5
            assert run(imin, -x, variant=variant) == -5, (n, at)
            assert run(fmax, x.astype(np.float32), variant=variant) == 5.0, (n, at)


@pytest.mark.parametrize("variant", VARIANTS)
def test_float_sum_within_tree_rounding(device_name, variant):
    x = np.random.default_rng(5).standard_normal(1_000_003).astype(np.float32)
    exact = math.fsum(x.astype(np.float64).tolist())
    got = run(fadd, x, variant=variant)
    assert isinstance(got, float)
    assert abs(got - exact) <= tree_tolerance(x)


@pytest.mark.parametrize("variant", VARIANTS)
def test_products(device_name, variant):
    # each multiplication rounds the whole product by at most u, whatever the order: (n-1) u
    x = np.random.default_rng(2).uniform(0.5, 2.0, 300).astype(np.float32)
    exact = math.prod(x.astype(np.float64).tolist())
    assert abs(run(fmul, x, variant=variant) - exact) <= x.size * U * exact
    signs = np.where(np.random.default_rng(3).random(10_001) < 0.5, -1, 1).astype(np.int32)
    assert imul.reduce(signs) == int(np.prod(signs.astype(np.int64)))


def test_returns_python_scalars(device_name):
    for func, values, kind in ((fadd, [1.5, 2.0], float), (iadd, [1, 2], int),
                               (either, [False, True], bool)):
        got = func.reduce(values)
        assert type(got) is kind


def test_lists(device_name):
    floats = np.random.default_rng(4).standard_normal(5000).astype(np.float32)
    values = floats.tolist()
    before = list(values)
    assert abs(fadd.reduce(values) - float(floats.astype(np.float64).sum())) \
        <= tree_tolerance(floats)
    assert fmax.reduce(values) == float(floats.max())
    assert values == before                    # only read
    assert fadd.reduce([1, 2, 3, 4, 5]) == 15.0   # ints in a float operation, as for kernels
    assert iadd.reduce(list(range(-500, 1001))) == sum(range(-500, 1001))
    assert both.reduce([True] * 70) is True
    assert both.reduce([True] * 69 + [False]) is False


def test_numpy_arrays_are_only_read(device_name):
    x = np.arange(10_000, dtype=np.float32)
    before = x.copy()
    assert fadd.reduce(x) == float(before.astype(np.float64).sum())
    np.testing.assert_array_equal(x, before)
    frozen = before.copy()
    frozen.flags.writeable = False            # read-only arrays are fine: nothing is written
    assert fmax.reduce(frozen) == 9999.0


def test_views_and_nd_arrays_reduce_every_element(device_name):
    grid = small_ints(3 * 50 * 7, 8).reshape(3, 50, 7)
    assert iadd.reduce(grid) == int(grid.sum())
    assert iadd.reduce(grid[:, ::2, 1]) == int(grid[:, ::2, 1].sum())
    assert imin.reduce(grid[::-1]) == int(grid.min())


# -- init and empty input --------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_init_is_folded_in_first(device_name, variant):
    x = small_ints(1000, 9)
    assert run(iadd, x, 100, variant) == int(x.sum()) + 100
    assert run(imin, x, -100, variant) == -100
    assert run(imin, x, 100, variant) == int(x.min())
    assert run(fmax, x.astype(np.float32), -math.inf, variant) == float(x.max())
    assert run(fmax, x.astype(np.float32), math.inf, variant) == math.inf
    assert run(either, [False, False], True, variant) is True
    assert run(fadd, [2.5], 1, variant) == 3.5


def test_empty_input(device_name):
    assert fadd.reduce([], 1.5) == 1.5
    assert iadd.reduce(np.zeros(0, np.int32), 7) == 7
    assert both.reduce([], True) is True
    with pytest.raises(ValueError, match="empty"):
        fadd.reduce([])
    with pytest.raises(ValueError, match="empty"):
        iadd.reduce(np.zeros(0, np.int32))


# -- refusals, with the caller's data unchanged ---------------------------------------------

def test_element_kind_mismatches_are_refused(device_name):
    ints = np.arange(10, dtype=np.int32)
    floats = np.arange(10, dtype=np.float32)
    doubles = np.arange(10, dtype=np.float64)
    halves = np.arange(10, dtype=np.float16)
    keep = [a.copy() for a in (ints, floats, doubles, halves)]
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*int32.*astype\(np.float32\)"):
        fadd.reduce(ints)
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*float32.*astype\(np.int32\)"):
        iadd.reduce(floats)
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*float64.*astype\(np.int32\)"):
        iadd.reduce(doubles)
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*float16.*astype\(np.float32\)"):
        fadd.reduce(halves)
    with pytest.raises(GpuInvalidArgument, match=r"'values'.*bool"):
        iadd.reduce(ints > 3)
    for a, b in zip((ints, floats, doubles, halves), keep):
        np.testing.assert_array_equal(a, b)
    values = [1, 2, 3.5]
    with pytest.raises(GpuArgumentTypeError, match=r"values'\)?\[2\]"):
        iadd.reduce(values)
    with pytest.raises(GpuInvalidArgument, match="32-bit"):
        iadd.reduce([1, 2**40])
    with pytest.raises(GpuInvalidArgument, match="float32's range"):
        fadd.reduce([1.0, 1e39])
    assert values == [1, 2, 3.5]


def test_bad_arguments(device_name):
    with pytest.raises(GpuArgumentTypeError, match="'values'.*tuple"):
        fadd.reduce((1.0, 2.0))
    with pytest.raises(GpuArgumentTypeError, match="'init'"):
        iadd.reduce([1, 2], 1.5)
    with pytest.raises(TypeError):
        twice.reduce([1.0, 2.0])                # not a binary operation
    with pytest.raises(TypeError, match="@Gpu.func"):
        reduce_values(lambda a, b: a + b, [1.0])


# -- resident lists --------------------------------------------------------------------------

def test_resident_list_is_reduced_where_it_lives(device_name):
    from cthreads.backend import get_queue

    n = 50_000
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32)
    y = x.tolist()
    with GpuArena() as arena:
        arena.bind(y=y)
        fadd.reduce(y)
        pool = get_queue().pool
        allocations = pool.allocations
        for _ in range(5):
            got = fadd.reduce(y)
        assert pool.allocations == allocations       # nothing uploaded into new buffers
        assert abs(got - float(x.astype(np.float64).sum())) <= tree_tolerance(x)
        # a launch writes the device copy; the reduction sees it, without join or sync
        gpu(scale_floats, n, 3.0, y)
        assert fmax.reduce(y) == float((np.float32(3.0) * x).max())
        assert y == x.tolist()                       # the list itself was not downloaded into
        arena.sync()
        np.testing.assert_array_equal(np.array(y, np.float32), np.float32(3.0) * x)


@pytest.mark.parametrize("variant", VARIANTS)
def test_resident_launch_chain_then_reduce(device_name, variant):
    n = 300_001
    y = np.ones(n, np.float32)
    with GpuArena() as arena:
        arena.bind(y=y)
        for _ in range(4):
            gpu(scale_floats, n, 2.0, y)         # queued, never joined
        assert run(fadd, y, variant=variant) == 16.0 * n
        np.testing.assert_array_equal(y, 1.0)       # still the host's values


def test_resident_int_list_reduced_as_float_once(device_name):
    ints = list(range(100))
    with GpuArena() as arena:
        arena.bind(v=ints)
        assert iadd.reduce(ints) == 4950
    with GpuArena() as arena:
        arena.bind(v=ints)
        assert fadd.reduce(ints) == 4950.0      # unused yet: taken as floats, as kernels do
        with pytest.raises(GpuInvalidArgument, match="holds float elements"):
            iadd.reduce(ints)
    assert ints == list(range(100))


def test_resident_mismatch_and_released_arena(device_name):
    flags = [True, False]
    with GpuArena() as arena:
        arena.bind(f=flags)
        with pytest.raises(GpuInvalidArgument, match="holds bool elements"):
            fadd.reduce(flags)
        flags.append(True)
        with pytest.raises(GpuInvalidArgument, match="changed length"):
            either.reduce(flags)
    assert flags == [True, False, True]
    assert either.reduce(flags) is True           # released: an ordinary list again


def test_writer_bounds_error_is_raised_not_summed(device_name):
    n = 1000
    y = np.zeros(n, np.float32)
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(poke_past_end, n, y)
        with pytest.raises(GpuIndexError, match="poke_past_end"):
            fadd.reduce(y)
        assert fadd.reduce(y) == 7.0 * (n - 1)     # reported once; the rest was written


# -- size, shape and caching -----------------------------------------------------------------

def test_past_65535_workgroups_of_256(device_name):
    n = 65_535 * 256 + 1
    x = np.ones(n, np.float32)             # float32 counts exactly up to 2**24 > n
    x[-1] = 3.0
    assert fadd.reduce(x) == float(n + 2)
    assert fmax.reduce(x) == 3.0
    assert iadd.reduce(np.ones(n, np.int32)) == n


def test_pass_plans_cover_every_element():
    for n in (1, 3, 4, 5, 1000, 2**20 + 3, 65_535 * 256 + 1, 2**29):
        for size, shape in ((64, reduction.SHAPE_CPU), (256, reduction.SHAPE_GPU)):
            passes = reduction.codegen.plan_passes(n, size, *shape)
            assert passes[0].count == n and passes[-1].groups == 1
            for a, b in zip(passes, passes[1:]):
                assert b.count == a.groups
            for p in passes:
                assert p.quads * 4 + p.tail == p.count
                # every workgroup has something to read; each thread's loop stays short
                assert (p.groups - 1) * size < p.items <= p.groups * size * shape[2]


def test_repeated_reductions_compile_nothing(device_name):
    @Gpu.func
    def fmin(a: float, b: float) -> float:
        return min(a, b)

    x = np.arange(1000, dtype=np.float32)
    fadd.reduce(x)
    red = reduction._reducer_now()
    pipelines = dict(red.pipelines.compiled)
    for _ in range(20):
        fadd.reduce(x)
        assert fmin.reduce(x) == 0.0
    assert len(red.pipelines.compiled) == len(pipelines) + 1        # fmin's, once
    assert all(red.pipelines.get(k) is v for k, v in pipelines.items())


def test_after_shutdown_a_new_device_serves(device_name):
    x = np.arange(100, dtype=np.float32)
    with GpuArena() as arena:
        arena.bind(x=x)
        shutdown()
        assert fadd.reduce(x) == 4950.0        # the arena is gone: reduced from the array
    assert fadd.reduce(x.tolist()) == 4950.0


# -- operations with loops on CPU drivers (gcd, add_by_counting: func_kernels.py) ------------

def test_operation_with_loops(device_name):
    values = (np.random.default_rng(10).integers(1, 1000, 20_000) * 6).astype(np.int32)
    want = 0
    for v in values.tolist():
        want = math.gcd(want, v)
    assert gcd.reduce(values) == want
    assert gcd.reduce(values.tolist(), 0) == want
    assert add_by_counting.reduce(np.ones(5000, np.int32)) == 5000


def test_operation_whose_loops_the_cpu_driver_cuts(device_name):
    long = np.full(100, 30_000, np.int32)
    keep = long.copy()
    if device_name.startswith("llvmpipe"):
        with pytest.raises(GpuDeviceError, match=r"add_by_counting.*ended a loop.*65,535"):
            add_by_counting.reduce(long)
    else:
        assert add_by_counting.reduce(long) == 3_000_000
    np.testing.assert_array_equal(long, keep)
    assert add_by_counting.reduce(np.ones(70, np.int32)) == 70     # the next one is clean


def test_device_loss_raises_ours_then_a_new_device_serves(tmp_path, device_name):
    # in a fresh interpreter: a hang or an abort fails this test, not the suite
    script = tmp_path / "loss.py"
    script.write_text(textwrap.dedent('''
        import json
        import numpy as np
        import cthreads.gpu as cg
        from cthreads.gpu import Gpu, GpuArena
        from cthreads.backend import device as dev

        @Gpu.func
        def add(a: float, b: float) -> float:
            return a + b

        x = np.arange(1000, dtype=np.float32)
        keep = x.copy()
        lst = x.tolist()
        assert add.reduce(x) == 499500.0
        arena = GpuArena().bind(v=lst)
        assert add.reduce(lst) == 499500.0
        dev.get_context().device.destroy()
        errs = []
        for values in (x, lst):
            try:
                errs.append(["no error", add.reduce(values)])
            except cg.CThreadsGPUError as exc:
                errs.append([type(exc).__name__, str(exc)])
        print(json.dumps({"errs": errs, "again": add.reduce(x), "list": add.reduce(lst),
                          "unchanged": bool(np.array_equal(x, keep)) and lst == keep.tolist()}))
    '''))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=180, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)))
    assert out.returncode == 0, out.stdout + out.stderr
    info = json.loads(out.stdout.strip().splitlines()[-1])
    (first, message), (second, message2) = info["errs"]
    assert first == "VulkanInitFailed" and "lost" in message
    assert second == "GpuUseAfterDestroy" and "GpuArena" in message2
    assert info["again"] == 499500.0 and info["list"] == 499500.0
    assert info["unchanged"] is True


def test_reductions_from_several_threads(device_name):
    import threading

    arrays = [small_ints(10_000 + 997 * k, k) for k in range(4)]
    wrong = []

    def work(k):
        x = arrays[k]
        xf = x.astype(np.float32)
        for _ in range(15):
            if iadd.reduce(x) != int(x.sum()) or fmax.reduce(xf) != float(x.max()):
                wrong.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not wrong


def test_plain_operations_follow_the_arrays_width(device_name):
    """A float64 array reduces in float64 with a plain-float operation (spec v2, sections 2
    and 3), an int64 array in int64; the float32 sum of the same values is visibly rounder."""
    x = np.full(100_001, 0.1)
    exact = math.fsum(x.tolist())
    got = fadd.reduce(x)
    assert abs(got - exact) <= 20 * 2.0**-52 * exact          # a float64 tree's rounding
    assert abs(fadd.reduce(x.astype(np.float32)) - exact) > 1e-4
    big = np.arange(50_000, dtype=np.int64) * 2**33
    assert iadd.reduce(big) == int(big.sum())                  # past 32 bits, exactly
    with GpuArena() as arena:
        arena.bind(x=x)
        assert fadd.reduce(x) == got                           # the same tree, resident
