"""Per-kernel device state: compiled pipelines, uniform buffer, cached bind groups, and each
launch's plan.

A ``KernelRuntime`` is made on a kernel's first launch on a device (and again after
``shutdown()``); everything a launch can reuse lives here so that the per-launch path only packs
scalars, looks up buffers and submits. ``plan()`` makes the one ``LaunchPlan`` (plan.py) of a
launch: buffers, readback, the ``Variant`` that ``variants.choose`` picks, its shape and the
uniform bytes; ``submit()`` hands it to the queue. Pipelines are compiled on first need, one per
``Variant`` (``pipeline_for``); ``variants()`` lists every variant a plan may pick on this
device (what ``compile()`` compiles). A kernel has one runtime per device, widths (plain
float/int as 32 or 64 bits) and launch form: 1-D, or N-D (``threads=(nx, ny[, nz])``: rows along
x for kernels that do not observe workgroups, several rows per invocation as the 1-D rule
coarsens; N-D tiles for the others).
"""

from __future__ import annotations

import struct
import weakref
from dataclasses import replace

from .. import config
from ..backend import device as _device
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import READ, READ_WRITE, UNIFORM, ShaderCompileError, make_bind_group_layout
from ..codegen.types import NARROW
from ..codegen.program import (LOOP_BIT_GENERATED, LOOP_WORD, STATUS_WORDS, KernelProgram,
                                Variant, loop_bit)
from ..codegen.types import elem as elem_type
from ..errors import GpuDeviceError, GpuIndexError, GpuInvalidArgument, GpuKernelError
from .device_program import Pipelines, StatusWords, internal_error
from . import nested, part_launch
from .parts import SplitLayouts, byte_slices, shift_of
from .plan import Binding, LaunchPlan
from .printing import PRINT_LIMIT, Printer
from .readback import Readback
from .ready import ReadyLaunches
from .variants import Choice, DeviceFacts, choose, launch_rules, variants, vec_nbytes

BIND_GROUP_CACHE = 64


def _uniform_struct(program: KernelProgram, nd: bool = False) -> struct.Struct:
    """struct.Struct packing (groups, *scalars, *shapes[, gx, gy, gz]) at the program's
    offsets: the N-D lists' shapes follow the scalars, the N-D variant's group counts come
    last (``nd``)."""
    fmt, pos = "<I", 4
    fields = [(p.offset, elem_type(p.elem)) for p in program.scalars]
    fields += [(offset, elem_type("uint32")) for _, _, offset in program.shapes]
    if nd:
        fields += [(program.nd_offset + 4 * k, elem_type("uint32")) for k in range(3)]
    for offset, row in fields:
        if offset > pos:
            fmt += f"{offset - pos}x"
            pos = offset
        fmt += row.code
        pos += row.size
    size = program.nd_uniform_size if nd else program.uniform_size
    if size > pos:
        fmt += f"{size - pos}x"
    return struct.Struct(fmt)


#: what each device feature is for, and the way out without it
FEATURE_FIXES = {
    "shader-f64": ("float64 values", "pass float32 arrays (x.astype(np.float32), which rounds "
                   "each value to float32; complex64 for complex128 ones) or float32 width "
                   "types"),
    "shader-int64": ("int64 values", "pass int32 arrays (x.astype(np.int32), which wraps values "
                     "outside -2**31..2**31-1: check the range first) or int32 width types"),
    "shader-float32-atomic": ("atomics on list[float]", "use list[int] with scaled values"),
    "shader-int64-atomic-all-ops": ("atomics on int64 lists", "pass int32 arrays (e.g. "
                                    "np.zeros(n, np.int32)) for the lists used atomically"),
}


NARROW_KEY = NARROW.key


def missing_feature_message(what: str, missing, device: str, program=None) -> str:
    """The GpuInvalidArgument text for device features ``what`` needs and ``device`` lacks
    (``program``: the kernel's, for the fix that names its parameters and its line)."""
    uses = ", ".join(f"{f} (for {FEATURE_FIXES.get(f, ('it',))[0]})" for f in missing)
    fixes = "; ".join(_atomic64_fix(program) if f == ATOMIC64 and program is not None
                      else FEATURE_FIXES[f][1] for f in missing if f in FEATURE_FIXES)
    sites = dict(getattr(program, "feature_sites", ()))
    lines = "".join(f"\n{sites[f]}" for f in missing if f in sites)
    return (f"{what} needs the device feature(s) {uses}, which {device!r} lacks: {fixes}, "
            "or run on another device (CTHREADS_ADAPTER; `python -m cthreads.gpu info` lists "
            f"the features){lines}")


#: the feature of atomics on int64 lists
ATOMIC64 = "shader-int64-atomic-all-ops"


def _atomic64_fix(program) -> str:
    """The way out for a kernel whose atomics work on int64 lists on a device without 64-bit
    atomics: the int32 arrays to pass, by parameter."""
    structs = [p for p in program.params if p.is_list and p.atomic and
               getattr(p, "struct", None) is not None and p.elem == "float64"]
    if structs:                         # int fields of float64 layouts (struct_atomics.py)
        names = " and ".join(repr(p.name) for p in structs)
        return (f"the kernel uses int fields of {names} atomically, whose float64 layout has "
                f"8-byte words: pass arrays of the float32 layout ({structs[0].struct}.dtype)")
    lists = [p for p in program.params if p.is_list and p.atomic and p.elem == "int64"]
    if not lists:                       # only shared arrays: they follow the plain int width
        return ("declare the shared arrays used atomically with int32 (e.g. "
                "'t: list[int32] = shared(64)')")
    names = " and ".join(repr(p.name) for p in lists)
    first = lists[0].name
    fix = (f"the kernel uses {names} atomically, so pass an int32 array for "
           f"{'each' if len(lists) > 1 else 'it'} (e.g. {first} = np.zeros(n, np.int32); "
           f"{first}.astype(np.int32) wraps values beyond int32's range)")
    pinned = [p.name for p in lists if p.plain is None]
    if pinned:
        fix += f" and annotate {', '.join(repr(n) for n in pinned)} list[int32]"
    others = [p.name for p in program.params
              if p.is_list and p.plain == "int" and p not in lists]
    plain = [p.name for p in lists if p.plain == "int"]
    if others and plain:
        fix += (f"; the plain list[int] parameters of one launch take one width, so annotate "
                f"'{plain[0]}: list[int32]' to keep {', '.join(repr(n) for n in others)} "
                "int64, or pass int32 arrays for all of them")
    return fix


class KernelRuntime:
    """What one kernel needs on one device."""

    def __init__(self, kernel, program: KernelProgram, nd: tuple | None = None):
        self.kernel = kernel
        self.program = program
        # the N-D launch variant's workgroup (x, y, z), or None for 1-D launches
        self.nd = nd
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        self._check_device_support()
        self.rules = launch_rules(program, DeviceFacts(self.ctx.is_cpu, self.queue.max_groups),
                                  config.current(), nd)
        self.workgroup_size = self.rules.workgroup_size
        self.loop_variant = self.rules.loop_report
        if nd is not None and not self.rules.nd_grid:
            self._check_workgroup(self.rules.nd)
        if program.refused is not None:       # a literal these widths cannot hold
            raise program.refused.with_traceback(None)
        # the status buffer: for bounds checks, and for the loop variant (a kernel with loops and
        # no checks has a status binding that only the loop variant uses)
        has_status = program.status_binding is not None and (bool(program.checks)
                                                             or self.loop_variant)
        bindings = [(0, UNIFORM)]
        bindings += [(p.binding, READ_WRITE if (p.written or p.atomic) else READ)
                     for p in program.lists]
        if has_status:
            bindings.append((program.status_binding, READ_WRITE))
        # print(): a record buffer per launch (runtime/printing.py)
        self.printer = None
        if program.print_binding is not None:
            bindings.append((program.print_binding, READ_WRITE))
            self.printer = Printer(program, getattr(kernel, "print_limit", PRINT_LIMIT))
        self.bindings = tuple(bindings)
        # Pipelines are compiled on first need, one per Variant (runtime/variants.py)
        self.layout = make_bind_group_layout(self.ctx, self.bindings)
        self.split_layouts = SplitLayouts(self.ctx, program, self.bindings)
        self._split_choices: dict = {}     # (choice, split) -> the split variant's Choice
        self.pipelines = Pipelines(self.ctx)
        self.uniform_struct = _uniform_struct(program, nd is not None)
        # complex scalars are two fields (real, imag) of the uniform
        self.complex_scalars = any(p.elem in ("complex", "complex128") for p in program.scalars)
        self.uniform_size = program.nd_uniform_size if nd is not None else program.uniform_size
        self.uniform = self.queue.pool.acquire(self.uniform_size, "uniform")
        # when the kernel (and so this runtime) is collected, the queue lets its uniform go
        weakref.finalize(self, self.queue.forget_uniform, self.uniform.buffer)
        self.bind_groups = BindGroupCache(self.queue.pool, BIND_GROUP_CACHE)
        # repeated resident launches: their plans' scalar-free parts (ready.py), or None
        self.ready = ReadyLaunches(self.queue.pool) if config.current().launch_path != "old" \
            else None
        self.status_nbytes = 4 * STATUS_WORDS
        # One status buffer per kernel and device, bound to every launch: it stays zero until a
        # bounds check fails (first failure wins), so launches never rewrite it.
        self.status = None
        self.status_entry = None
        if has_status:
            self.status_words = StatusWords(self.queue, self.status_nbytes)
            self.status = self.status_words.pooled
            self.status_entry = Binding(program.status_binding, self.status, self.status_nbytes)
        self.unchecked = False      # launched since its status was last read
        self.last_launch = 0        # submission number of the latest launch
        kernel.announce(self.ctx.name)

    def _check_workgroup(self, wg: tuple) -> None:
        """Refuse an N-D workgroup the device cannot run (a GpuInvalidArgument naming it)."""
        prog = self.program
        limits = [self.ctx.limit(f"max-compute-workgroup-size-{a}") for a in "xyz"]
        total = self.ctx.limit("max-compute-invocations-per-workgroup")
        if any(w > m for w, m in zip(wg, limits)) or wg[0] * wg[1] * wg[2] > total:
            raise GpuInvalidArgument(
                f"kernel {prog.name}: a workgroup of {wg[0]} x {wg[1]} x {wg[2]} invocations is "
                f"more than {self.ctx.name!r} allows ({limits[0]} x {limits[1]} x {limits[2]}, "
                f"{total} in all); write a smaller @Gpu(workgroup=(...))")

    def _check_device_support(self) -> None:
        prog = self.program
        missing = self.ctx.missing(getattr(prog, "needs_features", ()))
        if missing:
            raise GpuInvalidArgument(missing_feature_message(f"kernel {prog.name}", missing,
                                                             self.ctx.name, prog))
        wg_bytes = getattr(prog, "workgroup_bytes", 0)
        limit = self.ctx.limit("max-compute-workgroup-storage-size")
        if wg_bytes > limit:
            raise GpuInvalidArgument(
                f"kernel {prog.name} ({prog.filename}, line {prog.firstlineno}) declares "
                f"{wg_bytes:,} bytes of shared() memory, more than the {limit:,} bytes per "
                f"workgroup of {self.ctx.name!r}; use smaller shared arrays (16,384 bytes work "
                "on every WebGPU device)")

    def _internal_error(self, exc: ShaderCompileError, wgsl: str) -> GpuKernelError:
        prog = self.program
        pyline = prog.line_map.get(exc.wgsl_line) if exc.wgsl_line else None
        where = f"{prog.filename}, line {pyline}" if pyline else prog.filename
        return internal_error(f"the WGSL generated for kernel {prog.name} ({where})",
                              "kernel's source", exc, wgsl, prog.filename, pyline)

    def pipeline_for(self, variant: Variant):
        """The compiled pipeline of ``variant``, compiled on first use."""
        pipe = self.pipelines.compiled.get(variant)
        if pipe is None:
            prog = self.program
            bindings, layout = self.bindings, self.layout
            if variant.split:
                bindings, layout, _ = self.split_layouts.get(variant.split)
            pipe = self.pipelines.compile(
                variant, prog.render(variant), prog.entry_point, bindings, layout,
                prog.overrides, self._internal_error,
                lambda text: dump_wgsl(prog, variant, text))
        return pipe

    def variants(self) -> list[Variant]:
        """Every variant a launch on this device may pick (``variants.variants``)."""
        return variants(self.rules)

    def compiled_variants(self) -> frozenset:
        """The variants whose pipelines are compiled so far."""
        return self.pipelines.keys()

    def compile_all(self) -> None:
        """Compile every variant a launch on this device may pick (``variants``)."""
        for variant in self.variants():
            self.pipeline_for(variant)

    def plan(self, scalars: list, lists: list, n: int) -> LaunchPlan:
        """The plan of one launch over ``n`` indexes (launch lock held): ``scalars`` are the
        checked scalar values, ``lists`` the ``ListArg``s in parameter order. Resident lists
        bind their slot's buffer, the others are uploaded (the plan owns those buffers until its
        job is joined, or gives them back if this raises); the lists the kernel may write are
        read back with the status words."""
        queue = self.queue
        plan = LaunchPlan()
        readback = None            # made for the first list to download
        entries = []
        split = None               # [(param, parts, bytes of each)] of the split lists
        try:
            for a in lists:
                p = a.param
                if a.slot is not None:
                    if a.slot.queue is not queue and a.slot.pooled is not None:
                        raise a.slot.other_device(self.ctx, f"{self.program.name}() parameter "
                                                  f"{p.name!r}")
                    pooled = a.slot.take(self, p)
                    held = getattr(a.slot, "parts", ())   # arena slots: one buffer
                    if len(held) > 1:     # a split GpuArray (or a view of all of one)
                        split = split or []
                        split.append((p, held, a.slot.part_nbytes(), a.slot.part_elems))
                        pooled, nbytes, offset = held[0], split[-1][2][0], 0
                    else:
                        nbytes, offset = a.nbytes, a.slot.offset
                    entries.append(Binding(p.binding, pooled, nbytes, offset))
                    if p.written or p.atomic:
                        plan.resident_written.append(a.slot)
                    continue
                if a.part_elems:                            # uploaded in parts
                    split = split or []
                    split.append(self._upload_parts(a, plan))
                    source = tuple((b.buffer, n) for b, n in zip(split[-1][1], split[-1][2]))
                    entries.append(Binding(p.binding, split[-1][1][0], split[-1][2][0]))
                else:
                    buf = queue.upload_new(a.data)
                    plan.owned.append(buf)
                    entries.append(Binding(p.binding, buf, a.nbytes))
                    source = buf.buffer
                if p.written or p.atomic:
                    if readback is None:
                        readback = plan.readback = Readback()
                    readback.add_list(source, a.value, a.nbytes, p.elem,
                                      f"{self.program.name}() parameter {p.name!r}")
            if self.printer is not None:
                readback = plan.readback = self._print_buffer(plan, entries, readback)
            if self.status is not None:
                entries.append(self.status_entry)
                if readback is not None:   # the status rides along with this job's results
                    readback.add_status(self)
            if readback is not None:
                plan.copies = readback.copies(queue.pool)
            self._settle(plan, scalars, lists, n, entries, split)
        except BaseException:
            plan.release(queue.pool)
            raise
        return plan

    def _print_buffer(self, plan: LaunchPlan, entries: list, readback) -> Readback:
        """Bind this launch's print records (the plan owns the buffer); the readback that
        brings them back, made if the launch had none."""
        printer = self.printer
        pooled = printer.buffer(self.queue)
        plan.owned.append(pooled)
        entries.append(Binding(printer.binding, pooled, printer.nbytes))
        readback = readback if readback is not None else Readback()
        readback.add_prints(pooled.buffer, printer.nbytes, printer)
        return readback

    def _settle(self, plan: LaunchPlan, scalars: list, lists: list, n, entries: list,
                split: tuple | None) -> None:
        """The variant, shape, entries and uniform of ``plan`` (``split``: (parameter,
        buffers, bytes of each, elements per part) of its lists bound in parts, or None):
        part by part for element-wise kernels (``part_launch.py``), else with the split
        addressing variant."""
        if split is not None:
            elems = part_launch.eligible(self, lists, split)
            parts = elems and part_launch.plans(self, plan, scalars, lists, n, split, elems)
            if parts:
                plan.more = tuple(parts[1:])
                return
            split = self._part_entries(split, entries)
        lengths = dims = None
        if self.rules.per_list:
            lengths = [len(a.value) for a in lists]
            dims = [a.dims for a in lists] if self.rules.needs_dims else None
        self.settle_part(plan, scalars, lengths, n, entries, dims, split)

    def settle_part(self, plan: LaunchPlan, scalars: list, lengths: list | None, n,
                    entries: list, dims: list | None = None, split: tuple | None = None) -> None:
        """``_settle`` for the lists' ``lengths`` (and N-D ``dims``), ``split`` its
        ``Variant.split`` or None."""
        rules = self.rules
        choice = choose(rules, scalars, lengths, dims, n, vec=split is None)
        if split is not None:
            choice = self._split_choice(choice, split)
        elif choice.variant.form[0] == "v":     # vec_whole / vec_tail
            vec_entries = self._vec_entries(lengths, entries)
            if vec_entries is None:            # a buffer too small for the rounding
                choice = choose(rules, scalars, lengths, dims, n, vec=False)
            else:
                entries = vec_entries
        plan.key = choice.variant
        plan.choice = choice
        plan.groups = choice.groups
        plan.entries = tuple(entries)
        if self.complex_scalars:
            scalars = [p for v in scalars for p in ((v.real, v.imag) if isinstance(v, complex)
                                                    else (v,))]
        plan.uniform = self.uniform_struct.pack(choice.hidden, *scalars, *choice.counts)

    def _upload_parts(self, a, plan) -> tuple:
        """Upload list argument ``a`` in its parts (the plan owns them): (parameter, buffers,
        bytes of each, elements per part)."""
        size = a.nbytes // nested.count(a.dims)
        pieces = byte_slices(a.data, a.nbytes // size, a.part_elems, size)
        bufs = []
        for piece in pieces:
            bufs.append(self.queue.upload_new(piece))
            plan.owned.append(bufs[-1])
        return a.param, bufs, [len(piece) for piece in pieces], a.part_elems

    def _part_entries(self, split: list, entries: list) -> tuple:
        """Add the entries of parts 1.. of the split lists (``split``: (parameter, buffers,
        bytes of each, elements per part) of each) to ``entries``; the ``Variant.split``."""
        key = tuple((p.name, len(held), shift_of(elems)) for p, held, _, elems in split)
        part_of = self.split_layouts.get(key)[2]
        for p, held, sizes, _ in split:
            entries += [Binding(b, pooled, n) for b, pooled, n in
                        zip(part_of[p.name][2], held[1:], sizes[1:])]
        return key

    def _split_choice(self, choice, split: tuple):
        """``choice`` with the lists of ``split`` (``Variant.split``) bound in parts: the same
        shape, its variant with the split addressing; kept per (choice, split)."""
        key = (choice, split)
        hit = self._split_choices.get(key)
        if hit is None:
            if len(self._split_choices) >= 64:
                self._split_choices.clear()
            variant = self.program.variant(replace(choice.variant, split=split))
            hit = self._split_choices[key] = Choice(variant, choice.hidden, choice.groups,
                                                    choice.counts)
        return hit

    def checked(self, seq: int) -> None:
        """The status was read after submission ``seq``: launches up to it are checked."""
        if self.last_launch <= seq:
            self.unchecked = False

    def reset_status(self) -> None:
        """Zero the status words after reporting a failure, so later launches start clean."""
        self.status_words.reset()

    def status_error(self, words) -> GpuIndexError | GpuDeviceError:
        """The error that status words report: a loop the driver ended early (it may also have
        caused an index error, so it comes first), else an out-of-range index."""
        if int(words[LOOP_WORD]):
            return self.loop_error(int(words[LOOP_WORD]))
        return self.index_error(words)

    def _where(self, rec) -> str:
        """The traceback-style lines of a bounds check or loop record (in the kernel, or in a
        device function it calls)."""
        prog = self.program
        filename = rec.filename or prog.filename
        name = rec.function or prog.name
        return f'  File "{filename}", line {rec.lineno}, in {name}\n    {rec.source}\n'

    def loop_error(self, bits: int) -> GpuDeviceError:
        """The GpuDeviceError for status word 3 (loops the CPU driver ended early)."""
        prog = self.program
        cut = [rec for rec in prog.loops if bits & loop_bit(rec.id)]
        where = "".join(self._where(rec) for rec in cut)
        if bits & LOOP_BIT_GENERATED and not cut:
            where = "".join(self._where(rec) for rec in prog.loops) + (
                "    (these loops used the budget up by the end of a thread; a loop after them, "
                "in a device function, an integer ** or the loop over several indexes per "
                "thread, may have ended early)\n")
        return GpuDeviceError(
            f"kernel {prog.name}: the device {self.ctx.name!r} ended a loop before it "
            f"finished, or came too close to its limit to tell\n{where}"
            "This CPU driver (Mesa's llvmpipe) stops the loops of a thread once they have made "
            "65,535 passes together: each loop costs its iterations + 1, nested loops and the "
            "loops before the one named add up, and 8 neighbouring threads share the count "
            "(docs/language.md, \"Long loops on "
            "CPU drivers\"). No list was written back: they hold what they held before. Do "
            "fewer loop iterations per thread (spread the work over more threads, each doing "
            "a part), or run on a GPU (CTHREADS_ADAPTER). A launch joined with download=False "
            "reports this at the next join() with download or GpuArena.sync().")

    def index_error(self, words) -> GpuIndexError:
        """The GpuIndexError for status words (check id + 1, index, length)."""
        prog = self.program
        raw_index = int(words[1])
        index = raw_index - (1 << 32) if raw_index >= 1 << 31 else raw_index   # an i32's bits
        check_id, length = int(words[0]) - 1, int(words[2])
        check = next((c for c in prog.checks if c.id == check_id), None)
        if check is None:
            return GpuIndexError(f"kernel {prog.name}: index {index} was out of range")
        if getattr(check, "vec", 0):     # list[vec3]: the element of the flat index checked
            index, length = index // check.vec, length // check.vec
        if getattr(check, "component", 0):
            what = (f"component index {index} is out of range for {check.list_name!r}, a "
                    f"vector of {length} components (0 .. {length - 1}, or -{length} .. -1)")
        elif getattr(check, "ndim", 1) > 1:
            what = (f"index {index} is out of range for dimension {check.dim} (axis "
                    f"{check.dim} of {check.ndim}) of list {check.list_name!r}, of size {length} "
                    "along that dimension")
        else:
            what = (f"index {index} is out of range for list {check.list_name!r} of length "
                    f"{length}")
        return GpuIndexError(
            f"kernel {prog.name}: {what}\n{self._where(check)}"
            "No list was written back: they hold what they held before. Guard the access (for "
            "example `if i < len(lst):`) or fix the index computation. A launch joined with "
            "download=False reports this at the next join() with download or GpuArena.sync().")

    def bind_group(self, entries: tuple, split: tuple = ()) -> object:
        """The bind group for ``entries`` (``Binding``s after the uniform; ``split``: the
        launch's ``Variant.split``), cached."""
        # bindings: fixed order; a view's offset tells two views of one buffer apart
        key = tuple([(id(e.pooled), e.nbytes, e.offset) for e in entries])
        bg = self.bind_groups.get(key)
        if bg is not None:
            return bg
        layout = self.split_layouts.get(split)[1] if split else self.layout
        bg = self.queue.bind_group(
            layout,
            [(0, self.uniform.buffer, self.uniform_size)]
            + [(e.binding, e.pooled.buffer, e.nbytes, e.offset) for e in entries])
        self.bind_groups.put(key, bg, [e.pooled for e in entries])
        return bg

    def submit(self, plan: LaunchPlan, timing=None) -> int:
        """Hand ``plan`` to the queue as one dispatch plus its readback copies (launch lock
        held); its submission number. If this raises, the plan's buffers go back. ``timing``
        (``DeviceQueue.job_timing``): timestamps before the first dispatch, after the last."""
        queue = self.queue
        stamp = None
        try:
            steps = (plan,) + plan.more     # one dispatch per part (part_launch.py), or one
            for step in steps:
                choice = step.choice
                pipe = choice.pipeline if choice is not None else None
                if pipe is None:
                    pipe = self.pipeline_for(step.key)
                    if choice is not None:
                        choice.pipeline = pipe
                last = step is steps[-1]
                if timing is not None:
                    stamp = (timing.staging.buffer, step is plan, last)
                split = step.key.split
                bg = step.bind_group
                if bg is None:
                    bg = self.bind_group(step.entries, split) if split else \
                        self.bind_group(step.entries)
                seq = queue.dispatch(pipe.pipeline, bg, step.groups,
                                     (self.uniform.buffer, step.uniform),
                                     plan.copies if last else (),
                                     [e.pooled for e in step.entries], more=not last,
                                     stamp=stamp)
        except BaseException:
            plan.release(queue.pool)
            raise
        self.unchecked = True
        self.last_launch = seq
        return seq

    def _vec_entries(self, lengths, entries):
        """The entries of a launch of the four-lane variant: the lists it reads bind rounded up
        to whole 16-byte elements; None when a buffer is too small for the rounding (the
        launch runs the scalar kernel; KernelProgram.vec_guard)."""
        out = entries              # entries[k] binds lists[k]; the status comes last
        for k, elem_size in zip(self.rules.vec_check[1], self.rules.vec_sizes):
            e = entries[k]
            size = vec_nbytes(lengths[k], elem_size)
            if size == e.nbytes:
                continue
            if e.offset + size > e.pooled.capacity:
                return None
            if out is entries:
                out = list(entries)
            out[k] = Binding(e.binding, e.pooled, size, e.offset)
        return out


def dump_wgsl(program: KernelProgram, variant: Variant, wgsl: str) -> None:
    """With ``CTHREADS_DUMP_WGSL=<dir>``: write ``wgsl`` (the text a device compiles for
    ``variant``) to ``<dir>/<module>.<kernel>.<widths>.<variant>.wgsl``."""
    folder = config.current().dump_wgsl
    if not folder:
        return
    import os  # noqa: PLC0415 - only when dumping

    os.makedirs(folder, exist_ok=True)
    kernel = program.qualname.replace(":", ".").replace("<", "").replace(">", "")
    name = f"{kernel}.{'-'.join(program.widths)}.{variant.name}.wgsl"
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(wgsl)


def runtime_key(widths: tuple | None = None, nd: tuple | None = None) -> tuple:
    """(key, device) of a kernel's runtime on the caller's device (``use_device``) for
    ``widths`` (what plain float and int mean: ``KernelProgram.widths``; None for 32-bit) and
    the N-D workgroup ``nd`` (``GpuKernel.runtime_for`` keeps its runtimes by it). Runtimes
    on the default device are keyed by widths alone, on the others by (widths, device
    index)."""
    key = widths or NARROW_KEY
    if nd is not None:                 # the N-D launch variant with workgroup ``nd``
        key = (key, nd)
    ctx = _device.get_context()
    if ctx is not _device.default_context():
        key = (key, ctx.index)
    return key, ctx

