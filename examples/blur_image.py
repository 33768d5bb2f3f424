"""Blur a picture: a 2-D kernel over an image held in a numpy array.

The picture is generated here (no download): concentric rings with a diagonal gradient and a
little noise, as 8-bit gray values in a float32 array of shape (height, width). ``box_blur``
averages each pixel's (2r+1) x (2r+1) neighbourhood, clamping at the edges, with 2-D indexes
``img[yy, xx]`` and a 2-D launch ``threads=(width, height)``; the result is written back into
the output array in place and compared with the same blur in numpy. ``--save out.pgm`` writes
the result as a PGM image any viewer opens. Run: ``python examples/blur_image.py [radius]``.
"""

from __future__ import annotations

import sys

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu


@Gpu
def box_blur(w: int, h: int, r: int, img: list[list[float]], out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    s: float = 0.0
    for dy in range(-r, r + 1):
        yy = min(max(y + dy, 0), h - 1)
        for dx in range(-r, r + 1):
            xx = min(max(x + dx, 0), w - 1)
            s += img[yy, xx]
    out[y, x] = s / ((2 * r + 1) * (2 * r + 1))


def picture(h: int = 240, w: int = 320, seed: int = 0) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    rings = 127.5 + 127.5 * np.cos(np.hypot(yy - h / 2, xx - w / 2) / 6.0)
    img = 0.7 * rings + 0.3 * 255.0 * (xx + yy) / (w + h)
    img += np.random.default_rng(seed).normal(0.0, 8.0, img.shape)
    return np.clip(img, 0, 255).astype(np.float32)


def numpy_blur(img: np.ndarray, r: int) -> np.ndarray:
    h, w = img.shape
    pad = np.pad(img.astype(np.float64), r, mode="edge")
    total = sum(pad[r + dy:r + dy + h, r + dx:r + dx + w]
                for dy in range(-r, r + 1) for dx in range(-r, r + 1))
    return total / (2 * r + 1) ** 2


def save_pgm(path: str, img: np.ndarray) -> None:
    h, w = img.shape
    with open(path, "wb") as f:
        f.write(f"P5 {w} {h} 255\n".encode())
        f.write(np.clip(img, 0, 255).astype(np.uint8).tobytes())


def main(radius: int = 2, save: str | None = None) -> dict:
    img = picture()
    h, w = img.shape
    out = np.zeros_like(img)
    gpu(box_blur, w, h, radius, img, out, threads=(w, h)).join()
    want = numpy_blur(img, radius)
    err = float(np.abs(out - want).max())
    ok = err < 1e-3
    noise_before = float(np.std(img - numpy_blur(img, 4)))
    noise_after = float(np.std(out - numpy_blur(out, 4)))
    print(f"{w}x{h} picture, {2 * radius + 1}x{2 * radius + 1} box blur: largest difference "
          f"from numpy {err:.2e}; fine detail (std of the picture minus its 9x9 blur) "
          f"{noise_before:.1f} -> {noise_after:.1f} -> {'ok' if ok else 'FAILED'}")
    if save:
        save_pgm(save, out)
    return {"image": img, "blurred": out, "numpy": want, "error": err, "ok": ok}


if __name__ == "__main__":
    argv = sys.argv[1:]
    path = None
    if "--save" in argv:
        k = argv.index("--save")
        path = argv[k + 1]
        del argv[k:k + 2]
    sys.exit(0 if main(int(argv[0]) if argv else 2, path)["ok"] else 1)
