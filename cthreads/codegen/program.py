"""What the compiler hands to the runtime: a device-independent description of one kernel.

This module is the contract between ``cthreads.codegen`` (which knows Python ASTs and WGSL but
nothing of wgpu) and ``cthreads.launch`` / ``cthreads.backend`` (which know wgpu but nothing of
ASTs). Everything here is plain data.

Binding layout of every generated shader (group 0):

* binding 0: ``var<uniform>`` struct of 4-byte fields. The first field is hidden: for kernels
  with ``fixed_workgroup_size`` the ``u32`` count of 64-wide workgroups in the flat 1-D grid
  (``ct_groups``, ``GridDim.x``); for the others the ``u32`` count of indexes to run
  (``ct_threads``: n rounded up to a multiple of 64). Then one field per scalar
  parameter in declaration order (``int`` -> i32, ``float`` -> f32, ``bool`` -> u32 0/1).
  ``ProgramParam.offset`` gives each scalar's byte offset; ``KernelProgram.uniform_size`` the
  struct size rounded up to 16 bytes.
* binding 1 ..: one storage buffer per list parameter, in declaration order
  (``ProgramParam.binding``); ``array<f32>``, ``array<i32>``, or ``array<u32>`` for bools
  (0/1, 4 bytes per element). Read-only lists are ``var<storage, read>``.
* after the lists, optionally, a ``read_write`` status buffer of ``STATUS_WORDS`` u32
  (``KernelProgram.status_binding``; ``None`` when the kernel has no checks). Word 0 is 0 while
  nothing went wrong; a failing bounds check stores, with atomics, the check id + 1 in word 0
  and the offending index in word 1 (first failure wins). ``KernelProgram.checks[id]`` tells
  the Python line, list name and length the check guards. Word 1 holds the index's i32 bit
  pattern (reinterpret as signed: a negative index reads as >= 2**31 unsigned); word 2 holds
  the length of the list or shared array at the failing access. Word 3 reports loops that a
  CPU driver ended early (see ``LoopRecord``): bit ``k + 1`` when the probe after
  ``KernelProgram.loops[k]`` found the driver's loop budget spent (bit 31 for ``k >= 30``), bit
  0 when the probe at the invocation's end did. Only the variants for CPU drivers
  (``Variant.loop_report``) write it; kernels with loops get the status buffer even with bounds
  checks off.
* a kernel that calls ``print``: the ``read_write`` record buffer at the binding after the
  status buffer's (``KernelProgram.print_binding``, with or without a status buffer; the parts
  of split lists follow it), records as ``codegen/printing.py`` writes them.

Dispatch: the runtime dispatches ``(gx, gy, 1)`` workgroups with ``gx = min(groups, 65535)``,
``gy = ceil(groups / gx)``. Kernels with ``fixed_workgroup_size`` get ``groups`` in the
uniform's first field; the shader computes the flat workgroup index ``wid.y * nwg.x + wid.x``
and returns at once (workgroup-uniformly) when it is ``>= groups``; every index builtin reads as
the flat 1-D value. The other kernels run their body once per index below ``ct_threads``: an
invocation with flat number ``t`` runs indexes ``t + k * S`` for ``k < coarsen`` (``S`` = all
invocations of the grid), so any ``groups >= ceil(ct_threads / (size * coarsen))`` covers them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .entry import expand_steps, nd_grid_steps

STATUS_WORDS = 4

#: the launch forms of a variant: 1-D (``flat``), the four-lane variant of an element-wise
#: kernel for guards that are multiples of 4 (``vec_whole``) or any guard (``vec_tail``), and
#: the N-D launch (``threads=(nx, ny[, nz])``) as rows along x in 1-D workgroups (``nd_grid``,
#: kernels that do not observe workgroups) or as N-D workgroup tiles (``nd_tile``)
FORMS = ("flat", "vec_whole", "vec_tail", "nd_grid", "nd_tile")


@dataclass(frozen=True)
class Variant:
    """One compiled form of a kernel: what ``KernelProgram.render`` turns into WGSL and what the
    runtime keys its pipelines by (``cthreads.runtime.variants`` chooses one per launch).

    ``checks``: ``"all"`` keeps every bounds check the compiler could not prove at compile time;
    ``"proven"`` also leaves out those that ``KernelProgram.fast_requires`` proves for the
    launch. ``loop_report``: the form for CPU drivers that reports loops the driver ended early
    (``LoopRecord``; kernels with loops only). ``form``: one of ``FORMS``. ``coarsen``: index
    steps per invocation (``flat``, ``vec_*``) or rows per invocation (``nd_grid``); 1 for the
    others. ``workgroup``: the workgroup size (x, y, z); (64, 1, 1) for kernels that observe
    workgroups, except in the ``nd_tile`` form, whose tile it is. ``split``: the list
    parameters that arrive split across bindings, as (name, parts, shift) in parameter order
    (``codegen/split.py``; empty for ordinary launches; never with the four-lane forms).

    The device's float32 form (``float_ops.device_form``) and its pipeline constants
    (``KernelProgram.overrides``) are not part of a variant: they follow from the device, the
    same for every variant of the kernel there, and are applied where the pipeline is made.
    """
    checks: str = "all"
    loop_report: bool = False
    form: str = "flat"
    coarsen: int = 1
    workgroup: tuple = (64, 1, 1)
    split: tuple = ()

    def __post_init__(self):
        # variants key the runtime's pipelines on every launch: hash once
        object.__setattr__(self, "_hash", hash((self.checks, self.loop_report, self.form,
                                                self.coarsen, tuple(self.workgroup),
                                                self.split)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def name(self) -> str:
        """A short name saying every field, e.g. ``proven-loops-flat-c4-wg256x1x1``."""
        loops = "-loops" if self.loop_report else ""
        wx, wy, wz = self.workgroup
        split = "".join(f"-split-{name}{parts}x{shift}" for name, parts, shift in self.split)
        return f"{self.checks}{loops}-{self.form}-c{self.coarsen}-wg{wx}x{wy}x{wz}{split}"


@dataclass(frozen=True)
class ProgramParam:
    name: str            # the Python parameter name
    kind: str            # the annotation: 'int', 'float', 'bool', 'list[int]', ...
    is_list: bool
    elem: str            # 'int' | 'float' | 'bool' (element type for lists, type for scalars)
    binding: int | None  # storage binding for lists, None for scalars
    offset: int | None   # byte offset in the uniform struct for scalars, None for lists
    written: bool = False   # list may be written by the kernel (drives read_write + download)
    atomic: bool = False    # list is used with atomic_* builtins
    plain: str | None = None    # 'float' / 'int': annotated with plain float or int (a list
                                # of them), whose width follows the launch; None otherwise
    ndim: int = 1               # dimensions of a list parameter
    vec: int = 0                # list[vec3] / vec3: 3 (a flat list of components; a vector
                                # parameter is one ProgramParam per component: codegen/vectors.py)
    component: int = -1         # that component (0 .. vec-1) of a vector parameter
    mat: int = 0                # list[mat33]: 3 (vec 9; the caller's (n, 3, 3) array)
    struct: object = None       # list[Particle]: its StructType (codegen/structtypes.py)


@dataclass(frozen=True)
class BoundsCheck:
    id: int
    lineno: int          # Python line number in the user's file
    source: str          # the source text of that line, stripped
    list_name: str       # the Python name of the list (or shared array)
    filename: str = ""   # for a check in a device function: its file and name ("": the
    function: str = ""   # kernel's)
    dim: int = 0         # the dimension of an N-D list this check guards
    ndim: int = 1        # the list's dimensions
    vec: int = 0         # components per element along this dimension (list[vec3]'s last: 3)
    component: int = 0   # a run-time vector component index's check: the vector's size


@dataclass(frozen=True)
class LoopRecord:
    """An outermost ``while`` or ``for`` loop of the kernel (loops inside it count with it), for
    the CPU drivers' loop budget: llvmpipe ends every loop once an invocation's loops have made
    65,535 passes together (docs/language.md), so the CPU variant checks the budget after each
    outermost loop and at the invocation's end (codegen/entry.py, ``PROBE_FN``)."""
    id: int
    lineno: int          # Python line number in the user's file
    source: str          # the source text of that line, stripped
    filename: str = ""   # for a loop in a device function: its file and name (no probe
    function: str = ""   # follows it; the kernel's probes cover it)


@dataclass(frozen=True)
class SharedArray:
    """A ``shared()`` declaration of the kernel (for ``simulate``, which makes the arrays)."""
    name: str            # the Python name
    elem: str            # its element type: 'float32', 'float64', 'int32', 'bool', ...
    size: int
    lineno: int          # the declaration's first and last lines in the user's file
    end_lineno: int
    vec: int = 0         # a shared list[vec3]: 3 (``size`` counts vectors)
    struct: object = None    # a shared list[Particle]: the @Gpu.struct class (its words)


#: status word 3's bits: loops of the generated code, and the kernel's loops from bit 1 on
LOOP_WORD, LOOP_BIT_GENERATED, LOOP_BITS = 3, 1, 30


def loop_bit(loop_id: int) -> int:
    """The bit of status word 3 that says loop ``loop_id`` was ended by the driver."""
    return 1 << (min(loop_id, LOOP_BITS) + 1)


@dataclass(frozen=True)
class KernelProgram:
    name: str                         # fn.__name__
    qualname: str                     # module:qualname, unique per kernel
    params: tuple[ProgramParam, ...]
    uniform_size: int                 # bytes, multiple of 16, >= 16
    entry_point: str                  # WGSL entry point name
    fixed_workgroup_size: bool        # True when the kernel observes workgroup structure
                                      # (ThreadIdx, BlockIdx, BlockDim, barriers, shared):
                                      # then only 64 is allowed.
    status_binding: int | None = None
    checks: tuple[BoundsCheck, ...] = ()
    line_map: dict[int, int] = field(default_factory=dict)   # WGSL line (1-based) -> Python line
    filename: str = "<unknown>"
    firstlineno: int = 1
    # Bounds checks proven unnecessary at compile time (codegen/proofs.py): ``proven_checks``
    # are left out of every variant; ``fast_requires`` lists (int parameter, list, dimension)
    # triples such that, when every ``value(parameter) <= the list's size along dimension``
    # at launch (its length for dimension 0), the variants with ``checks="proven"`` (which
    # leave out the checks those triples prove) may run instead.
    proven_checks: int = 0
    fast_requires: tuple = ()
    # ... and conditions (codegen/range_proofs.py: ("<=", a, b) over int parameters, list
    # sizes and literals) that must all hold too, for the computed indexes they prove
    fast_conditions: tuple = ()
    workgroup_bytes: int = 0          # bytes of var<workgroup> memory (shared arrays); the
                                      # runtime compares it with the device limit
    needs_features: tuple[str, ...] = ()   # wgpu features the shader needs, e.g.
                                           # "shader-float32-atomic" for atomic_add on floats
    #: (feature, source location text) of the first line that needs each of some features
    #: (64-bit atomics), for the launch error on a device that lacks it
    feature_sites: tuple = ()
    # The four-lane variant of an element-wise kernel (codegen/vectorize.py): valid for a
    # launch when the int parameter ``vec_guard`` is at most the length of each list in
    # ``vec_lists``, which bind rounded up to whole 16-byte elements. It runs index steps
    # ``j`` below ``ct_threads`` (then n rounded up to 64, divided by 4), each over ``4j..4j+3``.
    vec_guard: str | None = None
    vec_lists: tuple[str, ...] = ()
    # list[vecN] kernels (codegen/vec_lanes.py): N -- that variant runs over the N * g flat
    # components (lengths of its lists count components), 4 per index step
    vec_width: int = 1
    # Kernels with loops have variants for CPU drivers (``Variant.loop_report``), which note
    # loops the driver ended early in status word 3; ``loops`` lists their ``LoopRecord``s.
    has_loops: bool = False
    # What plain float and int mean in this compilation: ('float' | 'float64', 'int' | 'int64')
    widths: tuple = ("float", "int")
    # The N-D launch forms (threads=(nx, ny[, nz])): the uniform offsets of the N-D lists'
    # shapes ((list name, dimension, byte offset), ...) and of the per-axis group counts.
    shapes: tuple = ()
    nd_offset: int = 0
    nd_uniform_size: int = 16
    # What ``simulate`` needs to run the threads of a workgroup together: the lines of the
    # kernel's barriers (empty: it has none) and its shared() declarations.
    barrier_lines: tuple[int, ...] = ()
    shared_arrays: tuple[SharedArray, ...] = ()
    # The index builtins the kernel reads, in its body or a device function it calls, as
    # sorted (builtin, axis) pairs: (("GlobalIdx", "x"), ("GlobalIdx", "y")) for a kernel of
    # ``GlobalIdx.x`` and ``.y``. The runtime warns when a kernel that reads a .y or .z and
    # takes N-D lists is launched without threads= (a 1-D launch, where they read 0 or 1).
    index_reads: tuple = ()

    @property
    def index_axes(self) -> frozenset:
        """The axes ('x', 'y', 'z') of every index builtin the kernel reads."""
        return frozenset(axis for _, axis in self.index_reads)

    # The pipeline-overridable constants every variant's WGSL declares (builtins.OVERRIDES),
    # which the runtime sets per device when it makes a pipeline
    overrides: tuple = ()

    # A located error (GpuKernelError) that every launch of this program raises: a literal
    # that does not fit these widths' plain float or int, in a kernel valid at other widths
    # (a float64 launch of ``x[i] * 1e200``; ``compile_kernel``). None for valid programs.
    refused: object = None
    # print() (codegen/printing.py): the kernel's print sites, by ident, and the binding of
    # its record buffer; () and None for kernels that do not print
    print_sites: tuple = ()
    print_binding: int | None = None
    # The compiler's side of ``render``: an object with ``template(checks, loop_report, form)``
    # (the text before the entry point's step count and workgroup are filled in, rendered on
    # first use) and ``loops()``; set by ``compile_kernel``. Rendered texts are kept per variant.
    _templates: object = field(default=None, compare=False, repr=False)
    _rendered: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def loops(self) -> tuple[LoopRecord, ...]:
        """The ``LoopRecord``s of the loop-reporting variants (empty without loops)."""
        if not self.has_loops or self._templates is None:
            return ()
        return self._templates.loops()

    def variant(self, variant: Variant) -> Variant:
        """``variant`` as this program renders it: ``checks="proven"`` is ``"all"`` where
        nothing is proven per launch, ``loop_report`` is off without loops (and in the four-lane
        forms, which have none). ``ValueError`` for a variant this kernel has no form of."""
        form = variant.form
        if form not in FORMS:
            raise ValueError(f"Variant form {form!r}: use one of {', '.join(FORMS)}")
        if variant.checks not in ("all", "proven"):
            raise ValueError(f"Variant checks {variant.checks!r}: use 'all' or 'proven'")
        vec = form.startswith("vec_")
        if vec and self.vec_guard is None:
            raise ValueError(f"kernel {self.name} has no four-lane variant")
        if variant.split:
            names = [p.name for p in self.lists]
            if vec or any(name not in names or parts < 2 or shift < 0
                          for name, parts, shift in variant.split):
                raise ValueError(f"Variant split {variant.split!r}: (list parameter, parts >= 2, "
                                 f"shift) of {self.name}'s lists, not in a four-lane form")
        if self.fixed_workgroup_size and form != "nd_tile" and (
                tuple(variant.workgroup) != (64, 1, 1) or variant.coarsen != 1):
            raise ValueError(f"kernel {self.name} needs workgroup size 64, one index each")
        if form == "nd_grid" and self.fixed_workgroup_size:
            raise ValueError(f"kernel {self.name} observes workgroups: its N-D form is nd_tile")
        checks = "proven" if variant.checks == "proven" and self.has_launch_proofs and not vec \
            else "all"
        loop_report = bool(variant.loop_report and self.has_loops and not vec)
        coarsen = 1 if form == "nd_tile" else int(variant.coarsen)
        workgroup = tuple(int(w) for w in variant.workgroup)
        if (checks, loop_report, coarsen, workgroup) == (variant.checks, variant.loop_report,
                                                         variant.coarsen, variant.workgroup):
            return variant
        return Variant(checks, loop_report, form, coarsen, workgroup, variant.split)

    def render(self, variant: Variant) -> str:
        """The WGSL source of ``variant`` (``variant()`` says how it is read), rendered on first
        use and kept. Raises the program's ``refused`` error instead, where it has one."""
        if self.refused is not None:
            raise self.refused.with_traceback(None)
        text = self._rendered.get(variant)
        if text is not None:
            return text
        exact = self.variant(variant)
        text = self._rendered.get(exact)
        if text is None:
            text = self._fill(exact, self._templates.template(exact.checks, exact.loop_report,
                                                              exact.form, exact.split))
            self._rendered[exact] = text
        self._rendered[variant] = text
        return text

    @staticmethod
    def _fill(v: Variant, template: str) -> str:
        """The entry point's step count and workgroup size written into ``template``."""
        if v.form == "nd_tile":
            wx, wy, wz = v.workgroup
            return (template.replace("{WX}", str(wx)).replace("{WY}", str(wy))
                    .replace("{WZ}", str(wz)))
        if v.form == "nd_grid":
            template = nd_grid_steps(template, v.coarsen, v.loop_report)
        else:
            template = expand_steps(template, v.coarsen, v.loop_report)
        return template.replace("{WORKGROUP_SIZE}", str(v.workgroup[0]))

    def wgsl(self, workgroup_size: int = 64) -> str:
        """The WGSL source of the checked 1-D variant with workgroups of ``workgroup_size``
        (what ``GpuKernel.wgsl`` shows; ``render`` gives every other variant)."""
        return self.render(Variant(workgroup=(int(workgroup_size), 1, 1)))

    @property
    def has_launch_proofs(self) -> bool:
        """True when some checks are proven per launch (the ``"proven"`` variants differ)."""
        return bool(self.fast_requires or self.fast_conditions)

    @functools.cached_property
    def count_param(self) -> int | None:
        """The position in ``params`` of the launch's count, an int or int64 scalar named
        ``n``: a 1-D launch (and ``simulate``) runs that many indexes. None when the kernel
        has none; then the longest list's length counts."""
        return next((k for k, p in enumerate(self.params)
                     if p.name == "n" and not p.is_list and p.elem in ("int", "int64")), None)

    @property
    def has_vector_lists(self) -> bool:
        """A parameter is a list[vec3] (its argument is bound by its flat view)."""
        return any(p.vec and p.is_list for p in self.params)

    @property
    def has_vector_scalars(self) -> bool:
        """A parameter is a vec3 (its argument is unpacked into its components)."""
        return any(p.component >= 0 for p in self.params)

    @property
    def python_names(self) -> tuple:
        """The kernel's parameter names, as its Python signature has them."""
        return tuple(p.name for p in self.params if p.component <= 0)

    @property
    def lists(self) -> tuple[ProgramParam, ...]:
        return tuple(p for p in self.params if p.is_list)

    @property
    def scalars(self) -> tuple[ProgramParam, ...]:
        return tuple(p for p in self.params if not p.is_list)
