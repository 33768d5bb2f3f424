"""The lanes form of ``matmul`` (codegen/matmul_lanes.py, CPU drivers' default) at its edges,
every result against numpy's product in float64: m, n, k not multiples of the lanes, the tile
or four; vector and element loads of each operand; batches and broadcast stacks; float64 and
mixed dtypes; ``out=`` and views at odd offsets; k split across dispatches; Inf in the elements
next to a matrix's edge (they must not enter the products); and which form each device runs."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads import config
from cthreads.codegen import matmul_lanes
from cthreads.gpu import matmul, to_device, zeros
from cthreads.runtime import matmul_runner

RNG = np.random.default_rng(2603)


def _check(got, a, b):
    want = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    assert got.shape == want.shape
    dtype = np.result_type(np.asarray(a).dtype, np.asarray(b).dtype)
    unit = 2.0**-24 if dtype == np.float32 else 2.0**-53
    scale = np.matmul(np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64)))
    bound = 16 * unit * np.sqrt(max(np.shape(a)[-1], 1)) * scale + 1e-300
    assert np.all(np.abs(got - want) <= bound), np.abs(got - want).max()


@pytest.fixture
def lanes(device_name):
    """The lanes form runs here (lavapipe: 8 lanes); skipped on devices where it does not."""
    state = matmul_runner.state()
    if not state.ctx.is_cpu or not matmul_runner.cpu_lanes(state.ctx):
        pytest.skip("the lanes form runs on llvmpipe only")
    if config.current().matmul_cpu == "old":
        pytest.skip("CTHREADS_MATMUL_CPU=old")
    assert all(t.form == "lanes" for t in state.tiles.values())
    return state


def _pair(a_shape, b_shape, dtype=np.float32):
    return (RNG.standard_normal(a_shape).astype(dtype),
            RNG.standard_normal(b_shape).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", [(1, 1, 1), (7, 3, 5), (31, 9, 23), (33, 17, 25), (32, 16, 24),
                                 (40, 20, 36), (65, 7, 70), (3, 64, 2), (17, 24, 40),
                                 (33, 16, 33), (9, 12, 16), (40, 40, 72)])
def test_edges(lanes, dtype, mkn):
    """m, n, k on both sides of the lanes (8), the tiles and four and eight: float32 pairs
    (``vec4<u64>``) where k / n are multiples of 8, vector loads where of 4, element loads
    elsewhere."""
    m, k, n = mkn
    a, b = _pair((m, k), (k, n), dtype)
    _check(matmul(a, b), a, b)
    for a_at, b_at in [((0, 0), (0, 0)), ((1, 0), (0, 0)), ((0, 4), (2, 0))]:
        for pairs in ((False, False), (True, True)):
            va, vb, vc = matmul_lanes.vector_loads(k, n, a_at, b_at, b_at, pairs)
            assert vc == (4 if n % 4 == 0 and b_at[0] % 4 == 0 and b_at[1] % 4 == 0 else 0)
            for got, length, at, pair in ((va, k, a_at, pairs[0]), (vb, n, b_at, pairs[1])):
                want = 4 if length % 4 == 0 and at[0] % 4 == 0 and at[1] % 4 == 0 else 0
                if pair and length % 8 == 0 and at[0] % 8 == 0 and at[1] % 8 == 0:
                    want = 8
                assert got == want


def test_batched_broadcast_and_mixed(lanes):
    a, b = _pair((3, 19, 12), (3, 12, 21))
    _check(matmul(a, b), a, b)
    _check(matmul(a, b[0]), a, b[0])                      # B broadcast: batch stride 0
    _check(matmul(a[1], b), a[1], b)                      # A broadcast
    p, q = _pair((3, 9, 16), (3, 16, 24))               # float32 pairs, batch strides of 8s
    _check(matmul(p, q), p, q)
    _check(matmul(p, q[2]), p, q[2])
    a4, b4 = _pair((2, 1, 9, 8), (3, 8, 13), np.float64)
    _check(matmul(a4, b4), a4, b4)
    _check(matmul(a[0], b[0].astype(np.float64)), a[0], b[0])    # float32 @ float64
    _check(matmul(a[0].astype(np.float64), b[0]), a[0], b[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_views_and_out(lanes, dtype):
    """Operands that start at element offsets (multiples of 8, of 4 only, or neither: pairs,
    vectors or elements) and ``out=`` views."""
    for k, n in ((12, 20), (16, 24)):
        a, b = _pair((21, k), (k, n), dtype)
        for pad in (1, 2, 4):
            big_a = to_device(np.concatenate([np.zeros((pad, k), dtype), a]))
            big_b = to_device(np.concatenate([np.ones((pad, n), dtype), b]))
            _check(big_a[pad:] @ big_b[pad:], a, b)
        odd = to_device(np.concatenate([np.zeros(3, dtype), b.ravel()]))   # B at element 3
        _check(matmul(a, odd[3:].reshape(k, n)), a, b)
        out = zeros((30, n), dtype)
        matmul(a, b, out=out[5:26])
        _check(out.numpy()[5:26], a, b)
        assert not out.numpy()[:5].any() and not out.numpy()[26:].any()


def test_k_split_across_dispatches(lanes, monkeypatch):
    """k past one dispatch's range (MAX_STEPS lowered to 2 passes of 8 k): later ranges add."""
    from cthreads.codegen import matmul as codegen
    monkeypatch.setattr(codegen, "MAX_STEPS", 2)
    for k in (16, 17, 100, 104):
        a, b = _pair((9, k), (k, 11))
        _check(matmul(a, b), a, b)
        _check(matmul(a.astype(np.float64), b.astype(np.float64)), a, b)


def test_inf_next_to_the_edges_stays_out(lanes):
    """A row's vector of A reaches into the next row past k, and the lanes past k read B's
    last row: the Inf there must not reach products of other rows (numpy's Inf/NaN pattern)."""
    for k, n in ((13, 12), (12, 7), (5, 16), (16, 24)):
        a, b = _pair((17, k), (k, n))
        a[3, 0] = np.inf                   # row 3: the elements after row 2's end
        b[k - 1, 2] = -np.inf              # column 2 of the last row of B
        got = matmul(a, b)
        with np.errstate(invalid="ignore"):
            want = a.astype(np.float64) @ b.astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.isinf(got), np.isinf(want))
        fin = np.isfinite(want)
        assert fin.sum() == (17 - 1) * (n - 1)
        assert np.allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4)


def test_lanes_wgsl_shapes():
    """The generator for 4 and 16 lanes and other blocks (text only: this device's subgroups
    are 8 lanes): one broadcast per lane and vector of B, the k loop advancing ``lanes``."""
    for lanes_, tm, tn in ((4, 2, 3), (16, 1, 2), (8, 4, 4)):
        t = matmul_lanes.Lanes(tm, tn, lanes_)
        for vec in ((4, 4, 4), (0, 0, 0), (4, 0, 4)):
            text = matmul_lanes.lanes_wgsl("float32", "float64", "float64", t, *vec)
            assert text.count("subgroupBroadcast(") == 2 * lanes_ * tn   # loop and last pass
            assert f"k0 = k0 + {lanes_}u;" in text
            assert ("array<vec4<f32>>" in text) == (vec[0] == 4)
    text = matmul_lanes.lanes_wgsl("float32", "float32", "float32", matmul_lanes.Lanes(2, 8),
                                   8, 8, 4)
    assert text.count("array<vec4<u64>>") == 2 and "ct_pairs(ct_b[" in text
    for bad in ((matmul_lanes.Lanes(2, 3), 0, 8), (matmul_lanes.Lanes(2, 2, 4), 8, 0)):
        with pytest.raises(ValueError):
            matmul_lanes.lanes_wgsl("float32", "float32", "float32", *bad)
    with pytest.raises(ValueError):
        matmul_lanes.lanes_wgsl("float32", "float32", "float64", matmul_lanes.Lanes(2, 2), 8, 0)
    with pytest.raises(ValueError):
        matmul_lanes.Lanes(4, 4, 32).check()


def test_cpu_form_choice(device_name, monkeypatch):
    """CTHREADS_MATMUL_CPU=old gives the direct form; unknown lanes (no llvmpipe name, or the
    subgroup feature hidden) too."""
    state = matmul_runner.state()

    class Ctx:
        def __init__(self, name, missing=()):
            self.name, self._missing = name, list(missing)

        def missing(self, features):
            return [f for f in features if f in self._missing]
    lp = Ctx("llvmpipe (LLVM 15.0.6, 256 bits)")
    assert matmul_runner.cpu_lanes(lp) == 8
    assert matmul_runner.cpu_lanes(Ctx("llvmpipe (LLVM 15.0.6, 128 bits)")) == 4
    assert matmul_runner.cpu_lanes(Ctx("SwiftShader Device")) == 0
    assert matmul_runner.cpu_lanes(Ctx(lp.name, ["subgroup"])) == 0
    with config.override(matmul_cpu=""):
        assert matmul_runner.cpu_tiles(lp) == matmul_runner.TILES_CPU
    with config.override(matmul_cpu="old"):
        assert matmul_runner.cpu_tiles(lp) is matmul_runner.TILES_CPU_OLD
    # the direct form still gives numpy's products here
    monkeypatch.setattr(state, "tiles", matmul_runner.TILES_CPU_OLD)
    a, b = _pair((33, 17), (17, 19))
    _check(matmul(a, b), a, b)
