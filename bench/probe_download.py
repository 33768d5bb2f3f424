"""Where ``GpuArray.numpy()`` spends its time, against raw wgpu-py's download, one process.

    python bench/probe_download.py [--mib 128] [--reps 5]

Times (medians of ``reps``, ms): ``numpy()`` of a float32 ``GpuArray``, the part of it that
copies the mapped staging buffer into a Python ``bytes`` (the native encoder's
``copy_mapped``, timed by wrapping it), raw wgpu-py's copy to a MAP_READ buffer + map + one
copy into a numpy array (``raw_wgpu.Raw.read``), and two host copies of the same size:
``bytes(memoryview(a))`` and ``a.copy()`` (numpy asks the kernel for transparent huge pages
for large arrays, ``madvise``; a ``bytes`` object gets 4 KiB pages, one fault per page).
docs/performance.md, "Device arrays", quotes it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    from cthreads.backend import get_queue
    from cthreads.backend.native import encoder
    from cthreads.gpu import to_device
    import raw_wgpu

    n = args.mib * (1 << 20) // 4
    host = (np.arange(n, dtype=np.int64) % 1001).astype(np.float32)
    d = to_device(host)
    spent: list = []
    native = get_queue()._native
    if native is not None:
        real = native.copy_mapped

        def timed(buffer, nbytes, into=None):
            t0 = time.perf_counter()
            try:
                return real(buffer, nbytes, into)
            finally:
                spent.append(time.perf_counter() - t0)
        native.copy_mapped = timed
    raw = raw_wgpu.Raw()
    buf, stage = raw.storage(4 * n), raw.staging(4 * n)
    raw.queue.write_buffer(buf, 0, host)
    rows: dict = {k: [] for k in ("numpy()", "  its copy of the mapped range into bytes",
                                  "raw copy + map + copy into numpy",
                                  "bytes(memoryview(a)) (host)", "a.copy() (host)")}
    keys = list(rows)
    d.numpy()
    raw.read(buf, stage, 4 * n, np.float32)
    for _ in range(args.reps):
        spent.clear()
        t0 = time.perf_counter()
        got = d.numpy()
        rows[keys[0]].append(time.perf_counter() - t0)
        if spent:
            rows[keys[1]].append(sum(spent))
        del got
        t0 = time.perf_counter()
        got = raw.read(buf, stage, 4 * n, np.float32)
        rows[keys[2]].append(time.perf_counter() - t0)
        del got
        t0 = time.perf_counter()
        got = bytes(memoryview(host))
        rows[keys[3]].append(time.perf_counter() - t0)
        del got
        t0 = time.perf_counter()
        got = host.copy()
        rows[keys[4]].append(time.perf_counter() - t0)
        del got
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().strip()
    except OSError:
        thp = "?"
    print(f"{raw.info['device']}: {args.mib} MiB float32, medians of {args.reps} (ms); "
          f"transparent huge pages: {thp}")
    for k, v in rows.items():
        if v:
            print(f"  {k:<44} {statistics.median(v) * 1e3:8.1f}   "
                  f"({min(v) * 1e3:.1f}-{max(v) * 1e3:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
