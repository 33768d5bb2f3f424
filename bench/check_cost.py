"""What bounds checks cost in loop-heavy kernels: checked (the default) against
``@Gpu(boundscheck=False)``, in one process.

    PYTHONPATH=$PWD python bench/check_cost.py            # CTHREADS_CHECK_FORM=select: the old form

Kernels: a naive matrix product (flat 1-D lists and 2-D lists), a 1-D convolution with a loop
over the filter, an N-body double loop, and ``mm_kept``, a matrix product written so that its
checks cannot be proven (the cost of the checks that remain, i.e. of the check form). Prints
the best of ``REPEAT`` launch+join times (device arrays: no copies) and the ratio unchecked / checked (1.00: the checks
cost nothing). The full compute-bound set is bench/compute_bound.py.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from cthreads import config
from cthreads.gpu import GlobalIdx, Gpu, gpu, to_device, zeros

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compute_kernels import conv1d as conv  # noqa: E402 - the compute set's kernels
from compute_kernels import matmul_2d as mm2  # noqa: E402
from compute_kernels import matmul_flat as mm  # noqa: E402

REPEAT = int(os.environ.get("BENCH_REPEAT", "15"))


def mm_kept(n: int, a: list[float], b: list[float], c: list[float]) -> None:
    i: int = GlobalIdx.y
    j: int = GlobalIdx.x
    m: int = n
    if m < 0:
        m = 0               # m is assigned twice: nothing about it is proven
    if i >= m or j >= m:
        return
    s: float = 0.0
    for k in range(m):
        s += a[i * m + k] * b[k * m + j]
    c[i * m + j] = s


def nbody(n: int, px: list[float], py: list[float], pz: list[float], ax: list[float],
          ay: list[float], az: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    fx: float = 0.0
    fy: float = 0.0
    fz: float = 0.0
    for j in range(n):
        dx = px[j] - px[i]
        dy = py[j] - py[i]
        dz = pz[j] - pz[i]
        r2 = dx * dx + dy * dy + dz * dz + 0.01
        inv = 1.0 / (r2 * r2 ** 0.5)
        fx += dx * inv
        fy += dy * inv
        fz += dz * inv
    ax[i] = fx
    ay[i] = fy
    az[i] = fz


def _best(*fns) -> list[float]:
    """Best time of each of ``fns``, run in turn ``REPEAT`` times (interleaved, so that a
    change in the machine's load falls on both)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(REPEAT):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def cases(size: int = 256):
    """(name, kernel function, launch(kernel)) of each workload: device arrays (``GpuArray``)
    made once, so a launch+join times the kernel and the status read, not the copies."""
    rng = np.random.default_rng(0)
    n = size
    a = to_device(rng.random((n, n), dtype=np.float32))
    b = to_device(rng.random((n, n), dtype=np.float32))
    fa, fb = to_device(a.numpy().ravel()), to_device(b.numpy().ravel())
    c, c2 = zeros(n * n), zeros((n, n))
    m = 64
    cn = 1 << 16
    x = to_device(rng.random(cn + m - 1, dtype=np.float32))
    w = to_device(rng.random(m, dtype=np.float32))
    out = zeros(cn)
    nb = 2048
    p = [to_device(rng.random(nb, dtype=np.float32)) for _ in range(3)]
    acc = [zeros(nb) for _ in range(3)]
    return [
        (f"mm {n}^2 (flat lists)", mm, lambda k: gpu(k, n, fa, fb, c, threads=(n, n)).join()),
        (f"mm {n}^2 (2-D lists)", mm2, lambda k: gpu(k, n, a, b, c2, threads=(n, n)).join()),
        (f"mm {n}^2, checks kept", mm_kept,
         lambda k: gpu(k, n, fa, fb, c, threads=(n, n)).join()),
        (f"conv {cn} x {m}", conv, lambda k: gpu(k, cn, m, x, w, out).join()),
        (f"nbody {nb}", nbody, lambda k: gpu(k, nb, *p, *acc).join()),
    ]


def conv_kept(n: int, m: int, x: list[float], w: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    t: int = m
    if t < 0:
        t = 0               # t is assigned twice: nothing about it is proven
    if i >= n:
        return
    s: float = 0.0
    for k in range(t):
        s += x[i + k] * w[k]
    out[i] = s


def gather(n: int, idx: list[int], x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = x[idx[i]] * 2.0 + 1.0       # x[idx[i]] cannot be proven: a memory-bound check


def forms(size: int = 256) -> None:
    """The two check forms of kernels whose checks stay, compiled side by side."""
    if not hasattr(config.current(), "check_form"):
        return
    rng = np.random.default_rng(1)
    n, cn, m = size, 1 << 16, 64
    fa, fb, c = (to_device(rng.random(n * n, dtype=np.float32)) for _ in range(3))
    x = to_device(rng.random(cn + m - 1, dtype=np.float32))
    w, out = to_device(rng.random(m, dtype=np.float32)), zeros(cn)
    gn = 1 << 20
    gi = to_device(rng.integers(0, gn, gn, dtype=np.int32))
    gx, gout = to_device(rng.random(gn, dtype=np.float32)), zeros(gn)
    print(f"\nchecks that stay, by CTHREADS_CHECK_FORM (best of {REPEAT}, interleaved)")
    print(f"{'kernel':28s} {'branch ms':>11s} {'select ms':>13s} {'unchecked ms':>13s}")
    for name, fn, launch in [
            (f"mm {n}^2, checks kept", mm_kept,
             lambda k: gpu(k, n, fa, fb, c, threads=(n, n)).join()),
            (f"conv {cn} x {m}, checks kept", conv_kept,
             lambda k: gpu(k, cn, m, x, w, out).join()),
            (f"gather {gn}", gather, lambda k: gpu(k, gn, gi, gx, gout).join())]:
        kernels = []
        for form in ("branch", "select"):
            with config.override(check_form=form):
                k = Gpu(fn)
                k.program                      # noqa: B018 - compiled under this form
            kernels.append(k)
        kernels.append(Gpu(boundscheck=False)(fn))
        t = _best(*(lambda k=k: launch(k) for k in kernels))
        print(f"{name:28s} {t[0] * 1e3:11.2f} {t[1] * 1e3:13.2f} {t[2] * 1e3:13.2f}")


def main() -> None:
    form = getattr(config.current(), "check_form", "select (a tree without the setting)")
    from cthreads.probes import device_name  # noqa: PLC0415 - starts the device
    print(f"device: {device_name()}")
    print(f"check form: {form} (CTHREADS_CHECK_FORM); best of {REPEAT} launch+join")
    print(f"{'kernel':28s} {'checked ms':>11s} {'unchecked ms':>13s} {'unchecked/checked':>18s}")
    for name, fn, launch in cases(int(sys.argv[1]) if len(sys.argv) > 1 else 256):
        checked, unchecked = Gpu(fn), Gpu(boundscheck=False)(fn)
        tc, tu = _best(lambda: launch(checked), lambda: launch(unchecked))
        print(f"{name:28s} {tc * 1e3:11.2f} {tu * 1e3:13.2f} {tu / tc:18.2f}")
    forms(int(sys.argv[1]) if len(sys.argv) > 1 else 256)


if __name__ == "__main__":
    main()
