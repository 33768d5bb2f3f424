"""``cthreads.dask.map_blocks`` on the threaded and process schedulers and on a real
``distributed.LocalCluster`` of two worker processes (lavapipe: two devices from the one
adapter, CTHREADS_DEVICE_COPIES=2), results against numpy, inputs unchanged."""

from __future__ import annotations

import textwrap

import dask
import dask.array as da
import numpy as np
import pytest

from cthreads.dask import device_blocks, host_blocks, map_blocks
from cthreads.gpu import GpuArray, GpuInvalidArgument, to_device
from tests.device.scale_kernels import (add_table, axpy, block_device, gpuarray_report,
                                        rows_plus_cols, scaled_twice, spin, spin_reference,
                                        worker_report)

N = 10_000
CHUNK = 2_500


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster of 2 worker processes for the module (a start costs seconds)."""
    distributed = pytest.importorskip("distributed")
    mp = pytest.MonkeyPatch()
    mp.setenv("CTHREADS_DEVICE_COPIES", "2")
    mp.delenv("CTHREADS_ADAPTER", raising=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as lc, \
            distributed.Client(lc) as client:
        yield client
    mp.undo()


def _inputs():
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, dtype=np.float32)
    return x, y, da.from_array(x, chunks=CHUNK), da.from_array(y, chunks=CHUNK)


def test_threaded_scheduler_fills_n_passes_scalars_and_keeps_inputs(device_name):
    x, y, dx, dy = _inputs()
    result = map_blocks(axpy, 2.0, dx, dy, out="y")
    assert result.chunks == dy.chunks and result.dtype == np.float32
    got = result.compute(scheduler="threads")
    np.testing.assert_array_equal(got, 2 * x + 1)
    np.testing.assert_array_equal(y, np.ones(N))           # the inputs never change
    np.testing.assert_array_equal(x, np.arange(N))
    zeros = map_blocks(axpy, 3.0, dx, None, out="y").compute(scheduler="sync")
    np.testing.assert_array_equal(zeros, 3 * x)


def test_two_dimensional_blocks_launch_their_shape(device_name):
    u = np.arange(60 * 50, dtype=np.float32).reshape(60, 50)
    du = da.from_array(u, chunks=(25, 20))             # column chunks: strided views
    got = map_blocks(rows_plus_cols, du, None, out="v").compute(scheduler="threads")
    # x and y count within each block: the block's own column and row
    cols = np.concatenate([np.arange(c) for c in du.chunks[1]])
    rows = np.concatenate([np.arange(r) for r in du.chunks[0]])
    np.testing.assert_array_equal(got, 2 * u + cols[None, :] - rows[:, None])
    np.testing.assert_array_equal(u, np.arange(60 * 50).reshape(60, 50))


def test_process_scheduler(device_name):
    x, _, dx, dy = _inputs()
    got = map_blocks(scaled_twice, dx, dy, out="y").compute(scheduler="processes",
                                                           num_workers=2)
    np.testing.assert_array_equal(got, 6 * x)


def test_local_cluster_two_workers_two_devices(cluster, device_name):
    x = np.linspace(0.1, 0.9, N, dtype=np.float32)
    dx = da.from_array(x, chunks=CHUNK)
    out = map_blocks(spin, dx, da.zeros_like(dx), 50, out="y")
    expected = spin_reference(x, 50)
    np.testing.assert_allclose(cluster.compute(out).result(), expected, rtol=1e-3, atol=1e-3)
    for address in cluster.scheduler_info()["workers"]:      # every worker runs some blocks
        got = cluster.compute(out, workers=[address]).result()
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)
    reports = sorted(cluster.run(worker_report).values())
    # worker k uses device k % len(devices()), the only one its own process opened
    assert reports == [(0, 0, [0]), (1, 1, [1])]


def test_local_cluster_runs_a_kernel_defined_in_main(cluster, device_name):
    namespace = {"__name__": "__main__"}
    source = textwrap.dedent('''
        from cthreads.gpu import Gpu, GlobalIdx
        BIAS = 7


        @Gpu
        def shifted(x: list[int], y: list[int], n: int) -> None:
            i = GlobalIdx.x
            if i < n:
                y[i] = x[i] * 2 + BIAS
    ''')
    import linecache  # noqa: PLC0415 - an exec'd "script" needs its source findable

    linecache.cache["<dask-main>"] = (len(source), None, source.splitlines(True), "<dask-main>")
    exec(compile(source, "<dask-main>", "exec"), namespace)  # noqa: S102
    x = np.arange(N, dtype=np.int32)
    dx = da.from_array(x, chunks=CHUNK)
    got = cluster.compute(map_blocks(namespace["shifted"], dx, None, out="y")).result()
    np.testing.assert_array_equal(got, 2 * x + 7)


def test_local_cluster_runs_a_kernel_that_prints(cluster, device_name):
    """print() in a kernel on a worker: its lines go to the worker's stdout at the task's join
    (nothing to check there from here); the blocks' results are right and nothing breaks."""
    namespace = {"__name__": "__main__"}
    source = textwrap.dedent('''
        from cthreads.gpu import Gpu, GlobalIdx


        @Gpu(print_limit=2)
        def noisy(x: list[int], y: list[int], n: int) -> None:
            i = GlobalIdx.x
            if i < n:
                print(f"block element {i}: {x[i]:5d}")
                y[i] = x[i] + 1
    ''')
    import linecache  # noqa: PLC0415 - an exec'd "script" needs its source findable

    linecache.cache["<dask-print>"] = (len(source), None, source.splitlines(True),
                                       "<dask-print>")
    exec(compile(source, "<dask-print>", "exec"), namespace)  # noqa: S102
    x = np.arange(N, dtype=np.int32)
    dx = da.from_array(x, chunks=CHUNK)
    got = cluster.compute(map_blocks(namespace["noisy"], dx, None, out="y")).result()
    np.testing.assert_array_equal(got, x + 1)


def test_misuse_is_reported_before_any_work(device_name):
    x, y, dx, dy = _inputs()
    with pytest.raises(GpuInvalidArgument, match=r"parameters 'x' and 'y' have different "
                                                 r"chunks .* y.rechunk\(x.chunks\)"):
        map_blocks(axpy, 2.0, dx, dy.rechunk(3000), out="y")
    with pytest.raises(GpuInvalidArgument, match="out names the list parameter"):
        map_blocks(axpy, 2.0, dx, dy, out="a")
    with pytest.raises(TypeError, match=r"takes 3 kernel argument\(s\) \(a, x, y\) \(n is "
                                        r"filled with each block's length\), got 4"):
        map_blocks(axpy, 2.0, dx, dy, N, out="y")
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x': a 2-D dask array, but the "
                                                 r"kernel declares a 1-D list"):
        map_blocks(scaled_twice, dx.reshape(100, 100), dy.reshape(100, 100), out="y")
    np.testing.assert_array_equal(y, np.ones(N))
    assert dask.config.get("scheduler", None) in (None, "threads", "sync", "dask.distributed")


# -- GpuArray blocks and arguments ---------------------------------------------------------------

@pytest.fixture
def transfers(monkeypatch):
    """Every host<->device transfer of a GpuArray in this process: ('up', nbytes) for
    to_device/set, ('down', nbytes) for numpy()."""
    from cthreads.runtime import device_array

    seen = []
    real_download, real_allocate = device_array.download, device_array.allocate

    def download(slot, out):
        seen.append(("down", out.nbytes))
        return real_download(slot, out)

    def allocate(queue, elem, shape, data=None, where="GpuArray", **kw):
        if data is not None and where != "zeros()":
            seen.append(("up", data.nbytes))
        return real_allocate(queue, elem, shape, data, where, **kw)

    monkeypatch.setattr(device_array, "download", download)
    monkeypatch.setattr(device_array, "allocate", allocate)
    return seen


def test_gpuarray_blocks_stay_on_the_device(device_name, transfers):
    x = np.arange(N, dtype=np.float32)
    dx = device_blocks(da.from_array(x, chunks=CHUNK)).persist(scheduler="threads")
    assert transfers == [("up", CHUNK * 4)] * 4                  # one upload per block
    table = to_device(np.array([0.5, 1.5, 2.5], np.float32))     # a whole GpuArray argument
    del transfers[:]
    y = map_blocks(axpy, 2.0, dx, None, out="y").persist(scheduler="threads")
    z = map_blocks(add_table, y, table, dx, out="y").persist(scheduler="threads")
    assert transfers == []            # the kernels ran on the blocks: nothing up or down
    block = z.blocks[1].compute(scheduler="threads")
    assert isinstance(block, GpuArray) and block.shape == (CHUNK,)
    got = z.compute(scheduler="threads")        # one GpuArray, joined by device copies
    assert isinstance(got, GpuArray) and got.shape == (N,) and got.dtype == np.float32
    assert transfers == []
    per_block = np.tile(np.float32([0.5, 1.5, 2.5]), CHUNK // 3 + 1)[:CHUNK]  # i of the block
    want = 2 * x + np.tile(per_block, N // CHUNK)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(host_blocks(dx).compute(scheduler="threads"), x)   # unchanged
    np.testing.assert_array_equal(table.numpy(), [0.5, 1.5, 2.5])


def test_gpuarray_blocks_mixed_with_numpy_blocks_and_2d(device_name):
    x, y, dx, dy = _inputs()
    got = map_blocks(axpy, 3.0, device_blocks(dx), dy, out="y").compute(scheduler="sync")
    assert isinstance(got, np.ndarray)                # out follows its blocks: numpy here
    np.testing.assert_array_equal(got, 3 * x + 1)
    got = map_blocks(scaled_twice, device_blocks(dx), None, out="y").compute()
    np.testing.assert_array_equal(got.numpy(), 6 * x)               # a device function
    u = np.arange(60 * 50, dtype=np.float32).reshape(60, 50)
    du = device_blocks(da.from_array(u, chunks=(25, 20)))   # column chunks: made contiguous
    got = map_blocks(rows_plus_cols, du, None, out="v").compute(scheduler="threads")
    assert isinstance(got, GpuArray) and got.shape == (60, 50)
    cols = np.concatenate([np.arange(c) for c in du.chunks[1]])
    rows = np.concatenate([np.arange(r) for r in du.chunks[0]])
    np.testing.assert_array_equal(got.numpy(), 2 * u + cols[None, :] - rows[:, None])
    np.testing.assert_array_equal(u, np.arange(60 * 50).reshape(60, 50))


def test_float64_blocks_make_float64_zeros(device_name):
    x = np.linspace(0, 1, N)                          # float64: plain float is 64-bit
    for dx in (da.from_array(x, chunks=CHUNK), device_blocks(da.from_array(x, chunks=CHUNK))):
        result = map_blocks(axpy, 1 / 3, dx, None, out="y")
        assert result.dtype == np.float64
        got = np.asarray(result.compute(scheduler="threads"))
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, x / 3, rtol=1e-15)


def test_gpuarray_misuse_is_reported(device_name, monkeypatch):
    x, _, dx, dy = _inputs()
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x': a dask array made by "
                       r"da.from_array of a GpuArray.*device_blocks\(da.from_array\(d.numpy"):
        map_blocks(axpy, 2.0, da.from_array(to_device(x), chunks=CHUNK), None, out="y")
    with pytest.raises(GpuInvalidArgument, match="takes a dask array, got GpuArray"):
        device_blocks(to_device(x))
    ints = device_blocks(da.from_array(np.arange(N, dtype=np.int32), chunks=CHUNK))
    with pytest.raises(GpuInvalidArgument, match=r"parameter 'x' is a GpuArray of shape "
                       r"\(2500,\) and dtype int32"):
        map_blocks(axpy, 2.0, ints, None, out="y").compute(scheduler="sync")
    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    from cthreads.gpu import shutdown
    try:
        table = to_device(np.ones(3, np.float32), device=1)
        with pytest.raises(GpuInvalidArgument, match=r"the GpuArrays for 'x' \(device 0 .*\) "
                           r"and 'table' \(device 1 .*\) live on different devices"):
            map_blocks(add_table, device_blocks(dx), table, None,
                       out="y").compute(scheduler="sync")
        np.testing.assert_array_equal(table.numpy(), np.ones(3, np.float32))
    finally:
        shutdown()


def test_local_cluster_gpuarray_blocks_and_arguments(cluster, device_name):
    x = np.linspace(0.1, 0.9, N, dtype=np.float32)
    dx = device_blocks(da.from_array(x, chunks=CHUNK))
    table = to_device(np.array([1.0, 2.0], np.float32))
    out = map_blocks(add_table, map_blocks(spin, dx, None, 20, out="y"), table, None, out="y")
    got = cluster.compute(out).result()              # gathered by value, joined here
    assert isinstance(got, GpuArray)
    want = spin_reference(x, 20) + np.tile(np.float32([1.0, 2.0]), N // 2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-3)
    # each worker k uploads its blocks on device k (the device its tasks use)
    infos = cluster.scheduler_info()["workers"]
    for address, info in infos.items():
        where = cluster.compute(dx.map_blocks(block_device, chunks=((1,) * 4,), dtype=np.int32),
                                workers=[address]).result()
        assert set(where.tolist()) == {int(info["name"]) % 2}
        # a GpuArray sent to a worker unpickles onto that worker's device
        device, index, total = cluster.submit(gpuarray_report, table, workers=[address],
                                              pure=False).result()
        assert (index, total) == (int(info["name"]) % 2, 3.0)
        assert device.startswith(f"device {index} ")
