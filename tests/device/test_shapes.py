"""Launch shapes: every workgroup size and indexes-per-invocation factor the runtime may pick
runs each GlobalIdx.x below n rounded up to 64 exactly once, as the plain-Python run does."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import Gpu, GlobalIdx, GpuIndexError, gpu
from tests.device.kernels import saxpy


@Gpu
def stamp(n: int, hits: list[int], order: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < len(hits):
        hits[i] += 1
        order[i] = i * 3 - 7


@Gpu
def unguarded(n: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    y[i] = 1.5 * i


SHAPES = [(64, "1"), (256, "1"), (256, "4"), (64, "8"), (1024, "2"), (128, None)]


@pytest.fixture(params=SHAPES, ids=lambda s: f"wg{s[0]}-c{s[1] or 'auto'}")
def shape(request, monkeypatch, device_name):
    wg, coarsen = request.param
    monkeypatch.setenv("CTHREADS_WORKGROUP_SIZE", str(wg))
    if coarsen is None:
        monkeypatch.delenv("CTHREADS_COARSEN", raising=False)
    else:
        monkeypatch.setenv("CTHREADS_COARSEN", coarsen)
    for k in (stamp, unguarded, saxpy):
        k.forget_runtimes()                     # the next launch reads the settings again
    yield request.param
    for k in (stamp, unguarded, saxpy):
        k.forget_runtimes()


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 70_001])
def test_each_index_runs_once(shape, n):
    size = -(-n // 64) * 64 + 100            # room past the rounded-up index range
    hits, order = [0] * size, [0] * size
    sim_hits, sim_order = list(hits), list(order)
    gpu(stamp, n, hits, order).join()
    stamp.simulate(n, sim_hits, sim_order)
    assert hits == sim_hits
    assert order == sim_order
    assert sum(hits) == -(-n // 64) * 64


def test_unguarded_kernel_at_a_multiple_of_64(shape):
    # the index range is n rounded up to 64 whatever the workgroup size: no index error here
    y = [0.0] * 128
    gpu(unguarded, 128, y).join()
    assert y == [1.5 * k for k in range(128)]
    short = [2.0] * 100                      # indexes 100..127 run too: out of range
    with pytest.raises(GpuIndexError):
        gpu(unguarded, 100, short).join()
    assert short == [2.0] * 100


def test_large_saxpy_matches_numpy(shape):
    n = 1_000_003
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expect = np.float32(0.5) * x + y
    gpu(saxpy, n, 0.5, x, y).join()
    np.testing.assert_allclose(y, expect, rtol=1e-6, atol=1e-6)   # one fused rounding allowed
