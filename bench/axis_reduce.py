"""Axis reductions: ``add.reduce(x, axis=1)`` and ``axis=0`` of an n x n float32 array, in GB/s
of input read, against numpy's ``x.sum(axis=...)`` and, where torch and CUDA import,
``torch.sum(x, dim=...)`` on the GPU, in the same process.

Ours reduces a GpuArray (the input resident on the device) and each timed call ends with the
result's download (n floats), so the time covers the work, not just its queueing; torch's call
is followed by ``torch.cuda.synchronize()``. Every result is checked against float64 numpy
(tolerance scaled by the axis length) before any time is printed. ``cthreads whole`` (the
whole-array ``add.reduce(d)`` of the same data) is the yardstick of what the driver gives a
reduction. Defaults: 8192 on a GPU,
2048 on a CPU driver (lavapipe). It prints the form axis=0 ran in: on GPUs the two-pass form
(chunks of the axis, then the chunks folded), ``CTHREADS_AXIS_REDUCE=old`` the one-pass form,
and the kernel axis=1 ran (``CTHREADS_AXIS_REDUCE=r2``: the second round's kernels).

    PYTHONPATH=. python bench/axis_reduce.py [--n N] [--reps R] [--forms]

``--forms`` also times the ``r2`` and ``old`` forms in the same rounds (an A/B in one process).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cthreads.gpu import Gpu, device_name, to_device  # noqa: E402
from timing import alternating_ms  # noqa: E402


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def _check(got, x: np.ndarray, axis: int, what: str) -> None:
    want = x.astype(np.float64).sum(axis=axis)
    bound = 2 * x.shape[axis] * 2.0**-24 * np.abs(x.astype(np.float64)).sum(axis=axis)
    if not np.all(np.abs(np.asarray(got, np.float64) - want) <= bound):
        raise SystemExit(f"{what}: wrong result (max error "
                         f"{np.abs(np.asarray(got, np.float64) - want).max():.3g})")


def _torch_fns(x: np.ndarray) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    t = torch.from_numpy(x).cuda()
    fns = {}
    for axis in (1, 0):
        _check(torch.sum(t, dim=axis).cpu().numpy(), x, axis, f"torch dim={axis}")

        def run(axis=axis):
            torch.sum(t, dim=axis)
            torch.cuda.synchronize()
        fns[f"torch axis={axis}"] = run
    return fns


def _form(n: int, cpu_driver: bool) -> str:
    """Which form the axis=0 step of an n x n float32 array ran in."""
    from cthreads.runtime import axis_reducer as ar
    red = ar._now()
    kind = ar._kind(red, 1, n, n, "float", 0)
    threads = n // ar.codegen.outputs_per_invocation(kind)
    split = ar._split(red, kind, threads, n, False)
    if split is None:
        why = f"CTHREADS_AXIS_REDUCE={red.form}" if red.form else \
            "CPU driver" if cpu_driver else "no cut needed"
        return f"one-pass {kind} ({why})"
    passes = [f"{split[0]} chunks of {split[1]} rows ({threads * split[0]:,} invocations)"]
    again = ar._split(red, kind, threads, split[0], False, 1)
    if again is not None:
        passes.append(f"{again[0]} chunks of {again[1]}")
    passes.append(f"{(again or split)[0]} per output")
    return f"two-pass {kind}: " + ", then ".join(passes)


def _form_fns(d, x) -> dict:
    """``cthreads axis=k [form]``: the call in another CTHREADS_AXIS_REDUCE form, switched on
    this device's axis-reduction state for the call (its pipelines are kept per kernel)."""
    from cthreads.runtime import axis_reducer as ar
    red = ar._now()
    fns = {}
    for form in ("r3", "r2", "old"):
        for axis in (1, 0):
            def run(axis=axis, form=form):
                keep = red.form, red.old
                red.form, red.old = ("" if form == "r3" else form), form == "old"
                try:
                    return add.reduce(d, axis=axis).numpy()
                finally:
                    red.form, red.old = keep
            _check(run(), x, axis, f"cthreads axis={axis} [{form}]")
            fns[f"cthreads axis={axis} [{form}]"] = run
    return fns


def main(argv=None) -> dict:
    cpu_driver = any(s in device_name().lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2048 if cpu_driver else 8192)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--forms", action="store_true",
                    help="also time the r2 and old forms in the same rounds (A/B in one process)")
    args = ap.parse_args(argv)
    n = args.n
    x = np.random.default_rng(26).random((n, n), dtype=np.float32)
    d = to_device(x)
    fns = {}
    for axis in (1, 0):
        _check(add.reduce(d, axis=axis).numpy(), x, axis, f"cthreads axis={axis}")
        fns[f"cthreads axis={axis}"] = lambda axis=axis: add.reduce(d, axis=axis).numpy()
    if args.forms:
        fns.update(_form_fns(d, x))
    # the yardstick of this driver: the whole-array reduction of the same data (one number)
    fns["cthreads whole"] = lambda: add.reduce(d)
    fns.update(_torch_fns(x))
    ms = alternating_ms(fns, args.reps, warm=1)   # the CUDA/Vulkan switch untimed (timing.py)
    ms.update(alternating_ms({f"numpy axis={a}": (lambda a=a: x.sum(axis=a)) for a in (1, 0)},
                             args.reps))
    gbps = {k: x.nbytes / v / 1e6 for k, v in ms.items()}
    print(f"device: {device_name()}; {n} x {n} float32 ({x.nbytes / 1e6:.0f} MB), "
          f"median of {args.reps}")
    from cthreads.runtime import axis_reducer as ar
    red = ar._now()
    print(f"  form: CTHREADS_AXIS_REDUCE={red.form or '(unset: this round)'}; axis=1 kernel: "
          f"{ar._kind(red, n, n, 1, 'float', 0)}")
    print(f"  axis=0 form: {_form(n, cpu_driver)}")
    for k, v in gbps.items():
        print(f"  {k:20s} {ms[k]:9.3f} ms  {v:8.2f} GB/s")
    for axis in (1, 0):
        ours = gbps[f"cthreads axis={axis}"]
        for peer in ("numpy", "torch"):
            key = f"{peer} axis={axis}"
            if key in gbps:
                print(f"  axis={axis}: cthreads / {peer} = {ours / gbps[key]:.2f}x")
        print(f"  axis={axis}: cthreads / cthreads whole = {ours / gbps['cthreads whole']:.2f}x")
        for form in ("r3", "r2", "old"):
            key = f"cthreads axis={axis} [{form}]"
            if key in gbps:
                print(f"  axis={axis}: this round / {form} = {ours / gbps[key]:.2f}x")
    return gbps


if __name__ == "__main__":
    main()
