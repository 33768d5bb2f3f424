"""The device queue's deadline flusher thread, and closing queues at shutdown, at
interpreter exit and in a forked child.

A daemon flusher thread (one per queue, started with the first batch) submits a batch still
pending ``FLUSH_DEADLINE_S`` after it opened, so launched work never waits for a join that
does not come. On CPU drivers it submits only once the device is idle, and makes its
submission outside the queue's lock (see ``dispatch.py``).

``cthreads.gpu.shutdown()`` flushes the batch and waits (before the device is destroyed) and
closes the queue: the flusher stops and nothing is submitted to it afterwards. At interpreter
exit pending batches are flushed. ``FlusherMixin`` holds these methods of ``DeviceQueue``;
the state they use is the queue's own.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref

from .device import on_shutdown
from .forking import on_fork_child
from .waits import WAIT_SLICE_S


#: Deferred submission: how long a batch may stay pending (chosen by measurement:
#: docs/performance.md, "Deferred submission").
FLUSH_DEADLINE_S = 0.001

#: every DeviceQueue alive (closed at shutdown and at exit)
_queues: "weakref.WeakSet" = weakref.WeakSet()


class FlusherMixin:
    """``DeviceQueue``'s deadline flusher and closing (see the module docstring)."""

    # -- the deadline flusher ----------------------------------------------------------------

    def _start_flusher(self) -> None:
        self._flusher = threading.Thread(target=_flusher_main,
                                         args=(weakref.ref(self), self._wake),
                                         name="cthreads-flusher", daemon=True)
        self._flusher.start()

    def _flush_due(self) -> float | None:
        """The flusher's step: flush an overdue batch; seconds until the open batch is due
        (0 when none is open), or None once the queue is closed."""
        with self._lock:
            if self._closed:
                return None
            if self._pending and self.ctx.lost is not None:
                submit = None          # nothing goes to a lost device; its waits raise
            elif self._pending:
                remaining = self._opened_at + FLUSH_DEADLINE_S - time.perf_counter()
                if remaining > 0:
                    return remaining
                if self._submit_when_idle and not self._idle(True):
                    return WAIT_SLICE_S
                try:
                    submit = self._flush(handoff=True)
                except Exception as exc:   # reported by the next launch or wait
                    self.ctx.errors.append(f"submitting queued launches failed: {exc}")
                    submit = None
            else:
                submit = None
            self._wake.clear()
        if submit is not None:
            submit()
        return 0.0

    def close(self) -> None:
        """Submit the pending batch and stop submitting: later launches raise, the flusher
        ends (idempotent; shutdown and interpreter exit call it while the device lives)."""
        with self._lock:
            if self._closed:
                return
            try:
                self._flush()
            except Exception:
                pass
            self._closed = True
            self._wake.set()


def _flusher_main(queue_ref, wake: threading.Event) -> None:
    """The flusher thread: submits a batch still pending FLUSH_DEADLINE_S after it opened.

    Holds its queue only weakly between steps; ends when the queue is closed or collected.
    """
    while True:
        wake.wait()
        queue = queue_ref()
        if queue is None:
            return
        delay = queue._flush_due()
        del queue
        if delay is None:
            return
        if delay > 0:
            time.sleep(delay)


def _close_queues(ctx) -> None:
    """Shutdown hook: submit, then close, the queues of the device being shut down."""
    for queue in list(_queues):
        if ctx is None or queue.ctx is ctx:
            queue.close()


@atexit.register
def _close_all_at_exit() -> None:
    for queue in list(_queues):
        try:
            queue.close()
        except Exception:
            pass


on_shutdown(_close_queues)


def _forget_queues_after_fork() -> None:
    """In a forked child: the inherited queues belong to the parent's device; they are closed
    without a flush (nothing may be submitted to that device) and get fresh locks."""
    for queue in list(_queues):
        queue._lock = threading.RLock()
        queue._closed = True
        queue._pending = []
    _queues.clear()


on_fork_child(_forget_queues_after_fork)
