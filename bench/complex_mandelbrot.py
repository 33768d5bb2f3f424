"""Issue 24's complex target: a complex Mandelbrot against the same written with re/im float
pairs (``bench/kernels_original.mandelbrot``), device time of joined launches into a GpuArray
(nothing downloaded), alternating rounds, medians. Run: ``python bench/complex_mandelbrot.py
[width height max_iter reps]``. Three complex forms: escape tested with ``abs(z) <= 2.0``
(compiled to the squared magnitude against 4.0: complexes.abs_compare), with
``z.real**2 + z.imag**2 <= 4.0`` written out, and ``abs(z) <= 2.0`` in float64 (complex128)
against float64 pairs."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.gpu import GlobalIdx, Gpu, gpu, zeros  # noqa: E402
from cthreads.lang.widths import float64  # noqa: E402


@Gpu
def pairs(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    px: int = i % width
    py: int = i // width
    cx: float = -2.2 + 3.0 * px / width
    cy: float = -1.2 + 2.4 * py / height
    x: float = 0.0
    y: float = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[i] = k


@Gpu
def complex_abs(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c = complex(-2.2 + 3.0 * (i % width) / width, -1.2 + 2.4 * (i // width) / height)
    z = 0j
    k: int = 0
    while k < max_iter and abs(z) <= 2.0:
        z = z * z + c
        k += 1
    counts[i] = k


@Gpu
def complex_sq(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c = complex(-2.2 + 3.0 * (i % width) / width, -1.2 + 2.4 * (i // width) / height)
    z = 0j
    k: int = 0
    while k < max_iter and z.real * z.real + z.imag * z.imag <= 4.0:
        z = z * z + c
        k += 1
    counts[i] = k


@Gpu
def pairs64(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    cx: float64 = -2.2 + 3.0 * float64(i % width) / width
    cy: float64 = -1.2 + 2.4 * float64(i // width) / height
    x: float64 = 0.0
    y: float64 = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float64 = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[i] = k


@Gpu
def complex128_abs(n: int, width: int, height: int, max_iter: int, counts: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c = complex(-2.2 + 3.0 * float64(i % width) / width,
                -1.2 + 2.4 * float64(i // width) / height)
    z = c - c
    k: int = 0
    while k < max_iter and abs(z) <= 2.0:
        z = z * z + c
        k += 1
    counts[i] = k


def main() -> None:
    w, h, iters, reps = (int(a) for a in sys.argv[1:5]) if len(sys.argv) > 4 else \
        (1024, 768, 256, 15)
    n = w * h
    outs = {name: zeros(n, np.int32) for name in ("pairs", "complex_abs", "complex_sq",
                                                  "pairs64", "complex128_abs")}
    kernels = {"pairs": pairs, "complex_abs": complex_abs, "complex_sq": complex_sq,
               "pairs64": pairs64, "complex128_abs": complex128_abs}

    def run(name):
        return lambda: gpu(kernels[name], n, w, h, iters, outs[name]).join(download=False)

    for name in kernels:
        run(name)()                                           # compile, warm
    ms = alternating_ms({name: run(name) for name in kernels}, reps)
    same = {name: int((outs[name].numpy() != outs["pairs"].numpy()).sum()) for name in kernels}
    print(f"{w}x{h}, max_iter {iters}, {reps} alternating rounds (median ms):")
    for name in kernels:
        base = "pairs64" if name in ("pairs64", "complex128_abs") else "pairs"
        print(f"  {name:14s} {ms[name]:9.2f} ms  {ms[name] / ms[base]:.3f}x of {base}"
              f"  (counts differing from float32 pairs: {same[name]})")


if __name__ == "__main__":
    main()
