"""``simulate`` of kernels with shared() arrays and barriers (issue 21, item 10).

Each kernel runs three ways: ``simulate`` (the threads of a workgroup taking turns between
barriers), the device, and an independent numpy computation; all three must agree. The other
tests check what simulate promises beyond that: fresh shared arrays per workgroup, each thread's
own index builtins, atomics under the interleaving, a failing thread ending the run at once with
its note, and a clear error for threads that wait at different barriers.
"""

from __future__ import annotations

import threading
import types

import numpy as np
import pytest

from examples import samples
from cthreads.lang import simulator
from cthreads.gpu import (BlockDim, BlockIdx, GlobalIdx, Gpu, GpuKernelError, GridDim, ThreadIdx,
                          atomic_add, atomic_compare_exchange, atomic_max, float64, gpu, shared)
from cthreads.sync import Barrier, __sync_threads

from examples import histogram as hist_example

from . import func_kernels as fk
from . import nd_kernels as nk
from . import width_kernels as wk

TILE = 8
API_TILE = 64                 # docs/api.md's TILE


def _simulate_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("cthreads-simulate-")]


# --------------------------------------------------------------- the docs' shared-memory kernels
@Gpu
def block_sums(n: int, x: list[float], out: list[float]) -> None:
    # docs/language.md, "Workgroups, barriers and shared memory" (as written there)
    tile: list[float] = shared(64)
    i = GlobalIdx.x
    t = ThreadIdx.x
    if i >= n:
        return
    tile[t] = x[i]
    __sync_threads()
    s = 32
    while s > 0:
        if t < s and i + s < n:
            tile[t] += tile[t + s]
        __sync_threads()
        s //= 2
    if t == 0:
        out[BlockIdx.x] = tile[0]


def test_docs_tree_reduction_with_early_return(device_name):
    n = 64 * 5 + 17                     # the last workgroup: 17 threads live, 47 returned
    x = np.array([float(k % 13) - 6.0 for k in range(n)], np.float32)
    sim = [0.0] * 6
    block_sums.simulate(n, x.tolist(), sim)
    dev = np.zeros(6, np.float32)
    gpu(block_sums, n, x, dev).join()
    expect = [float(x[b * 64:(b + 1) * 64].sum()) for b in range(6)]   # small ints: exact
    assert sim == expect
    assert dev.tolist() == expect
    assert _simulate_threads() == []


@Gpu
def tile_copy(n: int, x: list[float], out: list[float]) -> None:
    # docs/api.md, "Shared memory, barriers and atomics": its tile kernel, completed
    tile: list[float] = shared(API_TILE)      # per-workgroup array, zeros at the start
    i = GlobalIdx.x
    t = ThreadIdx.x
    if i < n:
        tile[63 - t] = x[i]
    Barrier.arrive_and_wait()
    if i < n:
        out[i] = tile[63 - t] + tile[t]       # its own value plus the mirrored thread's


def test_api_tile_kernel_with_the_class_barrier(device_name):
    n = 150
    x = np.arange(n, dtype=np.float32)
    sim = [0.0] * n
    tile_copy.simulate(n, x.tolist(), sim)
    dev = np.zeros(n, np.float32)
    gpu(tile_copy, n, x, dev).join()
    expect = np.zeros(n)
    for i in range(n):
        b, t = divmod(i, 64)
        mirror = b * 64 + 63 - t
        expect[i] = x[i] + (x[mirror] if mirror < n else 0.0)   # never-written shared: 0
    assert sim == expect.tolist()
    assert dev.tolist() == expect.tolist()


def test_examples_histogram_private(device_name):
    rng = np.random.default_rng(3)
    data = np.clip(rng.normal(100.0, 30.0, 5000), 0, hist_example.BINS - 1).astype(np.int32)
    groups = 3
    sim = [0] * hist_example.BINS
    hist_example.histogram_private.simulate(groups * 64, data.size, data.tolist(), sim)
    dev = hist_example.run_private(data, groups)
    expect = np.bincount(data, minlength=hist_example.BINS)
    assert sim == expect.tolist()
    assert dev.tolist() == expect.tolist()


def test_device_function_given_the_shared_array(device_name):
    n = 100
    x = [float(k * k % 7) for k in range(n)]
    sim = [0.0] * n
    fk.tile_sums.simulate(n, x, sim)
    dev = [0.0] * n
    gpu(fk.tile_sums, n, x, dev).join()
    expect = []
    for i in range(n):
        b, t = divmod(i, 64)
        row = x[b * 64:(b + 1) * 64] + [0.0] * 64
        expect.append((row[t - 1] if t > 0 else 0.0) + row[t] + (row[t + 1] if t < 63 else 0.0))
    assert sim == expect and dev == expect


@Gpu
def staged(n: int, out: list[int]) -> None:
    # thread k of each workgroup (k < 8) returns in step k of a loop with a barrier
    cnt: list[int] = shared(8)
    t = ThreadIdx.x
    for step in range(8):
        if t == step:
            out[GlobalIdx.x] = cnt[step - 1] if step > 0 else -1
            return
        atomic_add(cnt, step, 1)
        __sync_threads()
    out[GlobalIdx.x] = cnt[7]


def test_returned_threads_count_as_arrived_at_later_barriers(device_name):
    n = 128
    sim = [0] * n
    staged.simulate(n, sim)
    dev = [0] * n
    gpu(staged, n, dev).join()
    # step k: the 63 - k threads above k count; thread k reads the count of step k - 1
    one = [-1] + [64 - k for k in range(1, 8)] + [56] * 56
    assert sim == one * 2
    assert dev == one * 2


def test_kernels_without_barriers_keep_the_sequential_path(monkeypatch):
    def refuse(*args):
        raise AssertionError("a kernel without barriers started simulated threads")

    monkeypatch.setattr(simulator, "_Cooperative", refuse)
    before = threading.active_count()
    old = [-1] * 70
    shared_counter.simulate(70, old)                 # shared(), no barrier
    assert old == list(range(64)) + list(range(6))   # in order, per workgroup
    y = [1.0] * 5
    samples.saxpy.simulate(5, 2.0, [1.0, 2.0, 3.0, 4.0, 5.0], y)
    assert y == [3.0, 5.0, 7.0, 9.0, 11.0]
    assert threading.active_count() == before


# ------------------------------------------------------------------------------ 2-D workgroups
@Gpu(workgroup=(8, 8))
def matmul_tiled(n: int, m: int, k: int, a: list[list[float]], b: list[list[float]],
                 c: list[list[float]]) -> None:
    ta: list[float] = shared(64)
    tb: list[float] = shared(64)
    col: int = GlobalIdx.x
    row: int = GlobalIdx.y
    tx: int = ThreadIdx.x
    ty: int = ThreadIdx.y
    acc: float = 0.0
    for base in range(0, k, TILE):
        ta[ty * TILE + tx] = a[row][base + tx] if row < n and base + tx < k else 0.0
        tb[ty * TILE + tx] = b[base + ty][col] if col < m and base + ty < k else 0.0
        __sync_threads()
        for q in range(TILE):
            acc += ta[ty * TILE + q] * tb[q * TILE + tx]
        __sync_threads()
    if row < n and col < m:
        c[row][col] = acc


def test_2d_tiled_matmul(device_name):
    n, m, k = 19, 13, 21                 # no size a multiple of the tile
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (n, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, m)).astype(np.float32)
    sim = [[0.0] * m for _ in range(n)]
    matmul_tiled.simulate(n, m, k, a.tolist(), b.tolist(), sim, threads=(m, n))
    dev = np.zeros((n, m), np.float32)
    gpu(matmul_tiled, n, m, k, a, b, dev, threads=(m, n)).join()
    expect = a.astype(np.float64) @ b.astype(np.float64)      # small ints: exact
    assert np.array_equal(np.array(sim), expect)
    assert np.array_equal(dev, expect)


@Gpu(workgroup=(16, 16))
def indexes_16x16(w: int, h: int, out: list[list[int]]) -> None:
    # every thread writes its index builtins into the shared tile, a barrier, then each
    # thread reads the values of the thread mirrored in the workgroup
    tile: list[int] = shared(256)
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    t: int = ThreadIdx.y * 16 + ThreadIdx.x
    tile[t] = (ThreadIdx.x + 16 * ThreadIdx.y + 256 * BlockIdx.x + 4096 * BlockIdx.y
               + 65536 * (BlockDim.x + BlockDim.y + GridDim.x + GridDim.y))
    __sync_threads()
    if x < w and y < h:
        out[y, x] = tile[255 - t]


def test_each_thread_reads_its_own_index_builtins_in_16x16_workgroups(device_name):
    w, h = 37, 21
    sim = np.zeros((h, w), np.int64)
    indexes_16x16.simulate(w, h, sim, threads=(w, h))
    dev = np.zeros((h, w), np.int32)
    gpu(indexes_16x16, w, h, dev, threads=(w, h)).join()
    gx, gy = -(-w // 16), -(-h // 16)
    expect = np.zeros((h, w), np.int64)
    for y in range(h):
        for x in range(w):
            tx, ty = 15 - x % 16, 15 - y % 16          # the mirrored thread
            expect[y, x] = (tx + 16 * ty + 256 * (x // 16) + 4096 * (y // 16)
                            + 65536 * (16 + 16 + gx + gy))
    assert np.array_equal(sim, expect)
    assert np.array_equal(dev, expect)


def test_2d_tile_transpose(device_name):
    n = 21
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    sim = np.zeros((n, n))
    nk.tile_transpose.simulate(n, a.astype(np.float64), sim, threads=(n, n))
    dev = np.zeros((n, n), np.float32)
    gpu(nk.tile_transpose, n, a, dev, threads=(n, n)).join()
    assert np.array_equal(sim, a.T)
    assert np.array_equal(dev, a.T)


# -------------------------------------------------------------------------- atomics and shared
@Gpu
def ranks_and_maxima(n: int, v: list[int], rank: list[int], best: list[int],
                     winner: list[int]) -> None:
    count: list[int] = shared(1)
    top: list[int] = shared(1)
    claim: list[int] = shared(1)
    i = GlobalIdx.x
    if i >= n:
        return
    rank[i] = atomic_add(count, 0, 1)          # 0 .. live threads - 1, each exactly once
    atomic_max(top, 0, v[i])
    if atomic_compare_exchange(claim, 0, 0, 1) == 0:
        winner[BlockIdx.x] += 1                # exactly one thread per workgroup
    __sync_threads()
    if ThreadIdx.x == 0:
        best[BlockIdx.x] = top[0] * 1000 + count[0]


def _check_ranks(n, v, rank, best, winner):
    for b in range(-(-n // 64)):
        live = min(64, n - b * 64)
        assert sorted(rank[b * 64:b * 64 + live]) == list(range(live))
        assert best[b] == max(v[b * 64:b * 64 + live]) * 1000 + live
        assert winner[b] == 1


def test_atomics_on_shared_arrays_under_the_interleaving(device_name):
    n = 64 * 3 + 5
    v = [(k * 37) % 101 for k in range(n)]
    sim = ([0] * n, [0] * 4, [0] * 4)
    ranks_and_maxima.simulate(n, v, *sim)
    _check_ranks(n, v, *sim)
    dev = ([0] * n, [0] * 4, [0] * 4)
    gpu(ranks_and_maxima, n, v, *dev).join()
    _check_ranks(n, v, *dev)
    assert dev[1] == sim[1] and dev[2] == sim[2]      # ranks: any order on the device


@Gpu
def shared_counter(n: int, old: list[int]) -> None:
    # shared() without a barrier: fresh zeros for each workgroup all the same
    c: list[int] = shared(1)
    i = GlobalIdx.x
    if i < n:
        old[i] = atomic_add(c, 0, 1)


def test_shared_without_barriers_is_per_workgroup(device_name):
    n = 200
    sim = [-1] * n
    shared_counter.simulate(n, sim)
    dev = [-1] * n
    gpu(shared_counter, n, dev).join()
    for got in (sim, dev):
        for b in range(4):
            live = min(64, n - b * 64)
            assert sorted(got[b * 64:b * 64 + live]) == list(range(live))


@Gpu
def shared_zeros(n: int, f: list[float], k: list[int], z: list[bool]) -> None:
    a: list[float] = shared(64)
    b: list[int] = shared(64)
    c: list[bool] = shared(64)
    i = GlobalIdx.x
    __sync_threads()
    if i < n:
        f[i] = a[ThreadIdx.x]
        k[i] = b[ThreadIdx.x]
        z[i] = c[ThreadIdx.x]


def test_shared_arrays_start_as_zeros_of_their_element_type():
    f, k, z = [None] * 3, [None] * 3, [None] * 3
    shared_zeros.simulate(3, f, k, z)
    assert [type(v) for v in f + k + z] == [float] * 3 + [int] * 3 + [bool] * 3
    assert f == [0.0] * 3 and k == [0] * 3 and z == [False] * 3


# ----------------------------------------------------------------------------------- float64
def test_float64_lists(device_name):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(64 * 3 + 9)
    sim = [float64(0.0)] * 4
    wk.block_sums64.simulate([float64(v) for v in x], sim)
    dev = np.zeros(4)
    gpu(wk.block_sums64, x, dev).join()
    assert sim == dev.tolist()            # the same tree in IEEE double: bit for bit
    expect = [x[b * 64:(b + 1) * 64].sum() for b in range(4)]
    assert np.allclose(sim, expect, rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------------------------------ failures
@Gpu(boundscheck=False)
def fails_in_one_thread(n: int, x: list[float], out: list[float]) -> None:
    tile: list[float] = shared(64)
    i = GlobalIdx.x
    t = ThreadIdx.x
    tile[t] = x[i] if i < n else 0.0
    __sync_threads()
    if i == 69:
        out[n + 1000] = 1.0                    # out of range in one thread of workgroup 1
    __sync_threads()
    out[i] = tile[(t + 1) % 64]


def test_an_exception_in_one_thread_ends_the_run_with_its_note():
    n = 256
    x = [1.0] * n
    out = [0.0] * n
    result = {}

    def go():
        try:
            fails_in_one_thread.simulate(n, x, out)
        except IndexError as exc:
            result["exc"] = exc

    runner = threading.Thread(target=go)
    runner.start()
    runner.join(120)                    # a hang would leave it running
    assert not runner.is_alive()
    exc = result["exc"]
    assert "GlobalIdx.x = 69 of kernel fails_in_one_thread" in "".join(exc.__notes__)
    assert out[:64] == [1.0] * 64 and out[64:] == [0.0] * (n - 64)   # workgroup 1 stopped
    assert _simulate_threads() == []


def test_an_exception_in_a_2d_workgroup_names_the_thread():
    n, m, k = 19, 13, 21
    a = [[1.0] * k for _ in range(n)]
    b = [[1.0] * m for _ in range(k)]
    c = [[0.0] * m for _ in range(10)]           # 10 rows where the launch writes 19
    with pytest.raises(IndexError) as info:
        matmul_tiled.simulate(n, m, k, a, b, c, threads=(m, n))
    # rows 8..15 are workgroup (0, 1)'s; its first thread past row 9, x fastest, is (0, 10)
    assert "GlobalIdx = (0, 10, 0) of kernel matmul_tiled" in "".join(info.value.__notes__)
    # workgroups (0, 0), (1, 0) finished; (0, 1) wrote rows 8, 9 of its columns; (1, 1) never ran
    assert c[:8] == [[21.0] * m] * 8
    assert c[8] == c[9] == [21.0] * 8 + [0.0] * (m - 8)
    assert _simulate_threads() == []


def test_threads_waiting_at_different_barriers_raise_naming_the_lines():
    # the compiler refuses such kernels; the engine still checks (here a plain function)
    def diverges(out):
        if ThreadIdx.x < 2:
            __sync_threads()
        else:
            __sync_threads()
        out[GlobalIdx.x] = 1

    first = diverges.__code__.co_firstlineno
    program = types.SimpleNamespace(barrier_lines=(first + 2, first + 4), shared_arrays=())
    launch = simulator.Launch("diverges", (4, 1, 1), (1, 1, 1), True, program)
    out = [0] * 4
    with pytest.raises(GpuKernelError) as info:
        simulator.run(diverges, (out,), launch)
    text = str(info.value)
    assert "kernel diverges" in text and "different barriers" in text
    assert f"line {first + 2}" in text and f"line {first + 4}" in text
    assert info.value.lineno == first + 4
    assert out == [0] * 4
    assert _simulate_threads() == []


def test_plain_python_calls_keep_their_meaning():
    # outside simulate the barrier is an error, shared() a list of zeros
    with pytest.raises(RuntimeError, match="simulate"):
        __sync_threads()
    with pytest.raises(RuntimeError, match="simulate"):
        Barrier.arrive_and_wait()
    assert shared(3) == [0, 0, 0] and simulator.current() is None
