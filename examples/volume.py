"""Fill a 3-D volume: a signed-distance field of two spheres on a 3-D grid.

``distance_field`` writes, for every voxel of a ``list[list[list[float]]]`` of shape
(depth, height, width), the distance to the nearer of two spheres' surfaces (negative inside),
with a 3-D launch ``threads=(width, height, depth)`` and the three ``GlobalIdx`` axes. The
result is checked against numpy, and the voxels inside either sphere are counted with
``func.reduce`` on the device. Run: ``python examples/volume.py [n]``.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu

SPHERES = ((0.35, 0.5, 0.5, 0.25), (0.7, 0.45, 0.55, 0.18))     # (x, y, z, radius), unit cube


@Gpu.func
def sphere(px: float, py: float, pz: float, cx: float, cy: float, cz: float, r: float) -> float:
    return math.sqrt((px - cx) ** 2 + (py - cy) ** 2 + (pz - cz) ** 2) - r


@Gpu
def distance_field(vol: list[list[list[float]]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    z: int = GlobalIdx.z
    d: int = vol.shape[0]
    h: int = vol.shape[1]
    w: int = vol.shape[2]
    if x >= w or y >= h or z >= d:
        return
    px = (x + 0.5) / w
    py = (y + 0.5) / h
    pz = (z + 0.5) / d
    a = sphere(px, py, pz, 0.35, 0.5, 0.5, 0.25)
    b = sphere(px, py, pz, 0.7, 0.45, 0.55, 0.18)
    vol[z, y, x] = min(a, b)


@Gpu.func
def add(a: int, b: int) -> int:
    return a + b


def numpy_field(shape: tuple) -> np.ndarray:
    d, h, w = shape
    z, y, x = np.meshgrid((np.arange(d) + 0.5) / d, (np.arange(h) + 0.5) / h,
                          (np.arange(w) + 0.5) / w, indexing="ij")
    return np.minimum(*(np.sqrt((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) - r
                        for cx, cy, cz, r in SPHERES))


def main(n: int = 96) -> dict:
    shape = (n, n, n)
    vol = np.zeros(shape, np.float32)
    gpu(distance_field, vol, threads=(n, n, n)).join()
    want = numpy_field(shape)
    err = float(np.abs(vol - want).max())
    inside = add.reduce((vol < 0).astype(np.int32))
    ok = err < 1e-5 and inside == int((want < 0).sum())
    exact = sum(4 / 3 * math.pi * r ** 3 for *_, r in SPHERES) * n ** 3
    print(f"{n}^3 voxels: largest difference from numpy {err:.1e}; {inside:,} voxels inside "
          f"the spheres (numpy {int((want < 0).sum()):,}; the spheres' volume is "
          f"{exact:,.0f} voxels, counting the overlap twice) -> {'ok' if ok else 'FAILED'}")
    return {"volume": vol, "numpy": want, "error": err, "inside": inside, "ok": ok}


if __name__ == "__main__":
    sys.exit(0 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 96)["ok"] else 1)
