"""Which compiled ``Variant`` (codegen/program.py) a launch runs, and how it is dispatched.

Every rule lives here, as pure functions of plain values, tested without a device:

* ``launch_rules(program, facts, settings, nd)`` gathers what a kernel's launches on one
  device read that does not change from launch to launch (``LaunchRules``): the workgroup
  width, the indexes-per-invocation rule (``ShapeRule``), the loop-reporting form of CPU drivers,
  the four-lane variant's guard and the bounds-check proofs, the N-D form;
* ``choose(rules, scalars, lengths, dims, n)`` picks the variant of one launch and its shape
  (``Choice``: the variant, the uniform's hidden first field, the workgroups, the N-D counts);
  choices are kept per (n, form, checks), so a repeated launch pays two dict lookups;
* ``variants(rules)`` lists every variant ``choose`` may pick (what ``prepare()`` and
  ``compile()`` compile).

``KernelRuntime`` (kernel_runtime.py) makes the rules once and compiles one pipeline per
variant; ``plan()`` asks ``choose``.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import config
from ..codegen.program import KernelProgram, Variant
from .launch_conditions import compile_conditions

#: (indexes per invocation, from how many indexes on) for GPUs and for CPU drivers: large grids
#: run several indexes per invocation, one grid apart; small grids keep one per invocation so
#: that every core gets work (measurements: docs/performance.md, "Indexes per invocation").
COARSEN_GPU = (4, 1 << 21)
COARSEN_CPU = (8, 1 << 14)
#: the same for the four-lane variant of element-wise kernels (counted in index steps of 4).
VEC_COARSEN_GPU = (1, 1 << 30)
VEC_COARSEN_CPU = (4, 1 << 12)
#: GPUs: the workgroup tile of N-D launches of kernels that do not observe workgroups, one
#: index per invocation (2-D, 3-D). Tiles several rows high let neighbouring rows share the
#: caches (docs/performance.md, "N-D launches on GPUs"). CPU drivers run rows along x instead,
#: unless the ``nd_tiles_on_cpu`` setting (tests) says otherwise.
GPU_ND_TILES = {2: (32, 8, 1), 3: (32, 4, 2)}

#: indexes per invocation never chosen by default (a rule's threshold that is never reached)
NEVER = (1, 1 << 62)


class DeviceFacts(NamedTuple):
    """What the choice needs to know of a device."""
    is_cpu: bool            # a CPU driver (llvmpipe): its loop budget, its coarsening table
    max_groups: int         # workgroups per dispatch axis


def choose_workgroup_size(program: KernelProgram, ctx, settings=None) -> int:
    """64 where the kernel observes workgroups; else ``CTHREADS_WORKGROUP_SIZE`` or a device
    pick (``ctx``: anything with ``is_cpu``)."""
    if program.fixed_workgroup_size:
        return 64
    size = (settings or config.current()).workgroup_size
    if size is not None:
        return size
    return 64 if ctx.is_cpu else 256


def _coarsen_setting(settings=None):
    """``CTHREADS_COARSEN`` (indexes per invocation), or None for the device's pick."""
    return (settings or config.current()).coarsen


def _vec_enabled(settings=None) -> bool:
    """False when ``CTHREADS_VEC=0`` turns the four-lane variant off."""
    return (settings or config.current()).vec


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
    for si, li, dim, *scale in fast_checks:
        size = lengths[li] if dim == 0 or dims is None else dims[li][dim]
        # (list[vecN]: the scalar bounds elements, the list's last dimension counts components)
        if scalars[si] * (scale[0] if scale else 1) > size:
            return False
    return True


def launch_proven(rules, scalars: list, lengths: list, dims: list | None) -> bool:
    """True when this launch may run the check-free variant: every param bound of
    ``rules.fast_checks`` holds and every computed-index condition (``rules.fast_test``)."""
    test = rules.fast_test
    if test is None:
        return fast_ok(rules.fast_checks, scalars, lengths, dims)
    if rules.fast_checks and not fast_ok(rules.fast_checks, scalars, lengths, dims):
        return False
    return bool(test(scalars, lengths, dims))


def vec_form(guard: int, vec_lists: tuple, scalars: list, lengths: list, width: int = 1) -> str:
    """The four-lane variant's form for this launch: ``"vec_whole"`` (the guard scalar a
    multiple of 4), ``"vec_tail"`` (a partial last step), or ``""`` (the scalar kernel: a list
    the variant reads is shorter than the guard). ``width``: list[vecN] kernels' N (the guard
    counts elements of N components, the lengths components; KernelProgram.vec_width)."""
    g = scalars[guard] * width
    if g >= 1 << 31:                # past the variant's i32 flat index: the scalar kernel
        return ""
    for k in vec_lists:
        if g > lengths[k]:
            return ""
    # the form with a partial last step for guards that are not multiples of 4; the whole-step
    # form for the others (faster on CPU drivers, equal on GPUs: docs/performance.md)
    return "vec_whole" if g % 4 == 0 else "vec_tail"


def vec_nbytes(length: int, size: int) -> int:
    """Bytes a list of ``length`` elements of ``size`` bytes binds in the four-lane variant:
    rounded up to whole four-lane elements (16 bytes for float32, 32 for float64)."""
    lane = 4 * size
    return -(-size * length // lane) * lane


def nd_groups(threads: tuple, wg: tuple) -> tuple:
    """Workgroups per axis of an N-D launch of ``threads`` (x, y[, z]) invocations."""
    t = tuple(threads) + (1,) * (3 - len(threads))
    return tuple(max(1, -(-t[k] // wg[k])) for k in range(3))


class Choice:
    """The variant of one launch and its dispatch: ``hidden`` (the uniform's first field),
    ``groups`` (an int, or the (x, y, z) N-D grid itself) and, for N-D launches, ``counts``
    (the uniform's per-axis group counts). ``pipeline``: the runtime's compiled pipeline of
    the variant, kept here by the runtime that owns the rules (a repeated launch then looks
    nothing up)."""

    __slots__ = ("variant", "hidden", "groups", "counts", "pipeline")

    def __init__(self, variant: Variant, hidden: int, groups, counts: tuple = ()):
        self.variant = variant
        self.hidden = hidden
        self.groups = groups
        self.counts = counts
        self.pipeline = None

    def __repr__(self) -> str:
        return (f"Choice({self.variant.name}, hidden={self.hidden}, groups={self.groups}, "
                f"counts={self.counts})")


class LaunchRules:
    """What the launches of one kernel on one device choose from (``launch_rules`` makes it).

    ``fast_checks``: (scalar position, list position, dimension) of the proofs that let a
    launch drop checks; ``vec_check``: (guard position, list positions) of the four-lane
    variant, or None; ``vec_sizes``: those lists' element sizes; ``nd``: the N-D workgroup
    (the tile of ``nd_tile``; None for 1-D launches); ``nd_grid``: N-D launches run rows along
    x; ``per_list``: a choice reads the lists' lengths."""

    #: choices remembered per rules (launches repeat their sizes)
    KNOWN = 64

    def __init__(self, program: KernelProgram, workgroup_size: int, loop_report: bool,
                 shape_rule: ShapeRule, fast_checks: tuple, vec_check, vec_sizes: tuple,
                 nd, nd_grid: bool, nd_rows: int, nd_rows_from: int, max_groups: int,
                 fast_test=None):
        self.program = program
        self.workgroup_size = workgroup_size
        self.loop_report = loop_report
        self.shape_rule = shape_rule
        self.fast_checks = fast_checks
        # the computed-index proofs' conditions (launch_conditions.py), or None
        self.fast_test = fast_test
        self.vec_check = vec_check
        self.vec_sizes = vec_sizes
        self.nd = nd
        self.nd_grid = nd_grid
        self.nd_rows = nd_rows
        self.nd_rows_from = nd_rows_from
        self.max_groups = max_groups
        self.per_list = bool(vec_check is not None or fast_checks or fast_test)
        self.needs_dims = bool(fast_checks or fast_test)
        self.vec_width = program.vec_width      # the four-lane variant's components per index
        self._variants: dict = {}
        self._known: dict = {}

    def variant(self, fast: bool, coarsen: int, form: str) -> Variant:
        """The one ``Variant`` object of (checks, coarsen, form) for these rules."""
        key = (fast, coarsen, form)
        v = self._variants.get(key)
        if v is None:
            vec = form.startswith("vec_")
            wg = self.nd if form == "nd_tile" else (self.workgroup_size, 1, 1)
            v = self._variants[key] = self.program.variant(Variant(
                "proven" if fast else "all", self.loop_report and not vec, form, coarsen, wg))
        return v


def launch_rules(program: KernelProgram, facts: DeviceFacts, settings,
                 nd: tuple | None = None) -> LaunchRules:
    """The rules of ``program``'s launches on a device with ``facts`` under ``settings`` (a
    ``config.Config``); ``nd``: the N-D launch's workgroup (the kernel's, for kernels that
    observe workgroups), None for 1-D launches. Settings are read only where they apply, so an
    invalid one raises only where it is used."""
    cpu = facts.is_cpu
    fixed = program.fixed_workgroup_size
    workgroup_size = choose_workgroup_size(program, facts, settings)
    coarsen = 1 if fixed else _coarsen_setting(settings)
    # CPU drivers end long loops early: kernels with loops run the variant that reports it
    # (codegen/program.py, LoopRecord), one index per invocation unless CTHREADS_COARSEN
    # says otherwise (the driver's loop budget is per invocation)
    loop_report = bool(cpu and program.loops)
    shape_rule = ShapeRule(workgroup_size, fixed=fixed, coarsen=coarsen,
                           scalar=COARSEN_CPU if cpu else COARSEN_GPU,
                           vec=VEC_COARSEN_CPU if cpu else VEC_COARSEN_GPU, loops=loop_report)
    # N-D launches of kernels that do not observe workgroups run, on CPU drivers, rows along x
    # in 1-D workgroups (several rows per invocation: entry.ND_GRID_ENTRY), on GPUs tiles of
    # GPU_ND_TILES; kernels that observe workgroups run N-D tiles of ``nd``
    free = nd is not None and not fixed
    nd_grid = free and cpu and not settings.nd_tiles_on_cpu
    if free and not nd_grid:
        nd = GPU_ND_TILES[2 if nd[2] == 1 else 3]
    # rows per invocation of the N-D grid form: the 1-D rule's indexes per invocation (the
    # same lever: fewer, longer invocations), from as many threads on; 1 for the loop
    # variant (the driver's loop budget is per invocation) or a CTHREADS_COARSEN of 1
    rows_rule = COARSEN_CPU if cpu else COARSEN_GPU
    nd_rows = 1 if loop_report else (coarsen or rows_rule[0])
    nd_rows_from = rows_rule[1] if coarsen is None else 0
    scalar_pos = {p.name: k for k, p in enumerate(program.scalars)}
    list_pos = {p.name: k for k, p in enumerate(program.lists)}
    fast_checks = tuple((scalar_pos[sp], list_pos[lp], dim, _scale(program.lists[list_pos[lp]],
                                                                    dim))
                        for sp, lp, dim in program.fast_requires)
    fast_test = compile_conditions(program.fast_conditions, scalar_pos, list_pos)
    # the four-lane variant (codegen/vectorize.py): where its guard and lists sit among the
    # launch's scalars and lists; CTHREADS_VEC=0 turns it off
    vec_check, vec_sizes = None, ()
    if program.vec_guard is not None and _vec_enabled(settings) and nd is None:
        from ..codegen.types import elem as elem_type  # noqa: PLC0415 - the element table
        vec_check = (scalar_pos[program.vec_guard],
                     tuple(list_pos[name] for name in program.vec_lists))
        vec_sizes = tuple(elem_type(program.lists[k].elem).size for k in vec_check[1])
        if not cpu and program.vec_width == 1 and max(vec_sizes, default=4) > 4:
            # GPUs: 32-byte vec4<f64> lanes run below the scalar form's bandwidth (H200,
            # float64 saxpy: 3,856 GB/s against 4,306 for four indexes per invocation; CPU
            # drivers gain from them: docs/performance.md, "The four-lane variant")
            vec_check, vec_sizes = None, ()
    return LaunchRules(program, workgroup_size, loop_report, shape_rule, fast_checks,
                       vec_check, vec_sizes, nd, nd_grid, nd_rows, nd_rows_from,
                       facts.max_groups, fast_test)


def _scale(p, dim: int) -> int:
    """Components per element of list parameter ``p`` along ``dim``: N on a list[vecN]'s last
    dimension (the flat view the kernel binds), else 1."""
    return p.vec if p.vec and dim == p.ndim - 1 else 1


def choose(rules: LaunchRules, scalars: list, lengths: list | None, dims: list | None, n,
           vec: bool = True) -> Choice:
    """The variant and shape of one launch over ``n`` indexes (N-D launches: the threads per
    axis) with checked ``scalars``; ``lengths`` and ``dims`` are the lists' lengths and shapes
    (read only when ``rules.per_list``); ``vec=False``: not the four-lane variant (its lists'
    buffers cannot bind rounded up)."""
    form = ""
    fast = False
    if rules.per_list:
        if vec and rules.vec_check is not None:
            guard, vec_lists = rules.vec_check
            form = vec_form(guard, vec_lists, scalars, lengths, rules.vec_width)
        fast = not form and launch_proven(rules, scalars, lengths, dims)
    key = (n, form, fast)
    choice = rules._known.get(key)
    if choice is None:
        if len(rules._known) >= rules.KNOWN:
            rules._known.clear()
        choice = rules._known[key] = _choose(rules, n, form, fast)
    return choice


def _choose(rules: LaunchRules, n, form: str, fast: bool) -> Choice:
    if rules.nd is None:
        # the four-lane variant of list[vecN] kernels steps over the components of the
        # elements the scalar kernel runs (n rounded up to 64, the spec's GridDim), N each
        w = rules.vec_width
        shape = rules.shape_rule.shape(-(-n // 64) * 64 * w if form and w > 1 else n, bool(form))
        return Choice(rules.variant(fast, shape.coarsen, form or "flat"), shape.hidden,
                      shape.groups)
    if rules.nd_grid:
        t = tuple(n) + (1,) * (3 - len(n))
        rows = t[1] * t[2]
        k = rules.nd_rows if (rows >= 4 * rules.nd_rows and
                              t[0] * rows >= rules.nd_rows_from) else 1
        gx = -(-t[0] // rules.workgroup_size)
        total = gx * -(-rows // k)
        return Choice(rules.variant(fast, k, "nd_grid"), total, total, (gx, t[1], rows))
    counts = nd_groups(n, rules.nd)
    total = counts[0] * counts[1] * counts[2]
    if max(counts) <= rules.max_groups:       # the N-D grid itself (entry.py): hidden 0
        return Choice(rules.variant(fast, 1, "nd_tile"), 0, counts, counts)
    return Choice(rules.variant(fast, 1, "nd_tile"), total, total, counts)


def variants(rules: LaunchRules) -> list[Variant]:
    """Every variant ``choose`` may pick under ``rules``: checked or check-free, the
    indexes-per-invocation factors of small and large launches, and both four-lane forms."""
    checks = (False, True) if rules.fast_checks or rules.fast_test else (False,)
    if rules.nd is not None:
        if rules.nd_grid:
            return [rules.variant(fast, k, "nd_grid") for k in sorted({1, rules.nd_rows})
                    for fast in checks]
        return [rules.variant(fast, 1, "nd_tile") for fast in checks]
    out = [rules.variant(fast, coarsen, "flat") for coarsen in rules.shape_rule.factors()
           for fast in checks]
    if rules.vec_check is not None:
        out += [rules.variant(False, coarsen, form)
                for coarsen in rules.shape_rule.factors(vec=True)
                for form in ("vec_whole", "vec_tail")]
    return out


def describe_launches(ctx) -> list[str]:
    """How launches of kernels that only use ``GlobalIdx`` are shaped on ``ctx`` (for ``info``)."""
    from ..backend import dispatch  # noqa: PLC0415 - lazy: the dispatcher loads with the queue

    settings = config.current()
    wg = 64 if ctx.is_cpu else 256
    env = "" if settings.workgroup_size is None else str(settings.workgroup_size)
    factor, from_threads = COARSEN_CPU if ctx.is_cpu else COARSEN_GPU
    vec_factor, vec_from = VEC_COARSEN_CPU if ctx.is_cpu else VEC_COARSEN_GPU
    coarsen = "" if settings.coarsen is None else str(settings.coarsen)
    vec = settings.vec
    batch = settings.batch
    return [
        f"  workgroup width          {env + ' (CTHREADS_WORKGROUP_SIZE)' if env else wg}"
        " (64 for kernels that observe workgroups)",
        "  indexes per invocation   " + (f"{coarsen} (CTHREADS_COARSEN)" if coarsen else
                                         f"{factor} from {from_threads:,} indexes, else 1"
                                         + ("; 1 for kernels with loops (the driver's loop "
                                            "budget is per invocation)" if ctx.is_cpu else "")),
        "  four-lane variant        " + (
            (f"on for element-wise kernels; {vec_factor} steps per invocation from "
             f"{vec_from:,} steps" if vec_factor > 1 else "on for element-wise kernels")
            if vec else "off (CTHREADS_VEC=0)"),
        "  batched submissions      " + (
            f"on: up to {dispatch.BATCH_CAP} launches, {dispatch.FLUSH_DEADLINE_S * 1e3:g} ms "
            "deadline" if batch else "off (CTHREADS_BATCH=0)"),
    ]
