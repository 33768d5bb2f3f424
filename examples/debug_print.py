"""A kernel debugged with ``print``: Newton's square root whose loop never stops for some inputs.

``newton_buggy`` iterates ``g = (g + x / g) / 2`` until ``abs(g * g - x) < 1e-6``. That
tolerance is absolute: for x above about 8 the float32 neighbours of ``g * g`` lie more than
1e-6 apart, so the test can never pass and those threads run to the step cap. The step counts
say *which* threads are stuck; a ``print`` inside the kernel, on the stuck threads only, says
*why*: the residual ``g * g - x`` sits at a few float32 spacings and does not shrink. The lines
arrive at ``join()`` in thread order, at most ``print_limit`` of them, then one line counting
the rest.

``newton`` is the fix: stop when a step changes ``g`` by less than a relative 1e-6. Run:
``python examples/debug_print.py [n]``.
"""

from __future__ import annotations

import contextlib
import io
import sys

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, gpu

CAP = 60                       # the most Newton steps a thread takes


@Gpu(print_limit=4)
def newton_buggy(n: int, x: list[float], root: list[float], steps: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    g: float = max(x[i], 1.0)
    k: int = 0
    while k < CAP and abs(g * g - x[i]) >= 1e-6:      # BUG: an absolute tolerance
        g = 0.5 * (g + x[i] / g)
        k += 1
    if k == CAP:
        print(f"thread {i:3d}: x = {x[i]:<10.6g} g = {g:.9g}  g*g - x = {g * g - x[i]:+.3g}")
    root[i] = g
    steps[i] = k


@Gpu
def newton(n: int, x: list[float], root: list[float], steps: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    g: float = max(x[i], 1.0)
    k: int = 0
    while k < CAP:
        h: float = 0.5 * (g + x[i] / g)
        k += 1
        done: bool = abs(h - g) <= 1e-6 * h          # relative: right at every magnitude
        g = h
        if done:
            break
    root[i] = g
    steps[i] = k


def main(n: int = 32) -> dict:
    x = np.geomspace(0.01, 1e4, n).astype(np.float32)
    root = np.zeros(n, np.float32)
    steps = np.zeros(n, np.int32)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):            # the kernel's lines, kept to return
        gpu(newton_buggy, n, x, root, steps).join()
    printed = out.getvalue()
    stuck = np.flatnonzero(steps == CAP)
    print(f"newton_buggy: {len(stuck)} of {n} threads ran all {CAP} steps; they printed:")
    print(printed, end="")
    fixed_root = np.zeros(n, np.float32)
    fixed_steps = np.zeros(n, np.int32)
    gpu(newton, n, x, fixed_root, fixed_steps).join()
    error = float(np.max(np.abs(fixed_root / np.sqrt(x.astype(np.float64)) - 1.0)))
    print(f"newton (fixed): at most {int(fixed_steps.max())} steps, largest relative error "
          f"{error:.2g}")
    ok = bool(len(stuck) > 0 and fixed_steps.max() < CAP and error < 1e-6)
    return {"x": x, "steps": steps, "stuck": stuck, "printed": printed,
            "fixed_root": fixed_root, "fixed_steps": fixed_steps, "ok": ok}


if __name__ == "__main__":
    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
    sys.exit(0 if result["ok"] else 1)
