"""Pooled device buffers: storage buffers for lists, staging buffers for readback.

Buffers are bucketed by power-of-two capacity and handed out again once their user returns them,
so a loop of launches allocates nothing new. The pool keeps a bounded amount of idle memory
(``idle_limit`` bytes, at most ``KEEP_PER_BUCKET`` buffers per bucket); a buffer returned beyond
that is dropped, and so are idle buffers when an allocation needs room.

Dropping is the only way buffers go: a pooled buffer is never ``destroy()``-ed (wgpu-native aborts
the process when a submission touches a destroyed buffer). Dropping the last reference releases
wgpu's handle; wgpu keeps the memory until every submission that uses it has finished, then
gives it back. Holders that keep buffers beyond the pool (kernel runtimes cache bind groups,
which keep their buffers alive) are told to forget a dropped buffer (``add_holder``).

Device memory is accounted: ``live_bytes`` counts every buffer the pool made that is still
alive. An allocation (or the staging copy of a queued write, ``check_room``) that the machine
cannot hold raises ``VulkanOutOfMemory`` before anything is allocated: on CPU drivers (device
memory is host memory) against the host's available memory, everywhere against
``CTHREADS_DEVICE_MEMORY`` when it is set, and on GPUs the driver's own out-of-memory error is
mapped.
"""

from __future__ import annotations

import threading
import weakref

from .. import config
from ..errors import GpuInvalidArgument, VulkanOutOfMemory
from .device import DeviceContext, import_wgpu
from .faults import device_error
from .forking import on_fork_child

MIN_CAPACITY = 256
#: Free buffers kept per bucket; more are dropped (released) when returned. Small buckets
#: keep up to ``SMALL_KEEP_BYTES`` of buffers (at most ``SMALL_KEEP_MAX``): a loop that holds
#: many small results at once (a list of 0-d reductions) finds them again the next time,
#: where a new buffer costs ~0.2 ms on the H200 (wgpu's creation and zero-fill; docs/
#: performance.md, "Queued launches on GPUs").
KEEP_PER_BUCKET = 8
SMALL_KEEP_BYTES = 1 << 20
SMALL_KEEP_MAX = 512
#: Allocations from this size on are checked against the host's available memory on CPU drivers
#: (reading /proc/meminfo costs time on every check; smaller ones cannot matter; see
#: docs/performance.md, "Buffers").
CHECK_FROM = 1 << 20
#: Host memory left to everything else on CPU drivers: this fraction of the total, at least
#: ``RESERVE_MIN`` bytes.
RESERVE_FRACTION = 0.05
RESERVE_MIN = 256 << 20


def capacity_for(nbytes: int) -> int:
    """The bucket capacity serving ``nbytes`` (a power of two, at least MIN_CAPACITY)."""
    cap = MIN_CAPACITY
    while cap < nbytes:
        cap <<= 1
    return cap


def _meminfo() -> dict[str, int]:
    """/proc/meminfo in bytes (empty where there is none)."""
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except (OSError, ValueError):
        pass
    return out


def host_available() -> int | None:
    """Bytes of host memory available to new allocations (MemAvailable), or None if unknown."""
    return _meminfo().get("MemAvailable")


def keep_per_bucket(capacity: int) -> int:
    """How many idle buffers of ``capacity`` bytes the pool keeps."""
    return max(KEEP_PER_BUCKET, min(SMALL_KEEP_MAX, SMALL_KEEP_BYTES // capacity))


class PooledBuffer:
    """A wgpu buffer with the pool it returns to."""

    __slots__ = ("buffer", "capacity", "kind", "filled", "__weakref__")

    def __init__(self, buffer, capacity: int, kind: str):
        self.buffer = buffer
        self.capacity = capacity
        self.kind = kind
        self.filled = False     # acquire(init=...) wrote the data at creation


def _released(pooled: PooledBuffer) -> bool:
    """Whether wgpu-py already let ``pooled``'s buffer go: when a GpuArray is collected in a
    reference cycle with its only PooledBuffer, the garbage collector finalizes the wgpu buffer
    too, even though the array's finalizer hands the PooledBuffer back to the pool (resurrecting
    it without a handle); such a buffer is never handed out again."""
    return getattr(pooled.buffer, "_internal", True) is None


#: every pool alive (a forked child gives each a fresh lock)
_pools: "weakref.WeakSet[BufferPool]" = weakref.WeakSet()


class BufferPool:
    """Free lists of storage and staging buffers of one device."""

    def __init__(self, ctx: DeviceContext):
        wgpu = import_wgpu()
        usage = wgpu.BufferUsage
        self._usages = {
            "storage": usage.STORAGE | usage.COPY_SRC | usage.COPY_DST,
            "staging": usage.MAP_READ | usage.COPY_DST,
            "uniform": usage.UNIFORM | usage.COPY_DST,
            # storage that must start as zeros (a reduction's ticket): never released to the
            # pool by its owner, so every acquire makes a new buffer, which wgpu zero-fills
            "zeroed": usage.STORAGE | usage.COPY_DST,
            # the queue's staged uniform bytes (dispatch.py): a free list of their own, so a
            # buffer a batch being submitted still binds (given back while pending) is never
            # taken for the bytes written right before that submission
            "staged": usage.STORAGE | usage.COPY_SRC | usage.COPY_DST,
        }
        self._ctx = ctx
        self._free: dict[tuple[str, int], list] = {}
        self._lock = threading.RLock()   # re-entered by finalizers of dropped buffers
        self.allocations = 0        # buffers created so far (tests check that loops reuse)
        self.live_bytes = 0         # bytes of buffers made here and still alive
        self.idle_bytes = 0         # bytes of the buffers in the free lists
        self._holders: "weakref.WeakSet" = weakref.WeakSet()
        #: scratch buffers a captured graph binds (pin/unpin): a release waits for the graph
        self.pinned: dict = {}      # PooledBuffer -> [pins, released meanwhile]
        _pools.add(self)
        self.limit = config.current().device_memory
        self._host = ctx.is_cpu     # device memory is host memory
        total = _meminfo().get("MemTotal", 0) if self._host else 0
        self.reserve = max(RESERVE_MIN, int(total * RESERVE_FRACTION))
        if self._host:
            self.idle_limit = min(max(256 << 20, total // 16), 2 << 30)
        else:
            self.idle_limit = 2 * ctx.limit("max-buffer-size")
        if self.limit is not None:
            self.idle_limit = min(self.idle_limit, self.limit // 4)

    def add_holder(self, holder) -> None:
        """``holder.forget_buffer(pooled)`` is called when the pool drops ``pooled`` (holders
        that keep buffers alive, such as cached bind groups, let them go then). Held weakly.

        The call comes from the thread that dropped the buffer (releasing an arena, trimming
        the pool), at any time: a holder must tolerate it amid its own use of what it holds
        (an entry it just found may be gone the next moment)."""
        self._holders.add(holder)

    def binding_bytes(self) -> int:
        """The largest storage binding cthreads makes on this device: the device's
        max-storage-buffer-binding-size, or the lower ``binding_bytes`` setting (tests)."""
        limit = self._ctx.limit("max-storage-buffer-binding-size")
        if not config.overriding():          # an override-only setting: the launch path's
            return limit                     # check reads no environment
        lower = config.current().binding_bytes
        return limit if lower is None else min(limit, lower)

    def offset_alignment(self) -> int:
        """What a storage binding's byte offset must be a multiple of on this device
        (min-storage-buffer-offset-alignment; 256, WebGPU's default, if unreported)."""
        return int(self._ctx.limits.get("min-storage-buffer-offset-alignment", 256))

    def check_size(self, nbytes: int, what: str, itemsize: int = 4, type_name: str = "32-bit",
                   then: str = "launch once per part", binding: bool = True) -> None:
        """Raise GpuInvalidArgument when ``nbytes`` exceeds what the device can bind (``what``
        names the data, its shape and type; the list's elements are ``type_name`` values of
        ``itemsize`` bytes on the device; ``then``: what to do with the parts)."""
        key = "max-storage-buffer-binding-size" if binding else "max-buffer-size"
        limit = self._ctx.limit(key)
        if nbytes > limit:
            kind = "storage-binding" if binding else "buffer-size"
            raise GpuInvalidArgument(
                f"{what} needs {nbytes:,} bytes on the device ({type_name} elements of "
                f"{itemsize} bytes), more than the {limit:,}-byte ({limit / 2**20:.0f} MiB) "
                f"{kind} limit of {self._ctx.name!r}, which binds at most "
                f"{limit // itemsize:,} {type_name} elements per list: split the data into "
                f"parts of at most that many elements (an N-D array into blocks of rows) and "
                f"{then}")

    # -- accounting ----------------------------------------------------------------------------

    def _refusal(self, nbytes: int, what: str) -> str | None:
        """Why ``nbytes`` more cannot be allocated now, or None when they can."""
        if self.limit is not None and self.live_bytes + nbytes > self.limit:
            return (f"{self.live_bytes:,} of the {self.limit:,} bytes that "
                    f"CTHREADS_DEVICE_MEMORY allows are in use")
        if self._host and nbytes >= CHECK_FROM:
            avail = host_available()
            if avail is not None and nbytes + self.reserve > avail:
                return (f"the machine has {avail:,} bytes of memory available and keeps "
                        f"{self.reserve:,} for everything else; {self._ctx.name!r} is a CPU "
                        "driver, whose device memory is host memory")
        return None

    def check_room(self, nbytes: int, what: str) -> None:
        """Raise VulkanOutOfMemory when ``nbytes`` more device memory cannot be had, after
        dropping the pool's idle buffers. Nothing is allocated here."""
        why = self._refusal(nbytes, what)
        if why is None:
            return
        self.trim()
        why = self._refusal(nbytes, what)
        if why is not None:
            raise VulkanOutOfMemory(
                f"{what} needs {nbytes:,} bytes of device memory, but {why}. Release arenas "
                "you no longer need and join finished jobs, use smaller lists, or set "
                "CTHREADS_DEVICE_MEMORY to the memory cthreads may use")

    def check_staging(self, nbytes: int, what: str) -> None:
        """Raise VulkanOutOfMemory when the host cannot hold the staging copy of a queued
        write of ``nbytes`` (only CPU drivers check: there host memory is the device's)."""
        if not self._host or nbytes < CHECK_FROM:
            return
        for attempt in (0, 1):
            avail = host_available()
            if avail is None or nbytes + self.reserve <= avail:
                return
            if attempt == 0:
                self.trim()
        raise VulkanOutOfMemory(
            f"{what} needs a staging copy of {nbytes:,} bytes, but the machine has {avail:,} "
            f"bytes of memory available and keeps {self.reserve:,} for everything else "
            f"({self._ctx.name!r} is a CPU driver, whose device memory is host memory). "
            "Release arenas you no longer need and join finished jobs, or use smaller lists")

    def _freed(self, nbytes: int) -> None:
        with self._lock:
            self.live_bytes -= nbytes

    # -- buffers -------------------------------------------------------------------------------

    def acquire(self, nbytes: int, kind: str = "storage", init=None) -> PooledBuffer:
        """A buffer of at least ``nbytes``: from the pool, else new.

        ``init`` (storage only; a buffer-protocol object of ``nbytes``): on a CPU driver a *new*
        buffer is created mapped and filled with it directly, saving the staging copy a queued
        write makes (docs/performance.md, "Buffers"); ``PooledBuffer.filled`` says
        so. Raises VulkanOutOfMemory (nothing allocated) when the memory is not there.
        """
        cap = capacity_for(nbytes)
        if kind == "storage" and cap > self._ctx.limit("max-storage-buffer-binding-size"):
            cap = nbytes + (-nbytes % 4)           # near the limit: exact size, no rounding up
        key = (kind, cap)
        with self._lock:
            free = self._free.get(key)
            while free:
                pooled = free.pop()
                self.idle_bytes -= cap
                if _released(pooled):
                    continue
                pooled.filled = False
                return pooled
        limit = self._ctx.limit("max-buffer-size")
        if cap > limit:
            cap = nbytes + (-nbytes % 4)
            if cap > limit:
                raise GpuInvalidArgument(
                    f"a {kind} buffer of {nbytes:,} bytes is needed, more than the "
                    f"{limit:,}-byte buffer limit of {self._ctx.name!r}; download fewer or "
                    "smaller lists at once (join jobs one by one, sync arena slots by name)")
        self.check_room(cap, f"a {kind} buffer for {nbytes:,} bytes")
        # Only on CPU drivers: there all memory is host memory. On a GPU a buffer created mapped
        # may be placed in host-visible memory; a queued write keeps it device-local.
        mapped = init is not None and nbytes > 0 and self._ctx.is_cpu
        try:
            buf = self._ctx.device.create_buffer(size=cap, usage=self._usages[kind],
                                                 label=f"cthreads-{kind}",
                                                 mapped_at_creation=mapped)
            if mapped:
                try:
                    buf.write_mapped(init, 0)
                finally:
                    buf.unmap()
        except Exception as exc:
            raise device_error(self._ctx, exc, f"allocating a buffer of {cap:,} bytes") \
                from None
        pooled = PooledBuffer(buf, cap, kind)
        pooled.filled = mapped
        with self._lock:
            self.allocations += 1
            self.live_bytes += cap
        weakref.finalize(pooled, self._freed, cap)
        return pooled

    def release(self, pooled: PooledBuffer | None) -> None:
        """Return a buffer to the pool (it must not be mapped); dropped when the pool holds
        enough idle memory already."""
        if pooled is None or _released(pooled):
            return
        pin = self.pinned.get(pooled)
        if pin is not None:          # a captured graph binds it: given back by ``unpin``
            pin[1] = True
            return
        if pooled.kind == "zeroed":  # never reused: its next owner would not find zeros
            return
        key = (pooled.kind, pooled.capacity)
        with self._lock:
            free = self._free.setdefault(key, [])
            if len(free) < keep_per_bucket(pooled.capacity) and \
                    self.idle_bytes + pooled.capacity <= self.idle_limit:
                free.append(pooled)
                self.idle_bytes += pooled.capacity
                return
        self._drop([pooled])

    def pin(self, pooled: PooledBuffer) -> None:
        """A captured graph binds ``pooled`` (a library call's scratch): its release waits."""
        with self._lock:
            self.pinned.setdefault(pooled, [0, False])[0] += 1

    def unpin(self, pooled: PooledBuffer) -> None:
        """The graph let ``pooled`` go: released now if its owner released it meanwhile."""
        with self._lock:
            pin = self.pinned.get(pooled)
            if pin is None:
                return
            pin[0] -= 1
            if pin[0] > 0:
                return
            del self.pinned[pooled]
        if pin[1]:
            self.release(pooled)

    def trim(self) -> None:
        """Drop every idle buffer (their memory goes back once no submission uses them)."""
        with self._lock:
            dropped = [pb for free in self._free.values() for pb in free]
            self._free = {}
            self.idle_bytes = 0
        self._drop(dropped)

    def _drop(self, dropped: list) -> None:
        # small buffers held by caches are bounded by the caches' sizes; large ones are let go
        dropped = [pb for pb in dropped if pb.capacity >= CHECK_FROM]
        if not dropped:
            return
        for holder in list(self._holders):
            for pooled in dropped:
                try:
                    holder.forget_buffer(pooled)
                except Exception:  # pragma: no cover - a holder must not stop the drop
                    pass

    def clear(self) -> None:
        with self._lock:
            free, self._free = self._free, {}
            self.idle_bytes = 0
        del free              # dropped outside the lock


def _new_locks_after_fork() -> None:
    """In a forked child: another thread of the parent may have held a pool's lock (the
    finalizers of inherited buffers take it when the child drops them)."""
    for pool in list(_pools):
        pool._lock = threading.RLock()


on_fork_child(_new_locks_after_fork)
