"""A/B of the two forms of a whole-array ``add.reduce(d)`` (a number per call) in one process:
median ms of 31 alternating rounds for a float32 and a float64 GpuArray of n elements.

    PYTHONPATH=. python bench/probe_sum_forms.py N
"""
import sys, numpy as np
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from timing import alternating_ms
from cthreads.gpu import Gpu, to_device
from cthreads.runtime import reducer
@Gpu.func
def add(a: float, b: float) -> float:
    return a + b
n = int(sys.argv[1])
red = reducer._reducer_now()
for dt in (np.float32, np.float64):
    d = to_device(np.random.default_rng(0).random(n).astype(dt))
    def f(old):
        def g():
            red.form = old; add.reduce(d)
        return g
    fns = {"one": f("new"), "old": f("old")}
    for g in fns.values(): g()
    print(dt.__name__, alternating_ms(fns, 31))
