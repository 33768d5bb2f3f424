"""Issue 26's scan target: ``add.accumulate`` of n float32 values (an inclusive prefix sum) in
GB/s of input read (4 bytes per element), against ``np.cumsum`` (float32, into a preallocated
array) and, where torch and CUDA import, ``torch.cumsum`` on the device (float32, ``out=``),
all in the same process. "cthreads device" scans a GpuArray into a new GpuArray (timed up to
its completion: the last element's 4-byte download waits for the work before it); "cthreads
numpy" takes the numpy array and returns one (its upload and download included). Alternating
rounds, medians; ratios are within one run. "cthreads copy" is the floor of a one-pass scan:
a device copy of the GpuArray (8 bytes an element moved, the same call and 4-byte wait).

Run: ``python bench/accumulate.py [--n N] [--reps R]`` (default n: 64M elements on a GPU, 4M on
a CPU Vulkan driver such as lavapipe). The form that ran is printed: ``CTHREADS_SCAN=old``
selects the Hillis-Steele form of 256 x 16 blocks, ``new`` the fast reduce-then-scan form
(256 x 32 blocks, subgroup scans), ``lookback`` the one-pass decoupled look-back form (on CPU
drivers only up to 16 tiles of 8,192: ``--n 131072``), unset: look-back on GPUs, the old form
on CPU drivers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.gpu import Gpu, device_name, to_device  # noqa: E402
from cthreads.runtime import scan_lookback, scanner  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def _torch_fns(x: np.ndarray) -> tuple:
    """torch.cumsum on a CUDA tensor, synchronized per call; ({}, None) without torch+CUDA."""
    try:
        import torch
    except ImportError:
        return {}, None
    if not torch.cuda.is_available():
        return {}, None
    t = torch.from_numpy(x).to("cuda")
    out = torch.empty_like(t)

    def cumsum():
        torch.cumsum(t, 0, out=out)
        torch.cuda.synchronize()
    cumsum()
    return {"torch.cumsum": cumsum}, out


def form(n: int) -> str:
    """Which scan form runs on this device for ``n`` float32 values (``scanner.FORM``)."""
    sc = scanner._scanner_now()
    if scan_lookback.usable(sc, False, "float", (n, 1, 1), 0, scanner.form()):
        size, per4 = scan_lookback.SHAPE
        return f"lookback (one pass, tiles of {size} x {per4 * 4}, decoupled look-back)"
    if not sc.fast(False):
        return "old (Hillis-Steele, blocks of %d x %d)" % sc.shape(False)
    sub = "subgroup" in sc.ctx.features
    return ("new (blocks of %d x %d, " % sc.shape(False)
            + ("subgroup scans)" if sub else "no subgroups: workgroup-memory scans)"))


def main(argv=None) -> dict:
    cpu_driver = any(s in device_name().lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2 ** 22 if cpu_driver else 2 ** 26)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    n, reps = args.n, args.reps
    # small integers: every prefix sum is exact in float32 below 2**24 in magnitude
    x = (np.random.default_rng(1).integers(-1, 2, n)).astype(np.float32)
    g = to_device(x)
    host = np.empty_like(x)
    held = {}

    def device():
        held["out"] = add.accumulate(g)
        held["out"][n - 1:].numpy()

    def copy():
        held["copy"] = g.copy()
        held["copy"][n - 1:].numpy()

    fns = {"cthreads device": device, "cthreads copy": copy,
           "cthreads numpy": lambda: held.__setitem__("np", add.accumulate(x)),
           "numpy cumsum": lambda: np.cumsum(x, out=host)}
    device(), fns["cthreads numpy"]()                     # compile, warm
    torch_fns, torch_out = _torch_fns(x)
    fns.update(torch_fns)
    ms = alternating_ms(fns, reps, warm=1)   # the CUDA/Vulkan switch untimed (timing.py)

    want = np.cumsum(x.astype(np.float64))
    assert np.array_equal(held["out"].numpy(), want.astype(np.float32))
    assert np.array_equal(held["np"], want.astype(np.float32))
    if torch_out is not None:
        assert np.array_equal(torch_out.cpu().numpy(), want.astype(np.float32))
    gbps = {k: 4 * n / (v / 1e3) / 1e9 for k, v in ms.items()}
    print(f"{device_name()}: add.accumulate of n = {n:,} float32 ({4 * n / 1e6:.0f} MB), "
          f"{reps} alternating rounds (median ms, GB/s of input):")
    print(f"  scan form: {form(n)} [CTHREADS_SCAN={scanner.form() or 'unset'}]")
    for k in ms:
        print(f"  {k:16s} {ms[k]:10.2f} ms  {gbps[k]:8.2f} GB/s")
    for a, b in [("cthreads device", "numpy cumsum"), ("cthreads numpy", "numpy cumsum"),
                 ("cthreads device", "cthreads copy"), ("cthreads device", "torch.cumsum")]:
        if a in gbps and b in gbps:
            print(f"  {a} / {b}: {gbps[a] / gbps[b]:.2f}x")
    return {"n": n, "ms": ms, "GBps": gbps, "form": form(n)}


if __name__ == "__main__":
    main()
