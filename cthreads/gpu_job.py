"""``GpuJob``: the handle of one submitted launch.

``join(download=True)`` waits for the device, checks the kernel's status word (bounds-check
failures raise ``GpuIndexError`` and then *nothing* is written back), and writes every list the
kernel may have written into the caller's own list objects. ``done()`` polls without blocking.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from . import convert
from .backend import device as _device
from .errors import GpuIndexError, GpuInvalidArgument
from .job import Job


@dataclass
class Download:
    target: object        # the caller's list or array
    staging: object       # PooledBuffer holding the result bytes after the submission
    nbytes: int
    elem: str


class GpuJob(Job):
    """A launch submitted to the device; ``join()`` waits and writes results back."""

    def __init__(self, rt, seq, downloads, resident_written, owned, status):
        # Job.__init__ is not called: a device job needs no thread or event (launch-path cost).
        self._fn = rt.kernel
        self._rt = rt
        self._seq = seq
        self._downloads = downloads
        self._resident_written = resident_written
        self._owned = owned
        self._status = status
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
        if self._joined:
            return True
        if self._generation != _device.generation():
            return True
        try:
            return self._rt.queue.is_done(self._seq)
        except Exception:
            return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the device to finish this launch, without downloading."""
        if not self._joined and self._generation == _device.generation():
            self._rt.queue.wait(self._seq)
        return True

    def join(self, download: bool = True, timeout: float | None = None):
        """Wait for the device; with ``download`` write written lists back. Returns None."""
        if not isinstance(download, bool):
            raise GpuInvalidArgument(f"GpuJob.join(download=...): expects True or False, got "
                                     f"{download!r}")
        from .launch import download_slots, launch_lock  # noqa: PLC0415
        with self._join_lock:
            if self._error is not None:
                raise self._error
            if self._joined:
                if download and self._resident_written:
                    download_slots([s for s in self._resident_written if s.written])
                return None
            if self._generation != _device.generation():
                self._joined = True
                return None
            with launch_lock:
                try:
                    self._finish(download)
                except BaseException as exc:
                    self._error = exc
                    raise
                finally:
                    self._joined = True
                    self._release()
            if download and self._resident_written:
                download_slots([s for s in self._resident_written if s.written])
        return None

    def _finish(self, download: bool) -> None:
        queue = self._rt.queue
        queue.wait(self._seq)
        if self._status is not None:
            words = queue.read_into(self._status, self._rt.status_nbytes, self._seq,
                                    lambda v: np.frombuffer(v, dtype=np.uint32).copy())
            if words[0]:
                raise self._index_error(int(words[0]) - 1, int(np.int32(words[1])))
        if download:
            for d in self._downloads:
                queue.read_into(d.staging, d.nbytes, self._seq,
                                lambda view, d=d: convert.writeback(d.target, view, d.elem))

    def _index_error(self, check_id: int, index: int) -> GpuIndexError:
        prog = self._rt.program
        check = next((c for c in prog.checks if c.id == check_id), None)
        if check is None:
            return GpuIndexError(f"kernel {prog.name}: an index was out of range ({index})")
        return GpuIndexError(
            f"kernel {prog.name}: index {index} is out of range for list {check.list_name!r}\n"
            f'  File "{prog.filename}", line {check.lineno}, in {prog.name}\n'
            f"    {check.source}\n"
            "No list was written back; the lists hold what they held before the launch. "
            "Guard the access (e.g. `if i < len(lst):`) or fix the index computation.")

    def _release(self) -> None:
        if self._generation == _device.generation():
            pool = self._rt.queue.pool
            for buf in self._owned:
                pool.release(buf)
        self._owned = []
        self._downloads = []

    def result(self):
        """Always None (kernels return nothing); waits like join()."""
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
