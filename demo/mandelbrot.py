"""The README's demo: a Mandelbrot set rendered by a @Gpu kernel, checked against numpy.

The kernel and its numpy reference are ``mandelbrot`` and ``mandelbrot_numpy`` in
examples/samples.py, the same kernel the benchmark and the tests run.

Run with `make demo` (or `.venv/bin/python demo/mandelbrot.py [width height iterations]`).
Writes mandelbrot.png in the current directory.
"""

from __future__ import annotations

import struct
import sys
import time
import zlib

import numpy as np

from cthreads.gpu import device_name, gpu
from examples.samples import mandelbrot, mandelbrot_numpy

MAX_ITER = 200


def write_png(path: str, gray: np.ndarray) -> None:
    h, w = gray.shape
    raw = b"".join(b"\x00" + gray[r].tobytes() for r in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def main(argv: list[str]) -> int:
    width, height, iters = (int(a) for a in (argv + ["512", "384", str(MAX_ITER)])[:3])
    n = width * height
    t0 = time.perf_counter()
    name = device_name()
    t1 = time.perf_counter()
    out = [0] * n
    gpu(mandelbrot, n, width, height, iters, out).join()
    t2 = time.perf_counter()
    gpu(mandelbrot, n, width, height, iters, out).join()
    t3 = time.perf_counter()
    ref = mandelbrot_numpy(width, height, iters)
    t4 = time.perf_counter()
    got = np.array(out, np.int32)
    agree = float(np.mean(got == ref))
    gray = (255 - (got.reshape(height, width) * 255 // iters)).astype(np.uint8)
    write_png("mandelbrot.png", gray)
    print(f"device: {name} (ready in {t1 - t0:.2f} s)")
    print(f"image: {width}x{height}, {iters} iterations -> mandelbrot.png")
    print(f"first launch (compile + run): {(t2 - t1) * 1e3:.1f} ms; "
          f"second launch: {(t3 - t2) * 1e3:.1f} ms; numpy: {(t4 - t3) * 1e3:.1f} ms")
    print(f"pixels equal to numpy's float32 iteration: {agree:.4%}")
    # Float re-association by the driver can move a few boundary pixels by an iteration.
    if agree < 0.99:
        print("MISMATCH against numpy", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
