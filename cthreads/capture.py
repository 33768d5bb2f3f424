"""``capture()`` and ``GpuGraph``: record a sequence of launches once, replay it as one
submission (docs/api.md, "Capture and replay"; v3 contract section 5).

``with capture() as graph:`` makes every ``gpu()`` call of the calling thread check its
arguments and record its launch instead of running it; ``graph.replay(times=1)`` submits the
recorded launches, in order, ``times`` over, and returns the ``GpuJob`` of the replay. The
recording and the device side are ``runtime/capture.py`` and ``backend/replay.py``.
"""

from __future__ import annotations

from . import pickling
from .backend import get_queue
from .devices import use_device
from .errors import GpuInvalidArgument
from .gpu_job import GpuJob
from .runtime import capture as _rec

__all__ = ["GpuGraph", "capture"]


class GpuGraph:
    """Launches recorded by ``capture()`` on one device; ``replay()`` runs them again."""

    def __init__(self):
        self._graph = None
        self._state = "recording"       # then "ready", or "discarded" when the block raised
        self._label = ""

    @property
    def launches(self) -> int:
        """How many launches were recorded."""
        return 0 if self._graph is None else self._graph.status.count

    @property
    def device(self) -> str:
        """The device the graph belongs to (where its capture began)."""
        return self._label

    def replay(self, times: int = 1, timed: bool = False) -> GpuJob:
        """Submit the recorded launches in order, ``times`` over, as one submission (as few as
        the device allows); the ``GpuJob`` of the replay (``join()``, ``await``; with
        ``timed=True`` its ``device_time``: from the first dispatch to the end of the last)."""
        if times.__class__ is bool or not isinstance(times, int) or times < 1:
            raise GpuInvalidArgument(f"GpuGraph.replay(times={times!r}): expects an int >= 1")
        if timed.__class__ is not bool:
            raise GpuInvalidArgument(f"GpuGraph.replay(timed={timed!r}): expects True or False")
        if self._state == "recording":
            raise GpuInvalidArgument("GpuGraph.replay() inside its own capture(): replay the "
                                     "graph after the with-block")
        if self._state == "discarded":
            raise GpuInvalidArgument("GpuGraph.replay(): the with-block of this capture raised, "
                                     "so the capture was discarded; capture again")
        status, seq, plan, timing = _rec.replay(self._graph, int(times), timed)
        return GpuJob(status, seq, plan, timing)

    def __reduce__(self):
        pickling.refuse("GpuGraph", "Send the kernels and their arguments, and capture the "
                        "launches again where they run")

    def __repr__(self) -> str:
        return f"<GpuGraph {self._state}, {self.launches} launch(es) on {self._label}>"


class capture:  # noqa: N801 - used as a function: ``with capture() as graph``
    """``with capture() as graph:`` records the launches of the with-block into ``graph``
    (a ``GpuGraph``) instead of running them; ``device=``: the device of the graph (else the
    caller's ``use_device`` selection or the default). A block that raises discards the
    capture."""

    def __init__(self, device=None):
        self._device = device
        self._graph = None
        self._selection = None

    def __enter__(self) -> GpuGraph:
        _rec.check_not_nested()
        if self._device is not None:      # the block's launches run there, as use_device
            self._selection = use_device(self._device)
            self._selection.__enter__()
        try:
            queue = get_queue()
            graph = self._graph = GpuGraph()
            graph._label = queue.ctx.label
            _rec.begin(queue)
        except BaseException:
            self._leave_device()
            raise
        return graph

    def _leave_device(self) -> None:
        if self._selection is not None:
            selection, self._selection = self._selection, None
            selection.__exit__(None, None, None)

    def __exit__(self, exc_type, exc, tb) -> None:
        rec = _rec.current()
        _rec.end()
        self._leave_device()
        graph = self._graph
        if exc_type is not None:
            graph._state = "discarded"
            _rec.discard(rec)
            return
        try:
            graph._graph = _rec.finish(rec)
        except BaseException:
            graph._state = "discarded"
            _rec.discard(rec)
            raise
        graph._state = "ready"
