"""``GpuJob``: the handle of one submitted launch.

It takes over its ``LaunchPlan``'s readback, the resident slots the kernel wrote and the pooled
buffers of the uploaded lists (released at the first join). Resident downloads and the launch
lock come from ``residency.py``.

``join(download=True)`` waits for the device, reads the kernel's bounds-check status (a failure
raises ``GpuIndexError`` and then *nothing* is written back) and writes every list the kernel may
have written into the caller's own list objects, all from one mapped staging buffer.
``join(download=False)`` only waits; a bounds-check failure of such a launch is reported by the
next join with download or ``GpuArena.sync()`` (reading the status costs a map, a large share
of a small resident launch: docs/performance.md, "Shader shape"). ``done()`` polls without
blocking. A kernel that prints (runtime/printing.py) writes its lines at the first ``wait()``
that finds the launch finished or at the first join, once, before a failed check raises.

Waits run in short slices (``DeviceQueue.wait``): ``timeout=`` is honoured (``GpuTimeout``, a
``TimeoutError``) and Ctrl-C raises ``KeyboardInterrupt``; either way the job stays joinable.
``shutdown()`` copies the results of jobs still in flight into host memory before the device
goes (a shutdown hook over the live, un-joined jobs), so a later ``join()`` still writes them
back; resident lists cannot be saved that way, and their join raises ``GpuUseAfterDestroy``.
"""

from __future__ import annotations

import threading
import weakref

from . import pickling
from .runtime import residency
from .backend import device as _device
from .errors import CThreadsGPUError, GpuInvalidArgument, GpuTimeout, GpuUseAfterDestroy
from .job import Job

#: jobs whose results have not been read back yet (shutdown() reads them first)
_in_flight: "weakref.WeakSet[GpuJob]" = weakref.WeakSet()


class GpuJob(Job):
    """A launch submitted to the device; ``join()`` waits and writes results back."""

    def __init__(self, rt, seq: int, plan, timing=None):
        Job.__init__(self, rt.kernel)
        self._timing = timing              # backend.timing.JobTiming of a timed launch
        if timing is not None:             # never read: its buffer goes back with the job
            weakref.finalize(self, timing.drop, rt.queue, seq)
        self._rt = rt
        self._seq = seq
        readback = plan.readback
        self._readback = readback          # Readback of this launch's results, or None
        self._resident_written = plan.resident_written
        self._owned = plan.owned           # pooled buffers released at join
        self._generation = rt.generation
        self._joined = False
        self._join_lock = threading.Lock()
        self._error: BaseException | None = None
        if readback is not None:
            _in_flight.add(self)

    # -- Job API -----------------------------------------------------------------------------

    def start(self) -> "GpuJob":
        """No-op: ``gpu()`` already submitted the work."""
        return self

    def _started(self) -> bool:
        return True

    def _stale(self) -> bool:
        return self._generation != _device.generation()

    def done(self) -> bool:
        """True once the device has finished this launch (never blocks). A device error of
        ours (the device was lost) also counts as finished: ``join()`` raises it. Any other
        exception propagates rather than reading as done."""
        if self._joined or self._stale():
            return True
        try:
            return self._rt.queue.is_done(self._seq)
        except CThreadsGPUError:
            return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the device to finish this launch, without downloading; returns ``done()``
        (False when ``timeout`` seconds passed first)."""
        if timeout is not None and (isinstance(timeout, bool)
                                    or not isinstance(timeout, (int, float))):
            raise GpuInvalidArgument(f"GpuJob.wait/join(timeout=...): expects seconds (a "
                                     f"number) or None, got {timeout!r}")
        if self._joined or self._stale():
            return True
        done = self._rt.queue.wait(self._seq, timeout)
        readback = self._readback
        if done and readback is not None and readback.prints is not None:
            self._print_now()
        return done

    def _print_now(self) -> None:
        """Fetch the finished launch's results and write its printed lines (a kernel that
        prints: runtime/printing.py); join() checks and writes back the rest. A device error
        here is left for join() to raise."""
        with self._join_lock:
            readback = self._readback
            if readback is None or readback.prints is None:
                return
            try:
                with residency.launch_lock:
                    if self._stale():
                        return
                    if readback.raw is None:
                        readback.fetch(self._rt.queue, self._seq)
            except CThreadsGPUError:
                return
            readback.emit_prints()

    def join(self, download: bool = True, timeout: float | None = None):
        """Wait for the device; with ``download`` check bounds and write lists back. Returns None.

        Raises ``GpuTimeout`` (a ``TimeoutError``) when ``timeout`` seconds pass first; the
        job stays joinable, as after a ``KeyboardInterrupt`` during the wait.
        """
        if not isinstance(download, bool):
            raise GpuInvalidArgument(f"GpuJob.join(download=...): expects True or False, got "
                                     f"{download!r}")
        if not self.wait(timeout):
            raise GpuTimeout(f"{self!r} did not finish within {timeout} s; it is still "
                             "running: join() again to wait for it")
        with self._join_lock:
            if self._error is not None:
                raise self._error
            first = not self._joined
            had_readback = self._readback is not None
            if first and not had_readback and not self._owned:
                self._joined = True        # nothing to read back or give back
            elif first:
                readback = self._finish()
                if readback is not None and download:
                    try:
                        readback.write()
                    except CThreadsGPUError as exc:
                        self._error = exc
                        raise
            if not download:
                return None
            slots = [s for s in self._resident_written if s.written]
            if self._stale():
                if slots:
                    names = ", ".join(repr(s.name) for s in slots)
                    raise GpuUseAfterDestroy(
                        f"{self!r}: cthreads.gpu.shutdown() released the device before the "
                        f"results in the resident list(s) {names} were downloaded; they are "
                        "lost. Call join() or GpuArena.sync() before shutdown()")
                return None
            # resident lists the kernel wrote; and the status when no readback carried it
            rt = self._rt
            check = (rt,) if (first and not had_readback and rt.status is not None
                              and rt.unchecked) else ()
            residency.download_slots(slots, check)
        return None

    def _finish(self):
        """Read this job's results into host memory and check its bounds (once, join lock
        held); the readback whose lists are still to be written, or None."""
        readback = self._readback
        with residency.launch_lock:                  # shutdown() holds it: the generation is stable
            try:
                if readback is not None:
                    if self._stale():
                        if readback.raw is None:
                            raise GpuUseAfterDestroy(
                                f"{self!r}: the device was shut down while this job ran and "
                                "its results could not be saved; they are lost. Join jobs "
                                "before calling cthreads.gpu.shutdown()")
                        readback.emit_prints()
                        readback.check(self._seq, live=False)
                    else:
                        if readback.raw is None:
                            readback.fetch(self._rt.queue, self._seq)
                        readback.emit_prints()       # before a failed check raises
                        readback.check(self._seq)
            except CThreadsGPUError as exc:
                self._error = exc
                self._done_now()
                raise
            self._done_now()
        return readback

    def _done_now(self) -> None:
        """The job is finished: its pooled buffers go back."""
        self._joined = True
        readback, self._readback = self._readback, None
        _in_flight.discard(self)
        if not self._stale():
            pool = self._rt.queue.pool
            for buf in self._owned:
                pool.release(buf)
            if readback is not None and readback.staging is not None:
                pool.release(readback.staging)
        self._owned = []

    @property
    def device_time(self) -> float | None:
        """Seconds the job ran on the device, from the start of its first dispatch to the end
        of its last (uploads and downloads excluded), for a timed launch
        (``gpu(..., timed=True)``, ``@Gpu(timed=True)``) on a device with timestamp queries.
        None otherwise, and while the job is still running (never waits); read once from the
        device, then cached."""
        timing = self._timing
        if timing is None:
            return None
        if timing.value is not None:
            return timing.value
        if self._stale() or not self.done():
            return None
        try:
            with self._join_lock:          # one thread maps the buffer; the others wait
                return timing.seconds(self._rt.queue, self._seq)
        except CThreadsGPUError:
            return None

    def result(self):
        """Always None (kernels return nothing); waits and downloads like join()."""
        self.join()
        return None

    def __reduce__(self):
        pickling.refuse("GpuJob", "Join it where it was launched and send the results (the "
                        "lists or arrays), or send the kernel and its arguments and launch "
                        "there")

    def sync_state(self):
        raise GpuInvalidArgument(
            "GpuJob.sync_state(): a device launch cannot be observed mid-run; call join() to "
            "wait and download, or GpuArena.sync() for resident lists")

    async def _join_async(self):
        import asyncio  # noqa: PLC0415 - lazy for start-up time (only awaiting jobs need it)
        loop = asyncio.get_running_loop()
        # the whole join (wait, map, writeback) runs in a worker thread: the loop never waits
        await loop.run_in_executor(None, self.join)
        return None

    @property
    def state(self) -> str:
        return "done" if self.done() else "running"

    def __repr__(self) -> str:
        return f"<GpuJob {self._rt.program.name} #{self._seq} {self.state}>"


def _save_in_flight(ctx) -> None:
    """Shutdown hook (device still alive): copy the results of un-joined jobs of this device
    into host memory, so that their join() still writes them back."""
    with residency.launch_lock:
        for job in list(_in_flight):
            readback = job._readback
            if (readback is None or readback.raw is not None or readback.staging is None
                    or job._stale() or (ctx is not None and job._rt.ctx is not ctx)):
                continue
            try:
                readback.fetch(job._rt.queue, job._seq)
            except Exception:  # its join() raises GpuUseAfterDestroy
                pass


_device.on_shutdown(_save_in_flight)
