"""Ways to upload one large host array with wgpu-py, one process (what ``to_device`` could use).

    python bench/probe_upload.py [--mib 256] [--chunk-mib 16] [--reps 5]

Medians of ``reps`` (GB/s), each way ending when the device has the data (a wait):
whole ``queue.write_buffer``; ``write_buffer`` in chunks, each submitted at once (the device's
copy of one chunk overlaps the host's copy of the next); rotating MAP_WRITE staging buffers
made once (map, one copy into the mapped range, unmap, copy_buffer_to_buffer, submit); a new
buffer mapped at creation; a host ``np.copyto`` of the same bytes; torch ``.cuda()`` where a
CUDA GPU is present. docs/performance.md, "Device arrays", quotes it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--chunk-mib", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    import raw_wgpu

    raw = raw_wgpu.Raw()
    wgpu, dev, queue = raw.wgpu, raw.device, raw.queue
    u = wgpu.BufferUsage
    nbytes = args.mib << 20
    chunk = min(args.chunk_mib << 20, nbytes)
    host = (np.arange(nbytes // 4, dtype=np.int64) % 1001).astype(np.float32)
    hb = memoryview(host).cast("B")
    dst = raw.storage(nbytes)
    stages = [dev.create_buffer(size=chunk, usage=u.MAP_WRITE | u.COPY_SRC) for _ in range(3)]

    def whole():
        queue.write_buffer(dst, 0, host)
        queue.submit([])
        raw.wait()

    def chunked():
        for off in range(0, nbytes, chunk):
            queue.write_buffer(dst, off, hb[off:off + chunk])
            queue.submit([])
        raw.wait()

    def staged():
        for k, off in enumerate(range(0, nbytes, chunk)):
            st = stages[k % len(stages)]
            n = min(chunk, nbytes - off)
            st.map_sync("WRITE", 0, n)          # waits while its last copy runs
            st.write_mapped(hb[off:off + n], 0)
            st.unmap()
            enc = dev.create_command_encoder()
            enc.copy_buffer_to_buffer(st, 0, dst, off, n)
            queue.submit([enc.finish()])
        raw.wait()

    def at_creation():
        buf = dev.create_buffer(size=nbytes, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST,
                                mapped_at_creation=True)
        buf.write_mapped(hb, 0)
        buf.unmap()
        queue.submit([])
        raw.wait()
        buf.destroy()

    out = np.empty_like(host)

    def host_copy():
        np.copyto(out, host)

    ways = {"write_buffer whole": whole, f"write_buffer, {chunk >> 20} MiB chunks": chunked,
            f"3 staging buffers of {chunk >> 20} MiB": staged, "mapped at creation": at_creation,
            "host np.copyto": host_copy}
    try:
        import torch
        if torch.cuda.is_available():
            t = torch.from_numpy(host)

            def cuda():
                t.cuda()
                torch.cuda.synchronize()
            ways["torch .cuda()"] = cuda
    except ImportError:
        pass
    times = {k: [] for k in ways}
    for _ in range(args.reps + 1):                      # the first round warms up
        for k, f in ways.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    # check: the staged way left the data right
    staged()
    back = raw.staging(nbytes)
    enc = dev.create_command_encoder()
    enc.copy_buffer_to_buffer(dst, 0, back, 0, nbytes)
    queue.submit([enc.finish()])
    back.map_sync("READ")
    ok = np.array_equal(np.frombuffer(back.read_mapped(), np.float32), host)
    print(f"{raw.info['device']}: {args.mib} MiB, medians of {args.reps} (GB/s); staged data "
          f"{'right' if ok else 'WRONG'}")
    for k, ts in times.items():
        t = statistics.median(ts[1:])
        print(f"  {k:<36} {nbytes / t / 1e9:8.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
