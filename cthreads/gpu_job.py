"""``GpuJob``: the handle of one submitted launch.

``join(download=True)`` waits for the device, reads the kernel's bounds-check status (a failure
raises ``GpuIndexError`` and then *nothing* is written back) and writes every list the kernel may
have written into the caller's own list objects, all from one mapped staging buffer.
``join(download=False)`` only waits; a bounds-check failure of such a launch is reported by the
next join with download or ``GpuArena.sync()`` (reading the status costs a map, which would
double the cost of small resident launches). ``done()`` polls without blocking.
"""

from __future__ import annotations

import threading

from .backend import device as _device
from .errors import GpuInvalidArgument
from .job import Job


class GpuJob(Job):
    """A launch submitted to the device; ``join()`` waits and writes results back."""

    def __init__(self, rt, seq, readback, resident_written, owned):
        # Job.__init__ is not called: a device job needs no thread or event (launch-path cost).
        self._fn = rt.kernel
        self._rt = rt
        self._seq = seq
        self._readback = readback          # Readback of this launch's results, or None
        self._resident_written = resident_written
        self._owned = owned
        self._generation = rt.generation
        self._joined = False
        self._join_lock = threading.Lock()
        self._error: BaseException | None = None

    # -- Job API -----------------------------------------------------------------------------

    def start(self) -> "GpuJob":
        """No-op: ``gpu()`` already submitted the work."""
        return self

    def _started(self) -> bool:
        return True

    def done(self) -> bool:
        """True once the device has finished this launch (never blocks)."""
        if self._joined or self._generation != _device.generation():
            return True
        try:
            return self._rt.queue.is_done(self._seq)
        except Exception:
            return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the device to finish this launch, without downloading.

        ``timeout`` is accepted for ``Job`` compatibility; a device wait is not interruptible.
        """
        if not self._joined and self._generation == _device.generation():
            self._rt.queue.wait(self._seq)
        return True

    def join(self, download: bool = True, timeout: float | None = None):
        """Wait for the device; with ``download`` check bounds and write lists back. Returns None."""
        if not isinstance(download, bool):
            raise GpuInvalidArgument(f"GpuJob.join(download=...): expects True or False, got "
                                     f"{download!r}")
        from .launch import download_slots, launch_lock  # noqa: PLC0415
        with self._join_lock:
            if self._error is not None:
                raise self._error
            if self._generation != _device.generation():
                self._joined = True
                return None
            rt = self._rt
            first = not self._joined
            had_readback = self._readback is not None
            if first:
                try:
                    rt.queue.wait(self._seq)          # outside the launch lock: others go on
                except BaseException as exc:
                    self._error = exc
                    raise
                with launch_lock:
                    try:
                        if self._readback is not None:
                            self._readback.finish(rt.queue, self._seq, download)
                    except BaseException as exc:
                        self._error = exc
                        raise
                    finally:
                        self._joined = True
                        self._readback = None
                        self._release()
            if not download:
                return None
            # resident lists the kernel wrote; and the status when no readback carried it
            check = (rt,) if (first and not had_readback and rt.status is not None
                              and rt.unchecked) else ()
            download_slots([s for s in self._resident_written if s.written], check)
        return None

    def _release(self) -> None:
        if self._generation == _device.generation():
            pool = self._rt.queue.pool
            for buf in self._owned:
                pool.release(buf)
        self._owned = []

    def result(self):
        """Always None (kernels return nothing); waits and downloads like join()."""
        self.join()
        return None

    def sync_state(self):
        raise GpuInvalidArgument(
            "GpuJob.sync_state(): a device launch cannot be observed mid-run; call join() to "
            "wait and download, or GpuArena.sync() for resident lists")

    async def _join_async(self):
        import asyncio  # noqa: PLC0415
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.wait)
        self.join()
        return None

    @property
    def state(self) -> str:
        return "done" if self.done() else "running"

    def __repr__(self) -> str:
        return f"<GpuJob {self._rt.program.name} #{self._seq} {self.state}>"
