"""v3 section 5: ``capture()`` records launches, ``GpuGraph.replay()`` runs them again in one
submission. Each replay is checked against numpy or against the same calls launched one by
one; each refusal against its documented error and the caller's data unchanged."""

from __future__ import annotations

import asyncio
import gc
import pickle
import threading

import numpy as np
import pytest

from cthreads.backend import replay as backend_replay
from cthreads.gpu import (
    GlobalIdx, Gpu, GpuArena, GpuDeviceError, GpuGraph, GpuIndexError, GpuInvalidArgument, GpuJob,
    GpuUseAfterDestroy, Random, argsort, capture, gpu, matmul, shutdown, sort, to_device, vec3,
)


@Gpu
def step(n: int, dt: float, p: list[float], v: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        p[i] = p[i] + dt * v[i]


@Gpu
def scale(n: int, a: float, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = a * x[i]


@Gpu
def add_rows(a: list[list[float]], b: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        b[y, x] = b[y, x] + 2.0 * a[y, x]


@Gpu
def poke(k: int, a: list[float]) -> None:
    i: int = GlobalIdx.x
    if i == 0:
        a[k] = a[k] + 1.0


@Gpu
def noise(seed: int, n: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng: Random = Random(seed, i)
        out[i] = out[i] + rng.random()


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu
def shout(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i == 0:
        print("x0", x[0])


def _data(n, seed=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_replay_matches_numpy_and_one_by_one(device_name):
    n = 1000
    p0, v0 = _data(n)
    p, v = to_device(p0), to_device(v0)
    with capture() as graph:
        for _ in range(100):
            gpu(step, n, 0.25, p, v)
    assert isinstance(graph, GpuGraph) and graph.launches == 100
    np.testing.assert_array_equal(p.numpy(), p0)          # recorded, not run
    job = graph.replay()
    assert isinstance(job, GpuJob)
    job.join()
    q = to_device(p0)
    for _ in range(100):
        gpu(step, n, 0.25, q, v)
    ref = p0.copy()
    for _ in range(100):
        ref = (ref + np.float32(0.25) * v0).astype(np.float32)
    np.testing.assert_array_equal(p.numpy(), q.numpy())
    np.testing.assert_allclose(p.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_times_repeats_the_sequence(device_name):
    n = 257
    x = to_device(np.ones(n, np.float32))
    with capture() as graph:
        gpu(scale, n, 2.0, x)
        gpu(scale, n, 1.5, x)
    graph.replay(times=3).join()
    np.testing.assert_allclose(x.numpy(), np.full(n, 3.0 ** 3, np.float32))
    graph.replay().join()
    np.testing.assert_allclose(x.numpy(), np.full(n, 3.0 ** 4, np.float32))


def test_times_past_one_submission(device_name, monkeypatch):
    monkeypatch.setattr(backend_replay, "MAX_DISPATCHES", 4)
    n = 64
    p0, v0 = _data(n)
    p, v = to_device(p0), to_device(v0)
    with capture() as graph:
        for _ in range(3):
            gpu(step, n, 1.0, p, v)
    graph.replay(times=5).join()           # 15 dispatches, at most 3 per submission
    np.testing.assert_allclose(p.numpy(), p0 + 15 * v0, rtol=1e-5, atol=1e-5)


def test_kernels_interleaved_with_changing_scalars(device_name):
    n = 300
    p0, v0 = _data(n)
    p, v = to_device(p0), to_device(v0)
    with capture() as graph:
        for k in range(6):
            gpu(step, n, 0.1 * (k + 1), p, v)
            gpu(scale, n, 1.0 + 0.01 * k, p)
            gpu(scale, n, 0.5, v)
    graph.replay().join()
    ref_p, ref_v = p0.copy(), v0.copy()
    for k in range(6):
        ref_p = ref_p + np.float32(0.1 * (k + 1)) * ref_v
        ref_p = ref_p * np.float32(1.0 + 0.01 * k)
        ref_v = ref_v * np.float32(0.5)
    np.testing.assert_allclose(p.numpy(), ref_p, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v.numpy(), ref_v, rtol=1e-6)


def test_two_d_launches(device_name):
    a0 = np.arange(19 * 33, dtype=np.float32).reshape(19, 33)
    a, b = to_device(a0), to_device(np.zeros((19, 33), np.float32))
    with capture() as graph:
        for _ in range(4):
            gpu(add_rows, a, b, threads=(33, 19))
    graph.replay(times=2).join()
    np.testing.assert_allclose(b.numpy(), 16 * a0)


def test_arena_lists_and_views(device_name):
    n = 128
    x = np.ones(n, np.float32)
    d = to_device(np.arange(2 * n, dtype=np.float32))
    with GpuArena() as arena:
        arena.bind(x=x)
        with capture() as graph:
            gpu(scale, n, 3.0, x)                  # the arena list
            gpu(scale, n, 2.0, d[n:])             # a view of the second half
            gpu(step, n, 1.0, d.reshape(2, n)[0], x)   # a row view, reading the arena list
        np.testing.assert_array_equal(x, np.ones(n, np.float32))
        graph.replay().join()                      # the join downloads the arena list
        np.testing.assert_array_equal(x, np.full(n, 3.0, np.float32))
        ref = np.arange(2 * n, dtype=np.float32)
        ref[n:] *= 2.0
        ref[:n] += 3.0
        np.testing.assert_array_equal(d.numpy(), ref)
        graph.replay().join(download=False)
        arena.sync()
        np.testing.assert_array_equal(x, np.full(n, 9.0, np.float32))


def test_pending_launches_run_before_and_after_in_order(device_name):
    n = 100
    x = to_device(np.ones(n, np.float32))
    with capture() as graph:
        gpu(scale, n, 2.0, x)
    gpu(scale, n, 5.0, x)                      # queued, not joined
    graph.replay()
    gpu(scale, n, 7.0, x)                      # after the replay, with other scalars
    np.testing.assert_allclose(x.numpy(), np.full(n, 70.0, np.float32))


def test_random_streams_match_one_by_one_runs(device_name):
    n = 200
    a, b = to_device(np.zeros(n, np.float32)), to_device(np.zeros(n, np.float32))
    with capture() as graph:
        for seed in (1, 2, 3):
            gpu(noise, seed, n, a)
    graph.replay(times=2).join()
    for _ in range(2):
        for seed in (1, 2, 3):
            gpu(noise, seed, n, b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert float(np.abs(a.numpy()).sum()) > 0


def test_bounds_failure_names_the_first_failing_launch(device_name):
    n = 16
    x = to_device(np.zeros(n, np.float32))
    with capture() as graph:
        gpu(poke, 0, x)
        gpu(poke, 3, x)
        gpu(poke, n + 5, x)                   # recorded launch #3: out of range
        gpu(poke, n + 9, x)                   # and #4
    with pytest.raises(GpuIndexError) as info:
        graph.replay().join()
    text = str(info.value)
    assert "index 21 is out of range for list 'a' of length 16" in text
    assert "recorded launch #3 of 4" in text
    assert "a[k] = a[k] + 1.0" in text
    with capture() as good:
        gpu(poke, 1, x)
    good.replay().join()                       # the status was reset after the report
    with pytest.raises(GpuIndexError):
        graph.replay().join()


def test_bounds_failure_reported_by_numpy(device_name):
    x = to_device(np.zeros(8, np.float32))
    with capture() as graph:
        gpu(poke, 8, x)
    graph.replay()
    with pytest.raises(GpuIndexError, match="recorded launch #1 of 1"):
        x.numpy()


def test_use_after_free_and_after_release(device_name):
    n = 32
    x = to_device(np.ones(n, np.float32))
    with capture() as graph:
        gpu(scale, n, 2.0, x)
    del x
    gc.collect()
    with pytest.raises(GpuUseAfterDestroy, match="recorded launch #1, scale\\(\\) parameter 'x'"):
        graph.replay()
    y = np.ones(n, np.float32)
    arena = GpuArena()
    arena.bind(y=y)
    with capture() as graph2:
        gpu(scale, n, 2.0, y)
    arena.release()
    with pytest.raises(GpuUseAfterDestroy, match="arena holding this list was released"):
        graph2.replay()
    np.testing.assert_array_equal(y, np.ones(n, np.float32))


def test_replay_after_shutdown(device_name):
    x = to_device(np.ones(8, np.float32))
    with capture() as graph:
        gpu(scale, 8, 2.0, x)
    graph.replay().join()
    shutdown()
    with pytest.raises(GpuUseAfterDestroy, match="shutdown"):
        graph.replay()


def test_host_list_refused_with_data_unchanged(device_name):
    n = 16
    host = np.ones(n, np.float32)
    before = host.copy()
    with capture() as graph:
        with pytest.raises(GpuInvalidArgument, match="scale\\(\\) parameter 'x'.*GpuArray or "
                           "bound in a GpuArena"):
            gpu(scale, n, 2.0, host)
        with pytest.raises(GpuInvalidArgument, match="scale\\(\\) parameter 'x'"):
            gpu(scale, n, 2.0, [1.0, 2.0])
    assert graph.launches == 0
    graph.replay().join()
    np.testing.assert_array_equal(host, before)


def test_other_device_work_refused_inside_capture(device_name):
    a = to_device(np.eye(4, dtype=np.float32))
    before = a.numpy()
    with capture() as graph:
        with pytest.raises(GpuInvalidArgument, match="reads results back to the host"):
            add.reduce(a)                                   # a Python number
        with pytest.raises(GpuInvalidArgument, match="inside capture\\(\\)"):
            sort(np.ones(4, np.float32))                    # a host input: an upload
        with pytest.raises(GpuInvalidArgument, match="inside capture\\(\\)"):
            matmul(a, np.eye(4, dtype=np.float32))          # a host operand: an upload
        with pytest.raises(GpuInvalidArgument, match="inside capture\\(\\)"):
            matmul(a, a, out=a)            # overlapping out: a device copy after the product
        with pytest.raises(GpuInvalidArgument, match="inside capture\\(\\)"):
            to_device(np.ones(4, np.float32))
        with pytest.raises(GpuInvalidArgument, match="inside capture\\(\\)"):
            a.numpy()
        job = gpu(scale, 16, 2.0, a.ravel())
        with pytest.raises(GpuInvalidArgument, match="join the job graph.replay\\(\\) returns"):
            job.join()
        with pytest.raises(GpuInvalidArgument, match="prints"):
            gpu(shout, 16, a.ravel())
        with pytest.raises(GpuInvalidArgument, match="timed"):
            gpu(scale, 16, 2.0, a.ravel(), timed=True)
    assert graph.launches == 1                     # the failed calls left nothing behind
    np.testing.assert_array_equal(a.numpy(), before)
    graph.replay().join()
    np.testing.assert_array_equal(a.numpy(), 2 * before)


def test_matmul_recorded_between_kernels(device_name):
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((8, 12)).astype(np.float32)
    b0 = rng.standard_normal((12, 5)).astype(np.float32)
    a, b = to_device(a0), to_device(b0)
    c = to_device(np.zeros((8, 5), np.float32))
    with capture() as graph:
        gpu(scale, 96, 2.0, a.ravel())
        matmul(a, b, out=c)
        gpu(scale, 40, 0.5, c.ravel())
        d = matmul(a, b)                           # a new GpuArray, written by each replay
        e = a @ b
    assert graph.launches == 5
    graph.replay().join()
    np.testing.assert_allclose(c.numpy(), 0.5 * ((2 * a0) @ b0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d.numpy(), (2 * a0) @ b0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(e.numpy(), (2 * a0) @ b0, rtol=1e-5, atol=1e-5)
    eager = matmul(to_device(a0), b, out=to_device(np.zeros((8, 5), np.float32)))
    np.testing.assert_allclose(eager.numpy(), a0 @ b0, rtol=1e-5, atol=1e-5)  # its uniform
    graph.replay(times=2).join()
    np.testing.assert_allclose(d.numpy(), (8 * a0) @ b0, rtol=1e-4, atol=1e-4)
    del e
    gc.collect()
    with pytest.raises(GpuUseAfterDestroy, match="recorded launch #5, matmul\\(\\) argument"):
        graph.replay()


def test_nested_capture_and_replay_inside_capture_refused(device_name):
    x = to_device(np.ones(4, np.float32))
    with capture() as outer:
        gpu(scale, 4, 2.0, x)
        with pytest.raises(GpuInvalidArgument, match="do not nest"):
            with capture():
                pass
        with pytest.raises(GpuInvalidArgument, match="inside its own capture"):
            outer.replay()
    with capture() as other:
        with pytest.raises(GpuInvalidArgument, match="inside capture"):
            outer.replay()
    assert other.launches == 0
    outer.replay().join()
    np.testing.assert_array_equal(x.numpy(), np.full(4, 2.0, np.float32))


def test_an_exception_discards_the_capture(device_name):
    x = to_device(np.ones(4, np.float32))
    with pytest.raises(ZeroDivisionError):
        with capture() as graph:
            gpu(scale, 4, 2.0, x)
            1 / 0
    with pytest.raises(GpuInvalidArgument, match="discarded"):
        graph.replay()
    gpu(scale, 4, 3.0, x).join()               # launches run again after the block
    np.testing.assert_array_equal(x.numpy(), np.full(4, 3.0, np.float32))


def test_await_the_replay(device_name):
    n = 50
    x = to_device(np.ones(n, np.float32))
    with capture() as graph:
        gpu(scale, n, 2.0, x)

    async def main():
        await graph.replay(times=4)

    asyncio.run(main())
    np.testing.assert_array_equal(x.numpy(), np.full(n, 16.0, np.float32))


@pytest.fixture
def two_devices(monkeypatch, device_name):
    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")    # lavapipe: two devices of one adapter
    yield
    shutdown()


def test_a_graph_belongs_to_its_device(two_devices):
    x = to_device(np.ones(8, np.float32))
    y = to_device(np.ones(8, np.float32), device=1)
    with capture() as graph:
        with pytest.raises(GpuInvalidArgument, match="graph belongs to"):
            gpu(scale, 8, 2.0, x, device=1)
        with pytest.raises(GpuInvalidArgument, match="lives on"):
            gpu(scale, 8, 2.0, y)
    assert graph.launches == 0
    with capture(device=1) as graph1:
        gpu(scale, 8, 2.0, y)                  # the block runs on device 1
    graph1.replay().join()
    np.testing.assert_array_equal(y.numpy(), np.full(8, 2.0, np.float32))
    np.testing.assert_array_equal(x.numpy(), np.ones(8, np.float32))


def test_replay_arguments_checked(device_name):
    with capture() as graph:
        pass
    with pytest.raises(TypeError, match="cannot pickle a GpuGraph"):
        pickle.dumps(graph)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(GpuInvalidArgument, match="times="):
            graph.replay(times=bad)
    graph.replay().join()                      # an empty graph: nothing to run


@Gpu
def count_nested(n: int, a: int, b: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c: int = 0
    for p in range(a):
        for q in range(b):
            c += 1
    out[i] = c


def test_loop_budget_reported_after_a_replay(device_name):
    out = to_device(np.zeros(8, np.int32))
    with capture() as graph:
        gpu(count_nested, 8, 10, 10, out)
        gpu(count_nested, 8, 1000, 1000, out)       # past lavapipe's loop budget
    if "llvmpipe" not in device_name:
        graph.replay().join()
        np.testing.assert_array_equal(out.numpy(), np.full(8, 10 ** 6, np.int32))
        return
    with pytest.raises(GpuDeviceError, match="ended a loop before it finished") as info:
        graph.replay().join()
    assert "recorded launch #2 of 2" in str(info.value)


def test_arrays_split_across_bindings(device_name):
    from cthreads import config
    with config.override(binding_bytes=4096):
        host = np.arange(64 * 50, dtype=np.float32)      # 12,800 bytes: four parts
        d = to_device(host)
        assert len(d._slot.parts) == 4
        with capture() as graph:
            for _ in range(3):
                gpu(scale, len(host), 2.0, d)
        graph.replay(times=2).join()
        np.testing.assert_array_equal(d.numpy(), host * 64)


def test_other_threads_launch_while_one_captures(device_name):
    n = 64
    x = to_device(np.ones(n, np.float32))
    y = to_device(np.ones(n, np.float32))
    done = []

    def other():
        gpu(scale, n, 3.0, y).join()               # runs now: that thread does not capture
        done.append(True)

    with capture() as graph:
        gpu(scale, n, 2.0, x)
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert done and graph.launches == 1
    np.testing.assert_array_equal(y.numpy(), np.full(n, 3.0, np.float32))
    np.testing.assert_array_equal(x.numpy(), np.ones(n, np.float32))
    graph.replay().join()
    np.testing.assert_array_equal(x.numpy(), np.full(n, 2.0, np.float32))


def test_a_failure_outlives_its_graph(device_name):
    x = to_device(np.zeros(8, np.float32))
    with capture() as graph:
        gpu(poke, 9, x)
    job = graph.replay()
    del graph, job
    gc.collect()
    junk = [to_device(np.full(64, 7, np.int32)) for _ in range(8)]    # reuse freed buffers
    with pytest.raises(GpuIndexError, match="recorded launch #1 of 1"):
        x.numpy()
    del junk
    np.testing.assert_array_equal(x.numpy(), np.zeros(8, np.float32))  # reported once


def test_sort_recorded_with_its_scratch(device_name):
    rng = np.random.default_rng(11)
    k0 = rng.standard_normal(5000).astype(np.float32)
    keys = to_device(k0)
    with capture() as graph:
        gpu(scale, len(k0), -1.0, keys)
        out = sort(keys)                           # a new GpuArray, written by each replay
        idx = argsort(keys)
    assert graph.launches == 3
    np.testing.assert_array_equal(keys.numpy(), k0)                          # not run yet
    other = sort(to_device(rng.standard_normal(5000).astype(np.float32)))   # same size, eager
    graph.replay().join()
    np.testing.assert_array_equal(out.numpy(), np.sort(-k0, kind="stable"))
    np.testing.assert_array_equal(idx.numpy(), np.argsort(-k0, kind="stable"))
    for n in (7000, 3000, 5000):                   # the sorter's scratch moves on
        sort(to_device(rng.standard_normal(n).astype(np.float32))).numpy()
    junk = [to_device(np.full(5000, 9.0, np.float32)) for _ in range(6)]
    graph.replay().join()
    np.testing.assert_array_equal(out.numpy(), np.sort(k0, kind="stable"))
    for j in junk:                                 # the graph's scratch is nobody else's
        np.testing.assert_array_equal(j.numpy(), np.full(5000, 9.0, np.float32))
    assert other.numpy().shape == (5000,)


def test_scans_and_axis_reductions_recorded(device_name):
    x0 = np.arange(1000, dtype=np.float32) % 7
    m0 = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, m = to_device(x0), to_device(m0)
    with capture() as graph:
        gpu(scale, 1000, 2.0, x)
        scan = add.accumulate(x)
        cols = add.reduce(m, axis=0)
        rows = add.reduce(m, axis=1, keepdims=True)
        gpu(scale, 12, 3.0, m.ravel())
    assert graph.launches == 5
    graph.replay().join()
    np.testing.assert_allclose(scan.numpy(), np.cumsum(2 * x0), rtol=1e-6)
    np.testing.assert_array_equal(cols.numpy(), m0.sum(axis=0))
    np.testing.assert_array_equal(rows.numpy(), m0.sum(axis=1, keepdims=True))
    graph.replay().join()
    np.testing.assert_allclose(scan.numpy(), np.cumsum(4 * x0), rtol=1e-6)
    np.testing.assert_array_equal(cols.numpy(), (3 * m0).sum(axis=0))
    np.testing.assert_array_equal(m.numpy(), 9 * m0)


@Gpu
def particle_step(n: int, dt: float, p: list[vec3], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v[i] += vec3(0.0, -9.8, 0.0) * dt
    p[i] += v[i] * dt


def test_vector_lists_replay_as_one_by_one(device_name):
    rng = np.random.default_rng(8)
    p0 = rng.standard_normal((300, 3)).astype(np.float32)
    v0 = rng.standard_normal((300, 3)).astype(np.float32)
    p, v = to_device(p0), to_device(v0)
    q, w = to_device(p0), to_device(v0)
    with capture() as graph:
        for _ in range(5):
            gpu(particle_step, 300, 0.01, p, v)
    graph.replay(times=2).join()
    for _ in range(10):
        gpu(particle_step, 300, 0.01, q, w)
    np.testing.assert_array_equal(p.numpy(), q.numpy())
    np.testing.assert_array_equal(v.numpy(), w.numpy())


def test_timed_replay(device_name, monkeypatch):
    x = to_device(np.ones(256, np.float32))
    with capture() as graph:
        for _ in range(4):
            gpu(scale, 256, 2.0, x)
    job = graph.replay(timed=True)
    job.join()
    assert job.device_time is not None and job.device_time > 0
    assert graph.replay().device_time is None
    monkeypatch.setattr(backend_replay, "MAX_DISPATCHES", 3)
    job = graph.replay(times=3, timed=True)        # 12 dispatches in four submissions
    job.join()
    assert job.device_time is not None and job.device_time > 0
    np.testing.assert_array_equal(x.numpy(), np.full(256, 2.0 ** 20, np.float32))
    with pytest.raises(GpuInvalidArgument, match="timed="):
        graph.replay(timed=1)
