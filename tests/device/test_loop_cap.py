"""CPU drivers that end long loops early: the result is complete, or join() says so.

lavapipe (Mesa's llvmpipe) ends a loop once the loops of an invocation have made 65,535
passes together (docs/language.md, "Long loops on CPU drivers"). A kernel must then either
give the full result or raise ``GpuDeviceError`` at join naming the loop's line and the
device, with the caller's lists unchanged; kernels within the budget run as usual.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from cthreads.gpu import (BlockDim, BlockIdx, GlobalIdx, Gpu, GpuArena, GpuDeviceError,
                          ThreadIdx, gpu, prepare)
from cthreads.sync import __sync_threads

from ..conftest import run_python


def _line(kernel, text: str) -> int:
    """The file line of the first source line of ``kernel`` that contains ``text``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@Gpu
def two_loops(n: int, a: int, b: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c1: int = 0
    for k in range(a):
        c1 += 1
    c2: int = 0
    j: int = 0
    while j < b:
        c2 += 1
        j += 1
    out[2 * i] = c1
    out[2 * i + 1] = c2


@Gpu
def nested(n: int, a: int, b: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c: int = 0
    for p in range(a):
        for q in range(b):
            c += 1
    out[i] = c


@Gpu
def per_index_loop(n: int, m: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    s: float = 0.0
    k: int = 0
    while True:
        if k >= m:
            break
        s += 1.0 / (k + 1 + i % 7)
        k += 1
    out[i] = s


@Gpu(boundscheck=False)
def unchecked_loop(n: int, m: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        c: int = 0
        for k in range(m):
            c += k % 3
        out[i] = c


@Gpu
def barrier_loop(n: int, m: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    c: int = 0
    for k in range(m):
        c += 1
        if c > 100000000:
            return
    __sync_threads()
    if i < n:
        out[i] = c


@Gpu
def barrier_in_loop(n: int, m: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    c: int = 0
    for k in range(m):
        __sync_threads()
        c += 1
    if i < n:
        out[i] = c


@Gpu
def pow_after_loop(n: int, m: int, e: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c: int = 0
    for k in range(m):
        c += 1
    out[i] = c + 3 ** e


@Gpu
def block_loop(n: int, m: int, e: int, out: list[int]) -> None:
    i: int = BlockIdx.x * BlockDim.x + ThreadIdx.x
    if i >= n:
        return
    c: int = 0
    while c < m:
        c += 1
        if c == 1000000000:
            return
    out[i] = c + 2 ** e


@Gpu
def literal_range(n: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c: int = 0
    for k in range(100000):
        c += 1
    out[i] = c


@Gpu
def small_literal_ranges(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    s: float = 0.0
    for k in range(16):
        for q in range(-3, 9, 3):
            s += x[i] * k + q
    y[i] = s


def _full_or_refused(kernel, args, out_index, expected, lines, device_name, on_cpu="refused"):
    """Launch; either the result equals ``expected`` ("full") or join raises GpuDeviceError
    naming one of ``lines`` and the device, with the output list unchanged ("refused"). Which
    one is pinned: ``on_cpu`` on lavapipe (a loop over its budget is refused, one within it
    runs in full), always "full" on a GPU, which has no loop cap."""
    want = on_cpu if "llvmpipe" in device_name else "full"
    how = _launch(kernel, args, out_index, expected, lines, device_name)
    assert how == want, f"{kernel.program.name} on {device_name}: {how}, expected {want}"
    return how


def _launch(kernel, args, out_index, expected, lines, device_name):
    out = args[out_index]
    before = list(out)
    try:
        gpu(kernel, *args).join()
    except GpuDeviceError as exc:
        msg = str(exc)
        assert out == before, "a refused launch must not write back"
        assert kernel.program.name in msg and device_name in msg
        assert any(f"line {ln}" in msg for ln in lines), msg
        assert "65,535" in msg and "threads" in msg
        return "refused"
    if any(isinstance(v, float) for v in expected):
        # the device sums in float32, simulate() in Python floats: 70,000 float32 additions
        # stay within 1e-3 (observed 1.5e-5 on the H200); a cut loop misses 5.6e-3 of the sum
        np.testing.assert_allclose(out, expected, rtol=1e-3)
    else:
        assert out == list(expected)
    return "full"


def test_two_loops_of_40000_in_one_index(device_name):
    out = [-1] * 16
    _full_or_refused(two_loops, [8, 40000, 40000, out], 3, [40000] * 16,
                     [_line(two_loops, "for k in"), _line(two_loops, "while j")], device_name)


def test_nested_1000_by_1000(device_name):
    out = [-1] * 8
    _full_or_refused(nested, [8, 1000, 1000, out], 3, [1000000] * 8,
                     [_line(nested, "for p in"), _line(nested, "for q in")], device_name)


def test_loop_with_break_over_the_budget(device_name):
    out = [-1.0] * 64
    expected = list(out)
    per_index_loop.simulate(64, 70000, expected)
    _full_or_refused(per_index_loop, [64, 70000, out], 2, expected,
                     [_line(per_index_loop, "while True")], device_name)


def test_boundscheck_false_kernel_is_covered(device_name):
    out = [-1] * 64
    expected = [sum(k % 3 for k in range(70000))] * 64
    _full_or_refused(unchecked_loop, [64, 70000, out], 2, expected,
                     [_line(unchecked_loop, "for k in")], device_name)


def test_barrier_kernel_is_covered(device_name):
    out = [-1] * 64
    _full_or_refused(barrier_loop, [64, 70000, out], 2, [70000] * 64,
                     [_line(barrier_loop, "for k in")], device_name)


@pytest.mark.parametrize("m, on_cpu", [(65000, "full"), (70000, "refused")])
def test_loop_with_a_barrier_inside(device_name, m, on_cpu):
    out = [-1] * 64
    _full_or_refused(barrier_in_loop, [64, m, out], 2, [m] * 64,
                     [_line(barrier_in_loop, "for k in")], device_name, on_cpu)


def test_at_the_edge_of_the_budget(device_name):
    # docs/language.md: the first loop makes a + 1 passes, the check after it 2, the empty
    # loop 1; the check after that needs 2 more: a + 4 <= 65,533 passes
    out = [-1] * 16
    gpu(two_loops, 8, 65529, 0, out).join()
    assert out == [65529, 0] * 8
    for a in (65530, 65535, 65536):
        out = [-1] * 16
        _full_or_refused(two_loops, [8, a, 0, out], 3, [a, 0] * 8,
                         [_line(two_loops, "for k in"), _line(two_loops, "while j")],
                         device_name)


def test_helper_loop_after_a_long_loop(device_name):
    # the loop ends normally leaving a few passes; the integer power's own loop needs more
    out = [-1] * 8
    _full_or_refused(pow_after_loop, [8, 65531, 15, out], 3, [65531 + 3 ** 15] * 8,
                     [_line(pow_after_loop, "for k in")], device_name)


@pytest.mark.parametrize("m", [65000, 65531, 70000])
def test_workgroup_kernel_with_returns(device_name, m):
    # the body is the entry point itself (it observes workgroups): returns end the thread
    out = [-1] * 8
    _full_or_refused(block_loop, [8, m, 10, out], 3, [m + 1024] * 8,
                     [_line(block_loop, "while c")], device_name)


def test_a_literal_range_is_cut_too(device_name):
    out = [-1] * 8
    _full_or_refused(literal_range, [8, out], 1, [100000] * 8,
                     [_line(literal_range, "for k in")], device_name)


def test_small_literal_ranges_need_no_check(device_name):
    # 16 x (4 + 1) + 1 passes at most: no CPU variant, several indexes per invocation
    assert small_literal_ranges.program.loops == ()
    n = 50000
    x = [float(v % 13) for v in range(n)]
    y = [0.0] * n
    gpu(small_literal_ranges, n, x, y).join()
    ref = [0.0] * n
    small_literal_ranges.simulate(n, x, ref)
    assert y == ref


def test_error_leaves_resident_lists_and_later_launches_work(device_name):
    out = [-1] * 16
    with GpuArena() as arena:
        arena.bind(out=out)
        gpu(two_loops, 8, 70000, 0, out).join(download=False)
        try:
            arena.sync()
        except GpuDeviceError as exc:
            assert "two_loops" in str(exc)
            assert out == [-1] * 16
        else:
            assert out == [70000, 0] * 8
    small = [0] * 16
    gpu(two_loops, 8, 300, 200, small).join()           # the status starts clean again
    assert small == [300, 200] * 8


def test_loops_under_the_budget_with_many_indexes(device_name):
    # n large enough for several indexes per invocation on CPU drivers
    n, m = 40000, 2000
    out = [0.0] * n
    gpu(per_index_loop, n, m, out).join()
    assert np.allclose(out, _per_index_sums(n, m), rtol=1e-4)


def _per_index_sums(n: int, m: int) -> np.ndarray:
    """per_index_loop's result in float64 with numpy: sum of 1 / (k + 1 + i % 7), k < m."""
    i = np.arange(n)
    ref = np.zeros(n, np.float64)
    for k in range(m):
        ref += 1.0 / (k + 1 + i % 7)
    return ref


def test_per_index_loop_with_many_indexes_per_invocation(device_name):
    # 10,000 iterations per index: within the budget for one index, not for eight
    n, m = 20000, 10000
    out = [0.0] * n
    gpu(per_index_loop, n, m, out).join()
    assert np.allclose(out, _per_index_sums(n, m), rtol=1e-3)


FORCED = """
import json
from cthreads.gpu import GlobalIdx, Gpu, GpuDeviceError, gpu, device_name

@Gpu
def per_index(n: int, m: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    c: int = 0
    for k in range(m):
        c += 1
    out[i] = c

res = {"device": device_name()}
for m in (1000, 10000):
    out = [-1] * 20000
    try:
        gpu(per_index, 20000, m, out).join()
        res[str(m)] = "full" if out == [m] * 20000 else "wrong"
    except GpuDeviceError as exc:
        res[str(m)] = "refused" if out == [-1] * 20000 and "line 11" in str(exc) else str(exc)
print(json.dumps(res))
"""


@pytest.mark.parametrize("coarsen", ["1", "8"])
def test_forced_indexes_per_invocation(device_name, coarsen, tmp_path):
    script = tmp_path / "forced.py"
    script.write_text(FORCED)
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r})",
                      {"CTHREADS_COARSEN": coarsen})
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["1000"] == "full"                     # 8 x 1,001 passes: within the budget
    assert res["10000"] in ("full", "refused"), res
    if coarsen == "8" and "llvmpipe" in res["device"]:
        assert res["10000"] == "refused"


def test_prepare_compiles_the_loop_variants(device_name):
    summary = prepare()
    assert "two_loops" in summary["kernels"] and "barrier_loop" in summary["kernels"]
