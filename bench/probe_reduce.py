#!/usr/bin/env python3
"""Probe the shape of ``func.reduce`` on this machine's device: GB/s of a resident float32 sum
for each (workgroups per pass cap, groups of four per thread, loads per loop pass, tree
variant), next to the resident saxpy (bytes read) and, where CUDA is there, torch.

    python bench/probe_reduce.py [--n 67108864] [--reps 15]

The defaults in ``cthreads/runtime/reducer.py`` (``SHAPE_GPU``/``SHAPE_CPU``, ``UNROLL_*``) come from
runs of this; docs/performance.md ("Reductions") has the figures.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cthreads.runtime import reducer as reduction  # noqa: E402
from cthreads.gpu import GpuArena, device_name, gpu  # noqa: E402
from examples.samples import saxpy  # noqa: E402

from reduction import add  # noqa: E402
from reference import check_sum, sum_input  # noqa: E402
from timing import median_ms  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args(argv)
    n, reps = args.n, args.reps
    x = sum_input(n)
    y = np.zeros(n, np.float32)
    red = reduction._reducer_now()
    cpu = red.ctx.is_cpu
    print(f"{device_name()}: n={n:,}, reps={reps}, workgroup {red.size}, form "
          f"{red.form or '(unset)'} (CTHREADS_REDUCE_FORM), "
          f"subgroup feature {'yes' if 'subgroup' in red.ctx.features else 'no'}")
    gb = 4 * n / 1e6
    with GpuArena() as arena:
        arena.bind(x=x, y=y)
        gpu(saxpy, n, 0.5, x, y).join(download=False)
        ms = median_ms(lambda: gpu(saxpy, n, 0.5, x, y).join(download=False), reps)
        print(f"resident saxpy: {2 * gb / ms:.1f} GB/s read")
        variants = ["subgroup", "shared"] if "subgroup" in red.ctx.features else ["shared"]
        caps = (64, 256, 1024, 4096) if cpu else (1024, 2048, 4096, 8192, 16384)
        for variant in variants:
            for cap in caps:
                for unroll in (1, 2, 4):
                    shape = (cap, 16 if cpu else 8, 4096 if cpu else 8192)
                    if cpu:
                        reduction.SHAPE_CPU, reduction.UNROLL_CPU = shape, unroll
                    else:
                        reduction.SHAPE_GPU, reduction.UNROLL_GPU = shape, unroll
                    reduction._STATE.states.clear()     # a new state: the new shape
                    op = add.reduce_op()
                    got = reduction.run_reduction(op, x, None, "add", variant)
                    err = check_sum(got, x)
                    ms = median_ms(lambda: reduction.run_reduction(op, x, None, "add", variant),
                                   reps)
                    print(f"  {variant:<8} groups<={cap:<6} unroll {unroll}: "
                          f"{gb / ms:8.1f} GB/s  {ms:.3f} ms" + (f"  WRONG: {err}" if err else ""))
    try:
        import torch
    except ImportError:
        print("torch: not installed here")
        return 0
    if torch.cuda.is_available():
        t = torch.from_numpy(x).cuda()
        t.sum().item()
        ms = median_ms(lambda: t.sum().item(), reps)
        print(f"torch x.sum().item(): {gb / ms:.1f} GB/s  {ms:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
