"""The device queue's deadline flusher thread, and closing queues at shutdown, at
interpreter exit and in a forked child.

A ``Flusher`` (one per queue, its daemon thread started with the first batch) submits a batch
still pending ``FLUSH_DEADLINE_S`` after it opened, so launched work never waits for a join
that does not come (the ``deadline`` row of ``FLUSH_RULES`` in ``flush_rules.py``). On CPU
drivers it submits only once the device is idle, and makes its submission outside the queue's
lock. It owns its thread and the event that wakes it; what it submits is the queue's.

``cthreads.gpu.shutdown()`` flushes the batch and waits (before the device is destroyed) and
closes the queue: the flusher stops and nothing is submitted to it afterwards. At interpreter
exit pending batches are flushed.
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


class Flusher:
    """The deadline flusher of one queue: ``batch_opened()`` wakes it, ``stop()`` ends it."""

    def __init__(self, queue):
        self._queue = weakref.ref(queue)
        self._wake = threading.Event()    # set while a batch is open (or to end the thread)
        self._thread: threading.Thread | None = None

    def batch_opened(self) -> None:
        """A batch got its first dispatch: be due ``FLUSH_DEADLINE_S`` from now."""
        if not self._wake.is_set():
            if self._thread is None:
                self._thread = threading.Thread(target=_flusher_main,
                                                args=(self._queue, self._wake),
                                                name="cthreads-flusher", daemon=True)
                self._thread.start()
            self._wake.set()

    def sleep(self) -> None:
        """Nothing is open: sleep until the next batch (queue lock held)."""
        self._wake.clear()

    def stop(self) -> None:
        """The queue closed: the thread ends at its next step."""
        self._wake.set()


def flush_due(queue) -> float | None:
    """The flusher's step: flush ``queue``'s overdue batch; seconds until the open batch is
    due (0 when none is open), or None once the queue is closed."""
    with queue.lock:
        if queue.closed:
            return None
        submit = None
        if queue.batch and queue.ctx.lost is None:   # nothing goes to a lost device
            remaining = queue.batch.opened_at + FLUSH_DEADLINE_S - time.perf_counter()
            if remaining > 0:
                return remaining
            if queue.submit_when_idle and not queue.completion.idle(True):
                return WAIT_SLICE_S
            try:
                submit = queue.flush("deadline", handoff=True)
            except Exception as exc:   # reported by the next launch or wait
                queue.ctx.errors.append(f"submitting queued launches failed: {exc}")
        queue.flusher.sleep()
    if submit is not None:
        submit()
    return 0.0


def _flusher_main(queue_ref, wake: threading.Event) -> None:
    """The flusher thread: submits a batch still pending FLUSH_DEADLINE_S after it opened.

    Holds its queue only weakly between steps; ends when the queue is closed or collected.
    """
    while True:
        wake.wait()
        queue = queue_ref()
        if queue is None:
            return
        delay = flush_due(queue)
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
        queue.forget_after_fork()
    _queues.clear()


on_fork_child(_forget_queues_after_fork)
