"""``BindGroupCache``: bind groups kept by key for launches that bind the same buffers again.

Each cached bind group keeps the ``PooledBuffer``s it binds alive (so the ids in keys stay
unique); the least recently used one goes past ``cap``. The cache is a holder of the pool
(``BufferPool.add_holder``): when the pool drops a buffer, the bind groups binding it go too,
called from whichever thread dropped it, so a lookup tolerates an entry vanishing meanwhile.
"""

from __future__ import annotations

from collections import OrderedDict

from .faults import device_error


def create_bind_group(ctx, layout, entries) -> object:
    """A bind group of ``ctx``'s device from ``[(binding, wgpu buffer, size in bytes[, byte
    offset]), ...]`` (the caller holds the queue's lock); a failure raises our error."""
    try:
        return ctx.device.create_bind_group(layout=layout, entries=[
            {"binding": e[0], "resource": {"buffer": e[1], "offset": e[3] if len(e) > 3 else 0,
                                           "size": e[2]}}
            for e in entries])
    except Exception as exc:
        raise device_error(ctx, exc, "creating a bind group") from None


class BindGroupCache:
    def __init__(self, pool, cap: int):
        self.cap = cap
        self._groups: OrderedDict = OrderedDict()     # key -> (bind group, held buffers)
        pool.add_holder(self)

    def get(self, key):
        """The bind group cached under ``key``, or None."""
        hit = self._groups.get(key)
        if hit is None:
            return None
        try:
            self._groups.move_to_end(key)
        except KeyError:        # forgotten meanwhile by the pool's drop: still usable
            pass
        return hit[0]

    def put(self, key, bind_group, held) -> None:
        """Cache ``bind_group``, keeping the pooled buffers ``held`` alive with it."""
        self._groups[key] = (bind_group, tuple(held))
        if len(self._groups) > self.cap:
            try:
                self._groups.popitem(last=False)
            except KeyError:    # emptied meanwhile by the pool's drop (another thread)
                pass

    def forget_buffer(self, pooled) -> None:
        """The pool dropped ``pooled``: let the bind groups that hold it go."""
        for key, (_, held) in list(self._groups.items()):
            if any(pb is pooled for pb in held):
                self._groups.pop(key, None)

    def __len__(self) -> int:
        return len(self._groups)


__all__ = ["BindGroupCache", "create_bind_group"]
