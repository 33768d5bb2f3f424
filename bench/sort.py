"""Issue 26's sort target: ``sort`` of n float32 keys, in M keys/s, against ``np.sort`` (its
default and its stable sort, on the host) and, where torch and CUDA import, ``torch.sort``
(``stable=True``, on the device), in the same process. Ours is timed GpuArray in, GpuArray
out (nothing downloaded but one element, which waits for the sort), and from a numpy array
(upload, sort, download); also ``argsort`` and ``sort(keys, values)`` with int32 values.
Alternating rounds, medians; the ratios are within one run.

Run: ``python bench/sort.py [--n N] [--reps R] [--direct-scatter]`` (default n: 16M on a GPU, 1M on a CPU
Vulkan driver such as lavapipe). The form that ran is printed: GPUs get 8-bit digits unless
``CTHREADS_SORT=old`` (the 4-bit form; ``--direct-scatter`` applies to it);
``CTHREADS_SORT=8bit`` forces 8-bit digits on CPU drivers too (sorted keys gathered by index,
the second-round form), ``new`` the same with the keys mapped back (GPUs' default),
``onesweep`` that with one histogram a key word and one look-back dispatch a digit.
``bench/sort_phases.py`` splits one sort's device time by kernel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.timing import alternating_ms  # noqa: E402
from cthreads.gpu import argsort, device_name, sort, to_device  # noqa: E402


def _torch_fns(x) -> dict:
    """torch.sort (stable) of the same keys on CUDA, each call synchronized; else nothing."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    t = torch.from_numpy(x).cuda()
    torch.sort(t, stable=True)
    torch.cuda.synchronize()

    def run():
        torch.sort(t, stable=True)
        torch.cuda.synchronize()
    return {"torch.sort": run}


def main(argv=None) -> dict:
    """Prints the report; returns the median ms of each row (``peers_all.py`` reads them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--direct-scatter", action="store_true",
                        help="store from the ranks, without the local sort in workgroup memory")
    opts = parser.parse_args(argv)
    if opts.direct_scatter:
        from cthreads.runtime import sorter
        sorter.LOCAL_SORT = False
    name = device_name()
    cpu = "llvmpipe" in name or "lavapipe" in name
    n = opts.n or ((1 << 20) if cpu else (16 << 20))
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    d = to_device(x)
    vals = to_device(np.arange(n, dtype=np.int32))
    assert np.array_equal(sort(x), np.sort(x, kind="stable"))          # warm and checked

    def ours():
        sort(d)[:1].numpy()

    def ours_arg():
        argsort(d)[:1].numpy()

    def ours_pairs():
        sort(d, vals)[1][:1].numpy()

    fns = {"cthreads sort (GpuArray)": ours, "cthreads sort (numpy in/out)": lambda: sort(x),
           "cthreads argsort (GpuArray)": ours_arg,
           "cthreads sort pairs (GpuArray)": ours_pairs,
           "np.sort": lambda: np.sort(x), "np.sort stable": lambda: np.sort(x, kind="stable")}
    fns.update(_torch_fns(x))
    for f in fns.values():
        f()
    ms = alternating_ms(fns, opts.reps, warm=1)   # the CUDA/Vulkan switch untimed (timing.py)
    from cthreads.runtime import sorter
    print(f"# sort of {n:,} float32 keys on {name}, median of {opts.reps} rounds "
          f"({sorter._sorter_now().form()}; CTHREADS_SORT={sorter._sorter_now().asked or '(unset)'})")
    for k, v in ms.items():
        print(f"{k:34s} {v:10.2f} ms  {n / v / 1e3:9.1f} M keys/s")
    base = "torch.sort" if "torch.sort" in ms else "np.sort"
    for k in ("cthreads sort (GpuArray)", "cthreads sort (numpy in/out)"):
        print(f"ratio {k} / {base}: {ms[base] / ms[k]:.3f}x")
    if base != "np.sort":
        print(f"ratio cthreads sort (GpuArray) / np.sort: "
              f"{ms['np.sort'] / ms['cthreads sort (GpuArray)']:.3f}x")
    return ms


if __name__ == "__main__":
    main()
