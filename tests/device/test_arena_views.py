"""Arena-bound numpy arrays seen through other arrays (issue 21, items 1 and 2).

Item 1: the length of a resident N-D slot is every element (its shape's product), not len()
(its rows): ``f.reduce`` of a bound (61, 61) array folds 3721 elements. Item 2: an argument that
shares memory with a bound array is never uploaded from its (stale) host memory: a reshape or
ravel of the whole array uses the device copy, any other overlap (a slice, a transposed or
re-typed view, an array the bound one is part of) raises ``GpuInvalidArgument`` naming the slot,
with nothing changed. Every result is checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import GlobalIdx, Gpu, atomic_add, GpuArena, GpuInvalidArgument, gpu, prepare


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


@Gpu.func
def add_ints(a: int, b: int) -> int:
    return a + b


@Gpu
def fill_index(n: int, a: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        a[i] = float(i + 1)


@Gpu
def fill_ones(n: int, a: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        a[i] = 1.0


@Gpu
def total(n: int, a: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i == 0:
        s: float = 0.0
        for k in range(n):
            s += a[k]
        out[0] = s


@Gpu
def fill_grid(a: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if y < len(a) and x < a.shape[1]:
        a[y, x] = float(y * a.shape[1] + x)


@Gpu
def fill_volume(v: list[list[list[float]]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    z: int = GlobalIdx.z
    if z < v.shape[0] and y < v.shape[1] and x < v.shape[2]:
        v[z, y, x] = float(100 * z + 10 * y + x)


@Gpu
def row_totals(a: list[list[float]], sums: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(a):
        s: float = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        sums[i] = s


@Gpu
def count_threads(a: list[list[float]], count: list[int]) -> None:
    atomic_add(count, 0, 1)


def _grid(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


# -- item 1: the length of an N-D resident slot ------------------------------------------------

@pytest.mark.parametrize("shape", [(61, 61), (4, 5, 6), (3, 1), (1, 7)])
def test_reduce_of_a_bound_nd_array_folds_every_element(device_name, shape):
    a = np.ones(shape, np.float32)
    rng = np.random.default_rng(21)
    k = rng.integers(-1000, 1000, size=shape).astype(np.int32)
    assert add.reduce(a) == a.size                      # unbound: the reference
    with GpuArena() as arena:
        arena.bind(a=a, k=k)
        assert add.reduce(a) == float(a.size)           # was shape[0] (61.0, 4.0)
        assert add_ints.reduce(k) == int(k.sum())
        assert add.reduce(a, init=2.5) == a.size + 2.5
    np.testing.assert_array_equal(a, np.ones(shape, np.float32))


def test_reduce_of_a_bound_nd_array_reads_the_device_copy(device_name):
    a = np.zeros((6, 7), np.float32)
    with GpuArena() as arena:
        arena.bind(a=a)
        gpu(fill_grid, a, threads=(7, 6)).join(download=False)
        assert add.reduce(a) == float(_grid((6, 7)).sum())        # 861.0, every element
        assert not a.any()                                         # host copy: not synced
        arena.sync()
        np.testing.assert_array_equal(a, _grid((6, 7)))
        assert add.reduce(a) == float(a.sum())                     # after sync() too


def test_bound_3d_array_after_sync_and_reduce(device_name):
    v = np.zeros((4, 5, 6), np.float32)
    ref = np.fromfunction(lambda z, y, x: 100 * z + 10 * y + x, (4, 5, 6)).astype(np.float32)
    with GpuArena() as arena:
        arena.bind(v=v)
        gpu(fill_volume, v, threads=(6, 5, 4)).join(download=False)
        assert add.reduce(v) == float(ref.sum())
        arena.sync("v")
        np.testing.assert_array_equal(v, ref)


def test_nd_bound_array_in_a_launch_takes_n_from_len(device_name):
    """Without n or threads=, a launch covers the longest list's len() (api.md): the rows of an
    N-D list, bound or not; 70 rows run 128 threads (n rounded up to 64), where its 210
    elements would run 256."""
    a = _grid((70, 3))
    ref = a.sum(axis=1)
    count = np.zeros(1, np.int32)
    gpu(count_threads, a, count).join()
    assert count[0] == 128
    sums_free = np.zeros(70, np.float32)
    gpu(row_totals, a, sums_free).join()
    np.testing.assert_array_equal(sums_free, ref)
    sums = np.zeros(70, np.float32)
    with GpuArena() as arena:
        arena.bind(a=a, sums=sums, count=count)
        for k in range(3):                 # the first launch, then the memo's repeats
            gpu(row_totals, a, sums).join()
            np.testing.assert_array_equal(sums, ref)
            gpu(count_threads, a, count).join()
            assert count[0] == 128 * (k + 2)
    np.testing.assert_array_equal(a, _grid((70, 3)))


def test_nd_bound_arrays_after_prepare(device_name):
    prepare(threads=(8, 8))
    a = np.zeros((9, 11), np.float32)
    sums = np.zeros(9, np.float32)
    with GpuArena() as arena:
        arena.bind(a=a, sums=sums)
        gpu(fill_grid, a, threads=(11, 9)).join(download=False)
        gpu(row_totals, a, sums).join(download=False)
        assert add.reduce(a) == float(_grid((9, 11)).sum())
        assert add.reduce(sums) == float(_grid((9, 11)).sum())
        arena.sync()
    np.testing.assert_array_equal(a, _grid((9, 11)))
    np.testing.assert_array_equal(sums, _grid((9, 11)).sum(axis=1))


# -- item 2: views of bound arrays -------------------------------------------------------------

def test_reshape_of_a_bound_array_reads_the_device_copy(device_name):
    """The reported case: a resident launch wrote `a`; a reshape of it reads 32.0, not the
    host's stale 0.0."""
    a = np.zeros(32, np.float32)
    out = np.zeros(1, np.float32)
    with GpuArena() as arena:
        arena.bind(a=a)
        gpu(fill_ones, 32, a).join(download=False)
        gpu(total, 32, a.reshape(-1), out).join()
        assert out[0] == 32.0
        out[0] = 0
        gpu(total, 32, a.reshape(4, 8).ravel(), out).join()
        assert out[0] == 32.0
        assert not a.any()                           # the host copy is as it was
        assert add.reduce(a.reshape(4, 8)) == 32.0   # f.reduce of a reshape, too
        assert add.reduce(a.reshape(2, 16).reshape(-1)) == 32.0


def test_reshape_of_a_bound_2d_array_in_a_1d_kernel(device_name):
    a = np.zeros((4, 8), np.float32)
    out = np.zeros(1, np.float32)
    with GpuArena() as arena:
        arena.bind(a=a)
        gpu(fill_grid, a, threads=(8, 4)).join(download=False)
        gpu(total, 32, a.ravel(), out).join()
        assert out[0] == float(_grid((4, 8)).sum())
        assert not a.any()


def test_a_kernel_writing_through_a_reshape_updates_the_bound_array(device_name):
    a = np.zeros(12, np.float32)
    out = np.zeros(1, np.float32)
    with GpuArena() as arena:
        arena.bind(a=a)
        gpu(fill_grid, a.reshape(3, 4), threads=(4, 3)).join()      # downloads into a
        np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32))
        gpu(total, 12, a, out).join()                                # the device copy too
        assert out[0] == 66.0
        a2 = a.reshape(3, 4)
        gpu(fill_index, 12, a2.reshape(-1)).join(download=False)
        assert add.reduce(a) == 78.0
        np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32))   # not synced
        arena.sync()
        np.testing.assert_array_equal(a, np.arange(1, 13, dtype=np.float32))


def _stale_setup(arena):
    a = np.zeros(32, np.float32)
    arena.bind(a=a)
    gpu(fill_ones, 32, a).join(download=False)      # device: ones; host: zeros
    return a


@pytest.mark.parametrize("view", [
    lambda a: a[4:],                        # a slice
    lambda a: a[::2],                       # a strided slice
    lambda a: a.reshape(4, 8).T,            # transposed
    lambda a: a.view(np.int32),             # another dtype over the same bytes
    lambda a: a[:16].reshape(4, 4),         # a reshape of a part
], ids=["slice", "strided", "transposed", "retyped", "part-reshaped"])
def test_partial_views_raise_and_change_nothing(device_name, view):
    out = np.full(1, -1.0, np.float32)
    with GpuArena() as arena:
        a = _stale_setup(arena)
        v = view(a)
        with pytest.raises(GpuInvalidArgument, match=r"shares memory with .*arena slot 'a'"):
            gpu(total, 4, v, out)
        with pytest.raises(GpuInvalidArgument, match=r"shares memory with .*arena slot 'a'"):
            add.reduce(v)
        assert out[0] == -1.0
        assert not a.any()
        assert add.reduce(a) == 32.0                 # the device copy is untouched
        arena.sync()
        np.testing.assert_array_equal(a, np.ones(32, np.float32))


def test_a_slice_the_kernel_writes_raises(device_name):
    with GpuArena() as arena:
        a = _stale_setup(arena)
        with pytest.raises(GpuInvalidArgument, match=r"arena slot 'a'.*arena\.sync\('a'\)"):
            gpu(fill_index, 8, a[8:16])
        assert not a.any()
        arena.sync()
        np.testing.assert_array_equal(a, np.ones(32, np.float32))


def test_array_that_contains_a_bound_part(device_name):
    big = np.zeros(40, np.float32)
    out = np.zeros(1, np.float32)
    with GpuArena() as arena:
        part = big[8:]
        arena.bind(part=part)
        gpu(fill_ones, 32, part).join(download=False)
        with pytest.raises(GpuInvalidArgument, match="an array it is a part of"):
            gpu(total, 40, big, out)
        with pytest.raises(GpuInvalidArgument, match="arena slot 'part'"):
            add.reduce(big)
        gpu(total, 8, big[:8], out).join()           # memory it does not share: uploaded
        assert out[0] == 0.0
        assert not big.any()
        arena.sync()
    np.testing.assert_array_equal(big, np.r_[np.zeros(8), np.ones(32)].astype(np.float32))


def test_views_and_the_relaunch_memo(device_name):
    """A repeat launch through the memo with the bound array, then a reshape, then a slice,
    then the array again: each resolved (or refused) as a first launch is."""
    out = np.zeros(1, np.float32)
    with GpuArena() as arena:
        a = _stale_setup(arena)
        arena.bind(out=out)
        for _ in range(2):
            gpu(total, 32, a, out).join(download=False)
        assert add.reduce(out) == 32.0
        gpu(fill_index, 32, a.reshape(-1)).join(download=False)
        gpu(total, 32, a.reshape(-1), out).join(download=False)
        assert add.reduce(out) == float(sum(range(1, 33)))
        with pytest.raises(GpuInvalidArgument, match="arena slot 'a'"):
            gpu(total, 16, a[16:], out)
        gpu(total, 32, a, out).join()
        assert out[0] == float(sum(range(1, 33)))
        assert not a.any()


def test_bind_refuses_memory_already_bound(device_name):
    a = np.zeros(16, np.float32)
    b = np.zeros(4, np.float32)
    with GpuArena() as arena, GpuArena() as other:
        arena.bind(a=a)
        with pytest.raises(GpuInvalidArgument, match=r"shares memory with the array bound as "
                                                     r"'a' in this arena"):
            arena.bind(b=a.reshape(4, 4))
        with pytest.raises(GpuInvalidArgument, match="'a' in another arena"):
            other.bind(c=a[:4])
        with pytest.raises(GpuInvalidArgument, match="the one given for 'x'"):
            other.bind(x=b, y=b[1:])
        assert arena.names() == ["a"] and other.names() == []
        arena.bind(a=a.reshape(4, 4))                # the same slot, re-bound: fine
        gpu(fill_grid, a.reshape(4, 4), threads=(4, 4)).join()
    np.testing.assert_array_equal(a, np.arange(16, dtype=np.float32))


def test_views_of_unbound_arrays_upload_as_before(device_name):
    """With no array bound, views upload from their memory and write back into it, as before."""
    base = np.zeros(64, np.float32)
    out = np.zeros(1, np.float32)
    gpu(fill_ones, 32, base[32:]).join()
    gpu(total, 64, base, out).join()
    assert out[0] == 32.0


# -- cthreads.dask: tasks read host memory ------------------------------------------------------

@Gpu
def scale_by(a: float, x: list[float], w: list[float], y: list[float], n: int) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] * w[0]


def test_map_blocks_refuses_bound_arrays(device_name):
    da = pytest.importorskip("dask.array")
    from cthreads.dask import map_blocks

    x = np.arange(8, dtype=np.float32)
    w = np.ones(4, np.float32)
    with GpuArena() as arena:
        arena.bind(w=w)
        gpu(fill_index, 4, w).join(download=False)       # device: 1..4; host: ones
        for whole in (w, w.reshape(-1), w[:1]):
            with pytest.raises(GpuInvalidArgument, match=r"map_blocks parameter 'w'.*arena "
                                                         r"slot 'w'"):
                map_blocks(scale_by, 2.0, da.from_array(x, chunks=4), whole,
                           da.zeros(8, chunks=4, dtype=np.float32), out="y")
        np.testing.assert_array_equal(w, np.ones(4, np.float32))
        wl = [1.0]
        arena.bind(wl=wl)
        with pytest.raises(GpuInvalidArgument, match=r"map_blocks parameter 'w'.*arena "
                                                     r"slot 'wl'"):
            map_blocks(scale_by, 2.0, da.from_array(x, chunks=4), wl,
                       da.zeros(8, chunks=4, dtype=np.float32), out="y")
    got = map_blocks(scale_by, 2.0, da.from_array(x, chunks=4), w,
                     da.zeros(8, chunks=4, dtype=np.float32), out="y").compute(scheduler="sync")
    np.testing.assert_array_equal(got, 2.0 * x)


# -- the rows of bound nested lists --------------------------------------------------------------

@Gpu
def total_rows(a: list[list[float]], out: list[float]) -> None:
    if GlobalIdx.x == 0:
        s: float = 0.0
        for i in range(len(a)):
            for j in range(a.shape[1]):
                s += a[i, j]
        out[0] = s


def test_rows_of_a_bound_nested_list_raise(device_name):
    grid = [[0.0] * 4 for _ in range(3)]
    out = [-1.0]
    with GpuArena() as arena:
        arena.bind(g=grid)
        gpu(fill_grid, grid, threads=(4, 3)).join(download=False)   # host rows: still zeros
        with pytest.raises(GpuInvalidArgument, match=r"is a row of the list bound as arena "
                                                     r"slot 'g'"):
            gpu(total, 4, grid[1], out)
        with pytest.raises(GpuInvalidArgument, match="is a row of the list bound as arena slot"):
            add.reduce(grid[2])
        with pytest.raises(GpuInvalidArgument, match="holds a row that is, or is part of, the "
                                                     "list bound as arena slot 'g'"):
            gpu(total_rows, [grid[0], [1.0] * 4], out)
        with pytest.raises(GpuInvalidArgument, match="is a row of the list bound as arena slot"):
            arena.bind(r=grid[0])
        assert out == [-1.0] and grid == [[0.0] * 4 for _ in range(3)]
        gpu(total_rows, grid, out).join()                # the bound list itself: device data
        assert out == [66.0]
        gpu(total, 4, list(grid[1]), out).join()         # a copy: an ordinary argument
        assert out == [0.0]
        arena.bind(g=grid)                               # re-binding its own rows: fine
        arena.sync()
    assert grid == [[0.0] * 4 for _ in range(3)]         # the re-bind uploaded the host zeros


def test_a_nested_list_holding_a_bound_list_raises(device_name):
    row = [0.0] * 4
    out = [-1.0]
    with GpuArena() as arena:
        arena.bind(row=row)
        gpu(fill_ones, 4, row).join(download=False)
        with pytest.raises(GpuInvalidArgument, match="holds a row that is, or is part of, the "
                                                     "list bound as arena slot 'row'"):
            gpu(total_rows, [row, [2.0] * 4], out)
        with pytest.raises(GpuInvalidArgument, match="the list bound as arena slot 'row'"):
            GpuArena().bind(a=[row])
        fresh = [3.0] * 4
        with pytest.raises(GpuInvalidArgument, match="is a row of the other"):
            GpuArena().bind(a=[fresh], b=fresh)
        with pytest.raises(GpuInvalidArgument, match="is a row of the other"):
            GpuArena().bind(b=fresh, a=[fresh])
        assert out == [-1.0] and row == [0.0] * 4
        arena.sync()
    assert row == [1.0] * 4


def test_a_bound_array_resized_in_place_raises(device_name):
    a = np.ones((4, 4), np.float32)
    with GpuArena() as arena:
        arena.bind(a=a)
        a.resize((4, 8), refcheck=False)             # same rows, twice the elements
        with pytest.raises(GpuInvalidArgument, match=r"resized in place from 16 to 32"):
            add.reduce(a)
        with pytest.raises(GpuInvalidArgument, match=r"changed shape from \(4, 4\) to \(4, 8\)"):
            gpu(fill_grid, a, threads=(8, 4))
        arena.bind(a=a)                              # re-bound: all 32
        assert add.reduce(a) == float(a.sum()) == 16.0   # resize() keeps the 16 ones, flat
