"""The command plan of a command buffer with timed jobs (``backend/timing.py``), without a
device: where passes break, where timestamps go, what is resolved, and the checks made before
anything reaches wgpu-native (which aborts the process on a bad query index)."""

from __future__ import annotations

import pytest

from cthreads.backend import timing
from cthreads.errors import GpuDeviceError


class FakeTimestamps:
    def __init__(self):
        self.sizes = []
        self.resolve = object()

    def resolve_buffer(self, nbytes):
        self.sizes.append(nbytes)
        return self.resolve


P, G = object(), object()
DST = object()


def _d(pre=None, post=()):
    return (P, G, (1, 1, 1), pre, post)


def _ops(cmds):
    return [c[0] for c in cmds]


def test_inside_passes_keeps_one_pass_and_stamps_around_the_dispatches():
    dispatches = [_d(), _d(), _d()]
    stamps = [(1, False, 10, DST, 0), (1, True, 11, DST, 8)]
    ts = FakeTimestamps()
    cmds = timing.commands(dispatches, stamps, True, ts)
    assert _ops(cmds)[:9] == ["pass", "pipeline", "group", "dispatch", "stamp", "dispatch",
                              "stamp", "dispatch", "end"]
    assert cmds[4] == ("stamp", 10) and cmds[6] == ("stamp", 11)
    assert cmds[9:] == [("resolve", 10, 2, 0), ("copy", 0, DST, 0), ("copy", 8, DST, 8)]
    assert ts.sizes == [256]


def test_pass_level_gives_the_timed_job_passes_of_its_own():
    # job A: dispatches 1..2 (the second with a staged uniform copy); an untimed 0 and 3
    dispatches = [_d(), _d(), _d(pre=(0, object(), 16)), _d()]
    stamps = [(1, False, 5, DST, 0), (2, True, 6, DST, 8)]
    cmds = timing.commands(dispatches, stamps, False, FakeTimestamps())
    passes = [c for c in cmds if c[0] == "pass"]
    assert passes == [("pass", None, None), ("pass", 5, None), ("pass", None, 6),
                      ("pass", None, None)]
    assert "stamp" not in _ops(cmds)
    assert _ops(cmds).count("end") == 4
    assert _ops(cmds).count("dispatch") == 4


def test_readback_copies_end_the_pass_after_the_end_stamp():
    post = ((object(), 0, object(), 0, 16),)
    dispatches = [_d(post=post), _d()]
    stamps = [(0, False, 0, DST, 0), (0, True, 1, DST, 8)]
    cmds = timing.commands(dispatches, stamps, True, FakeTimestamps())
    ops = _ops(cmds)
    assert ops[:7] == ["pass", "pipeline", "group", "stamp", "dispatch", "stamp", "end"]
    assert ops[7] == "copies"


def test_wrapped_query_indexes_resolve_in_separate_aligned_runs():
    last = timing.RING - 1
    dispatches = [_d(), _d()]
    stamps = [(0, False, last - 1, DST, 0), (0, True, last, DST, 8),
              (1, False, 0, DST, 0), (1, True, 1, DST, 8)]
    ts = FakeTimestamps()
    cmds = timing.commands(dispatches, stamps, True, ts)
    resolves = [c for c in cmds if c[0] == "resolve"]
    assert resolves == [("resolve", 0, 2, 0), ("resolve", last - 1, 2, 256)]
    copies = [c for c in cmds if c[0] == "copy"]
    assert [c[1] for c in copies] == [256, 264, 0, 8]
    assert all(off % 256 == 0 for _, _, _, off in resolves)
    assert ts.sizes == [512]


@pytest.mark.parametrize("stamps", [
    [(0, False, timing.RING, DST, 0)],                       # query index out of range
    [(0, False, -1, DST, 0)],
    [(0, False, 3, DST, 0), (0, True, 3, DST, 8)],           # one query written twice
    [(2, False, 3, DST, 0)],                                 # no such dispatch
    [(0, False, 3, DST, 0), (0, False, 4, DST, 0)],          # two begins at one dispatch
])
def test_bad_stamps_raise_before_anything_is_encoded(stamps):
    ts = FakeTimestamps()
    with pytest.raises(GpuDeviceError, match="internal error"):
        timing.commands([_d(), _d()], stamps, True, ts)
    assert ts.sizes == []
