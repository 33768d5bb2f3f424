"""Inputs, numpy references and result checks shared by every implementation of the benchmark.

Imported by the workers of all implementations (ours, the original, raw wgpu, numpy), so it uses
only the standard library and numpy. Inputs are chosen so that every saxpy result is exact in
float32 (small multiples of 0.5), which lets the checks compare exactly.
"""

from __future__ import annotations

import math

import numpy as np

A = 0.5                       # saxpy's scalar
X_PERIOD = 7                  # x[i] = i % 7 (as floats)
Y0 = 1.0                      # y starts at 1.0 everywhere

MANDEL_W, MANDEL_H, MANDEL_ITER = 256, 256, 200
MANDEL_AGREE = 0.99           # share of pixels equal to numpy's float32 iteration

W7_STEPS, W7_DT = 24, 0.05
W7_AGREE = 0.99               # share of elements within tolerance of the numpy reference


# -- saxpy -------------------------------------------------------------------------------------

def saxpy_lists(n: int) -> tuple[list, list]:
    """x = [0.0, 1.0, ..., 6.0, 0.0, ...] and y = [1.0] * n, as Python lists of floats."""
    period = [float(k) for k in range(X_PERIOD)]
    x = (period * (n // X_PERIOD + 1))[:n]
    return x, [Y0] * n


def saxpy_arrays(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = (np.arange(n, dtype=np.int64) % X_PERIOD).astype(np.float32)
    return x, np.full(n, Y0, np.float32)


def saxpy_expected(n: int, launches: int) -> np.ndarray:
    """y after ``launches`` saxpy launches from the initial inputs (exact in float32)."""
    x = (np.arange(n, dtype=np.int64) % X_PERIOD).astype(np.float64)
    return Y0 + launches * A * x


def check_saxpy(y, n: int, launches: int) -> str | None:
    """None when ``y`` (list or array) holds the expected values, else what is wrong."""
    got = np.asarray(y, dtype=np.float64)
    if got.shape != (n,):
        return f"result has shape {got.shape}, expected ({n},)"
    want = saxpy_expected(n, launches)
    bad = np.flatnonzero(got != want)
    if bad.size:
        i = int(bad[0])
        return (f"{bad.size} of {n} elements wrong after {launches} launches; first at [{i}]: "
                f"got {got[i]!r}, expected {want[i]!r}")
    return None


# -- Mandelbrot ---------------------------------------------------------------------------------

def mandelbrot_numpy(width: int = MANDEL_W, height: int = MANDEL_H,
                     max_iter: int = MANDEL_ITER) -> np.ndarray:
    """The kernel's iteration in float32 with numpy (same expression order as the kernel)."""
    idx = np.arange(width * height)
    px = (idx % width).astype(np.float32)
    py = (idx // width).astype(np.float32)
    f32 = np.float32
    cx = f32(-2.2) + f32(3.0) * px / f32(width)
    cy = f32(-1.2) + f32(2.4) * py / f32(height)
    x = np.zeros_like(cx)
    y = np.zeros_like(cy)
    k = np.zeros(idx.size, np.int32)
    for _ in range(max_iter):
        alive = (x * x + y * y) <= f32(4.0)
        if not alive.any():
            break
        xt = x * x - y * y + cx
        y = np.where(alive, f32(2.0) * x * y + cy, y)
        x = np.where(alive, xt, x)
        k += alive
    return k


_mandel_ref: np.ndarray | None = None


def check_mandelbrot(out) -> str | None:
    global _mandel_ref
    if _mandel_ref is None:
        _mandel_ref = mandelbrot_numpy()
    got = np.asarray(out, dtype=np.int64)
    if got.shape != _mandel_ref.shape:
        return f"result has shape {got.shape}, expected {_mandel_ref.shape}"
    agree = float(np.mean(got == _mandel_ref))
    # The driver may re-associate float expressions: a few boundary pixels move by an iteration.
    if agree < MANDEL_AGREE:
        return f"only {agree:.2%} of pixels equal numpy's float32 iteration"
    return None


_mandel_sized: dict = {}


def check_mandelbrot_sized(out, width: int, height: int, max_iter: int) -> str | None:
    """As ``check_mandelbrot`` for any size (references cached per size)."""
    key = (width, height, max_iter)
    if key not in _mandel_sized:
        _mandel_sized[key] = mandelbrot_numpy(width, height, max_iter)
    want = _mandel_sized[key]
    got = np.asarray(out, dtype=np.int64)
    if got.shape != want.shape:
        return f"result has shape {got.shape}, expected {want.shape}"
    agree = float(np.mean(got == want))
    if agree < MANDEL_AGREE:
        return f"only {agree:.2%} of pixels equal numpy's float32 iteration"
    return None


# -- the CPU table: stencil and sum --------------------------------------------------------------

def stencil_input(width: int, seed: int = 1) -> np.ndarray:
    """A ``width`` x ``width`` grid of float32 values in [0, 1), flattened."""
    return np.random.default_rng(seed).random(width * width, dtype=np.float32)


def stencil_numpy(u: np.ndarray, width: int, out: np.ndarray | None = None) -> np.ndarray:
    """One Jacobi step of the 5-point stencil (border copied), in the kernel's order of sums."""
    g = u.reshape(-1, width)
    if out is None:
        v = g.copy()
    else:
        v = out.reshape(-1, width)
        v[...] = g
    inner = v[1:-1, 1:-1]
    np.add(g[1:-1, :-2], g[1:-1, 2:], out=inner)
    inner += g[:-2, 1:-1]
    inner += g[2:, 1:-1]
    inner *= np.float32(0.25)
    return v.reshape(-1)


def check_stencil(v, u: np.ndarray, width: int) -> str | None:
    want = stencil_numpy(u, width).astype(np.float64)
    got = np.asarray(v, np.float64)
    if got.shape != want.shape:
        return f"result has shape {got.shape}, expected {want.shape}"
    # the same float32 operations in the same order: equal but for a contracted multiply-add
    bad = np.flatnonzero(np.abs(got - want) > 1e-6 * np.abs(want))
    if bad.size:
        i = int(bad[0])
        return f"{bad.size} elements differ; first at [{i}]: {got[i]} vs {want[i]}"
    return None


def sum_input(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random(n, dtype=np.float32)


def check_sum(got: float, x: np.ndarray) -> str | None:
    """A float32 sum of ``x`` on the device within its rounding bound of the float64 sum: each
    device thread adds its share in sequence (at most max(16, n / 2**18) groups of four values
    in cthreads' reductions), then trees meet (ceil(log2 n) levels, a few more per pass)."""
    exact = float(np.sum(x, dtype=np.float64))
    n = max(x.size, 2)
    depth = math.ceil(math.log2(n)) + max(16, math.ceil(n / 2**18)) + 8
    bound = depth * 2.0**-24 * float(np.abs(x, dtype=np.float64).sum())
    if not abs(got - exact) <= bound:
        return f"sum {got!r} is {abs(got - exact):.3g} from numpy's {exact!r} (bound {bound:.3g})"
    return None


# -- W7's kernel --------------------------------------------------------------------------------

def w7_inputs(n: int) -> tuple[list, list]:
    pos = [((i % 41) - 20) * 0.1 for i in range(n)]
    vel = [((i % 13) - 6) * 0.05 for i in range(n)]
    return pos, vel


def w7_numpy(pos, vel, steps: int = W7_STEPS, dt: float = W7_DT) -> np.ndarray:
    """kernels_w7.w7_step in float32 with numpy."""
    f32 = np.float32
    p = np.asarray(pos, np.float32)
    v = np.asarray(vel, np.float32)
    dt = f32(dt)
    acc = np.zeros_like(p)
    for _ in range(steps):
        f = -p * f32(0.5)
        f = np.where(p > 1.0, f - f32(0.25), np.where(p < -1.0, f + f32(0.25), f * f32(2.0)))
        v = v + f * dt
        p = p + v * dt
        acc = acc + p * p
    s = np.zeros_like(p)
    for j in range(4):
        s = s + np.sqrt(acc + f32(j))
    bonus = np.where(acc > 10.0, np.floor(acc * f32(0.1)), f32(0.0))
    return s + bonus + np.floor(p)


def check_w7(out, pos, vel) -> str | None:
    want = w7_numpy(pos, vel).astype(np.float64)
    got = np.asarray(out, np.float64)
    if got.shape != want.shape:
        return f"result has shape {got.shape}, expected {want.shape}"
    close = np.isclose(got, want, rtol=1e-3, atol=1e-3)
    if float(np.mean(close)) < W7_AGREE:
        i = int(np.flatnonzero(~close)[0])
        return f"{int((~close).sum())} elements differ; first at [{i}]: {got[i]} vs {want[i]}"
    return None


# -- numpy on the CPU ----------------------------------------------------------------------------

def gbps(n: int, seconds_per_launch: float, bytes_per_element: int = 12) -> float:
    return n * bytes_per_element / seconds_per_launch / 1e9 if seconds_per_launch > 0 else math.nan
