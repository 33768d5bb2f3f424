"""Whole-array ``f.reduce`` with its result on the device (``to_device=True``: a 0-d GpuArray)
and the one-pass form (``runtime/one_pass.py``) against the pass-per-level form
(``CTHREADS_REDUCE_FORM=old``). Every test runs in both forms (the ``form`` fixture switches
the device's reduction state); values are checked against numpy, float sums within the
tree's rounding, and refusals leave the caller's data unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads import config
from cthreads.codegen import reduction as codegen
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuArray, GpuIndexError, gpu, to_device, uint32,
)
from cthreads.runtime import reducer

U32, U64 = 2.0**-24, 2.0**-53
SIZES = [1, 2, 3, 4, 5, 63, 65, 1000, 4097, 70_001]


@Gpu.func
def fadd(a: float, b: float) -> float:
    return a + b


@Gpu.func
def fmax(a: float, b: float) -> float:
    return max(a, b)


@Gpu.func
def iadd(a: int, b: int) -> int:
    return a + b


@Gpu.func
def uadd(a: uint32, b: uint32) -> uint32:
    return a + b


@Gpu.func
def imin(a: int, b: int) -> int:
    return min(a, b)


@Gpu.func
def either(a: bool, b: bool) -> bool:
    return a or b


@Gpu
def times(n: int, k: list[float], x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = k[0] * x[i]


@Gpu
def double(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = 2.0 * y[i]


@Gpu
def poke_past_end(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i + 1] = 7.0          # the last index is out of range


@pytest.fixture(params=["one-pass", "old"])
def form(request, device_name):
    red = reducer._reducer_now()
    saved = red.form
    red.form = "new" if request.param == "one-pass" else "old"
    yield request.param
    red.form = saved


def tolerance(x: np.ndarray) -> float:
    """Rounding bound of a float sum of ``x`` on this device, in either form: per value its
    group of four (2), its thread's sequential fold, a left-over element (1) and a tree
    (log2 of the workgroup) per pass (the one-pass form's second level: the last
    workgroup's sequential fold of the partials and its tree), then init (1)."""
    red = reducer._reducer_now()
    log = int(math.log2(red.size))
    passes = codegen.plan_passes(x.size, red.size, *red.shape)
    depth = 1 + sum(2 + -(-p.quads // (p.groups * red.size)) + 1 + log for p in passes)
    depth += -(-passes[0].groups // red.size) + log       # the one-pass finish
    unit = U64 if x.dtype == np.float64 else U32
    return depth * unit * float(np.abs(x.astype(np.float64)).sum())


# -- values against numpy ---------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_0d_results_match_numpy(form, n):
    rng = np.random.default_rng(n)
    xi = rng.integers(-8, 9, n).astype(np.int32)
    for dt in (np.float32, np.float64):
        x = rng.random(n).astype(dt)
        d = to_device(x)
        r = fadd.reduce(d, to_device=True)
        assert isinstance(r, GpuArray) and r.shape == () and r.dtype == dt and r.size == 1
        assert abs(r.item() - float(x.astype(np.float64).sum())) <= tolerance(x)
        assert r.item() == fadd.reduce(d)                    # the number: the same bits
        assert fmax.reduce(d, to_device=True).item() == float(x.max())
    assert iadd.reduce(to_device(xi), to_device=True).item() == int(xi.sum())
    assert imin.reduce(xi, to_device=True).item() == int(xi.min())
    big = np.arange(n, dtype=np.int64) * 2**33
    assert iadd.reduce(to_device(big), to_device=True).item() == int(big.sum())
    xu = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    got = uadd.reduce(to_device(xu), to_device=True)
    assert got.dtype == np.uint32 and got.item() == int(xu.astype(np.uint64).sum()) % 2**32
    flags = xi > 6
    assert either.reduce(flags, to_device=True).item() is bool(flags.any())


def test_every_input_form(form):
    x = np.arange(1, 2001, dtype=np.float32)
    want = float(x.sum())
    assert fadd.reduce(x.tolist(), to_device=True).item() == want      # a list
    assert fadd.reduce(x, to_device=True).item() == want               # numpy, uploaded
    d = to_device(x.reshape(40, 50))
    assert fadd.reduce(d, to_device=True).item() == want               # N-D: every element
    assert fadd.reduce(d[8:], to_device=True).item() == float(x[400:].sum())   # a view
    y = x.copy()
    with GpuArena() as arena:
        arena.bind(y=y)
        assert fadd.reduce(y, to_device=True).item() == want           # resident
    assert np.array_equal(y, x)                                        # only read


def test_results_are_deterministic_and_forms_agree_within_rounding(form):
    x = np.random.default_rng(1).standard_normal(100_003).astype(np.float32)
    d = to_device(x)
    first = fadd.reduce(d)
    assert all(fadd.reduce(d) == first for _ in range(5))
    assert all(fadd.reduce(d, to_device=True).item() == first for _ in range(5))
    assert abs(first - float(x.astype(np.float64).sum())) <= tolerance(x)


def test_init_and_empty_input(form):
    assert fadd.reduce([2.5], 1, to_device=True).item() == 3.5
    assert imin.reduce(np.arange(5, dtype=np.int32), -3, to_device=True).item() == -3
    e = fadd.reduce([], 2.5, to_device=True)
    assert e.shape == () and e.item() == 2.5
    with pytest.raises(ValueError, match="init"):
        fadd.reduce(to_device(np.zeros(0, np.float32)), to_device=True)
    with pytest.raises(TypeError, match="to_device"):
        fadd.reduce([1.0], to_device="yes")


# -- the result on the device: queued, ordered, used again -------------------------------------

def test_queued_results_keep_program_order(form):
    n = 3000
    x = np.random.default_rng(2).integers(-9, 10, n).astype(np.float32)
    d = to_device(x)
    held = []
    for _ in range(6):                      # reduce, double, reduce, ... nothing waited for
        held.append(fadd.reduce(d, to_device=True))
        gpu(double, n, d)
    want = float(x.sum())
    assert [r.item() for r in held] == [want * 2**k for k in range(6)]
    assert np.array_equal(d.numpy(), x * 64)


def test_a_0d_result_feeds_a_launch_and_another_reduce(form):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    d = to_device(x)
    total = fadd.reduce(d, to_device=True)
    out = to_device(np.zeros(n, np.float32))
    gpu(times, n, total.reshape(1), d, out)          # a 1-element view: no copy
    assert np.array_equal(out.numpy(), x * float(x.sum()))
    assert fadd.reduce(total) == float(x.sum())      # a 0-d array reduces to its one element
    again = fadd.reduce(total, 1.0, to_device=True)
    assert again.item() == float(x.sum()) + 1.0
    assert float(total) == int(total) == float(x.sum())
    with pytest.raises(TypeError, match="0-d"):
        len(total)
    with pytest.raises(ValueError, match="elements"):
        d.item()
    assert "shape=()" in repr(total)


def test_a_writers_bounds_error_travels_to_the_result(form):
    n = 500
    y = to_device(np.zeros(n, np.float32))
    gpu(poke_past_end, n, y)
    r = fadd.reduce(y, to_device=True)
    with pytest.raises(GpuIndexError, match="poke_past_end"):
        r.numpy()
    assert fadd.reduce(y) == 7.0 * (n - 1)           # reported once; the rest was written


def test_axis_with_to_device_gives_gpuarrays(form):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = fadd.reduce(x, axis=1, to_device=True)
    assert isinstance(got, GpuArray) and np.array_equal(got.numpy(), x.sum(axis=1))
    got = fadd.reduce(to_device(x), axis=0, to_device=True)
    assert np.array_equal(got.numpy(), x.sum(axis=0))


def test_past_the_binding_limit(form):
    # 4096-byte bindings: 1024 float32 per part; split data takes the pass-per-level form
    x = np.random.default_rng(3).integers(-9, 10, 5000).astype(np.float32)
    with config.override(binding_bytes=4096):
        assert fadd.reduce(x, to_device=True).item() == float(x.sum())
        d = to_device(x)
        assert len(d._slot.parts) == 5
        assert fadd.reduce(d, to_device=True).item() == float(x.sum())
        assert fadd.reduce(d) == float(x.sum())


# -- the one-pass form's caches -----------------------------------------------------------------

def test_repeated_sums_allocate_nothing(device_name):
    red = reducer._reducer_now()
    saved = red.form
    red.form = "new"
    try:
        d = to_device(np.ones(50_000, np.float32))
        fadd.reduce(d)
        fadd.reduce(d, 1.0)
        pool = red.queue.pool
        made, plans = pool.allocations, len(red.plans)
        for _ in range(10):
            assert fadd.reduce(d) == 50_000.0
            assert fadd.reduce(d, 1.0) == 50_001.0
        assert pool.allocations == made and len(red.plans) == plans
    finally:
        red.form = saved


def test_one_pass_shader_refuses_the_loop_probe():
    text = "fn f(a: f32, b: f32) -> f32 { return a + b; }"
    wgsl = codegen.reduction_wgsl("f", "float", text, "shared", 64, ticket=True)
    assert "atomicAdd(&ct_ticket[0], 1u)" in wgsl
    assert "ct_ticket" not in codegen.reduction_wgsl("f", "float", text, "shared", 64)
    with pytest.raises(ValueError, match="probe"):
        codegen.reduction_wgsl("f", "float", text, "shared", 64, probe=True, ticket=True)


def test_the_form_setting():
    env = {"HOME": "/home/someone"}
    assert config.from_environ(env).reduce_form == ""
    assert config.from_environ(dict(env, CTHREADS_REDUCE_FORM="Old")).reduce_form == "old"
    assert config.from_environ(dict(env, CTHREADS_REDUCE_FORM="new")).reduce_form == "new"
    bad = config.from_environ(dict(env, CTHREADS_REDUCE_FORM="two"))
    assert any("CTHREADS_REDUCE_FORM" in p for p in bad.problems())


def test_64_bit_values_combine_by_subgroup_shuffles_in_the_one_pass_form(form):
    red = reducer._reducer_now()
    x = np.random.default_rng(4).random(30_001)
    big = np.arange(30_001, dtype=np.int64) * 2**33 - 7
    assert abs(fadd.reduce(x) - math.fsum(x.tolist())) <= tolerance(x)
    assert iadd.reduce(big) == int(big.sum())
    for ty in ("float64", "int64"):
        want = "subgroup" if form == "one-pass" and "subgroup" in red.ctx.features and \
            "shader-int64" in red.ctx.features else "shared"
        assert reducer._variant(red, ty, 8) == want
        # forced, both variants give numpy's value
        for variant in {"shared", want}:
            got = reducer.run_reduction(iadd.reduce_op(("float", "int64")), big, None, "iadd",
                                        variant)
            assert got == int(big.sum())


def test_the_default_form_on_cpu_drivers(device_name):
    red = reducer._reducer_now()
    saved = red.form
    red.form = ""
    try:
        one = reducer._one_pass_form
        assert not one(red, True, 1, 1000, 4) and not one(red, False, 2, 1000, 4)
        if red.ctx.is_cpu:
            assert one(red, False, 1, 1000, 4) and one(red, False, 1, 10**6, 8)
            assert not one(red, False, 1, 10**6, 4)      # 256 workgroups: a pass per level
        else:
            assert one(red, False, 1, 10**6, 4)
        x = np.random.default_rng(5).integers(-9, 10, 10**6).astype(np.float32)
        assert fadd.reduce(x) == float(x.sum())
        assert fadd.reduce(x, to_device=True).item() == float(x.sum())
    finally:
        red.form = saved


def test_writes_after_the_call_do_not_reach_its_result(form):
    x = np.arange(1, 1001, dtype=np.float32)
    d = to_device(x)
    r = fadd.reduce(d, to_device=True)
    d.set(np.zeros(1000, np.float32))          # an upload after the queued reduction
    s = fadd.reduce(d, to_device=True)
    r2 = fadd.reduce(x, to_device=True)
    r2.set(np.array(5.0, np.float32))          # overwrites the value its reduction wrote
    assert (r.item(), s.item(), r2.item()) == (500500.0, 0.0, 5.0)


def test_a_plan_made_inside_capture_refuses_only_the_readback(device_name):
    from cthreads.gpu import capture
    from cthreads.errors import GpuInvalidArgument
    red = reducer._reducer_now()
    saved = red.form
    red.form = "new"
    try:
        d = to_device(np.ones(777, np.float32))         # a size no plan exists for yet
        with capture():
            with pytest.raises(GpuInvalidArgument, match="reads results back"):
                fadd.reduce(d)
        assert fadd.reduce(d) == 777.0                   # the plan's ticket started at zero
        assert fadd.reduce(d, to_device=True).item() == 777.0
    finally:
        red.form = saved


def test_a_device_result_sum_is_captured_and_replayed(device_name):
    from cthreads.gpu import capture
    red = reducer._reducer_now()
    saved = red.form
    red.form = "new"
    try:
        x = np.arange(1, 3001, dtype=np.float32)
        d = to_device(x)
        with capture() as graph:
            gpu(double, 3000, d)
            r = fadd.reduce(d, to_device=True)      # recorded: it reads nothing back
        graph.replay().join()
        assert r.item() == 2 * float(x.sum())
        graph.replay(times=2).join()
        assert r.item() == 8 * float(x.sum())
        assert np.array_equal(d.numpy(), x * 8)
    finally:
        red.form = saved


def test_many_device_results_held_at_once_reuse_their_buffers(device_name):
    """A list of 0-d results held together, dropped, then made again: the second round takes
    every buffer from the pool (small buckets keep more than KEEP_PER_BUCKET), and every
    result is numpy's."""
    from cthreads.backend import buffers
    x = np.arange(3000, dtype=np.float32)
    d = to_device(x)
    pool = reducer._reducer_now().queue.pool
    held = 3 * buffers.KEEP_PER_BUCKET
    results = [fadd.reduce(d, float(k), to_device=True) for k in range(held)]
    assert [r.item() for r in results] == [float(x.sum()) + k for k in range(held)]
    del results
    made = pool.allocations
    results = [fadd.reduce(d, float(k), to_device=True) for k in range(held)]
    assert [r.item() for r in results] == [float(x.sum()) + k for k in range(held)]
    # (a GPU may take one more staging buffer for a read-back meanwhile; without the small
    # buckets' retention the results alone make 2 * KEEP_PER_BUCKET new buffers)
    assert pool.allocations - made <= 2
    assert buffers.keep_per_bucket(buffers.MIN_CAPACITY) > held
    assert buffers.keep_per_bucket(64 << 20) == buffers.KEEP_PER_BUCKET


@pytest.mark.parametrize("alone", [False, True])
def test_queued_device_results_under_the_gpus_batching_rule(device_name, monkeypatch, alone):
    """The GPUs' rule for heavy dispatches (every dispatch counted heavy here): device results
    queued back to back gather in few submissions (``CTHREADS_KEEP_FED=old``: each alone), the
    scratch of each call going back to the pool without submitting the batch; every result is
    numpy's, whether held or dropped, with the input changing in between."""
    from cthreads.backend import dispatch, get_queue
    q = get_queue()
    monkeypatch.setattr(q, "keep_fed", True)
    monkeypatch.setattr(q, "keep_fed_alone", alone)
    monkeypatch.setattr(dispatch, "HEAVY_GROUPS", 1)
    x = np.arange(5000, dtype=np.float32)
    d = to_device(x)
    held = [fadd.reduce(d, float(k), to_device=True) for k in range(12)]
    last = None
    for _ in range(12):
        last = fadd.reduce(d, to_device=True)          # the previous one dropped
    m = to_device(x.reshape(50, 100))
    rows = [fadd.reduce(m, axis=1) for _ in range(6)]
    total = float(x.astype(np.float64).sum())
    assert [r.item() for r in held] == [total + k for k in range(12)]
    assert last.item() == total
    for r in rows:
        np.testing.assert_allclose(r.numpy(), x.reshape(50, 100).astype(np.float64).sum(axis=1),
                                   rtol=1e-6)
