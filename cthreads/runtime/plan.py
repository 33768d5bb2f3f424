"""What one launch does, as plain values: ``LaunchPlan`` and the rules that fill it.

``KernelRuntime.plan`` (runtime.py) makes one ``LaunchPlan`` per launch: the compiled variant to
run (its key), the uniform's hidden first field and bytes, the workgroups, the bind-group
entries, the readback of the lists the kernel may write, the resident slots it writes and the
pooled buffers the job owns until it is joined. ``gpu()`` submits exactly that, ``compile()``
compiles every variant a plan may pick, and ``GpuJob`` releases what the plan owns.

The choices are pure functions of plain values, so they are tested without a device:
``ShapeRule.shape`` gives the launch shape from the number of indexes (and the device kind it
was made for), ``fast_ok`` and ``vec_form`` the variant from the scalars and list lengths.
"""

from __future__ import annotations


class ListArg:
    """One list argument of a launch: its parameter, the caller's object, its resident slot
    (None: uploaded for this launch from ``data``, its device bytes) and its size in bytes."""

    __slots__ = ("param", "value", "slot", "data", "nbytes", "dims", "kind")

    def __init__(self, param, value, slot, data, nbytes: int):
        self.param = param
        self.value = value
        self.slot = slot
        self.data = data
        self.nbytes = nbytes
        self.dims = None            # its shape (N-D lists: every dimension)
        self.kind = None            # its handler (args.py), when it is uploaded


class Binding:
    """One bind-group entry: binding number, ``PooledBuffer`` and the bytes bound."""

    __slots__ = ("binding", "pooled", "nbytes")

    def __init__(self, binding: int, pooled, nbytes: int):
        self.binding = binding
        self.pooled = pooled
        self.nbytes = nbytes


class Shape:
    """How a launch over ``n`` indexes is dispatched: the uniform's hidden first field
    (index steps covered), the workgroups, and the index steps per invocation."""

    __slots__ = ("hidden", "groups", "coarsen")

    def __init__(self, hidden: int, groups: int, coarsen: int):
        self.hidden = hidden
        self.groups = groups
        self.coarsen = coarsen

    def __eq__(self, other) -> bool:
        return isinstance(other, Shape) and (self.hidden, self.groups, self.coarsen) == \
            (other.hidden, other.groups, other.coarsen)

    def __repr__(self) -> str:
        return f"Shape(hidden={self.hidden}, groups={self.groups}, coarsen={self.coarsen})"


#: indexes per invocation never chosen by default (a rule's threshold that is never reached)
NEVER = (1, 1 << 62)


class ShapeRule:
    """The launch shapes of one kernel on one device kind.

    ``scalar`` and ``vec`` are (indexes per invocation, from how many invocations on) for the
    scalar and the four-lane variant; ``coarsen`` a fixed setting (None: the rule decides);
    ``loops``: the kernel runs its loop-checking variant (CPU drivers), whose loop budget is
    per invocation, so its scalar form keeps one index per invocation; ``fixed``: the kernel
    observes workgroups (64 wide, one index per invocation, the uniform counts workgroups).
    """

    __slots__ = ("workgroup_size", "fixed", "coarsen", "scalar", "vec", "loops", "_known")

    #: shapes remembered per rule (launches repeat their sizes; the arithmetic is not free)
    KNOWN = 64

    def __init__(self, workgroup_size: int, *, fixed: bool = False, coarsen: int | None = None,
                 scalar: tuple = NEVER, vec: tuple = NEVER, loops: bool = False):
        self.workgroup_size = workgroup_size
        self.fixed = fixed
        self.coarsen = 1 if fixed else coarsen
        self.scalar = scalar
        self.vec = vec
        self.loops = loops
        self._known: dict = {}

    def shape(self, n: int, vec: bool = False) -> Shape:
        """The shape of a launch over ``n`` indexes (``vec``: the four-lane variant, which
        counts steps of 4 indexes; see codegen/program.py)."""
        key = 2 * n + 1 if vec else 2 * n      # one int key per (n, form), no tuple
        shape = self._known.get(key)
        if shape is None:
            if len(self._known) >= self.KNOWN:
                self._known.clear()
            shape = self._known[key] = self._shape(n, vec)
        return shape

    def _shape(self, n: int, vec: bool) -> Shape:
        groups64 = max(1, -(-n // 64))
        if self.fixed:
            return Shape(groups64, groups64, 1)
        threads = groups64 * 64 // (4 if vec else 1)
        coarsen = self.coarsen
        if coarsen is None:
            factor, min_threads = self.vec if vec else self.scalar
            coarsen = factor if threads >= min_threads and not (self.loops and not vec) else 1
        return Shape(threads, -(-threads // (self.workgroup_size * coarsen)), coarsen)

    def factors(self, vec: bool = False) -> list[int]:
        """Every index-steps-per-invocation factor a launch may get (small and large)."""
        return sorted({self.shape(4 if vec else 1, vec).coarsen,
                       self.shape(1 << 30, vec).coarsen})


def fast_ok(fast_checks: tuple, scalars: list, lengths: list, dims: list | None = None) -> bool:
    """True when the check-free variant is safe: every (scalar position, list position,
    dimension) of ``fast_checks`` has the scalar within the list's size along that dimension
    (its length for dimension 0; KernelProgram.fast_requires). ``dims``: the lists' shapes."""
    if not fast_checks:
        return False
    for si, li, dim in fast_checks:
        size = lengths[li] if dim == 0 or dims is None else dims[li][dim]
        if scalars[si] > size:
            return False
    return True


def vec_form(guard: int, vec_lists: tuple, scalars: list, lengths: list) -> str:
    """The four-lane variant's form for this launch: ``"whole"`` (the guard scalar a multiple
    of 4), ``"tail"`` (a partial last step), or ``""`` (the scalar kernel: a list the variant
    reads is shorter than the guard)."""
    g = scalars[guard]
    for k in vec_lists:
        if g > lengths[k]:
            return ""
    # the form with a partial last step for guards that are not multiples of 4; the whole-step
    # form for the others (faster on CPU drivers, equal on GPUs: docs/performance.md)
    return "whole" if g % 4 == 0 else "tail"


def vec_nbytes(length: int, size: int) -> int:
    """Bytes a list of ``length`` elements of ``size`` bytes binds in the four-lane variant:
    rounded up to whole four-lane elements (16 bytes for float32, 32 for float64)."""
    lane = 4 * size
    return -(-size * length // lane) * lane


class LaunchPlan:
    """Everything one launch submits and its job later releases (see the module docstring).

    ``key`` is the compiled variant (fast, coarsen, vec form); ``entries`` the bind-group
    entries after the uniform; ``copies`` the readback copies encoded after the dispatch."""

    __slots__ = ("key", "hidden", "groups", "entries", "uniform", "readback", "copies",
                 "resident_written", "owned")

    def __init__(self):
        self.key = (False, 1, "")
        self.hidden = 0
        self.groups = 1
        self.entries: tuple = ()
        self.uniform = b""
        self.readback = None         # Readback of the lists to download, or None
        self.copies = ()
        self.resident_written: list = []
        self.owned: list = []        # pooled buffers of the non-resident lists

    def release(self, pool) -> None:
        """Give the plan's pooled buffers back (a launch that failed before its job existed)."""
        for buf in self.owned:
            pool.release(buf)
        self.owned = []
        if self.readback is not None and self.readback.staging is not None:
            pool.release(self.readback.staging)
            self.readback.staging = None
