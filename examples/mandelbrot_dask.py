"""A Mandelbrot image tiled over a dask array and computed on every GPU of the host.

The image is a flat dask array of pixel numbers in tiles of whole rows; ``cthreads.dask.
map_blocks`` runs the kernel on every tile. A ``distributed.LocalCluster`` starts one worker
process per device (``devices()``): worker ``k`` opens device ``k`` on its first tile, so the
tiles run on all GPUs at once. The kernel travels to the workers pickled by value when this
file runs as a script (it is defined in ``__main__``). The image is checked against numpy.

Run: ``python examples/mandelbrot_dask.py [width] [height] [max_iter] [workers]``.
(The tiles are runs of pixel numbers, so each task knows where its pixels are; 2-D blocks
work too: ``map_blocks`` launches an N-D block over its shape.)
"""

from __future__ import annotations

import sys
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

from cthreads.dask import map_blocks
from cthreads.gpu import GlobalIdx, Gpu, devices
from examples.samples import mandelbrot_numpy


@Gpu
def mandelbrot_tile(pixel: list[int], counts: list[int], n: int, width: int, height: int,
                    max_iter: int) -> None:
    """counts[i] = escape iterations of pixel number pixel[i] (row-major, ``width`` wide) over
    [-2.2, 0.8] x [-1.2, 1.2], at most ``max_iter``."""
    i = GlobalIdx.x
    if i >= n:
        return
    p = pixel[i]
    px = p % width
    py = p // width
    cx = -2.2 + 3.0 * px / width
    cy = -1.2 + 2.4 * py / height
    x = 0.0
    y = 0.0
    k = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[i] = k


def image(width: int, height: int, max_iter: int, tile_rows: int, client=None) -> np.ndarray:
    """The image (height x width iteration counts), one dask task per ``tile_rows`` rows."""
    pixels = da.arange(width * height, chunks=width * tile_rows, dtype=np.int32)
    counts = map_blocks(mandelbrot_tile, pixels, None, width, height, max_iter, out="counts")
    flat = client.compute(counts).result() if client is not None else counts.compute()
    return flat.reshape(height, width)


def _worker_device(dask_worker) -> tuple:
    """(worker name, device index its tiles use, that device's name), run on each worker."""
    from cthreads.dask import worker_device  # noqa: PLC0415
    from cthreads.gpu import device_name, devices as listed  # noqa: PLC0415

    index = worker_device()
    return dask_worker.name, index, device_name() if index is None else listed()[index]


def main(width: int = 1024, height: int = 768, max_iter: int = 256, workers: int | None = None,
         tile_rows: int | None = None, quiet: bool = False) -> dict:
    """Compute the image on a LocalCluster of ``workers`` processes (default: one per device)
    and compare it with numpy; returns the image, the reference and the timings."""
    workers = workers or len(devices())
    tile_rows = tile_rows or max(1, height // (4 * workers))
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        image(width, min(height, tile_rows * workers), max_iter, tile_rows, client)  # warm-up
        t0 = time.perf_counter()
        counts = image(width, height, max_iter, tile_rows, client)
        seconds = time.perf_counter() - t0
        used = sorted(client.run(_worker_device).values())
    reference = mandelbrot_numpy(width, height, max_iter).reshape(height, width)
    differ = int(np.count_nonzero(counts != reference))
    if not quiet:
        print(f"{width} x {height}, {max_iter} iterations, {workers} worker(s), tiles of "
              f"{tile_rows} rows: {seconds:.3f} s")
        for name, index, device in used:
            print(f"  worker {name}: device {index} ({device})")
        print(f"pixels differing from numpy: {differ} of {counts.size} (the set's boundary; "
              "a driver may re-associate float expressions)")
    if differ > counts.size // 200:
        raise SystemExit(f"{differ} pixels differ from numpy: more than the boundary allows")
    return {"image": counts, "reference": reference, "differ": differ, "seconds": seconds,
            "workers": used}


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:5]]
    main(*sizes)
