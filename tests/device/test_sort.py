"""``sort``, ``argsort`` and ``sort(keys, values)`` on the device against numpy's stable sorts,
bit for bit: every key dtype, duplicates (stability: the argsort equals numpy's), NaN / inf /
-0.0 mixes (numpy compares -0.0 and 0.0 equal, so they keep their input order), the sizes
around a workgroup's and a tile's, 2-D rows, pairs, GpuArray in and out, arena-bound inputs,
lists, refusals with the caller's data unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import (GpuArena, GpuArgumentTypeError, GpuArray, GpuInvalidArgument,
                          argsort, sort, to_device)

DTYPES = ["int32", "uint32", "int64", "float32", "float64"]


def keys_of(dtype: str, n: int, seed: int = 0, spread: int = 40):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        x = rng.integers(-spread, spread, n).astype(dtype) / 4   # many duplicates
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
        pick = rng.integers(0, len(special), n)
        mask = rng.random(n) < 0.2
        x[mask] = special[pick[mask]]
        return x
    info = np.iinfo(dtype)
    x = rng.integers(-spread if info.min < 0 else 0, spread, n).astype(dtype)
    if n >= 4:
        x[:4] = [info.min, info.max, 0, info.max]
    return x


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def check(x):
    before = x.copy()
    same_bits(sort(x), np.sort(x, kind="stable"))
    idx = argsort(x)
    want = np.argsort(x, kind="stable")
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, want)
    same_bits(x, before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 255, 256, 257, 4097, 20_001])
def test_matches_numpy_stable(device_name, dtype, n):
    check(keys_of(dtype, n, seed=n))


@pytest.mark.parametrize("dtype", DTYPES)
def test_wide_range_keys(device_name, dtype):
    rng = np.random.default_rng(3)
    if dtype.startswith("float"):
        x = (rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True)
    check(x)


def test_nan_payloads_and_signed_zeros_keep_their_bits(device_name):
    bits = np.array([0x7FC00001, 0xFFC00000, 0x80000000, 0x00000000, 0x7F800000, 0x7FA00000,
                     0x80000000, 0xFF800000], np.uint32)
    x = bits.view(np.float32)
    check(x)
    # numpy: -0.0 == 0.0, so a stable sort keeps their order; NaNs last in input order
    got = sort(x).view(np.uint32)
    assert list(got[1:4]) == [0x80000000, 0x00000000, 0x80000000]
    assert list(got[-3:]) == [0x7FC00001, 0xFFC00000, 0x7FA00000]
    check(np.array([0.0, -0.0, np.nan, -0.0, 0.0, -np.inf], np.float64))


def test_one_million_and_one(device_name):
    x = np.random.default_rng(9).standard_normal(1_000_001).astype(np.float32)
    x[::7] = x[3]                               # duplicates across tiles
    check(x)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_rows_sort_apart(device_name, dtype):
    x = keys_of(dtype, 7 * 301, seed=5).reshape(7, 301)
    check(x)
    check(keys_of(dtype, 2 * 3 * 40, seed=6).reshape(2, 3, 40))
    check(keys_of(dtype, 300, seed=7).reshape(300, 1))       # rows of one
    check(keys_of(dtype, 20 * 17, seed=8).reshape(20, 17))   # more than 16 rows: 2 row digits


@pytest.mark.parametrize("kdt", DTYPES)
@pytest.mark.parametrize("vdt", ["int32", "float64"])
def test_pairs(device_name, kdt, vdt):
    keys = keys_of(kdt, 999, seed=1)
    values = np.arange(999).astype(vdt) * 3
    kb, vb = keys.copy(), values.copy()
    k, v = sort(keys, values)
    order = np.argsort(keys, kind="stable")
    same_bits(k, keys[order])
    same_bits(v, values[order])
    same_bits(keys, kb)
    same_bits(values, vb)


def test_gpuarray_in_and_out(device_name):
    x = keys_of("float32", 5000, seed=2).reshape(10, 500)
    d = to_device(x)
    got = sort(d)
    assert isinstance(got, GpuArray) and got.shape == x.shape and got.dtype == np.float32
    same_bits(got.numpy(), np.sort(x, kind="stable"))
    idx = argsort(d)
    assert isinstance(idx, GpuArray) and idx.dtype == np.int64
    np.testing.assert_array_equal(idx.numpy(), np.argsort(x, kind="stable"))
    vals = to_device(np.arange(5000, dtype=np.int64).reshape(10, 500))
    k, v = sort(d, vals)
    assert isinstance(k, GpuArray) and isinstance(v, GpuArray)
    np.testing.assert_array_equal(v.numpy(), np.argsort(x, kind="stable") +
                                  500 * np.arange(10)[:, None])
    same_bits(d.numpy(), x)                      # the input is unchanged
    view = d.ravel()[:1024]                      # a view from element 0
    same_bits(sort(view).numpy(), np.sort(x.ravel()[:1024], kind="stable"))


def test_lists_and_arena(device_name):
    assert sort([3, 1, 2]).tolist() == [1, 2, 3]
    assert sort([3, 1, 2]).dtype == np.int64                 # as np.asarray([3, 1, 2])
    assert argsort([0.5, -1.0, 0.5]).tolist() == [1, 0, 2]
    x = keys_of("float32", 3000, seed=4)
    y = x.copy()
    with GpuArena() as arena:
        arena.bind(y=y)
        same_bits(sort(y), np.sort(x, kind="stable"))
        np.testing.assert_array_equal(argsort(y), np.argsort(x, kind="stable"))
    same_bits(y, x)
    lst = [5, 3, 5, 1]
    with GpuArena() as arena:
        arena.bind(v=lst)
        got = sort(lst)
        assert got.tolist() == [1, 3, 5, 5]
    assert lst == [5, 3, 5, 1]


def test_empty_and_shapes(device_name):
    for x in (np.zeros(0, np.float32), np.zeros((3, 0), np.int64), np.zeros((0, 4), np.int32)):
        same_bits(sort(x), np.sort(x, kind="stable"))
        got = argsort(x)
        assert got.dtype == np.int64 and got.shape == x.shape
    e = sort(to_device(np.zeros(0, np.float64)))
    assert isinstance(e, GpuArray) and e.shape == (0,)
    assert sort([]).shape == (0,)


def test_refusals_leave_data_unchanged(device_name):
    x = np.array([3, 1, 2], np.int16)
    with pytest.raises(GpuArgumentTypeError, match="int16.*astype"):
        sort(x)
    with pytest.raises(GpuArgumentTypeError, match="values of dtype bool"):
        sort(np.arange(3, dtype=np.int32), np.ones(3, bool))
    keys = np.array([2.0, 1.0], np.float32)
    with pytest.raises(GpuInvalidArgument, match="do not match keys of shape"):
        sort(keys, np.arange(3, dtype=np.int32))
    with pytest.raises(GpuInvalidArgument, match="0-d"):
        argsort(np.float32(1.0))
    with pytest.raises(GpuArgumentTypeError, match="expects a list"):
        sort("abc")
    assert keys.tolist() == [2.0, 1.0] and x.tolist() == [3, 1, 2]


def test_past_the_binding_limit_is_refused(device_name):
    x = np.arange(2000, dtype=np.float32)[::-1].copy()
    with config.override(binding_bytes=4096):
        with pytest.raises(GpuInvalidArgument, match="past the storage-binding limit|binding"):
            sort(x)
        d = to_device(x)                           # split into parts
        with pytest.raises(GpuInvalidArgument, match="several device buffers"):
            sort(d)
    same_bits(d.numpy(), x)
    same_bits(sort(x), np.sort(x))


def test_loop_limit_raises_before_anything_runs(device_name, monkeypatch):
    from cthreads.runtime import sorter

    x = np.arange(50_000, dtype=np.float32)[::-1].copy()
    monkeypatch.setattr(sorter, "LOOP_BUDGET", 64)       # as if n were past the driver's limit
    if sorter._sorter_now().ctx.is_cpu:
        with pytest.raises(GpuInvalidArgument, match="loop limit"):
            sort(x)
    monkeypatch.undo()
    same_bits(sort(x), np.sort(x))
    same_bits(x, np.arange(50_000, dtype=np.float32)[::-1].copy())


def test_unaligned_view_is_refused(device_name):
    d = to_device(np.arange(64, dtype=np.float32).reshape(16, 4))
    with pytest.raises(GpuInvalidArgument, match="align"):
        sort(d[1:])                                        # starts 16 bytes in
    same_bits(sort(d[2:]).numpy(), np.arange(8, 64, dtype=np.float32).reshape(14, 4))


def test_gpu_tile_shape_also_sorts(device_name, monkeypatch):
    """The workgroup shape GPUs get (256 threads x 16 elements), run here too."""
    from cthreads.codegen import sorting
    from cthreads.runtime import sorter

    monkeypatch.setattr(sorting, "SHAPE_CPU", sorting.SHAPE_GPU)
    monkeypatch.setattr(sorter._STATE, "states", {})
    for dtype in ("float32", "int64"):
        check(keys_of(dtype, 10_001, seed=11))
        check(keys_of(dtype, 3 * 1500, seed=12).reshape(3, 1500))
    got = sorter._sorter_now()
    if got.bits == 8:      # (a tile of 256 x 16 needs more workgroup memory than lavapipe's)
        assert got.shape[0] == sorting.SHAPE_GPU[0]
    else:
        assert got.shape == sorting.SHAPE_GPU


def test_queued_sorts_share_scratch_safely(device_name):
    """Sorts queued back to back (nothing read between) reuse one set of scratch buffers in
    submission order; each result is its own input's."""
    from cthreads.backend import get_queue

    xs = [keys_of("float32", 9000, seed=s) for s in range(4)]
    ds = [to_device(x) for x in xs]
    sort(ds[0]).numpy()
    pool = get_queue().pool
    before = pool.allocations
    got = [sort(d) for d in ds] + [argsort(d) for d in ds]
    for x, g in zip(xs, got[:4]):
        same_bits(g.numpy(), np.sort(x, kind="stable"))
    for x, g in zip(xs, got[4:]):
        np.testing.assert_array_equal(g.numpy(), np.argsort(x, kind="stable"))
    assert pool.allocations - before <= 8        # the results' buffers, not new scratch


@pytest.mark.parametrize("local", [True, False])
def test_both_scatters(device_name, monkeypatch, local):
    """The scatter through a local sort in workgroup memory (GPUs: coalesced stores) and the
    one storing straight from the ranks, on a tile that fits lavapipe's 32 KiB."""
    from cthreads.codegen import sorting
    from cthreads.runtime import sorter

    monkeypatch.setattr(sorting, "SHAPE_CPU", (64, 32))
    monkeypatch.setattr(sorter, "LOCAL_SORT", local)
    monkeypatch.setattr(sorter, "FORM", "old")
    monkeypatch.setattr(sorter._STATE, "states", {})
    assert sorter._sorter_now().scatter == ("scatter_local" if local else "scatter")
    for dtype in ("float32", "int64", "uint32"):
        check(keys_of(dtype, 10_001, seed=13))
        check(keys_of(dtype, 5 * 999, seed=14).reshape(5, 999))
    k, v = sort(keys_of("float64", 3000, seed=15), np.arange(3000, dtype=np.int32))
    np.testing.assert_array_equal(v, np.argsort(keys_of("float64", 3000, seed=15),
                                                kind="stable"))


@pytest.fixture
def form8(monkeypatch):
    """The 8-bit digit form (GPUs' default) forced here: 4 passes a key word, the histograms
    counted with workgroup atomics, scanned in parallel blocks, the tile sorted in workgroup
    memory by two 4-bit splits."""
    from cthreads.runtime import sorter

    monkeypatch.setattr(sorter, "FORM", "8bit")
    monkeypatch.setattr(sorter._STATE, "states", {})
    return sorter


@pytest.mark.parametrize("shape", [(64, 32), (64, 4), (256, 16)])
def test_8bit_form(device_name, monkeypatch, form8, shape):
    """Every dtype, rows, pairs, several scan blocks ((64, 4): 1,000+ tiles, each scan_top
    thread over several block sums), the GPU shape (items halved to fit lavapipe's 32 KiB)."""
    from cthreads.codegen import sorting

    monkeypatch.setattr(sorting, "SHAPE_CPU", shape)      # the shape this device uses
    monkeypatch.setattr(sorting, "SHAPE_GPU", shape)
    s = form8._sorter_now()
    assert s.bits == 8 and s.scatter == "scatter8" and s.shape[0] == shape[0]
    assert "8-bit" in s.form()
    for dtype in DTYPES:
        check(keys_of(dtype, 4097, seed=21))
        check(keys_of(dtype, 7 * 999, seed=22).reshape(7, 999))
    check(keys_of("float32", 300_001, seed=23, spread=4000))
    check(np.random.default_rng(24).integers(0, 2**32, 50_000, dtype=np.uint64)
          .astype(np.uint32))
    x = keys_of("float64", 3000, seed=25)
    k, v = sort(x, np.arange(3000, dtype=np.int32))
    same_bits(k, np.sort(x, kind="stable"))
    np.testing.assert_array_equal(v, np.argsort(x, kind="stable"))


def test_8bit_form_small_and_rows(device_name, form8):
    for n in (1, 2, 255, 256, 257, 2047, 2048, 2049):
        check(keys_of("int32", n, seed=n))
    check(keys_of("uint32", 300 * 7, seed=26).reshape(300, 7))     # 300 rows: 2 row digits
    d = to_device(keys_of("float32", 5000, seed=27))
    same_bits(sort(d).numpy(), np.sort(d.numpy(), kind="stable"))


def test_old_form_is_selectable(device_name, monkeypatch):
    from cthreads.runtime import sorter

    monkeypatch.setattr(sorter, "FORM", "old")
    monkeypatch.setattr(sorter._STATE, "states", {})
    assert sorter._sorter_now().bits == 4
    check(keys_of("float32", 5000, seed=28))
