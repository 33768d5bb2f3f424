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
  0 when the probe at the invocation's end did. Only the variant for CPU drivers
  (``wgsl(cpu=True)``) writes it; kernels with loops get the status buffer even with bounds
  checks off.

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


@dataclass(frozen=True)
class ProgramParam:
    name: str            # the Python parameter name
    kind: str            # the annotation: 'int', 'float', 'bool', 'list[int]', ...
    is_list: bool
    elem: str            # 'int' | 'float' | 'bool' (element type for lists, type for scalars)
    binding: int | None  # storage binding for lists, None for scalars
    offset: int | None   # byte offset in the uniform struct for scalars, None for lists
    written: bool = False   # list may be written by the kernel (drives read_write + download)
    atomic: bool = False    # list is used with atomic_* builtins (issue 6)
    plain: str | None = None    # 'float' / 'int': annotated with plain float or int (a list
                                # of them), whose width follows the launch; None otherwise
    ndim: int = 1               # dimensions of a list parameter


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
    _template: str = ""               # WGSL text with '{WORKGROUP_SIZE}' placeholders
    # Bounds checks proven unnecessary at compile time (codegen/proofs.py): ``proven_checks``
    # are left out of every variant; ``fast_requires`` lists (int parameter, list, dimension)
    # triples such that, when every ``value(parameter) <= the list's size along dimension``
    # at launch (its length for dimension 0), the ``_fast_template`` variant (which leaves
    # out the checks those triples prove) may run instead.
    proven_checks: int = 0
    fast_requires: tuple = ()
    _fast_template: str = ""
    # Extensions (issue 6), all with defaults:
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
    _vec_template: str = ""           # for guards that are multiples of 4 (``vec="whole"``)
    _vec_tail_template: str = ""      # for any guard: the last step may be partial (``"tail"``)
    # Kernels with loops: the variants for CPU drivers, which note loops the driver ended early
    # in status word 3 (``LoopRecord``); empty for kernels without loops.
    loops: tuple[LoopRecord, ...] = ()
    _cpu_template: str = ""
    _cpu_fast_template: str = ""
    # What plain float and int mean in this compilation: ('float' | 'float64', 'int' | 'int64')
    widths: tuple = ("float", "int")
    # The N-D launch variant (threads=(nx, ny[, nz])): its templates, rendered on first use
    # (a callable (fast, cpu) -> template), the uniform offsets of the N-D lists' shapes
    # ((list name, dimension, byte offset), ...) and of the per-axis group counts.
    _nd_render: object = None
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

    def wgsl(self, workgroup_size: int = 64, fast: bool = False, coarsen: int = 1,
             vec: str = "", cpu: bool = False, nd: tuple | None = None,
             grid: bool | None = None) -> str:
        """The WGSL source for a given workgroup size (64 unless the runtime picks another).

        ``fast``: the variant without the bounds checks that ``fast_requires`` makes
        unnecessary (only valid for launches that satisfy it). ``coarsen``: indexes each
        invocation runs (kernels without ``fixed_workgroup_size`` only). ``vec``: the four-lane
        variant (only where ``vec_guard`` is set): ``"whole"`` when the guard is a multiple of
        4, ``"tail"`` for any guard. ``cpu``: for a kernel with loops, the variant that reports
        loops a CPU driver ended early (the four-lane variant has no loops). ``nd``: the N-D
        launch variant, as rows along x in 1-D workgroups (``grid``: kernels that do not observe
        workgroups only, and their default) or as tiles of ``nd`` = (x, y, z) invocations.
        ``refused``: raised instead.
        """
        if self.refused is not None:
            raise self.refused.with_traceback(None)
        if nd is not None:
            fast = bool(fast and self.fast_requires)
            if grid is None:
                grid = not self.fixed_workgroup_size
            if grid:                               # rows along x, ``coarsen`` rows each
                template = self._nd_render(fast, bool(cpu and self.loops), grid=True)
                return nd_grid_steps(template, coarsen, bool(cpu and self.loops)).replace(
                    "{WORKGROUP_SIZE}", str(int(workgroup_size)))
            template = self._nd_render(fast, bool(cpu and self.loops))
            wx, wy, wz = nd
            return (template.replace("{WX}", str(int(wx))).replace("{WY}", str(int(wy)))
                    .replace("{WZ}", str(int(wz))))
        if self.fixed_workgroup_size and (workgroup_size != 64 or coarsen != 1):
            raise ValueError(f"kernel {self.name} needs workgroup size 64, one index each")
        if vec and not self._vec_template:
            raise ValueError(f"kernel {self.name} has no four-lane variant")
        if vec not in ("", "whole", "tail"):
            raise ValueError(f"vec={vec!r}: use '', 'whole' or 'tail'")
        cpu = bool(cpu and self._cpu_template and not vec)
        if cpu:
            template = self._cpu_fast_template if fast and self._cpu_fast_template else \
                self._cpu_template
        else:
            template = self._vec_template if vec == "whole" else \
                self._vec_tail_template if vec else \
                self._fast_template if fast and self._fast_template else self._template
        return expand_steps(template, int(coarsen), cpu).replace("{WORKGROUP_SIZE}",
                                                                 str(int(workgroup_size)))

    @functools.cached_property
    def count_param(self) -> int | None:
        """The position in ``params`` of the launch's count, an int or int64 scalar named
        ``n``: a 1-D launch (and ``simulate``) runs that many indexes. None when the kernel
        has none; then the longest list's length counts."""
        return next((k for k, p in enumerate(self.params)
                     if p.name == "n" and not p.is_list and p.elem in ("int", "int64")), None)

    @property
    def lists(self) -> tuple[ProgramParam, ...]:
        return tuple(p for p in self.params if p.is_list)

    @property
    def scalars(self) -> tuple[ProgramParam, ...]:
        return tuple(p for p in self.params if not p.is_list)
