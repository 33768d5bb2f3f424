"""Large uploads go through the staging ring (``backend/uploads.py``): to_device, set() (also
of a view, from its offset), arena binds and numpy arrays passed straight arrive whole and in
program order. The ring's chunk and threshold are made small here so that a few KiB take
several chunks and reuse every staging buffer."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.backend import uploads
from cthreads.gpu import GpuArena, gpu, to_device
from tests.device.kernels import saxpy


@pytest.fixture
def small_ring(monkeypatch):
    monkeypatch.setattr(uploads, "STAGED_FROM", 4096)
    monkeypatch.setattr(uploads, "CHUNK", 1024)
    calls = []
    real = uploads.UploadRing.upload

    def spy(self, pooled, view, offset):
        calls.append((view.nbytes, offset))
        return real(self, pooled, view, offset)

    monkeypatch.setattr(uploads.UploadRing, "upload", spy)
    yield calls


def _host(n, seed=1):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_to_device_set_and_views_through_the_ring(device_name, small_ring):
    host = _host(10_000)                        # 40,000 bytes: 40 chunks, each buffer reused
    d = to_device(host)
    np.testing.assert_array_equal(d.numpy(), host)
    new = _host(10_000, seed=2)
    d.set(new)
    np.testing.assert_array_equal(d.numpy(), new)
    view = d[2048:]                             # from byte 8,192 on
    part = _host(10_000 - 2048, seed=3)
    view.set(part)
    np.testing.assert_array_equal(d.numpy(), np.concatenate([new[:2048], part]))
    assert (40_000, 0) in small_ring and (len(part) * 4, 8192) in small_ring


def test_ring_uploads_keep_program_order_with_launches(device_name, small_ring):
    n = 5000
    x = to_device(np.ones(n, np.float32))
    y = to_device(np.zeros(n, np.float32))
    gpu(saxpy, n, 2.0, x, y)                    # queued: y = 2
    y.set(np.full(n, 10.0, np.float32))         # after the launch, before the next one
    gpu(saxpy, n, 1.0, x, y)                    # y = 11
    np.testing.assert_array_equal(y.numpy(), np.full(n, 11.0, np.float32))
    assert small_ring


def test_arena_and_numpy_arrays_through_the_ring(device_name, small_ring):
    n = 3000
    x, y = _host(n, 4), _host(n, 5)
    want = y + np.float32(0.5) * x
    arena = GpuArena()
    arena.bind(x=x)
    yy = y.copy()
    gpu(saxpy, n, 0.5, x, yy).join()            # x resident, yy uploaded and written back
    np.testing.assert_allclose(yy, want, rtol=1e-6)
    np.testing.assert_array_equal(x, _host(n, 4))    # only read: unchanged
    assert small_ring
