"""Several devices in one process: devices(), use_device(), gpu(..., device=), arenas bound to
their device, jobs on two devices at once, shutdown() of all. On lavapipe the two devices come
from the one adapter (CTHREADS_DEVICE_COPIES=2, the documented test hook)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from cthreads.backend import device as _device
from cthreads.gpu import (GpuArena, GpuInvalidArgument, GpuUseAfterDestroy, available,
                          current_device, device_name, devices, gpu, init, shutdown, use_device)
from tests.device.scale_kernels import add, axpy, spin, spin_reference


@pytest.fixture
def two_devices(monkeypatch, device_name):
    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    assert len(devices()) >= 2
    yield
    shutdown()


def test_devices_lists_each_adapter_copies_times(two_devices):
    names = devices()
    assert len(names) % 2 == 0 and names[0] == names[1]
    assert current_device() == _device.default_index()


def test_two_threads_on_two_devices_at_once(two_devices):
    steps = 200
    results, used, errors = {}, {}, []
    barrier = threading.Barrier(2)

    def work(k):
        try:
            with use_device(k):
                x = np.linspace(0.1, 0.9, 50_000, dtype=np.float32) + np.float32(k / 100)
                y = np.zeros_like(x)
                barrier.wait()
                jobs = []
                for _ in range(3):
                    jobs.append(gpu(spin, x, y, steps))
                for job in jobs:
                    job.join()
                results[k] = (x, y)
                used[k] = current_device()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert used == {0: 0, 1: 1}
    for x, y in results.values():
        np.testing.assert_allclose(y, spin_reference(x, steps), rtol=1e-3, atol=1e-3)
    # each device has its own context, queue and runtime for the kernel
    ctx0, ctx1 = _device.open_contexts()[:2]
    assert ctx0 is not ctx1 and ctx0.dq is not ctx1.dq


def test_device_keyword_and_selection_are_per_thread(two_devices):
    x = np.arange(1000, dtype=np.float32)
    y = np.ones_like(x)
    gpu(axpy, 2.0, x, y, len(x), device=1).join()
    np.testing.assert_array_equal(y, 2 * x + 1)
    seen = []
    with use_device(1):
        assert current_device() == 1
        t = threading.Thread(target=lambda: seen.append(current_device()))
        t.start()
        t.join()
    assert seen == [_device.default_index()]     # a new thread starts on the default device


async def test_selection_is_per_asyncio_task(two_devices):
    async def task(k):
        with use_device(k):
            await asyncio.sleep(0.01)
            x = np.arange(256, dtype=np.float32)
            y = np.zeros_like(x)
            await gpu(axpy, float(k + 1), x, y, len(x))
            return current_device(), y

    (d0, y0), (d1, y1) = await asyncio.gather(task(0), task(1))
    assert (d0, d1) == (0, 1)
    np.testing.assert_array_equal(y0, np.arange(256, dtype=np.float32))
    np.testing.assert_array_equal(y1, 2 * np.arange(256, dtype=np.float32))


def test_arena_belongs_to_its_device(two_devices):
    with use_device(1):
        arena = GpuArena()
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, dtype=np.float32)
    arena.bind(x=x, y=y)                       # binds on device 1, where it was created
    assert arena.device.startswith("device 1 ")
    before = y.copy()
    with pytest.raises(GpuInvalidArgument, match=r"bound as arena slot 'y' on device 1 .* "
                                                 r"the launch runs on device 0"):
        gpu(axpy, 1.0, np.ones(100, np.float32), y, 100).join()
    np.testing.assert_array_equal(y, before)
    with pytest.raises(GpuInvalidArgument, match="device 1"):
        add.reduce(x)
    gpu(axpy, 2.0, x, y, 100, device=1).join()
    arena.sync()
    np.testing.assert_array_equal(y, 2 * x)
    with use_device(1):
        assert add.reduce(x) == pytest.approx(float(x.sum()))


def test_probes_and_reduce_follow_the_selection(two_devices):
    from cthreads.runtime import reducer as _reduce  # noqa: PLC0415
    shutdown()
    with use_device(1):
        assert available()
        init()
        assert [c.index for c in _device.open_contexts()] == [1]     # only the selected one
        assert device_name() == devices()[1]
        values = np.arange(1, 9, dtype=np.float32)
        assert add.reduce(values) == pytest.approx(float(values.sum()))
        assert list(_reduce._STATE.states) == [1]


def test_shutdown_releases_every_device(two_devices):
    with use_device(1):
        arena = GpuArena()
        arena.bind(x=np.ones(8, np.float32))
    gpu(axpy, 1.0, np.ones(8, np.float32), np.ones(8, np.float32), 8).join()
    assert len(_device.open_contexts()) == 2
    shutdown()
    assert _device.open_contexts() == []
    with pytest.raises(GpuUseAfterDestroy):
        arena.sync()
    # the next use starts afresh
    y = np.zeros(8, np.float32)
    gpu(axpy, 1.0, np.ones(8, np.float32), y, 8, device=1).join()
    np.testing.assert_array_equal(y, np.ones(8))


def test_bad_selections_name_the_devices(two_devices):
    y = np.zeros(8, np.float32)
    with pytest.raises(GpuInvalidArgument, match=r"device 7: there is no such device; "
                                                 r"devices\(\) lists 2"):
        with use_device(7):
            pass
    with pytest.raises(GpuInvalidArgument, match="matches no device"):
        gpu(axpy, 1.0, np.ones(8, np.float32), y, 8, device="no-such-gpu")
    with pytest.raises(GpuInvalidArgument, match="expects an index"):
        with use_device(1.5):
            pass
    np.testing.assert_array_equal(y, np.zeros(8))
    with use_device("LLVMPIPE" if "llvmpipe" in devices()[0].lower() else devices()[0]):
        assert current_device() == 0
