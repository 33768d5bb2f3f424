"""The recording behind v3's ``capture()`` and ``GpuGraph.replay()`` (cthreads/capture.py).

Inside ``capture()`` a ``gpu()`` call is checked as usual and then *recorded* (``record``):
its ``LaunchPlan`` is made once (the variant, its workgroups, its uniform bytes with the
scalars of the call, its bind-group entries) and nothing is submitted. Every list must be a
``GpuArray`` or an arena list (``check_lists``): a recorded launch reads device memory when
it is replayed, so host data copied at record time would be stale. Library calls
(``matmul``, ``sort``, ``f.accumulate``, ``f.reduce(axis=...)``) are recorded by
``capture_library.py``. ``finish`` turns the records into dispatches once
(``backend/replay.py``: the graph's own uniform slots; one status slot and one bind group per
distinct launch: kernel, buffers and scalars) and ``replay`` submits them, ``times`` over, as
one submission.

``GraphStatus`` stands for the graph wherever a kernel runtime's status is read (``GpuJob``
joins, ``Readback``, the writers of ``GpuArray``s and arena slots): its status words are all
the recorded launches' slots, and ``status_error`` reports the first recorded launch whose
check failed, with the kernel's located message. Replaying after an array the graph binds was
freed, an arena list it binds was released, or after ``shutdown()`` raises
``GpuUseAfterDestroy`` before anything is submitted.
"""

from __future__ import annotations

import threading
import weakref

from ..backend import capturing
from ..backend import device as _device
from ..backend import replay as _replay
from ..errors import GpuInvalidArgument, GpuUseAfterDestroy
from . import residency
from .plan import LaunchPlan
from .readback import Readback

__all__ = ["GraphStatus", "ListUse", "Recording", "RecordedLaunch", "begin", "check_lists",
           "check_not_nested", "current", "discard", "end", "finish", "record", "replay"]

_local = threading.local()


def current() -> "Recording | None":
    """The calling thread's open recording, or None."""
    return getattr(_local, "recording", None)


class RecordedLaunch:
    """What ``gpu()`` returns inside ``capture()``: the launch runs at ``replay()``, whose job
    is the one to join."""

    __slots__ = ("index", "name")

    def __init__(self, index: int, name: str):
        self.index = index
        self.name = name

    def _refuse(self, what: str):
        raise GpuInvalidArgument(
            f"{what} of the launch of {self.name} recorded by capture() (recorded launch "
            f"#{self.index + 1}): it runs only when the graph is replayed; join the job "
            "graph.replay() returns")

    def join(self, *args, **kwargs):
        self._refuse("join()")

    def wait(self, *args, **kwargs):
        self._refuse("wait()")

    def done(self):
        self._refuse("done()")

    def result(self):
        self._refuse("result()")

    def __await__(self):
        self._refuse("await")

    def __repr__(self) -> str:
        return f"<recorded launch #{self.index + 1} of {self.name}>"


class ListUse:
    """One list a recorded launch binds: its slot, the buffer it had, and what it was."""

    __slots__ = ("slot", "pooled", "where", "written", "arena")

    def __init__(self, slot, where: str, written: bool):
        self.arena = not hasattr(slot, "dead")     # a residency.Slot; else a GpuArray's
        root = slot if self.arena else (slot.base or slot)
        self.slot = root
        self.pooled = root.pooled
        self.where = where
        self.written = written

    def gone(self, generation: int) -> str | None:
        """Why the buffer the launch binds is no longer the array's, or None while it is."""
        s = self.slot
        if self.arena:
            if s.pooled is not self.pooled:
                return ("the arena holding this list was released (or the list re-bound) "
                        "since the capture")
            return None
        if s.dead or s.generation != generation or s.pooled is not self.pooled:
            return ("the GpuArray it binds was freed (no reference to it was left) or its "
                    "device shut down since the capture; a graph does not keep its arrays "
                    "alive: keep a reference to every array a graph uses while you replay it")
        return None


class _Launch:
    """One recorded launch: its runtime, its steps (one dispatch each: one, or one per part
    of a launch over split arrays) and the lists it binds."""

    __slots__ = ("index", "rt", "steps", "uses")

    def __init__(self, index: int, rt, steps: tuple, uses: list):
        self.index = index
        self.rt = rt
        self.steps = steps
        self.uses = uses


class Recording:
    """The launches one ``capture()`` recorded, on ``queue``'s device."""

    def __init__(self, queue):
        self.queue = queue
        self.ctx = queue.ctx
        self.generation = _device.generation()
        self.launches: list[_Launch] = []


def check_not_nested() -> None:
    """GpuInvalidArgument when the calling thread already captures."""
    if current() is not None:
        raise GpuInvalidArgument(
            "capture() inside capture(): captures do not nest; end the first with-block "
            "first")


def begin(queue) -> Recording:
    """Open a recording for the calling thread (GpuInvalidArgument when one is open)."""
    check_not_nested()
    rec = Recording(queue)
    _local.recording = rec
    capturing.set_capturing(True)
    return rec


def end() -> None:
    """Close the calling thread's recording."""
    _local.recording = None
    capturing.set_capturing(False)


def check_lists(name: str, lists: list) -> None:
    """Every list of a launch inside ``capture()`` is a GpuArray or an arena list (before
    anything is packed or uploaded: the caller's data is untouched)."""
    for a in lists:
        if a.slot is None:
            what = type(a.value).__name__
            raise GpuInvalidArgument(
                f"{name}() parameter {a.param.name!r}: inside capture() every list must be a "
                f"GpuArray or bound in a GpuArena, and this one is a {what} of host memory; a "
                "recorded launch reads device memory when the graph is replayed, so host data "
                "copied now would be stale then. Pass to_device(x) (or bind x in a GpuArena) "
                "made before the capture")


def record(rt, scalars: list, lists: list, n) -> RecordedLaunch:
    """Record one checked launch of ``rt`` (launch lock held): its plan made now, nothing
    submitted."""
    rec = current()
    name = rt.program.name
    if rt.queue is not rec.queue:
        raise GpuInvalidArgument(
            f"gpu({name}, ...) inside capture(): this launch runs on {rt.ctx.label}, but the "
            f"graph belongs to {rec.ctx.label}, where the capture began; a graph belongs to "
            "one device. Capture the launches of each device in a capture of its own "
            "(with use_device(...): with capture() as graph: ...)")
    if rt.printer is not None:
        raise GpuInvalidArgument(
            f"gpu({name}, ...) inside capture(): kernel {name} prints, and the lines of a "
            "recorded launch would have no join to be written at; launch it outside the "
            "capture, or take print() out of the kernel")
    marks = [(a.slot, a.slot.written, set(a.slot.writers)) for a in lists]
    try:
        plan = rt.plan(scalars, lists, n)
    finally:
        for slot, written, writers in marks:     # nothing ran: no one wrote them yet
            slot.written = written
            slot.writers.intersection_update(writers)
    if plan.readback is not None or plan.owned:      # never: every list is resident
        plan.release(rt.queue.pool)
        raise GpuInvalidArgument(f"gpu({name}, ...) inside capture(): this launch would "
                                 "copy data back at its join; it cannot be recorded")
    steps = []
    for step in (plan,) + plan.more:
        choice = step.choice
        pipe = choice.pipeline if choice is not None else None
        if pipe is None:
            pipe = rt.pipeline_for(step.key)
        steps.append((pipe.pipeline, step.key.split, step.groups, step.uniform,
                      tuple((e.binding, e.pooled, e.nbytes, e.offset) for e in step.entries)))
    uses = [ListUse(a.slot, f"{name}() parameter {a.param.name!r}",
                 a.param.written or a.param.atomic) for a in lists]
    index = len(rec.launches)
    rec.launches.append(_Launch(index, rt, tuple(steps), uses))
    return RecordedLaunch(index, name)


class GraphStatus:
    """The graph in the place of a kernel runtime's status (``Readback.add_status``,
    ``GpuJob``, the writers of the arrays it writes): ``status`` holds one slot per recorded
    launch with checks."""

    def __init__(self, rec: Recording, buffers, launches: list, count: int):
        self.queue = rec.queue
        self.ctx = rec.ctx
        self.generation = rec.generation
        self.kernel = None
        self.program = self          # GpuJob's repr names program.name
        self.name = f"GpuGraph of {count} launch{'es' if count != 1 else ''}"
        self.buffers = buffers
        self.status = buffers.status
        self.status_nbytes = buffers.status_size
        self.launches = launches     # per status slot: the recorded launches sharing it
        self.count = count
        self.unchecked = False
        self.last_launch = 0

    def checked(self, seq: int) -> None:
        if self.last_launch <= seq:
            self.unchecked = False

    def reset_status(self) -> None:
        self.buffers.reset_status()

    def status_error(self, words):
        """The error of the first recorded launch whose status slot reports a failure."""
        stride = self.buffers.status_stride // 4
        for j, group in enumerate(self.launches):
            w = words[j * stride:j * stride + 4]
            if any(w):
                err = group[0].rt.status_error(w)
                which = f"recorded launch #{group[0].index + 1} of {self.count}"
                if len(group) > 1:
                    later = ", ".join(f"#{g.index + 1}" for g in group[1:6])
                    which += (f" (or one of the later launches with the same arguments: "
                              f"{later}{', ...' if len(group) > 6 else ''})")
                return type(err)(
                    f"{err}\n(in a replay of a GpuGraph: {which}, the first recorded launch "
                    "whose check failed, in this replay or in an earlier one not joined with "
                    "download)")
        return GpuInvalidArgument("a GpuGraph's status words reported no launch")


class Graph:
    """A finished recording as dispatches (``finish``)."""

    def __init__(self, rec: Recording):
        self.rec = rec
        self.queue = rec.queue
        self.generation = rec.generation
        launches = rec.launches
        kernels = [launch for launch in launches if launch.rt is not None]
        uniforms: dict = {}
        for launch in kernels:
            for step in launch.steps:
                uniforms.setdefault(step[3], len(uniforms))
        # launches of one kernel with the same buffers and scalars share their bind groups
        # and status slot (a change of bind group between dispatches costs the driver more
        # than the dispatch of a tiny kernel on lavapipe)
        same: dict = {}
        keys = {}
        for launch in kernels:
            key = keys[id(launch)] = (id(launch.rt),) + tuple(
                (split, ubytes, tuple((b, id(pooled), nb, off) for b, pooled, nb, off in entries))
                for _, split, _, ubytes, entries in launch.steps)
            same.setdefault(key, []).append(launch)
        checked = [group for group in same.values() if group[0].rt.status is not None]
        nbytes = checked[0][0].rt.status_nbytes if checked else 16
        self.buffers = buffers = _replay.GraphBuffers(self.queue, list(uniforms), len(checked),
                                                      nbytes)
        slot_of = {id(group): j for j, group in enumerate(checked)}
        groups_made: dict = {}
        self.dispatches = []
        self.staged = []               # library calls' uniform bytes, copied in before each
        self.staged_size = 0
        self.library_uniforms = set()
        for launch in launches:
            rt = launch.rt
            if rt is None:             # a library call (capture_library.py)
                self._library_dispatches(launch)
                continue
            key = keys[id(launch)]
            bgs = groups_made.get(key)
            if bgs is None:
                j = slot_of.get(id(same[key]))
                status_binding = rt.program.status_binding if j is not None else None
                bgs = groups_made[key] = [
                    buffers.bind_group(rt.split_layouts.get(split)[1] if split else rt.layout,
                                       uniforms[ubytes], rt.uniform_size, entries,
                                       status_binding, j)
                    for _, split, _, ubytes, entries in launch.steps]
            for bg, (pipeline, _, groups, _, _) in zip(bgs, launch.steps):
                self.dispatches.append((pipeline, bg, buffers.groups(groups), None, ()))
        self.staged = [b"".join(self.staged)] if self.staged else []
        self._finish_status(rec, checked, len(launches))

    def _library_dispatches(self, call) -> None:
        """The dispatches of a recorded library call: its uniform bytes staged, copied into
        its own uniform buffer right before each dispatch (as the queue's batches do)."""
        for pipeline, bg, folded, uniform in call.steps:
            pre = None
            if uniform is not None:
                buf, data = uniform
                data = bytes(data) + bytes(-len(data) % 4)
                pre = (self.staged_size, buf, len(data))
                self.staged.append(data)
                self.staged_size += len(data)
                self.library_uniforms.add(buf)
            self.dispatches.append((pipeline, bg, folded, pre, ()))

    def _finish_status(self, rec: Recording, checked: list, count: int) -> None:
        """The graph's status (``GraphStatus``) and the arrays its replays write."""
        self.status = GraphStatus(rec, self.buffers, checked, count)
        # the buffers go when the status goes: the arrays the graph wrote keep it among their
        # writers until their status is read, and a replay's job keeps it too
        calls = [launch for launch in rec.launches if launch.rt is None]
        weakref.finalize(self.status, _release, self.buffers, calls, self.generation)
        self.uses = [(launch, use) for launch in rec.launches for use in launch.uses]
        written = {}
        for _, use in self.uses:
            if use.written:
                written[id(use.slot)] = use
        self.written = list(written.values())
        rec.launches = []


def _release(buffers, calls: list, generation: int) -> None:
    if generation == _device.generation() and not _device.is_lost():
        buffers.release()
        for call in calls:
            call.unpin(buffers.queue)


def discard(rec: Recording) -> None:
    """A capture that raised: its library calls' scratch goes back."""
    for launch in rec.launches:
        if launch.rt is None:
            launch.unpin(rec.queue)
    rec.launches = []


def finish(rec: Recording) -> Graph:
    """The dispatches of ``rec`` (made once; the graph's buffers written)."""
    return Graph(rec)


def replay(graph: Graph, times: int, timed: bool = False):
    """Submit ``graph`` ``times`` over; (GraphStatus, submission number, LaunchPlan, timing)
    for the ``GpuJob`` of the replay (``timed``: its ``device_time`` is measured)."""
    if capturing.capturing():
        raise GpuInvalidArgument(
            "GpuGraph.replay() inside capture(): a replay is not recorded; replay the graph "
            "after the with-block")
    made = None
    try:
        with residency.launch_lock:
            _check_live(graph)
            timing = graph.queue.job_timing() if timed and graph.dispatches else None
            try:
                seq, made, readback = _submit(graph, times, timing)
            except BaseException:
                if timing is not None:
                    graph.queue.pool.release(timing.staging)
                raise
            status = graph.status
            status.last_launch = seq
            arena_written = []
            for use in graph.written:
                use.slot.writers.add(status)
                if use.arena:
                    use.slot.written = True
                    arena_written.append(use.slot)
    finally:
        if made is not None:          # the submission itself, the launch lock free
            made()
    plan = LaunchPlan()
    plan.resident_written = arena_written
    plan.readback = readback
    return status, seq, plan, timing


def _check_live(graph: Graph) -> None:
    """GpuUseAfterDestroy unless the graph's device and every buffer it binds are there."""
    if graph.generation != _device.generation():
        raise GpuUseAfterDestroy(
            "GpuGraph.replay(): cthreads.gpu.shutdown() ran since the capture, and the "
            "graph's device with it; capture the launches again on the new device")
    for launch, use in graph.uses:
        why = use.gone(graph.generation)
        if why is not None:
            raise GpuUseAfterDestroy(
                f"GpuGraph.replay(): recorded launch #{launch.index + 1}, {use.where}: "
                f"{why}; nothing was submitted")


def _submit(graph: Graph, times: int, timing=None) -> tuple:
    """(submission number, the function that makes it or None, the status Readback or None)
    of one replay (launch lock held)."""
    queue = graph.queue
    status = graph.status
    if not graph.dispatches:
        return queue.completion.submitted, None, None
    readback = None
    copies = ()
    if status.status is not None:      # the status slots ride in the submission
        readback = Readback()
        readback.add_status(status)
        copies = readback.copies(queue.pool)
    try:
        seq, made = _replay.submit(queue, graph.dispatches, times, copies, graph.staged,
                                   None if timing is None else timing.staging.buffer)
    except BaseException:
        if readback is not None:
            queue.pool.release(readback.staging)
        raise
    if status.status is not None:
        status.unchecked = True
    for buf in graph.library_uniforms:    # they hold the graph's bytes now
        queue.forget_uniform(buf)
    return seq, made, readback
