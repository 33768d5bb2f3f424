"""A spare command buffer: the last lone dispatch encoded again while a join waits.

A loop of tiny launches, each joined (``gpu(k, ...).join()``), submits the same dispatch
(pipeline, bind group, workgroups) again and again, each alone in its command buffer, and
encoding it is a fifth of the launch (~8-13 us of wgpu-native calls on the H200:
docs/performance.md, "Where a tiny launch's time goes"). While the join waits for the device,
the CPU only polls; ``Spare`` uses that time to encode the dispatch just submitted once more,
into a command buffer kept aside. When the next submission is exactly that dispatch alone (the
same pipeline and bind group objects, the same workgroups, no staged uniform copy, no readback
copies, no timestamps), the queue submits the spare instead of encoding. A command buffer
records only those commands: the uniform's new bytes still arrive by a queue write, which lands
before the submission as it does for a freshly encoded one, and pooled buffers are never
destroyed (``buffers.py``), so the bind group it names is valid whenever it is submitted.

A spare is made only for a dispatch submitted alone twice in a row (readbacks in between do
not count; a loop that alternates kernels or bind groups would never submit one). Anything else is encoded as usual and the
spare waits (one at a time; released when another replaces it, and when the queue closes). ``CTHREADS_LAUNCH_PATH=old`` turns it off (config.py).
Every wgpu call here is made under the queue's lock. The spare is a holder of the pool
(``BufferPool.add_holder``): when the pool drops a buffer, the spare goes (it might bind it and
keep its memory).
"""

from __future__ import annotations


class Spare:
    """The spare command buffer of one queue (see the module docstring)."""

    __slots__ = ("native", "lock", "last", "prev", "again", "key", "cb", "stale", "__weakref__")

    def __init__(self, native, lock=None, pool=None):
        self.native = native          # the queue's NativeEncoder; None: no spares
        self.lock = lock              # the queue's lock (every wgpu call here is made under it)
        self.stale = False            # the pool dropped a buffer: drop the spare at the next use
        self.last = None              # the lone dispatch last submitted, (pipeline, group, xyz)
        self.prev = None              # the lone dispatch submitted last, whatever came after
        self.again = False            # ``last`` repeated the lone dispatch before it
        self.key = None               # the dispatch the spare holds
        self.cb = None                # its command buffer, not submitted
        if pool is not None:
            pool.add_holder(self)

    def submitted(self, dispatches, copies, staged, stamps) -> None:
        """A submission was made: remember its dispatch when it was one alone, plain."""
        last = None
        if self.native is not None and len(dispatches) == 1 and not copies and \
                staged is None and not stamps:
            pipeline, group, xyz, pre, post = dispatches[0]
            if pre is None and not post:
                last = (pipeline, group, xyz)
        if last is not None:
            self.again = last == self.prev
            self.prev = last
        self.last = last

    def wanted(self) -> bool:
        """Whether a spare should be encoded now: the last submission was a lone dispatch
        that repeated the lone one before it (a loop that alternates dispatches gets no
        spares; a readback in between does not count) and has no spare yet."""
        return self.last is not None and self.again and self.last != self.key

    def encode_for(self, queue) -> None:
        """Encode the last lone dispatch into the spare (replacing an older spare) under the
        lock of ``queue`` (its DeviceQueue), unless it closed or a handed-off submission is in
        flight; a failure leaves no spare (the next launch encodes, and reports it)."""
        with queue.lock:
            if self.stale:
                self.drop()
            last = self.last
            if last is None or last == self.key or queue.closed or \
                    queue.completion.handing_off:
                return
            self.drop()
            try:
                self.cb = self.native.encode_batch([(last[0], last[1], last[2], None, ())], ())
                self.key = last
            except Exception:
                self.cb = self.key = None

    def take(self, dispatches, copies, staged, stamps):
        """The spare command buffer if it holds exactly this submission (it is then no longer
        the spare), else None."""
        if self.stale:
            self.drop()
        if self.cb is None or len(dispatches) != 1 or copies or staged is not None or stamps:
            return None
        pipeline, group, xyz, pre, post = dispatches[0]
        if pre is not None or post or (pipeline, group, xyz) != self.key:
            return None
        cb, self.cb, self.key = self.cb, None, None
        return cb

    def forget_buffer(self, pooled) -> None:
        """The pool dropped a buffer (``BufferPool.add_holder``): the spare may bind it, and
        would keep its memory, so it goes now if the queue's lock is free (else at the
        queue's next submission or wait); the last dispatches are forgotten."""
        self.last = self.prev = None
        self.again = False
        if self.cb is None:
            return
        if self.lock is not None and self.lock.acquire(blocking=False):
            try:
                self.drop()
            finally:
                self.lock.release()
        else:
            self.stale = True

    def drop(self) -> None:
        """Release the spare (not submitted); never raises (the queue may be closing)."""
        cb, self.cb, self.key = self.cb, None, None
        self.stale = False
        if cb is not None:
            try:
                self.native.discard(cb)
            except Exception:
                pass

    def forget(self, lock) -> None:
        """After a fork: the command buffer belongs to the parent's device and is never
        released; ``lock`` is the queue's new lock."""
        self.lock = lock
        self.cb = self.key = self.last = self.prev = None
        self.again = self.stale = False


__all__ = ["Spare"]
