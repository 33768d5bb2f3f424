"""The ND workload: a 2-D 5-point stencil on an n x n float32 grid, resident in a GpuArena.

* ``st2d_GBps``: the kernel written with a 2-D list and a 2-D launch (``threads=(n, n)``);
* ``st1d_GBps``: the same kernel flattened by hand in 1-D (``i % w``, ``i // w``, ``u[i - w]``)
  with the 1-D API, the way it had to be written before N-D lists existed;
* ``saxpy_GBps``: our resident saxpy over n*n values in the same process (12 bytes per value),
  the yardstick of the target (stencil GB/s >= 0.7x saxpy GB/s);
* ``numpy_GBps``: the same step with numpy slices on the CPU; ``torch_GBps`` (CUDA only,
  when torch sees a GPU): the same slices on a torch tensor, synchronized.

Stencils count 8 bytes per grid point (one read and one write of a float32, as caches serve
the neighbours). Every result is checked against numpy; a wrong one is an error, never a time.
"""

from __future__ import annotations

import numpy as np

from cthreads.gpu import GlobalIdx, Gpu, GpuArena, gpu
from examples.samples import saxpy

from timing import alternating_ms


@Gpu
def stencil2d(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        return
    v[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])


@Gpu
def stencil1d(n: int, w: int, u: list[float], v: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    x: int = i % w
    y: int = i // w
    if x < 1 or y < 1 or x >= w - 1 or y >= n // w - 1:
        return
    v[i] = 0.25 * (u[i - w] + u[i + w] + u[i - 1] + u[i + 1])


def _numpy_step(u: np.ndarray, v: np.ndarray) -> None:
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])




def _torch(u: np.ndarray, reps: int) -> float | None:
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    tu = torch.from_numpy(u).cuda()
    tv = tu.clone()

    def step():
        tv[1:-1, 1:-1] = 0.25 * (tu[:-2, 1:-1] + tu[2:, 1:-1] + tu[1:-1, :-2] + tu[1:-1, 2:])
        torch.cuda.synchronize()

    step()
    s = alternating_ms({"t": step}, reps)["t"] / 1e3
    want = u.copy()
    _numpy_step(u, want)
    if not np.allclose(tv.cpu().numpy(), want, rtol=1e-6, atol=1e-6):
        raise AssertionError("torch stencil differs from numpy")
    return s


def nd(p: dict) -> dict:
    n, reps = p["n"], p["reps"]
    rng = np.random.default_rng(11)
    u = rng.random((n, n)).astype(np.float32)
    v2, v1 = u.copy(), u.copy().reshape(-1)
    u1 = u.reshape(-1).copy()
    x = np.ones(n * n, np.float32)
    y = np.zeros(n * n, np.float32)
    want = u.copy()
    _numpy_step(u, want)
    vn = u.copy()
    m: dict = {}
    with GpuArena() as arena:
        arena.bind(u=u, v2=v2, u1=u1, v1=v1, x=x, y=y)
        run = {"2d": lambda: gpu(stencil2d, n, n, u, v2, threads=(n, n)).join(download=False),
               "1d": lambda: gpu(stencil1d, n * n, n, u1, v1).join(download=False),
               "saxpy": lambda: gpu(saxpy, n * n, 0.5, x, y).join(download=False),
               "numpy": lambda: _numpy_step(u, vn)}
        for f in run.values():
            f()
        s = {k: ms / 1e3 for k, ms in alternating_ms(run, reps).items()}
        arena.sync("v2", "v1")
    for name, got in (("2-D", v2), ("flattened 1-D", v1.reshape(n, n)), ("numpy", vn)):
        if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            return {"error": f"{name} stencil differs from numpy", "metrics": m}
    points = n * n
    m["st2d_GBps"] = 8 * points / s["2d"] / 1e9
    m["st1d_GBps"] = 8 * points / s["1d"] / 1e9
    m["saxpy_GBps"] = 12 * points / s["saxpy"] / 1e9
    m["numpy_GBps"] = 8 * points / s["numpy"] / 1e9
    t = _torch(u, reps)
    if t is not None:
        m["torch_GBps"] = 8 * points / t / 1e9
    return {"error": None, "metrics": m}


WORKLOADS = {"ND": nd}
