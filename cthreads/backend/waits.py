"""Completion tracking for the device queue: submission numbers, work-done notifications,
waits in slices, and checks for a lost device.

Submissions are numbered; the queue runs them in order, so one finished submission means every
earlier one finished too. Completion is learned from wgpu-native's work-done notification,
polled without blocking (``wait()`` polls in slices with short sleeps between them, the lock
free meanwhile, so waits honour timeouts and Ctrl-C); never from the poll's "queue empty"
answer, which NVIDIA's driver gave too early. A lost device may never report work done, and
one destroyed while work runs reports nothing until that work ends: so every wait, ``is_done``
and readback map checks whether the device was lost (an unanswered wait asks the device every
``LOSS_PROBE_S``) and then raises our error instead of waiting on.

``CompletionMixin`` holds these methods of ``DeviceQueue`` (``dispatch.py``); the state they
use (``submitted``, ``completed``, the outstanding work-done request) is the queue's own.
"""

from __future__ import annotations

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


class CompletionMixin:
    """``DeviceQueue``'s completion tracking and waits (see the module docstring)."""

    # -- completion --------------------------------------------------------------------------

    # Completion is learned from wgpu-native's work-done notification, requested natively
    # (one outstanding at a time, covering everything submitted when it was requested).
    # wgpu-native's poll result ("queue empty") is not trusted: on NVIDIA it answered empty
    # right after 100 heavy dispatches were queued.

    def _native_poll(self):
        """A function poll(wait) -> bool(queue empty), using wgpu-native's device poll."""
        try:
            from wgpu.backends.wgpu_native._api import ffi, libf  # noqa: PLC0415
            internal = self._device._internal
            return lambda wait: bool(libf.wgpuDevicePoll(internal, bool(wait), ffi.NULL))
        except Exception:  # pragma: no cover - other wgpu builds: wait for everything
            device = self._device

            def poll(wait):
                device._poll_wait()
                return True
            return poll

    def _idle(self, poll: bool) -> bool:
        """Whether everything submitted has finished, as far as known without blocking (lock
        held). Without ``poll`` only notifications that already fired count (no wgpu call)."""
        if self.completed >= self.submitted:
            return True
        native = self._native
        if self._submitting:
            return False
        if native is None:             # the public-API path: wgpu-native's poll answers
            if not poll:
                return False
            snapshot = self.submitted
            if self._poll(False):
                self._mark(snapshot)
            return self.completed >= self.submitted
        fence = self._fence_req
        if fence is None:
            if not poll:
                return False
            fence = self._fence()
        fired = native.work_done_ready(fence[1], block=False) if poll else \
            native.work_done_fired(fence[1])
        if not fired:
            return False
        self._fence_done(fence)
        return self.completed >= self.submitted

    def _room(self) -> bool:
        """Whether at most one submission is in flight, polling once (lock held; the GPUs'
        batching rule, ``DeviceQueue._keep_fed``)."""
        if self.submitted - self.completed <= 1:
            return True
        if self._native is None:
            return self._idle(True)
        if self._submitting:
            return False
        fence = self._fence()
        if self._native.work_done_ready(fence[1], block=False):
            self._fence_done(fence)
        return self.submitted - self.completed <= 1

    def _fence(self):
        """The outstanding (submission covered, request key), requested if there is none."""
        with self._lock:
            if self._fence_req is None:
                self._settle()
                self._fence_req = (self.submitted, self._native.work_done_request())
            return self._fence_req

    def _fence_done(self, fence) -> None:
        """Record a fired notification (once, whichever thread saw it)."""
        with self._lock:
            if self._fence_req is fence:
                self._fence_req = None
                self._native.work_done_finish(fence[1])
                self._mark(fence[0])

    def is_done(self, seq: int) -> bool:
        """Whether submission ``seq`` finished (never blocks; submits it if still pending)."""
        if seq <= self.completed:
            return True
        with self._lock:
            if self._closed:
                return True
            self._check_lost()
            if seq > self.submitted:
                if self._submit_when_idle and not self._idle(True):
                    return False
                self._flush()
            if self._native is None:
                snapshot = self.submitted
                if self._poll(False):
                    self._mark(snapshot)
                return seq <= self.completed
            if self._submitting:               # never waits for a handed-off submission
                return False
            fence = self._fence()
            if self._native.work_done_ready(fence[1], block=False):
                self._fence_done(fence)
                if seq > self.completed:
                    self._fence()              # the next one, for later submissions
            return seq <= self.completed

    def _check_lost(self) -> None:
        """Raise our error when the device was lost or replaced (lock held), asking the
        device at most every ``LOSS_PROBE_S`` (a lost device may never report work done;
        one destroyed while work runs reports nothing until that work ends)."""
        ctx = self.ctx
        if ctx.lost is None and not self._submitting:     # probes never overlap a submission
            now = time.perf_counter()
            if now >= self._next_probe:
                self._next_probe = now + LOSS_PROBE_S
                self._probe()
        if ctx.lost is not None:
            raise lost_error(ctx, ctx.lost)
        if ctx.generation != generation() and not self._closed:
            raise GpuUseAfterDestroy(
                "the device this work was submitted to was replaced; its results are lost. "
                "Launch again")

    def _probe(self) -> None:
        """Make a call that fails on a lost device (lock held): the failure marks it lost."""
        try:
            if self._native is not None:
                self._native.probe()
            else:
                self._device.create_command_encoder()
        except Exception as exc:
            device_error(self.ctx, exc, "waiting for submitted work")

    def wait(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until submission ``seq`` (and all before it) finished, submitting it first if
        it is still pending; False if ``timeout`` seconds passed first.

        Waits in slices: non-blocking polls for the spin time, then polls between sleeps of
        at most ``WAIT_SLICE_S``. Each poll is made under the queue's lock (with several
        threads polling wgpu-native at once its callbacks, which need the GIL, deadlocked),
        but the lock is free between polls, so other threads launch meanwhile; and the
        sleeps let Python run signal handlers (Ctrl-C raises ``KeyboardInterrupt`` here).
        A closed queue (shutdown, interpreter exit) ends the wait.
        """
        if seq <= self.completed:
            return True
        start = time.perf_counter()
        deadline = None if timeout is None else start + max(timeout, 0.0)
        submit = None
        with self._lock:
            if self._closed:
                return True
            earlier = self.submitted if seq > self.submitted else 0
        if earlier > self.completed and self._submit_when_idle:
            # the earlier work first (see _submit_when_idle), then the pending batch
            if not self.wait(earlier, None if deadline is None else deadline - start):
                return False
        try:
            with self._lock:
                if self._closed:
                    return True
                if seq > self.submitted:
                    submit = self._flush(handoff=True)
                    seq = min(seq, self.submitted)
        finally:                       # even on Ctrl-C: a handed-off submission is made
            if submit is not None:
                submit()
        if not self._poll_in_slices(lambda: self._poll_done(seq, start), start, deadline):
            return False
        self.ctx.check_alive()
        return True

    def _poll_in_slices(self, poll, start: float, deadline: float | None = None) -> bool:
        """Call ``poll()`` (one non-blocking poll, made under the lock) until it says True:
        without pauses for the spin time, then between naps that grow from
        ``WAIT_SLICE_MIN_S`` to ``WAIT_SLICE_S`` (the lock is free during them, and Ctrl-C
        interrupts them); False once ``deadline`` passed."""
        spin_until = start + (self._native.spin_s if self._native is not None else 0.0)
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

    def _read_when_mapped(self, staging, nbytes: int, seq: int) -> bytes:
        """``read_into`` on GPUs: the map is requested right away (it completes once
        submission ``seq``, the last to use the staging buffer, has finished, and with it
        every earlier one), then polled for in slices as ``wait`` polls: one notification
        instead of the work-done one followed by the map's (docs/performance.md, "Latency of a
        tiny launch")."""
        native = self._native
        with self._lock:
            if seq > self.submitted:
                self._flush()
            self._settle()
            key = native.map_request(staging.buffer, nbytes)
        start = time.perf_counter()
        mapped = []

        def poll() -> bool:
            with self._lock:
                if self.ctx.lost is not None or time.perf_counter() - start > LOSS_PROBE_S:
                    self._check_lost()
                if not native.map_ready(key, block=False):
                    return False
                native.map_finish(key)
                mapped.append(native.copy_mapped(staging.buffer, nbytes))
                return True

        self._poll_in_slices(poll, start)
        result = mapped[0]
        self._mark(seq)
        return result

    def _poll_done(self, seq: int, start: float) -> bool:
        """One non-blocking poll: whether submission ``seq`` finished (or the queue closed).
        Raises our error once the device is lost (a wait begun at ``start`` probes for a loss
        after ``LOSS_PROBE_S``)."""
        with self._lock:
            if self._closed or seq <= self.completed:
                return True
            if self.ctx.lost is not None or time.perf_counter() - start > LOSS_PROBE_S:
                self._check_lost()
            if self._native is None:
                snapshot = self.submitted
                if self._poll(False):
                    self._mark(snapshot)
            elif not self._submitting:     # a handed-off submission: poll after it
                fence = self._fence()
                if self._native.work_done_ready(fence[1], block=False):
                    self._fence_done(fence)
            return seq <= self.completed

    def _mark(self, seq: int) -> None:
        with self._lock:
            if seq > self.completed:
                self.completed = seq
