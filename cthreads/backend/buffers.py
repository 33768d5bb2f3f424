"""Pooled device buffers: storage buffers for lists, staging buffers for readback.

Buffers are bucketed by power-of-two capacity and handed out again once their user returns them,
so a loop of launches allocates nothing new. A pooled buffer is never ``destroy()``-ed while work
may still use it (wgpu-native aborts the process when a submission touches a destroyed buffer):
dropping the last reference only releases wgpu's handle, which wgpu keeps alive until the GPU is
done with it.
"""

from __future__ import annotations

import threading

from ..errors import GpuInvalidArgument, VulkanOutOfMemory
from .device import DeviceContext, import_wgpu

MIN_CAPACITY = 256
#: Free buffers kept per bucket; more are dropped (released) when returned.
KEEP_PER_BUCKET = 8


def capacity_for(nbytes: int) -> int:
    """The bucket capacity serving ``nbytes`` (a power of two, at least MIN_CAPACITY)."""
    cap = MIN_CAPACITY
    while cap < nbytes:
        cap <<= 1
    return cap


class PooledBuffer:
    """A wgpu buffer with the pool it returns to."""

    __slots__ = ("buffer", "capacity", "kind", "filled", "__weakref__")

    def __init__(self, buffer, capacity: int, kind: str):
        self.buffer = buffer
        self.capacity = capacity
        self.kind = kind
        self.filled = False     # acquire(init=...) wrote the data at creation


class BufferPool:
    """Free lists of storage and staging buffers of one device."""

    def __init__(self, ctx: DeviceContext):
        wgpu = import_wgpu()
        usage = wgpu.BufferUsage
        self._usages = {
            "storage": usage.STORAGE | usage.COPY_SRC | usage.COPY_DST,
            "staging": usage.MAP_READ | usage.COPY_DST,
            "uniform": usage.UNIFORM | usage.COPY_DST,
        }
        self._ctx = ctx
        self._free: dict[tuple[str, int], list] = {}
        self._lock = threading.Lock()
        self.allocations = 0        # buffers created so far (tests check that loops reuse)

    def check_size(self, nbytes: int, what: str, binding: bool = True) -> None:
        """Raise GpuInvalidArgument when ``nbytes`` exceeds what the device can bind."""
        limit = self._ctx.limit("max-storage-buffer-binding-size") if binding else \
            self._ctx.limit("max-buffer-size")
        if nbytes > limit:
            raise GpuInvalidArgument(
                f"{what} needs {nbytes:,} bytes on the device, more than the "
                f"{limit:,}-byte ({limit / 2**20:.0f} MiB) storage-binding limit of "
                f"{self._ctx.name!r}; split the data into smaller lists (at most "
                f"{limit // 4:,} elements each)")

    def acquire(self, nbytes: int, kind: str = "storage", init=None) -> PooledBuffer:
        """A buffer of at least ``nbytes``: from the pool, else new.

        ``init`` (storage only; a buffer-protocol object of ``nbytes``): on a CPU driver a *new*
        buffer is created mapped and filled with it directly, saving the staging copy a queued
        write makes (a tenth of a second per 64 MiB on lavapipe); ``PooledBuffer.filled`` says
        so.
        """
        cap = capacity_for(nbytes)
        if kind == "storage" and cap > self._ctx.limit("max-storage-buffer-binding-size"):
            cap = nbytes + (-nbytes % 4)           # near the limit: exact size, no rounding up
        key = (kind, cap)
        with self._lock:
            free = self._free.get(key)
            if free:
                pooled = free.pop()
                pooled.filled = False
                return pooled
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
        except MemoryError as exc:
            raise VulkanOutOfMemory(
                f"the device {self._ctx.name!r} is out of memory allocating {cap:,} bytes "
                f"({exc}); release arenas you no longer need or use smaller lists") from None
        except Exception as exc:
            if "memory" in str(exc).lower():
                raise VulkanOutOfMemory(
                    f"the device {self._ctx.name!r} could not allocate {cap:,} bytes ({exc})"
                ) from None
            raise
        self.allocations += 1
        pooled = PooledBuffer(buf, cap, kind)
        pooled.filled = mapped
        return pooled

    def release(self, pooled: PooledBuffer | None) -> None:
        """Return a buffer to the pool (it must not be mapped)."""
        if pooled is None:
            return
        key = (pooled.kind, pooled.capacity)
        with self._lock:
            free = self._free.setdefault(key, [])
            if len(free) < KEEP_PER_BUCKET:
                free.append(pooled)

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
