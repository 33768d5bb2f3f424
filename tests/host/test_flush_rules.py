"""The submission scheduler's parts on the host: every flush names a row of the one table of
flush rules (and every row is applied somewhere), and a Batch records, stages and hands over
what a command buffer needs."""

from __future__ import annotations

import pathlib
import re

from cthreads.backend import batch as batch_module
from cthreads.backend import dispatch
from cthreads.backend.batch import Batch

BACKEND = pathlib.Path(dispatch.__file__).parent


def test_every_flush_names_a_row_and_every_row_is_used():
    used = set()
    for path in BACKEND.glob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r"\bflush\(\"(\w+)\"", text))
        used |= set(re.findall(r"return \"(\w+)\"", text)) & set(dispatch.FLUSH_RULES)
    assert used == set(dispatch.FLUSH_RULES), used ^ set(dispatch.FLUSH_RULES)
    assert batch_module.__file__.startswith(str(BACKEND))


def test_a_batch_records_stages_and_hands_over():
    b = Batch()
    assert not b and len(b) == 0
    uniform, other, pooled = object(), object(), object()
    assert b.record(("p", "g", (1, 1, 1), None, ())) == 1
    assert not b.reads(uniform) and not b.binds(pooled)    # submitted at once: not needed
    b.keep_open(uniform, (pooled,))
    first_opened = b.opened_at
    assert first_opened > 0 and b.reads(uniform) and b.binds(pooled)
    assert not b.reads(other) and not b.binds(other)
    pre = b.stage(uniform, b"abcd")
    pre2 = b.stage(other, b"xy")
    assert pre == (0, uniform, 4) and pre2 == (4, other, 2)
    assert b.record(("p", "g", (2, 1, 1), pre, ())) == 2
    b.keep_open(uniform)
    assert b.opened_at == first_opened                 # the batch opened at its first dispatch
    dispatches, staged = b.take()
    assert [d[2] for d in dispatches] == [(1, 1, 1), (2, 1, 1)]
    assert b"".join(staged)[pre[0]:pre[0] + pre[2]] == b"abcd"
    assert b"".join(staged)[pre2[0]:pre2[0] + pre2[2]] == b"xy"
    assert len(b) == 0 and not b.reads(uniform) and not b.binds(pooled)
    assert b.stage(uniform, b"zz") == (0, uniform, 2)  # offsets start again after take()
