"""``Job``: the handle of work running elsewhere (a Python thread here; the device for GpuJob).

States: ``pending`` (created, not started), ``running``, ``done``. ``join()`` waits and returns
the result (re-raising the work's exception), ``await job`` waits without blocking the event
loop, ``done()`` never blocks.
"""

from __future__ import annotations

import threading


class Job:
    """Run ``fn(*args, **kwargs)`` in a Python thread: ``Job(fn, ...).start().join()``."""

    def __init__(self, fn=None, *args, **kwargs):
        self._fn = fn
        self._args = args
        self._kwargs = kwargs
        self._thread: threading.Thread | None = None
        # made by start(): a subclass that runs its work elsewhere (GpuJob) never pays for it
        self._finished: threading.Event | None = None
        self._result = None
        self._exc: BaseException | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "Job":
        """Start the work (once); returns the job so calls chain."""
        if self._thread is None:
            if self._fn is None:
                raise TypeError("Job() has no function to run; create it as Job(fn, *args)")
            self._finished = threading.Event()
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"cthreads-job-{getattr(self._fn, '__name__', 'fn')}")
            self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._result = self._fn(*self._args, **self._kwargs)
        except BaseException as exc:  # re-raised by join()
            self._exc = exc
        finally:
            self._finished.set()

    def done(self) -> bool:
        """True once the work has finished (never blocks)."""
        finished = self._finished
        return finished is not None and finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the work to finish; returns ``done()``."""
        if self._thread is None:
            self.start()
        return self._finished.wait(timeout)

    def join(self, timeout: float | None = None):
        """Wait for the work and return its result (re-raising its exception)."""
        if not self.wait(timeout):
            raise TimeoutError(f"{self!r} did not finish within {timeout} s")
        if self._exc is not None:
            raise self._exc
        return self._result

    def result(self):
        """The result of the work (waits for it)."""
        return self.join()

    def sync_state(self) -> dict:
        """A snapshot of the job's state (does not wait)."""
        return {"state": self.state, "done": self.done()}

    @property
    def state(self) -> str:
        if self.done():
            return "done"
        return "running" if self._started() else "pending"

    def _started(self) -> bool:
        return self._thread is not None

    def __await__(self):
        return self._join_async().__await__()

    async def _join_async(self):
        import asyncio  # noqa: PLC0415 - keeps `import cthreads` light

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.join)

    def __repr__(self) -> str:
        name = getattr(self._fn, "__name__", "?")
        return f"<{type(self).__name__} {name} {self.state}>"


__all__ = ["Job"]
