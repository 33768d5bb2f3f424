"""What one launch does, as plain values: ``LaunchPlan`` and its arguments and bindings.

``KernelRuntime.plan`` (kernel_runtime.py) makes one ``LaunchPlan`` per launch: the compiled
``Variant`` to run (its key, which ``variants.choose`` picks), the uniform's bytes, the
workgroups, the bind-group entries, the readback of the lists the kernel may write, the resident
slots it writes and the pooled buffers the job owns until it is joined. ``gpu()`` submits
exactly that, ``compile()`` compiles every variant a plan may pick, and ``GpuJob`` releases what
the plan owns.
"""

from __future__ import annotations

from ..codegen.program import Variant


class ListArg:
    """One list argument of a launch: its parameter, the caller's object, its resident slot
    (None: uploaded for this launch from ``data``, its device bytes) and its size in bytes;
    past the storage-binding limit it is uploaded in parts (``part_elems``)."""

    __slots__ = ("param", "value", "slot", "data", "nbytes", "dims", "kind", "part_elems")

    def __init__(self, param, value, slot, data, nbytes: int):
        self.param = param
        self.value = value
        self.slot = slot
        self.data = data
        self.nbytes = nbytes
        self.dims = None            # its shape (N-D lists: every dimension)
        self.kind = None            # its handler (args.py), when it is uploaded
        self.part_elems = 0         # uploaded in parts of this many elements (parts.py); 0: one


class Binding:
    """One bind-group entry: binding number, ``PooledBuffer``, the bytes bound and the byte
    offset they start at (a GpuArray view's; 0 otherwise)."""

    __slots__ = ("binding", "pooled", "nbytes", "offset")

    def __init__(self, binding: int, pooled, nbytes: int, offset: int = 0):
        self.binding = binding
        self.pooled = pooled
        self.nbytes = nbytes
        self.offset = offset


class LaunchPlan:
    """Everything one launch submits and its job later releases (see the module docstring).

    ``key`` is the compiled ``Variant`` (``choice``: the ``variants.Choice`` that picked it);
    ``entries`` the bind-group entries after the uniform; ``copies`` the readback copies encoded
    after the dispatch; ``bind_group`` the bind group of ``entries`` when the plan came with it
    (a ready launch, ``ready.py``), else None (``KernelRuntime.bind_group`` finds it)."""

    __slots__ = ("key", "choice", "groups", "entries", "uniform", "readback", "copies",
                 "resident_written", "owned", "more", "bind_group")

    #: the checked 1-D variant of a new plan
    DEFAULT = Variant()

    def __init__(self):
        self.key = self.DEFAULT
        self.choice = None
        self.groups = 1
        self.entries: tuple = ()
        self.uniform = b""
        self.readback = None         # Readback of the lists to download, or None
        self.copies = ()
        self.resident_written: list = []
        self.owned: list = []        # pooled buffers of the non-resident lists
        self.more: tuple = ()        # the dispatches after this one of a launch run part by
                                     # part (part_launch.py): their key, entries and uniform
        self.bind_group = None       # the bind group of ``entries`` when already known (ready.py)

    def release(self, pool) -> None:
        """Give the plan's pooled buffers back (a launch that failed before its job existed)."""
        for buf in self.owned:
            pool.release(buf)
        self.owned = []
        if self.readback is not None and self.readback.staging is not None:
            pool.release(self.readback.staging)
            self.readback.staging = None
