"""GpuArena: residency, pooling, sync, release, and every misuse with nothing changed."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cthreads.gpu import GpuArena, GpuInvalidArgument, GpuUseAfterDestroy, gpu, shutdown
from tests.device.kernels import add_one, saxpy, scale_ints


def test_resident_loop_matches_numpy(device_name):
    n = 10_000
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xl, yl = x.tolist(), y.tolist()
    with GpuArena() as arena:
        assert arena.bind(x=xl, y=yl) is arena
        for _ in range(200):
            gpu(saxpy, n, 0.5, xl, yl).join(download=False)
        assert yl == y.tolist()                      # not synced yet
        arena.sync()
    ref = y.copy()
    for _ in range(200):
        ref = np.float32(0.5) * x + ref
    np.testing.assert_allclose(np.array(yl, np.float32), ref, rtol=1e-5)


def test_resident_loop_allocates_nothing(device_name):
    from cthreads.backend import get_queue

    y = [0.0] * 4096
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(add_one, 4096, y).join(download=False)
        before = get_queue().pool.allocations
        for _ in range(100):
            gpu(add_one, 4096, y).join(download=False)
        assert get_queue().pool.allocations == before
        arena.sync("y")
    assert y == [101.0] * 4096


def test_join_download_writes_resident_lists(device_name):
    y = [0.0] * 8
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(add_one, 8, y).join()
        assert y == [1.0] * 8


def test_copy_is_not_resident(device_name):
    y = [0.0] * 8
    with GpuArena() as arena:
        arena.bind(y=y)
        other = list(y)
        gpu(add_one, 8, other).join()
        assert other == [1.0] * 8
        arena.sync()
        assert y == [0.0] * 8


def test_rebind_uploads_host_edits(device_name):
    y = [0.0] * 4
    with GpuArena() as arena:
        arena.bind(y=y)
        y[0] = 10.0                                   # not seen without re-bind
        gpu(add_one, 4, y).join(download=False)
        arena.sync()
        assert y == [1.0] * 4
        y[0] = 10.0
        arena.bind(y=y)
        gpu(add_one, 4, y).join(download=False)
        arena.sync()
        assert y == [11.0, 2.0, 2.0, 2.0]
        z = [5.0] * 6                                  # a new shape in the same slot
        arena.bind(y=z)
        gpu(add_one, 6, z).join(download=False)
        arena.sync("y")
        assert z == [6.0] * 6


def test_names_contains_iteration(device_name):
    with GpuArena() as arena:
        arena.bind(a=[1.0], b=[2]).bind(c=[True])
        assert arena.names() == ["a", "b", "c"]
        assert "a" in arena and "zz" not in arena
        assert list(arena) == ["a", "b", "c"] and len(arena) == 3


def test_int_list_used_as_float(device_name):
    y = [1, 2, 3]
    with GpuArena() as arena:
        arena.bind(y=y)
        gpu(add_one, 3, y).join()
    assert y == [2.0, 3.0, 4.0]


def test_misuse_changes_nothing(device_name):
    x = [1.0, 2.0]
    y = [0.0, 0.0]
    arena = GpuArena()
    with pytest.raises(GpuInvalidArgument, match="empty"):
        arena.bind(x=[])
    with pytest.raises(TypeError, match="list"):
        arena.bind(x=(1.0, 2.0))
    with pytest.raises(TypeError, match=r"\[1\]"):
        arena.bind(x=[1.0, "2"])
    arena.bind(x=x, y=y)
    with pytest.raises(GpuInvalidArgument, match="already bound"):
        arena.bind(z=x)
    other = GpuArena()
    with pytest.raises(GpuInvalidArgument, match="another arena"):
        other.bind(x=x)
    with pytest.raises(GpuInvalidArgument, match="no such slot"):
        arena.sync("nope")
    ints = [1, 2]
    arena.bind(i=ints)
    gpu(scale_ints, 2, 3, ints).join(download=False)
    with pytest.raises(GpuInvalidArgument, match="int elements"):
        gpu(add_one, 2, ints)
    y.append(9.0)
    with pytest.raises(GpuInvalidArgument, match="changed length"):
        gpu(add_one, 3, y)
    with pytest.raises(GpuInvalidArgument, match="changed length"):
        arena.sync("y")
    y.pop()
    assert x == [1.0, 2.0] and y == [0.0, 0.0] and ints == [1, 2]
    arena.sync("i")
    assert ints == [3, 6]
    arena.release()
    arena.release()                                          # idempotent
    with pytest.raises(GpuInvalidArgument, match="release"):
        arena.bind(x=x)
    with pytest.raises(GpuInvalidArgument, match="release"):
        arena.sync()
    other.release()


def test_released_lists_are_ordinary_again(device_name):
    y = [0.0] * 4
    arena = GpuArena().bind(y=y)
    arena.release()
    gpu(add_one, 4, y).join()
    assert y == [1.0] * 4


def test_garbage_collected_arena_releases(device_name):
    y = [0.0] * 4
    GpuArena().bind(y=y)
    gc.collect()
    again = GpuArena().bind(y=y)                 # would raise 'already bound' if still resident
    again.release()


def test_shutdown_invalidates_arenas(device_name):
    y = [3.0] * 4
    arena = GpuArena().bind(y=y)
    shutdown()
    with pytest.raises(GpuUseAfterDestroy, match="shutdown"):
        arena.sync()
    assert y == [3.0] * 4
    gpu(add_one, 4, y).join()                    # the list is ordinary again, device restarts
    assert y == [4.0] * 4
    arena.release()
