"""Device time of timed jobs: timestamp queries written around a job's dispatches.

Only launches asked to be timed (``gpu(f, ..., timed=True)``, ``@Gpu(timed=True)``) pay
anything; a queue makes its ``Timestamps`` (one query set used as a ring, one resolve buffer)
at its first timed launch, on a device with ``timestamp-query``.

A timed job records two *stamps* in the open batch: one before its first dispatch, one after
its last (``Batch.stamps``: ``(dispatch index, is_end, query index, destination buffer,
destination offset)``; a job whose dispatches a flush splits over two command buffers has one
stamp in each). A command buffer with stamps is encoded by ``commands``' plan:

* with ``timestamp-query-inside-passes`` the passes stay as they are (several jobs share one
  pass) and a timestamp is written right before / after the job's dispatches;
* without it, a timed job's dispatches get passes of their own, whose begin / end write the
  timestamps (``timestampWrites``, core WebGPU).

After the passes the queries the command buffer wrote are resolved (runs of consecutive
indexes, each into a 256-byte-aligned offset of the resolve buffer) and each stamp's 8 bytes
are copied into its job's staging buffer, which ``JobTiming.seconds`` maps when
``device_time`` is first read. Everything handed to wgpu-native is checked here first (it
aborts the process on a query index out of range or an unwritten query resolved): each query
index is in range and written once in the command buffer, and only written queries are
resolved.

Ticks are converted with ``wgpuQueueGetTimestampPeriod`` (nanoseconds per tick; wgpu-native
resolves raw ticks unless the instance asks for normalisation, which cthreads does not).
"""

from __future__ import annotations

import struct

from .. import config
from ..errors import GpuDeviceError
from .faults import device_error

__all__ = ["FEATURE", "INSIDE_PASSES", "JobTiming", "RING", "Timestamps", "commands",
           "job_timing"]

FEATURE = "timestamp-query"
INSIDE_PASSES = "timestamp-query-inside-passes"
#: queries in the ring (two per timed job; a command buffer holds at most 2 * BATCH_CAP)
RING = 4096
_ALIGN = 256                   # resolveQuerySet's destination offset alignment


class Timestamps:
    """One queue's query-set ring and resolve buffer (made at its first timed launch)."""

    def __init__(self, ctx):
        import wgpu  # noqa: PLC0415 - only timed launches get here

        self._ctx = ctx
        device = ctx.device
        self.inside_passes = INSIDE_PASSES in ctx.features
        self.query_set = device.create_query_set(type="timestamp", count=RING,
                                                 label="cthreads-timestamps")
        self._usage = wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        self.resolve = None
        self.resolve_size = 0
        self._next = 0
        self.period_ns = _period_ns(ctx.queue)

    @classmethod
    def make(cls, ctx) -> "Timestamps":
        """``Timestamps(ctx)``, a failure mapped to our device errors."""
        try:
            return cls(ctx)
        except Exception as exc:
            raise device_error(ctx, exc, "creating the timestamp queries") from None

    def next_query(self) -> int:
        """The next query index of the ring (queue lock held)."""
        q = self._next
        self._next = (q + 1) % RING
        return q

    def record(self, stamps: list, k: int, stamp) -> None:
        """Append to ``stamps`` (``Batch.stamps``) the timestamps around dispatch ``k``:
        ``stamp`` is (the job's staging buffer, before it, after it) (queue lock held)."""
        buffer, begin, end = stamp
        if begin:
            stamps.append((k, False, self.next_query(), buffer, 0))
        if end:
            stamps.append((k, True, self.next_query(), buffer, 8))

    def resolve_buffer(self, nbytes: int):
        """The resolve buffer, at least ``nbytes`` long (grown when a command buffer needs
        more; the old one is kept alive by wgpu until the work using it ends)."""
        if self.resolve is None or self.resolve_size < nbytes:
            size = max(nbytes, 2 * _ALIGN)
            self.resolve = self._ctx.device.create_buffer(size=size, usage=self._usage,
                                                          label="cthreads-timestamp-resolve")
            self.resolve_size = size
        return self.resolve


def job_timing(queue) -> "JobTiming | None":
    """The destination of one timed job's timestamps on ``queue`` (a DeviceQueue), or None on
    a device without ``timestamp-query``. The queue's ``Timestamps`` are made at the first
    call; the feature is checked then, and again only under ``config.override`` (reading the
    settings costs some 15 us, more than the rest of this)."""
    ts = queue.timestamps
    if ts is None or config.overriding():
        if queue.ctx.missing((FEATURE,)):
            return None
        with queue.lock:
            queue._check_usable()
            if queue.timestamps is None:
                queue.timestamps = Timestamps.make(queue.ctx)
            ts = queue.timestamps
    elif queue.closed:
        queue._check_usable()
    return JobTiming(queue.pool.acquire(16, "staging"), ts.period_ns)


def _period_ns(queue) -> float:
    """Nanoseconds per timestamp tick of ``queue`` (1.0 where wgpu-native cannot say)."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib  # noqa: PLC0415
        period = float(lib.wgpuQueueGetTimestampPeriod(queue._internal))
    except Exception:
        return 1.0
    return period if period > 0 else 1.0


class JobTiming:
    """The two timestamps of one timed job, read back lazily (``device_time``)."""

    __slots__ = ("staging", "period_ns", "value")

    def __init__(self, staging, period_ns: float):
        self.staging = staging          # PooledBuffer (MAP_READ): begin at 0, end at 8
        self.period_ns = period_ns
        self.value = None               # seconds, once read

    def drop(self, queue, seq: int) -> None:
        """The job is gone unread: its buffer goes back to the pool when submission ``seq``
        (which writes it) has finished; else it is simply dropped."""
        staging, self.staging = self.staging, None
        if staging is not None and seq <= queue.completed and not queue.closed:
            queue.pool.release(staging)

    def seconds(self, queue, seq: int) -> float | None:
        """The job's device time in seconds (submission ``seq`` finished); read once, then
        cached. None when the device gave no usable timestamps (end before begin)."""
        if self.value is not None or self.staging is None:
            return self.value
        staging, self.staging = self.staging, None
        raw = queue.read_into(staging, 16, seq)
        queue.pool.release(staging)
        begin, end = struct.unpack("<QQ", raw[:16])
        if end < begin:
            return None
        self.value = (end - begin) * self.period_ns * 1e-9
        return self.value


def commands(dispatches, stamps, inside_passes: bool, timestamps) -> list:
    """The commands of a command buffer with ``stamps``, in order (both encoders run them):

    ``("pass", begin query or None, end query or None)`` opens a compute pass,
    ``("end",)`` ends it, ``("pre", pre)`` a staged uniform copy, ``("pipeline", p)``,
    ``("group", g)``, ``("dispatch", (x, y, z))``, ``("stamp", query)`` a timestamp inside
    the pass, ``("copies", copies)``, ``("resolve", first, count, offset)`` and
    ``("copy", src offset, dst buffer, dst offset)`` (8 bytes from the resolve buffer).
    Raises GpuDeviceError on stamps wgpu-native would abort on (nothing was encoded)."""
    begins, ends = _check(dispatches, stamps)
    n = len(dispatches)
    starts = _pass_starts(dispatches, begins, ends, inside_passes)
    out = []
    open_pass = False
    last_pipeline = last_group = None
    for k, (pipeline, group, groups, pre, post) in enumerate(dispatches):
        if starts[k] and open_pass:
            out.append(("end",))
            open_pass = False
        if pre is not None:
            out.append(("pre", pre))
        if not open_pass:
            if inside_passes:
                out.append(("pass", None, None))
            else:
                stop = k + 1
                while stop < n and not starts[stop]:
                    stop += 1
                out.append(("pass", begins.get(k), ends.get(stop - 1)))
            open_pass = True
            last_pipeline = last_group = None
        if pipeline is not last_pipeline:
            out.append(("pipeline", pipeline))
            last_pipeline = pipeline
        if group is not last_group:
            out.append(("group", group))
            last_group = group
        if inside_passes and k in begins:
            out.append(("stamp", begins[k]))
        out.append(("dispatch", groups))
        if inside_passes and k in ends:
            out.append(("stamp", ends[k]))
        if post:
            out.append(("end",))
            open_pass = False
            out.append(("copies", post))
    if open_pass:
        out.append(("end",))
    out += _resolves(stamps, timestamps)
    return out


def _pass_starts(dispatches, begins, ends, inside_passes: bool) -> list:
    """Per dispatch, whether a new pass starts at it: before a staged copy, after readback
    copies; without timestamps inside passes, also around each timed job's dispatches."""
    n = len(dispatches)
    starts = [False] * n
    for k, (_, _, _, pre, post) in enumerate(dispatches):
        if pre is not None:
            starts[k] = True
        if post and k + 1 < n:
            starts[k + 1] = True
    if not inside_passes:
        for k in begins:
            starts[k] = True
        for k in ends:
            if k + 1 < n:
                starts[k + 1] = True
    return starts


def _check(dispatches, stamps) -> tuple[dict, dict]:
    """{dispatch index: query} of the begin and the end stamps, checked."""
    begins, ends, seen = {}, {}, set()
    n = len(dispatches)
    for k, is_end, query, _, _ in stamps:
        if not 0 <= k < n or not 0 <= query < RING or query in seen:
            raise GpuDeviceError(
                f"internal error: a timestamp (dispatch {k} of {n}, query {query} of {RING}) "
                "is out of range or written twice; nothing was submitted. Please report it")
        seen.add(query)
        table = ends if is_end else begins
        if k in table:
            raise GpuDeviceError(f"internal error: two timestamps at dispatch {k}; please "
                                 "report it")
        table[k] = query
    return begins, ends


def _resolves(stamps, timestamps) -> list:
    """Resolve the written queries (runs of consecutive indexes), then copy each stamp's
    8 bytes to its job's staging buffer."""
    queries = sorted(s[2] for s in stamps)
    runs = []                                  # [first, count, offset]
    offset = 0
    for q in queries:
        if runs and runs[-1][0] + runs[-1][1] == q:
            runs[-1][1] += 1
            continue
        if runs:
            offset += -(-runs[-1][1] * 8 // _ALIGN) * _ALIGN
        runs.append([q, 1, offset])
    size = offset + -(-runs[-1][1] * 8 // _ALIGN) * _ALIGN
    timestamps.resolve_buffer(size)
    out = [("resolve", first, count, off) for first, count, off in runs]
    where = {}
    for first, count, off in runs:
        for j in range(count):
            where[first + j] = off + 8 * j
    for _, _, query, dst, dst_offset in stamps:
        out.append(("copy", where[query], dst, dst_offset))
    return out
