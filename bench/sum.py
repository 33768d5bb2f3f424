"""Whole-array sums: ``add.reduce(d)`` of a float32 / float64 GpuArray in both forms of
``f.reduce``, against numpy's ``x.sum()`` and, where torch and CUDA import, ``torch.sum``, in
the same process. GB/s at 4 / 8 bytes per value; medians of alternating rounds.

Two ways of calling, each compared with the same way on the peer:

* ``number``: a Python number per call (ours ``add.reduce(d)``; torch ``x.sum().item()``; numpy
  ``float(x.sum())``): each call waits for its result;
* ``queued``: ``k`` sums whose results stay on the device, then one wait (ours
  ``add.reduce(d, to_device=True)``, a 0-d GpuArray, ``k`` times, then ``.item()`` of the last:
  the queue runs in order; torch ``x.sum()`` ``k`` times, a 0-d CUDA tensor each, then
  ``torch.cuda.synchronize()``).

The forms: ``one-pass`` (``CTHREADS_REDUCE_FORM=new``, the default on GPUs: one dispatch, the
last workgroup folds the partials; ``runtime/one_pass.py``) and ``old``
(``CTHREADS_REDUCE_FORM=old``: a pass per level); both
run in this process, the form switched on the device's reduction state between rounds. Every
result is checked against float64 numpy before a time is printed.

    PYTHONPATH=. python bench/sum.py [--n N] [--k K] [--reps R]

Defaults: n=64M, k=100 on a GPU; n=4M, k=10 on a CPU driver (lavapipe).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cthreads import config  # noqa: E402
from cthreads.gpu import Gpu, device_name, to_device  # noqa: E402
from cthreads.runtime import reducer  # noqa: E402
from timing import alternating_ms  # noqa: E402

FORMS = {"one-pass": "new", "old": "old"}    # name -> the reducer's ``form``


@Gpu.func
def add(a: float, b: float) -> float:
    return a + b


def _checker(x: np.ndarray, bits: int):
    exact = float(np.sum(x, dtype=np.float64))
    eps = 2.0 ** -24 if bits == 32 else 2.0 ** -52
    # any order of additions: within (tree depth + sequential runs) roundings
    bound = (64 + x.size / 2**18) * eps * float(np.abs(x, dtype=np.float64).sum())

    def check(got, what: str) -> None:
        if not abs(float(got) - exact) <= bound:
            raise SystemExit(f"WRONG: {what} gave {got!r}, numpy (float64) {exact!r}")
    return check


def _torch():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None, "torch not installed"
    if not torch.cuda.is_available():
        return None, "torch without CUDA"
    return torch, torch.cuda.get_device_name(0)


def _ours(d, k: int, red, old: bool, check, what: str) -> dict:
    def number():
        red.form = old
        check(add.reduce(d), what)

    def queued():
        red.form = old
        r = None
        for _ in range(k):
            r = add.reduce(d, to_device=True)
        check(r.item(), what + " queued")
    return {f"ours {what} number": number, f"ours {what} queued": queued}


def run(n: int, k: int, reps: int) -> list[str]:
    torch, tinfo = _torch()
    red = reducer._reducer_now()
    lines = [f"{device_name()}: n={n:,}, k={k}, reps={reps}, workgroup {red.size}, "
             f"CTHREADS_REDUCE_FORM at start: {red.form or '(unset: one-pass on GPUs)'}; "
             f"torch: {tinfo}"]
    for bits, dt in ((32, np.float32), (64, np.float64)):
        x = np.random.default_rng(bits).random(n, dtype=np.float32).astype(dt)
        check = _checker(x, bits)
        d = to_device(x)
        fns = {}
        for form, old in FORMS.items():
            fns.update(_ours(d, k, red, old, check, form))
        fns["numpy number"] = lambda: check(float(x.sum()), "numpy")
        if torch is not None:
            tx = torch.from_numpy(x).cuda()

            def t_number(tx=tx):
                check(tx.sum().item(), "torch")

            def t_queued(tx=tx):
                r = None
                for _ in range(k):
                    r = tx.sum()
                torch.cuda.synchronize()
                check(r.item(), "torch queued")
            fns["torch number"], fns["torch queued"] = t_number, t_queued
        for f in fns.values():          # warm: pipelines, plans, clocks
            f()
        ms = alternating_ms(fns, reps)
        red.form = config.current().reduce_form      # as the settings say again
        nbytes = n * bits // 8
        rate = {}
        for name, t in ms.items():
            calls = k if name.endswith("queued") else 1
            rate[name] = nbytes * calls / (t / 1e3) / 1e9
        lines.append(f"float{bits} ({nbytes:,} bytes):")
        for name, gbps in rate.items():
            calls = k if name.endswith("queued") else 1
            peer = ("torch" if torch is not None else "numpy") + \
                (" queued" if name.endswith("queued") and torch is not None else " number")
            ratio = f"  {gbps / rate[peer]:.2f}x {peer}" if name.startswith("ours") and \
                peer in rate else ""
            lines.append(f"  {name:<24} {gbps:9.1f} GB/s  {ms[name] / calls:8.3f} ms a sum"
                         f"{ratio}")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--k", type=int, default=None)
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args(argv)
    cpu = reducer._reducer_now().ctx.is_cpu
    n = a.n or ((1 << 22) if cpu else (1 << 26))
    k = a.k or (10 if cpu else 100)
    print("\n".join(run(n, k, a.reps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
