"""The choice of a launch's variant without a device (cthreads/runtime/variants.py): every
choice is among the variants prepare() compiles, and follows the rules of docs/runtime.md
written out here independently (four-lane form by the guard, check-free by the lengths,
indexes per invocation by the launch size, N-D rows or tiles by the device kind)."""

from __future__ import annotations

import pytest

from cthreads import config
from cthreads.codegen.program import Variant
from cthreads.gpu import GlobalIdx, Gpu
from cthreads.runtime.variants import (COARSEN_CPU, COARSEN_GPU, GPU_ND_TILES, DeviceFacts,
                                       choose, launch_rules, variants)

CPU, GPU = DeviceFacts(True, 65535), DeviceFacts(False, 65535)


@Gpu
def saxpy(n: int, a: float, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@Gpu
def loops(n: int, k: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        j: int = 0
        while j < k:
            x[i] += 1.0
            j += 1


@Gpu
def grid(w: int, h: int, m: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        m[y, x] = 2.0 * m[y, x]


def _rules(kernel, facts, nd=None, **settings):
    with config.override(**settings):
        return launch_rules(kernel.program, facts, config.current(), nd)


@pytest.mark.parametrize("facts", [CPU, GPU], ids=["cpu", "gpu"])
def test_every_choice_is_a_listed_variant(facts):
    rules = _rules(saxpy, facts)
    listed = set(variants(rules))
    seen = set()
    for n in (1, 63, 64, 1000, 1 << 14, (1 << 21) + 3):
        for length in (n - 1, n, n + 5):
            if length < 0:
                continue
            seen.add(choose(rules, [n, 2.0], [length, length], [None, None], n).variant)
            seen.add(choose(rules, [n, 2.0], [length, length], [None, None], n,
                            vec=False).variant)
    assert seen <= listed
    assert {v.form for v in seen} == {"flat", "vec_whole", "vec_tail"}


def test_the_four_lane_form_follows_the_guard_and_the_lengths():
    rules = _rules(saxpy, CPU)
    assert choose(rules, [1000, 1.0], [1000, 1000], None, 1000).variant.form == "vec_whole"
    assert choose(rules, [1001, 1.0], [1001, 1001], None, 1001).variant.form == "vec_tail"
    short = choose(rules, [1001, 1.0], [1000, 1001], None, 1001).variant
    assert (short.form, short.checks) == ("flat", "all")     # x shorter than n: checked
    scalar = choose(rules, [1000, 1.0], [1000, 1000], None, 1000, vec=False).variant
    assert (scalar.form, scalar.checks) == ("flat", "proven")
    assert _rules(saxpy, CPU, vec=False).vec_check is None


def test_indexes_per_invocation_and_workgroups_by_device():
    for facts, table, wg in ((CPU, COARSEN_CPU, 64), (GPU, COARSEN_GPU, 256)):
        rules = _rules(saxpy, facts)
        factor, start = table
        small = choose(rules, [8, 1.0], [4, 4], None, 64).variant
        big = choose(rules, [8, 1.0], [4, 4], None, start).variant
        assert (small.coarsen, big.coarsen) == (1, factor)
        assert small.workgroup == big.workgroup == (wg, 1, 1)
        choice = choose(rules, [8, 1.0], [4, 4], None, start)
        assert choice.hidden == start and choice.groups == -(-start // (wg * factor))


def test_loops_report_on_cpu_drivers_only_and_keep_one_index():
    cpu, gpu = _rules(loops, CPU), _rules(loops, GPU)
    big = 1 << 22
    on_cpu = choose(cpu, [big, 3], [big], [None], big).variant
    on_gpu = choose(gpu, [big, 3], [big], [None], big).variant
    assert (on_cpu.loop_report, on_cpu.coarsen) == (True, 1)
    assert (on_gpu.loop_report, on_gpu.coarsen) == (False, COARSEN_GPU[0])
    assert all(v.loop_report for v in variants(cpu))


def test_nd_launches_rows_on_cpu_tiles_on_gpu():
    rows = _rules(grid, CPU, nd=(64, 1, 1))
    choice = choose(rows, [100, 30], [30], [(30, 100)], (100, 30))
    assert choice.variant.form == "nd_grid" and choice.counts == (-(-100 // 64), 30, 30)
    tiles = _rules(grid, GPU, nd=(64, 1, 1))
    choice = choose(tiles, [100, 30], [30], [(30, 100)], (100, 30))
    assert choice.variant == Variant(checks=choice.variant.checks, form="nd_tile",
                                     workgroup=GPU_ND_TILES[2])
    assert choice.groups == choice.counts == (-(-100 // 32), -(-30 // 8), 1)
    assert choice.hidden == 0                             # the N-D grid itself
    forced = _rules(grid, CPU, nd=(64, 1, 1), nd_tiles_on_cpu=True)
    assert choose(forced, [100, 30], [30], [(30, 100)], (100, 30)).variant.form == "nd_tile"
    assert {c.variant for c in [choice]} <= set(variants(tiles))


def test_a_repeated_launch_gets_the_same_choice():
    rules = _rules(saxpy, GPU)
    first = choose(rules, [1000, 1.0], [1000, 1000], None, 1000)
    assert choose(rules, [1000, 3.0], [1000, 1000], None, 1000) is first


def test_float64_lists_skip_the_four_lane_form_on_gpus_only():
    """32-byte vec4<f64> lanes ran below the scalar form on the H200 (issue 27): a float64
    launch's rules there have no four-lane check; CPU drivers keep it (they gain from it),
    and float32 keeps it everywhere."""
    wide = saxpy.program_for(("float64", "int"))
    with config.override():
        settings = config.current()
        assert launch_rules(wide, GPU, settings).vec_check is None
        assert launch_rules(wide, CPU, settings).vec_check is not None
        assert launch_rules(saxpy.program, GPU, settings).vec_check is not None
    rules = launch_rules(wide, GPU, config.current())
    got = choose(rules, [1000, 1.0], [1000, 1000], None, 1000).variant
    assert (got.form, got.checks) == ("flat", "proven")
