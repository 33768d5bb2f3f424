"""When the device queue submits its open batch: the table of rules (``dispatch.py`` names a
row at every ``flush``; ``tests/host/test_flush_rules.py`` checks that every row is used and
every rule used is a row). Constants the rows name (``BATCH_CAP``, ``HEAVY_GROUPS``,
``KEEP_FED_BATCH``, ...) live in ``dispatch.py``."""

from __future__ import annotations

__all__ = ["FLUSH_RULES"]

#: When the open batch is submitted: one row per rule. Every ``flush`` names its row; the rows
#: above the blank line are decided by ``dispatch`` itself (``_submit_now``), in this order.
#: A dispatch with ``more=True`` (a reduction's passes: the next needs this one's results and
#: follows at once) is never submitted alone by ``idle`` or ``keep_fed``. A batch recorded on
#: purpose (v3's ``capture()``, into a ``Batch`` of its own) is submitted by none of these
#: rows, only when it is replayed (``submit_recorded``).
FLUSH_RULES = {
    "unbatched": "CTHREADS_BATCH=0 (``batching``): every dispatch at once, alone",
    "count": "the batch holds BATCH_CAP dispatches",
    "keep_fed": "GPUs (``keep_fed``): a dispatch of HEAVY_GROUPS workgroups or more, first in "
                "its batch while the device is known to be idle, or once the batch holds "
                "``gather`` dispatches (8 to 16: more while the device runs dry) while at "
                "most one submission is in flight (the "
                "next work queued behind the running one, in few submissions); "
                "CTHREADS_KEEP_FED=old: each heavy dispatch alone while at most one "
                "submission is in flight",
    "idle": "everything submitted has finished: a lone launch or one after a join goes at "
            "once (latency unchanged); known from notifications that fired, and from one "
            "non-blocking poll every IDLE_POLL_EVERY dispatches",

    "upload": "an upload into a buffer a pending dispatch binds (a queued write lands before "
              "the next submission, so the dispatch would see the new bytes)",
    "large_write": "queued writes of SUBMIT_WRITES_FROM bytes or more: submitted at once so "
                   "their staging copy goes back; the batch goes with them",
    "write": "a small queue write (a status reset), ordered after every launch so far",
    "readback": "readback copies submitted after the pending dispatches (``submit_copies``), "
                "and a read of a staging buffer whose submission is still pending",
    "join": "a wait or ``is_done`` for a submission not yet made (CPU drivers: only once the "
            "device is idle; waits submit outside the lock)",
    "deadline": "the batch is still pending FLUSH_DEADLINE_S after it opened (``flusher.py``; "
                "CPU drivers: only once the device is idle, outside the lock)",
    "drain": "``idle()``, before resources are freed",
    "replay": "``GpuGraph.replay()`` (``replay.py``): the pending dispatches go first",
    "close": "``close()``: shutdown, interpreter exit",
}
