"""Planning a launch without a device: launch shapes, variant choice, byte sizes, uniform bytes.

The references are written out independently: the shape arithmetic of codegen/program.py's
entry point (64-wide index blocks, steps of 4 indexes for the four-lane variant), the rules of
docs/runtime.md for the check-free and four-lane variants, and struct layouts by offset.
"""

from __future__ import annotations

import struct

import pytest

from cthreads.codegen.types import ELEM_TYPES
from cthreads.gpu import GlobalIdx, Gpu
from cthreads.codegen.program import Variant
from cthreads.runtime.kernel_runtime import _uniform_struct
from cthreads.runtime.plan import LaunchPlan
from cthreads.runtime.variants import (COARSEN_CPU, COARSEN_GPU, VEC_COARSEN_CPU, VEC_COARSEN_GPU,
                                       ShapeRule, fast_ok, vec_form, vec_nbytes)


def _rule(cpu: bool, *, wg=None, coarsen=None, loops=False, fixed=False) -> ShapeRule:
    """The rule a KernelRuntime makes for a device kind (runtime.py)."""
    return ShapeRule(wg or (64 if cpu else 256), fixed=fixed, coarsen=coarsen,
                     scalar=COARSEN_CPU if cpu else COARSEN_GPU,
                     vec=VEC_COARSEN_CPU if cpu else VEC_COARSEN_GPU, loops=loops)


def _expected(n, wg, table, vec=False, loops=False, coarsen=None):
    blocks = (n + 63) // 64
    threads = blocks * 64 // (4 if vec else 1)
    if coarsen is None:
        factor, start = table
        coarsen = factor if threads >= start and not (loops and not vec) else 1
    groups = (threads + wg * coarsen - 1) // (wg * coarsen)
    return threads, groups, coarsen


SIZES = [1, 63, 64, 65, 1000, 4096, 16383, 16384, 16385, 1 << 20, (1 << 21) - 1, 1 << 21,
         (1 << 24) + 3, 1 << 26]


@pytest.mark.parametrize("cpu", [True, False])
@pytest.mark.parametrize("n", SIZES)
def test_scalar_shape_matches_the_entry_points_arithmetic(cpu, n):
    rule = _rule(cpu)
    table = COARSEN_CPU if cpu else COARSEN_GPU
    s = rule.shape(n)
    assert (s.hidden, s.groups, s.coarsen) == _expected(n, rule.workgroup_size, table)
    # every index is covered exactly by the dispatched invocations
    assert s.groups * rule.workgroup_size * s.coarsen >= s.hidden >= n


@pytest.mark.parametrize("cpu", [True, False])
@pytest.mark.parametrize("n", SIZES)
def test_four_lane_shape_counts_steps_of_four(cpu, n):
    rule = _rule(cpu)
    table = VEC_COARSEN_CPU if cpu else VEC_COARSEN_GPU
    s = rule.shape(n, vec=True)
    assert (s.hidden, s.groups, s.coarsen) == _expected(n, rule.workgroup_size, table, vec=True)
    assert 4 * s.hidden >= n


def test_known_shapes():
    # lavapipe: 16M indexes run 8 per invocation in 64-wide groups; a tiny launch one group
    assert _rule(True).shape(1 << 24) == _rule(True).shape((1 << 24) - 5)
    s = _rule(True).shape(1 << 24)
    assert (s.hidden, s.groups, s.coarsen) == (1 << 24, (1 << 24) // (64 * 8), 8)
    s = _rule(True).shape(3)
    assert (s.hidden, s.groups, s.coarsen) == (64, 1, 1)
    # a GPU: 4 per invocation only from 2M indexes on, 256 wide
    s = _rule(False).shape(1 << 20)
    assert (s.hidden, s.groups, s.coarsen) == (1 << 20, (1 << 20) // 256, 1)
    s = _rule(False).shape(1 << 21)
    assert (s.hidden, s.groups, s.coarsen) == (1 << 21, (1 << 21) // 1024, 4)


@pytest.mark.parametrize("n", SIZES)
def test_loop_variant_keeps_one_index_per_invocation(n):
    rule = _rule(True, loops=True)
    assert rule.shape(n).coarsen == 1
    # the four-lane variant of such a kernel is not a loop variant's scalar form
    assert rule.shape(n, vec=True).coarsen == _expected(n, 64, VEC_COARSEN_CPU, vec=True)[2]


@pytest.mark.parametrize("setting", [1, 2, 4, 8])
def test_fixed_coarsen_setting_wins(setting):
    for n in SIZES:
        for rule in (_rule(True, coarsen=setting, loops=True), _rule(False, coarsen=setting)):
            s = rule.shape(n)
            assert s.coarsen == setting
            assert (s.hidden, s.groups, s.coarsen) == _expected(
                n, rule.workgroup_size, None, coarsen=setting)


def test_kernels_that_observe_workgroups_count_workgroups():
    rule = _rule(False, fixed=True, coarsen=8)
    for n in SIZES:
        s = rule.shape(n)
        blocks = (n + 63) // 64
        assert (s.hidden, s.groups, s.coarsen) == (blocks, blocks, 1)


@pytest.mark.parametrize("cpu", [True, False])
@pytest.mark.parametrize("vec", [False, True])
def test_factors_cover_every_shape_a_launch_can_get(cpu, vec):
    rule = _rule(cpu)
    got = {rule.shape(n, vec).coarsen for n in SIZES + [1 << 30]}
    assert got == set(rule.factors(vec))


def test_remembered_shapes_stay_right_across_forms_and_signs():
    rule = _rule(True)
    for _ in range(2):              # the second pass reads remembered shapes
        for n in [-70, -1, 0, 1, 5, 64, 70, 1 << 16] + list(range(100, 200)):
            for vec in (False, True):
                s = rule.shape(n, vec)
                want = _expected(max(n, 1), 64, VEC_COARSEN_CPU if vec else COARSEN_CPU, vec)
                assert (s.hidden, s.groups, s.coarsen) == want, (n, vec)


def test_fast_variant_needs_every_guard_within_its_list():
    checks = ((0, 0, 0), (1, 1, 0))          # scalar 0 guards list 0, scalar 1 list 1
    assert fast_ok(checks, [10, 5], [10, 6])
    assert not fast_ok(checks, [11, 5], [10, 6])
    assert not fast_ok(checks, [10, 7], [10, 6])
    assert not fast_ok((), [1], [10])             # no proof: the checked kernel
    # an N-D list: scalar 1 guards its dimension 1 (the row width), not its length
    nd = ((0, 0, 0), (1, 0, 1))
    assert fast_ok(nd, [4, 9], [4], [(4, 9)])
    assert not fast_ok(nd, [4, 10], [4], [(4, 9)])


@pytest.mark.parametrize("guard,form", [(8, "vec_whole"), (9, "vec_tail"), (1, "vec_tail"), (4, "vec_whole")])
def test_four_lane_form_follows_the_guard(guard, form):
    assert vec_form(0, (0, 1), [guard], [guard, guard + 3]) == form


def test_four_lane_variant_off_when_a_list_is_shorter_than_the_guard():
    assert vec_form(0, (0, 1), [10], [10, 9]) == ""
    assert vec_form(1, (0,), [3, 10], [10]) == "vec_tail"              # equal length: fine
    assert vec_form(1, (0,), [3, 12], [10]) == ""


@pytest.mark.parametrize("length", [1, 3, 4, 5, 1000, 1001])
def test_four_lane_bindings_round_up_to_whole_vectors(length):
    for row in ELEM_TYPES.values():
        lane = 4 * row.size                 # a four-lane element: vec4<f32> 16 B, vec4<f64> 32
        nbytes = vec_nbytes(length, row.size)
        assert nbytes % lane == 0
        assert row.size * length <= nbytes < row.size * length + lane


def test_new_plan_picks_the_plain_checked_variant_and_owns_nothing():
    plan = LaunchPlan()
    assert plan.key == Variant()
    assert plan.readback is None and plan.owned == [] and plan.resident_written == []


@Gpu
def _mixed(n: int, a: float, flag: bool, k: int, y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n and flag:
        y[i] = a * y[i] + k


def test_uniform_bytes_follow_the_element_table():
    prog = _mixed.program
    packer = _uniform_struct(prog)
    assert packer.size == prog.uniform_size
    data = packer.pack(1234, 77, 2.5, True, -9)
    assert struct.unpack_from("<I", data, 0) == (1234,)            # the hidden first field
    values = {"n": 77, "a": 2.5, "flag": True, "k": -9}
    for p in prog.scalars:
        row = ELEM_TYPES[p.elem]
        (got,) = struct.unpack_from("<" + row.code, data, p.offset)
        assert row.python(got) == values[p.name]
