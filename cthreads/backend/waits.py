"""Completion tracking for the device queue: submission numbers, work-done notifications,
waits in slices, and checks for a lost device.

Submissions are numbered; the queue runs them in order, so one finished submission means every
earlier one finished too. Completion is learned from wgpu-native's work-done notification,
polled without blocking (waits poll in slices with short sleeps between them, the queue's lock
free meanwhile, so waits honour timeouts and Ctrl-C); never from the poll's "queue empty"
answer, which NVIDIA's driver gave too early. A lost device may never report work done, and
one destroyed while work runs reports nothing until that work ends: so every wait, ``is_done``
and readback map checks whether the device was lost (an unanswered wait asks the device every
``LOSS_PROBE_S``) and then raises our error instead of waiting on.

``Completion`` owns that state for one ``DeviceQueue`` (``dispatch.py``): the numbers
submitted and completed, the outstanding work-done request, and the submission handed off to
be made outside the queue's lock. It shares the queue's lock and never submits anything.
"""

from __future__ import annotations

import threading
import time

from ..errors import GpuUseAfterDestroy
from .device import generation
from .faults import device_error, lost_error


#: How long waits poll without blocking before they block, on CPU drivers and on GPUs.
CPU_SPIN_S = 0.0005
GPU_SPIN_S = 0.002

#: Waits poll between sleeps growing from the first to the second value (seconds): short
#: enough for Ctrl-C and timeouts to act promptly, and for other threads to take the lock.
#: The shortest naps are kept for the first WAIT_SHORT_NAPS_S of a wait (small launches).
WAIT_SLICE_MIN_S = 0.00002
WAIT_SLICE_S = 0.001
WAIT_SHORT_NAPS_S = 0.002

#: A wait or ``is_done`` still unanswered asks the device whether it is alive at most this often
#: (seconds): a destroyed device tells no one until its work ends, and a lost one may never
#: report work done.
LOSS_PROBE_S = 0.05


def native_poll(device):
    """A function poll(wait) -> bool(queue empty), using wgpu-native's device poll."""
    try:
        from wgpu.backends.wgpu_native._api import ffi, libf  # noqa: PLC0415
        internal = device._internal
        return lambda wait: bool(libf.wgpuDevicePoll(internal, bool(wait), ffi.NULL))
    except Exception:  # pragma: no cover - other wgpu builds: wait for everything
        def poll(wait):
            device._poll_wait()
            return True
        return poll


class Completion:
    """Which submissions were made and which finished, for one device queue.

    ``native`` is the queue's ``NativeEncoder`` (work-done notifications), or None on the
    public-API path, where wgpu-native's poll answers instead. Every method that touches wgpu
    takes ``lock`` (the queue's, re-entrant).
    """

    # Completion is learned from wgpu-native's work-done notification, requested natively
    # (one outstanding at a time, covering everything submitted when it was requested).
    # wgpu-native's poll result ("queue empty") is not trusted: on NVIDIA it answered empty
    # right after 100 heavy dispatches were queued.

    def __init__(self, ctx, lock, native, device):
        self.ctx = ctx
        self.lock = lock
        self.native = native
        self.submitted = 0
        self.completed = 0
        self.fence_req = None            # (submission it covers, work-done request key)
        self.next_probe = 0.0            # when an unanswered wait next probes for a loss
        self.spin_s = native.spin_s if native is not None else 0.0
        self._poll = native_poll(device)
        self._device = device
        # A submission handed off to be made outside the queue's lock holds this lock until
        # wgpu-native returns; ``handing_off`` says one is in flight.
        self.wgpu_lock = threading.Lock()
        self.handing_off = False

    # -- submissions made outside the lock ----------------------------------------------------

    def settle(self) -> None:
        """Wait for a handed-off submission to be made (lock held): queue writes, submissions,
        maps and work-done requests must come after it."""
        if self.handing_off:
            with self.wgpu_lock:
                pass

    def hand_off(self, submit, cb):
        """The function that makes the submission ``submit(cb)`` after the caller released the
        queue's lock; later wgpu queue calls wait for it (``settle``)."""
        self.wgpu_lock.acquire()
        self.handing_off = True

        def made_outside_the_lock() -> None:
            try:
                submit(cb)
            finally:
                self.handing_off = False
                self.wgpu_lock.release()
        return made_outside_the_lock

    # -- what was submitted, what finished ------------------------------------------------------

    def note_submission(self) -> None:
        """One more submission was made (or tried: the numbers handed out stay true) (lock
        held)."""
        self.submitted += 1

    def mark(self, seq: int) -> None:
        with self.lock:
            if seq > self.completed:
                self.completed = seq

    def idle(self, poll: bool) -> bool:
        """Whether everything submitted has finished, as far as known without blocking (lock
        held). Without ``poll`` only notifications that already fired count (no wgpu call)."""
        if self.completed >= self.submitted:
            return True
        native = self.native
        if self.handing_off:
            return False
        if native is None:             # the public-API path: wgpu-native's poll answers
            if not poll:
                return False
            self.poll_public()
            return self.completed >= self.submitted
        fence = self.fence_req
        if fence is None:
            if not poll:
                return False
            fence = self.fence()
        fired = native.work_done_ready(fence[1], block=False) if poll else \
            native.work_done_fired(fence[1])
        if not fired:
            return False
        self.fence_done(fence)
        return self.completed >= self.submitted

    def room(self) -> bool:
        """Whether at most one submission is in flight, polling once (lock held; the GPUs'
        batching rule, ``keep_fed`` in ``dispatch.py``)."""
        if self.submitted - self.completed <= 1:
            return True
        if self.native is None:
            return self.idle(True)
        if self.handing_off:
            return False
        self.poll_fence()
        return self.submitted - self.completed <= 1

    def fence(self):
        """The outstanding (submission covered, request key), requested if there is none."""
        with self.lock:
            if self.fence_req is None:
                self.settle()
                self.fence_req = (self.submitted, self.native.work_done_request())
            return self.fence_req

    def fence_before_submit(self) -> None:
        """Ask to be told when the work submitted so far ends, unless already asked (lock
        held; a GPU's flush, so the batching rule learns when one submission is left)."""
        if self.native is not None and self.fence_req is None and \
                self.submitted > self.completed:
            self.fence_req = (self.submitted, self.native.work_done_request())

    def fence_done(self, fence) -> None:
        """Record a fired notification (once, whichever thread saw it)."""
        with self.lock:
            if self.fence_req is fence:
                self.fence_req = None
                self.native.work_done_finish(fence[1])
                if fence[0] > self.completed:      # mark(), the lock already held
                    self.completed = fence[0]

    def poll_fence(self) -> bool:
        """One non-blocking look at the outstanding notification (requested if none); True
        when it had fired (lock held, no handed-off submission in flight)."""
        fence = self.fence()
        if self.native.work_done_ready(fence[1], block=False):
            self.fence_done(fence)
            return True
        return False

    def poll_public(self) -> None:
        """The public-API path's poll: everything submitted so far finished if it says so."""
        snapshot = self.submitted
        if self._poll(False):
            self.mark(snapshot)

    def is_done(self, seq: int) -> bool:
        """Whether submission ``seq`` (already submitted) finished, polling once (lock held)."""
        if self.native is None:
            self.poll_public()
            return seq <= self.completed
        if self.handing_off:               # never waits for a handed-off submission
            return False
        if self.poll_fence() and seq > self.completed:
            self.fence()                   # the next one, for later submissions
        return seq <= self.completed

    # -- a lost device --------------------------------------------------------------------------

    def check_lost(self, closed: bool) -> None:
        """Raise our error when the device was lost or replaced (lock held), asking the
        device at most every ``LOSS_PROBE_S`` (a lost device may never report work done;
        one destroyed while work runs reports nothing until that work ends)."""
        ctx = self.ctx
        if ctx.lost is None and not self.handing_off:     # probes never overlap a submission
            now = time.perf_counter()
            if now >= self.next_probe:
                self.next_probe = now + LOSS_PROBE_S
                self._probe()
        if ctx.lost is not None:
            raise lost_error(ctx, ctx.lost)
        if ctx.generation != generation() and not closed:
            raise GpuUseAfterDestroy(
                "the device this work was submitted to was replaced; its results are lost. "
                "Launch again")

    def _probe(self) -> None:
        """Make a call that fails on a lost device (lock held): the failure marks it lost."""
        try:
            if self.native is not None:
                self.native.probe()
            else:
                self._device.create_command_encoder()
        except Exception as exc:
            device_error(self.ctx, exc, "waiting for submitted work")

    # -- waits ----------------------------------------------------------------------------------

    def poll_in_slices(self, poll, start: float, deadline: float | None = None) -> bool:
        """Call ``poll()`` (one non-blocking poll, made under the lock) until it says True:
        without pauses for the spin time, then between naps that grow from
        ``WAIT_SLICE_MIN_S`` to ``WAIT_SLICE_S`` (the lock is free during them, and Ctrl-C
        interrupts them); False once ``deadline`` passed."""
        spin_until = start + self.spin_s
        nap = WAIT_SLICE_MIN_S
        while not poll():
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                return False
            if now < spin_until:
                continue
            time.sleep(nap if deadline is None else min(nap, deadline - now))
            if now - start > WAIT_SHORT_NAPS_S:       # a long wait: longer naps
                nap = min(nap * 2, WAIT_SLICE_S)
        return True

    def poll_done(self, seq: int, start: float, closed) -> bool:
        """One non-blocking poll: whether submission ``seq`` finished (or ``closed()``, the
        queue closed). Raises our error once the device is lost (a wait begun at ``start``
        probes for a loss after ``LOSS_PROBE_S``)."""
        with self.lock:
            if seq <= self.completed or closed():
                return True
            if self.ctx.lost is not None or time.perf_counter() - start > LOSS_PROBE_S:
                self.check_lost(False)
            native = self.native
            if native is None:
                self.poll_public()
            elif not self.handing_off:     # a handed-off submission: poll after it
                fence = self.fence_req     # poll_fence, without its calls (waits spin here)
                if fence is None:
                    fence = self.fence()
                if native.work_done_ready(fence[1], block=False):
                    self.fence_done(fence)
            return seq <= self.completed

    def read_when_mapped(self, staging, nbytes: int, seq: int, key, into=None) -> bytes:
        """The GPUs' readback: poll for the map ``key`` (requested by the queue once
        submission ``seq``, the last to use ``staging``, was made) as waits poll; its
        completion says that ``seq``, and with it every earlier one, finished: one
        notification instead of the work-done one followed by the map's (docs/performance.md,
        "Latency of a tiny launch")."""
        native = self.native
        start = time.perf_counter()
        mapped = []

        def poll() -> bool:
            with self.lock:
                if self.ctx.lost is not None or time.perf_counter() - start > LOSS_PROBE_S:
                    self.check_lost(False)
                if not native.map_ready(key, block=False):
                    return False
                native.map_finish(key)
                mapped.append(native.copy_mapped(staging.buffer, nbytes, into))
                return True

        self.poll_in_slices(poll, start)
        self.mark(seq)
        return mapped[0]

    def after_fork(self, lock) -> None:
        """In a forked child: the parent's locks may be held by threads that do not exist."""
        self.lock = lock
        self.wgpu_lock = threading.Lock()
        self.handing_off = False
