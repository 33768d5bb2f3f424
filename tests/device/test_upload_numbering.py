"""A large upload made while a launch waits in the pending batch must not let that launch's
join return before the launch ran (its results were another job's stale bytes: a queued write
of 4 MiB or more is submitted at once, and that submission took the number promised to the
pending batch). Seen as whole Dask blocks holding another block's results."""

from __future__ import annotations

import numpy as np

from cthreads.gpu import gpu
from tests.device.scale_kernels import axpy, spin, spin_reference


def test_join_waits_for_a_pending_launch_after_a_large_upload(device_name):
    busy_x = np.linspace(0.1, 0.9, 1 << 16, dtype=np.float32)
    busy_y = np.zeros_like(busy_x)
    for attempt in range(3):
        busy = gpu(spin, busy_x, busy_y, 2000)              # keeps the device busy a while
        x = np.arange(1000, dtype=np.float32) + np.float32(attempt)
        y = np.ones_like(x)
        small = gpu(axpy, 2.0, x, y, len(x))                 # waits in the pending batch
        big_x = np.ones(1 << 20, dtype=np.float32)           # 4 MiB: submitted at once
        big_y = np.zeros_like(big_x)
        big = gpu(axpy, 3.0, big_x, big_y, len(big_x))
        small.join()
        np.testing.assert_array_equal(y, 2 * x + 1)
        big.join()
        busy.join()
        np.testing.assert_array_equal(big_y, np.full(1 << 20, 3.0, np.float32))
        np.testing.assert_allclose(busy_y, spin_reference(busy_x, 2000), rtol=1e-3, atol=1e-3)
