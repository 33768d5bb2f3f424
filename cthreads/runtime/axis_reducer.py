"""The device side of ``func.reduce(x, axis=...)``: reductions along axes.

``run_axis_reduction`` normalizes ``axis`` as numpy does (``AxisError`` out of range,
``ValueError`` for a repeated axis), drops the axes of length 1 and merges neighbouring axes
that are both reduced or both kept. A single run of reduced axes is one step over the input
seen as ``(outer, red, inner)`` (no transpose); runs apart (``axis=(0, 2)`` of a 3-D array)
are reduced one run at a time, the last first, through a device buffer between steps. Each
step runs the kernels of ``codegen/axis_reduction.py`` (``rows`` when the reduced elements are
contiguous, ``cols`` otherwise), in chunks of the reduced axis that keep a CPU driver's loop
passes far below its limit; pipelines are kept per device, operation, element type and kind.
On GPUs a ``cols`` step runs in two passes (``_split``): chunks of the axis into a scratch
buffer, then the chunks folded per output in axis order (``CTHREADS_AXIS_REDUCE=old``: one);
CPU drivers too in this round's form. This round's kernels (``_rows_kind`` and ``_kind``):
contiguous rows by a subgroup each on GPUs (few long rows cut in two passes,
``_split_rows``), by an invocation each on CPU drivers (``line4``); strided axes by
``cols4u`` on GPUs, ``cols16`` on CPU drivers. ``CTHREADS_AXIS_REDUCE=r2`` keeps the second
round's kernels.

Inputs: a GpuArray (its buffer, from a view's offset), a list or numpy array bound in an arena
(its device copy, as ``reducer.py`` reads it), else a numpy array or a (nested) list, uploaded.
The result is a new DeviceSlot for a GpuArray input (``reduce.py`` wraps it in a GpuArray; left
on the device: no wait), else a numpy array (lists too, as ``np.add.reduce`` gives). Inputs past one storage binding (split GpuArrays)
raise ``GpuInvalidArgument``: they reduce whole (``axis=None``) but not along axes yet.
"""

from __future__ import annotations

import hashlib
import weakref

from . import args, convert, device_array, residency
from .. import config
from . import reducer as _red
from ..backend import device as _device
from .per_device import PerDevice
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import READ, READ_WRITE, UNIFORM, make_bind_group_layout
from ..codegen import axis_reduction as codegen
from ..codegen.reduction import has_loops
from ..codegen.types import ELEM_TYPES
from ..codegen.types import elem as elem_type
from ..errors import GpuArgumentTypeError, GpuInvalidArgument
from .device_program import Pipelines, StatusWords, internal_error
from .readback import Readback

#: threads per workgroup on GPUs and CPU drivers (powers of two)
SIZE_GPU, SIZE_CPU = 256, 64
#: most passes of an invocation's loop per dispatch on a CPU driver (its loop limit is 65,535
#: passes per invocation, docs/language.md), and with an operation that has loops of its own
PASSES_CPU, PASSES_CPU_LOOPS = 4096, 8
#: uniform buffers kept (dispatches beyond take them in turn)
UNIFORMS = 16
#: the rows kernels' combine: None the device's best, "shared" / "subgroup" forced (tests)
VARIANT = None
FORCE_COLS = False          # tests: the cols kernel for contiguous rows
#: tests: the kernel of contiguous rows (``rows``/``rows4``/``line4``/``rowsg``/``rowsg4``,
#: the 4-forms where the layout allows them), None the device's rule (``_kind``)
ROWS_KIND = None
#: tests: the kernel of strided axes (``cols``/``cols4``/``cols4u``/``cols16``, the wider
#: ones where the layout allows them, else ``cols``), None the device's rule (``_kind``)
COLS_KIND = None
#: the cols4 kernel for strided axes: None on GPUs only (on lavapipe it measured slower than
#: cols: 12-17 against 9-11 ms for axis=0 of 2048 x 2048); True / False force it (tests)
QUADS = None

#: the form of strided (``cols``) steps: ``CTHREADS_AXIS_REDUCE=old`` (config, read once per
#: device) one invocation per output walking the whole axis; else on GPUs the two-pass form:
#: the axis cut into chunks (outputs x chunks >= ``SPREAD`` invocations, chunks >=
#: ``CHUNK_MIN`` rows), the chunks' partial results into a scratch buffer, a second pass
#: folding them in axis order
SPREAD, CHUNK_MIN = 1 << 18, 64
#: the chunks' combine (few invocations, each a chain of dependent loads) is cut once more
#: into chunks of at least ``COMBINE_MIN`` where it has ``2 * COMBINE_MIN`` chunks or more
COMBINE_MIN = 16
#: tests: a chunk length (rows) forcing the two-pass form on any device (None: the rule above)
CHUNK = None
#: CPU drivers (this round's form): strided axes of ``2 * CHUNK_CPU`` rows or more in two passes,
#: chunks of ``CHUNK_CPU`` rows (lavapipe, axis=0 of 2048 x 2048: 8.0 against 16.4 ms one-pass)
CHUNK_CPU = 128
#: GPUs (this round's form): few long contiguous rows (``rowsg``) in two passes, each row cut
#: into chunks of at least ``ROW_CHUNK_MIN`` elements until there are ``ROW_SPREAD`` subgroups
#: (the H200 holds ~8,400 subgroups of 32 at once); ``ROW_CHUNK`` (tests) forces a chunk length
ROW_SPREAD, ROW_CHUNK_MIN = 8192, 2048
ROW_CHUNK = None

_BINDINGS = ((0, UNIFORM), (1, READ), (2, READ_WRITE))
_PROBE = ((4, READ_WRITE),)
_QUADS = ((3, READ),)       # the cols4 kernel's vec4 view of the input



class _AxisReducer:
    """What axis reductions keep on one device."""

    def __init__(self):
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        self.size = SIZE_CPU if self.ctx.is_cpu else SIZE_GPU
        #: CTHREADS_AXIS_REDUCE: "" the third round's kernels, "r2" the second round's (no
        #: line4, no rowsg), "old" the first round's (no two-pass form either). Unset, CPU
        #: drivers run the third round's and GPUs the second round's: on the H200 (8192^2
        #: float32, bench/results/h200-2026-12-02-r3-axis_reduce.txt) r2 took 0.242 ms along
        #: axis=1 against 0.439 for rowsg4 and 0.594 against 0.683 along axis=0; "r3" runs the
        #: third round's kernels on GPUs too.
        form = config.current().axis_reduce
        if form == "r3":
            form = ""
        elif form == "" and not self.ctx.is_cpu:
            form = "r2"
        self.form = form
        self.old = self.form == "old"     # the one-pass form of cols steps
        self.layouts = {}           # (probe, quads) -> (bindings, layout)
        self.pipelines = Pipelines(self.ctx, 64)
        self.uniforms: list = []
        self.bind_groups = BindGroupCache(self.queue.pool, 32)
        self.status = None

    def layout(self, probe: bool, quads: bool):
        key = (probe, quads)
        if key not in self.layouts:
            bindings = _BINDINGS + (_QUADS if quads else ()) + (_PROBE if probe else ())
            self.layouts[key] = (bindings, make_bind_group_layout(self.ctx, bindings))
        return self.layouts[key]

    def pipeline(self, op, kind: str, probe: bool, name: str):
        # WGSL's subgroup shuffles take 32-bit values: 64-bit types combine in workgroup memory
        variant = VARIANT or ("subgroup" if self.subgroups(op.ty) else "shared")
        if kind.startswith("rowsg"):
            variant = "subgroup"
        key = (op.fn, hashlib.sha256(op.text.encode()).hexdigest(), op.ty, kind, probe,
               variant)
        pipe = self.pipelines.get(key)
        if pipe is not None:
            return pipe
        wgsl = codegen.axis_reduction_wgsl(op.fn, op.ty, op.text, kind, self.size, probe,
                                           variant=variant)
        bindings, layout = self.layout(probe, codegen.reads_quads(kind))
        return self.pipelines.compile(
            key, wgsl, codegen.ENTRY_POINT, bindings, layout, op.overrides,
            lambda exc, text: internal_error(f"the axis reduction shader of {name}",
                                             "function's source", exc, text))

    def subgroups(self, ty: str) -> bool:
        """Whether shuffles combine ``ty`` values here (the feature; 32-bit values only)."""
        return "subgroup" in self.ctx.features and elem_type(ty).size == 4

    def uniform(self, k: int):
        while len(self.uniforms) <= k:
            buf = self.queue.pool.acquire(codegen.UNIFORM_SIZE, "uniform")
            weakref.finalize(buf, self.queue.forget_uniform, buf.buffer)
            self.uniforms.append(buf)
        return self.uniforms[k]

    def status_word(self):
        if self.status is None:
            self.status = StatusWords(self.queue, 4)
        return self.status

    def bind_group(self, uniform, src, src_bytes, src_offset, dst, dst_bytes, probe, quads):
        key = (id(uniform), id(src), src_bytes, src_offset, id(dst), dst_bytes, probe, quads)
        bg = self.bind_groups.get(key)
        if bg is None:
            entries = [(0, uniform.buffer, codegen.UNIFORM_SIZE),
                       (1, src.buffer, src_bytes, src_offset), (2, dst.buffer, dst_bytes)]
            if quads:
                entries.append((3, src.buffer, src_bytes - src_bytes % 16, src_offset))
            if probe:
                entries.append((4, self.status.buffer, 4))
            bg = self.queue.bind_group(self.layout(probe, quads)[1], entries)
            self.bind_groups.put(key, bg, (uniform, src, dst))
        return bg


_STATE = PerDevice(_AxisReducer)
_now = _STATE.now          # the axis reductions' state on the caller's device


# -- shapes ----------------------------------------------------------------------------------

def normalize_axes(axis, ndim: int, where: str) -> tuple:
    """``axis`` (an int or a tuple of ints) as sorted non-negative axes, numpy's errors."""
    np = convert._np()
    try:
        from numpy.lib.array_utils import normalize_axis_tuple  # noqa: PLC0415
    except ImportError:                       # numpy < 2
        from numpy.core.numeric import normalize_axis_tuple  # noqa: PLC0415
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(axis, (bool, np.bool_)) or (
            isinstance(axis, tuple) and any(isinstance(a, (bool, np.bool_)) for a in axis)):
        raise TypeError(f"{where}: axis must be an int or a tuple of ints, not a bool")
    return tuple(sorted(normalize_axis_tuple(axis, ndim, "axis")))


def result_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if k in axes else d for k, d in enumerate(shape))
    return tuple(d for k, d in enumerate(shape) if k not in axes)


def plan_steps(shape: tuple, axes: tuple) -> list:
    """The ``(outer, red, inner)`` steps reducing ``axes`` of a C-ordered ``shape`` (no zero
    lengths): axes of length 1 dropped, neighbours of one kind merged, the runs of reduced axes
    reduced last first. No run left (only length-1 or no axes): one step of ``red == 1``."""
    groups = []                    # [size, reduced]
    for k, d in enumerate(shape):
        if d == 1:
            continue
        red = k in axes
        if groups and groups[-1][1] == red:
            groups[-1][0] *= d
        else:
            groups.append([d, red])
    steps = []
    while any(r for _, r in groups):
        k = max(i for i, (_, r) in enumerate(groups) if r)
        outer = inner = 1
        for d, _ in groups[:k]:
            outer *= d
        for d, _ in groups[k + 1:]:
            inner *= d
        steps.append((outer, groups[k][0], inner))
        del groups[k]
    if not steps:
        total = 1
        for d, _ in groups:
            total *= d
        steps.append((total, 1, 1))
    return steps


# -- the reduction ---------------------------------------------------------------------------

def run_axis_reduction(op, values, axis, init=None, name: str | None = None,
                       keepdims: bool = False):
    """``func.reduce(values, init, axis=axis, keepdims=keepdims)`` (see the module
    docstring); ``op`` the operation's ``OpSource``."""
    np = convert._np()
    name = name or op.fn
    ty = op.ty
    where = f"{name}.reduce() argument 'values'"
    if ty not in ELEM_TYPES:
        raise GpuInvalidArgument(f"{name}.reduce(): {ty} values cannot be reduced on this "
                                 "version's devices")
    if init is not None:
        init = convert.check_scalar(init, ty, f"{name}.reduce() argument 'init'")
    gpu_out = isinstance(values, args.DeviceArrayBase)
    slot = _red._slot_of(values, ty, where)
    data = None
    if slot is not None:
        if slot.target is not None:
            _red._check_slot(slot, values, ty, where)
        shape = tuple(values.shape) if gpu_out or convert.is_ndarray(values) else \
            tuple(args.dims(values))
    elif convert.is_ndarray(values):
        data = _red._check_array(values, ty, where)
        shape = tuple(values.shape)
    elif isinstance(values, list):
        shape = tuple(args.dims(values))
    else:
        raise GpuArgumentTypeError(
            f"{where} expects a list, a numpy array, a GpuArray or a list bound in a GpuArena, "
            f"got {convert._type_name(values)}; pass a list (e.g. list(values))")
    axes = normalize_axes(axis, len(shape), f"{name}.reduce()")
    out_shape = result_shape(shape, axes, keepdims)
    dtype = np.dtype(elem_type(ty).array_dtype)
    if _count(shape) == 0:
        return _empty_result(out_shape, dtype, init, name)
    red = _now()
    packed = _checked_source(red, op, values, slot, data, shape, ty, name, where)
    probe = red.ctx.is_cpu and has_loops(op.text)
    # all axes reduced: numpy gives a 0-d result (a numpy scalar); a GpuArray has shape (1,)
    out = _submit(red, op, name, probe, ty, slot, packed, plan_steps(shape, axes),
                  out_shape or (1,), init, where)
    if gpu_out:
        return out
    host = np.empty(out_shape or (1,), dtype)
    try:
        device_array.download(out, host)
    finally:
        out.release()
    return host.reshape(())[()] if not out_shape else host


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _checked_source(red, op, values, slot, data, shape, ty, name, where):
    """The device bytes to upload (None for a resident input) after the device checks."""
    missing = [f for f in op.features if f not in red.ctx.features]
    if missing:
        raise GpuInvalidArgument(f"{name}.reduce(): the operation needs the device feature(s) "
                                 f"{', '.join(missing)}, which {red.ctx.name!r} lacks")
    count, size = _count(shape), elem_type(ty).size
    limit = red.queue.pool.binding_bytes()
    if count * size > limit or (slot is not None and len(_red.slot_parts(slot)) > 1):
        raise GpuInvalidArgument(
            f"{where}: an array of {count:,} elements ({count * size:,} bytes) is past the "
            f"device's storage-binding limit ({limit:,} bytes); reductions along axes of such "
            "arrays are not supported yet: reduce it in row blocks (x[a:b]) or whole (axis=None)")
    if slot is not None:
        return None
    return args.pack(values if data is None else data, ty, where, writable=False,
                     ndim=1 if data is not None else len(shape))


def _empty_result(out_shape, dtype, init, name):
    """An input with no elements: an empty result, or ``init`` everywhere (numpy's rule for an
    operation without an identity: an empty reduced axis needs ``initial``); a numpy array
    (``reduce.py`` moves it to the device for a GpuArray input)."""
    np = convert._np()
    if _count(out_shape) and init is None:
        raise ValueError(f"{name}.reduce() along an axis of length 0 with no init value; pass "
                         "init= for the result of an empty reduction")
    host = np.full(out_shape, init if _count(out_shape) else 0, dtype=dtype)
    return host if out_shape else host[()]


def _chunks(red, kind: str, n: int, probe: bool) -> list:
    """``[(r0, r1), ...]`` covering ``range(n)`` of the reduced axis, one per dispatch."""
    if not red.ctx.is_cpu:
        return [(0, n)]
    passes = PASSES_CPU_LOOPS if probe else PASSES_CPU
    step = passes * {"rows": red.size, "rows4": 4 * red.size, "rowsg4": 4, "line4": 4
                     }.get(kind, 1)
    return [(r0, min(r0 + step, n)) for r0 in range(0, n, step)]


def _kind(red, outer: int, n: int, inner: int, ty: str, src_offset: int) -> str:
    """The kernel of one step: contiguous rows by a workgroup each on a GPU when they are long
    enough, on a CPU driver only when there are too few rows to give each core many
    invocations (there an invocation streaming its own row is the fastest); strided axes by
    ``cols4`` where the layout allows (and ``QUADS`` says), else ``cols``; rows as ``rows4``
    where the layout allows."""
    aligned = src_offset % 16 == 0 and elem_type(ty).kind != "c"
    quads = (not red.ctx.is_cpu if QUADS is None else QUADS) and aligned
    if inner == 1:
        if red.form == "" and (ROWS_KIND is not None or not FORCE_COLS):
            return _rows_kind(red, outer, n, ty, aligned)
        many = outer >= 4 * red.size if red.ctx.is_cpu else False
        if n < 32 or many or FORCE_COLS:
            return "cols"
        return "rows4" if quads and n % 4 == 0 else "rows"
    if red.form == "" and COLS_KIND is None:
        if red.ctx.is_cpu:           # 16 columns per invocation (lavapipe: 4 a lane loads)
            return "cols16" if aligned and inner % 16 == 0 else "cols"
        return "cols4u" if quads and inner % 4 == 0 else "cols"
    if COLS_KIND is not None:
        per = codegen.outputs_per_invocation(COLS_KIND)
        return COLS_KIND if per == 1 or (aligned and inner % per == 0) else "cols"
    if inner % 4 == 0 and quads:
        return "cols4"
    return "cols"


def _rows_kind(red, outer: int, n: int, ty: str, aligned: bool) -> str:
    """This round's kernel of contiguous rows (``inner == 1``). CPU drivers: an invocation per
    row (``line4``: 16-byte loads; on lavapipe 3-9x faster than ``cols``'s scalar loads and
    3-6x faster than a workgroup per row, even for 16 rows of 256K). GPUs: a subgroup per row
    (``rowsg``, no barrier; few long rows cut in two passes, ``_split_rows``) for 32-bit types
    where the device has subgroups, else a workgroup per row; rows shorter than 32 an
    invocation each. ``ROWS_KIND`` forces one (tests)."""
    four = aligned and n % 4 == 0
    kind = ROWS_KIND
    if kind is None:
        if red.ctx.is_cpu:
            kind = "line4"
        elif n < 32:
            kind = "line4"
        elif red.subgroups(ty):
            kind = "rowsg"
        else:
            kind = "rows"
    if kind == "rowsg" and not red.subgroups(ty):
        kind = "rows"
    if kind == "rowsg" and n < 4 * codegen.ROWSG_THREADS and ROWS_KIND is None:
        return kind        # scalar loads: a row of < 128 elements still feeds the 32 lanes
    if kind in ("rows", "rowsg"):
        return kind + "4" if four and (kind == "rowsg" or not red.ctx.is_cpu or QUADS) else kind
    if kind.rstrip("4") == "line":
        return "line4" if four else "cols"
    return kind


def _split(red, kind: str, threads: int, n: int, probe: bool, depth: int = 0):
    """``(chunks, length)`` of the two-pass form of a ``cols``/``cols4`` step (``threads``
    invocations of the one-pass form, ``n`` rows), or None for the one-pass form; ``depth``
    1 for the combine of a two-pass step (cut once more), 2 for the combine of that."""
    if kind.startswith("rowsg"):
        return _split_rows(red, kind, threads, n, depth)
    if not kind.startswith("cols") or n < 2 or depth > 1:
        return None
    if CHUNK is not None:
        length = CHUNK
    elif red.ctx.is_cpu and red.form == "" and depth == 0 and n >= 2 * CHUNK_CPU:
        length = CHUNK_CPU
    elif red.old or red.ctx.is_cpu:
        return None
    else:
        chunks = min(-(-SPREAD // threads), n // (COMBINE_MIN if depth else CHUNK_MIN))
        if chunks < 2:
            return None
        length = -(-n // chunks)
    if red.ctx.is_cpu:             # one dispatch: each invocation's loop below the limit
        length = min(length, PASSES_CPU_LOOPS if probe else PASSES_CPU)
    length = max(1, min(length, n))
    chunks = -(-n // length)       # none empty: the last holds n - (chunks - 1) * length rows
    return (chunks, length) if chunks > 1 else None


def _split_rows(red, kind: str, rows: int, n: int, depth: int):
    """``(chunks, length)`` of the two-pass form of a ``rowsg`` step of ``rows`` rows of
    ``n``, or None: GPUs cut rows too few to give ``ROW_SPREAD`` subgroups (this round's
    form; ``ROW_CHUNK`` on any device); lengths a multiple of 4 (the 16-byte loads)."""
    if depth:
        return None
    if ROW_CHUNK is not None:
        length = ROW_CHUNK
    elif red.ctx.is_cpu or red.form != "":
        return None
    else:
        chunks = min(-(-ROW_SPREAD // rows), n // ROW_CHUNK_MIN)
        if chunks < 2:
            return None
        length = -(-n // chunks)
    if red.ctx.is_cpu:
        length = min(length, PASSES_CPU)
    length = min(-(-max(length, 1) // 4) * 4, n)
    chunks = -(-n // length)
    return (chunks, length) if chunks > 1 else None


def _dispatches(red, op, name, probe, ty, steps, src, src_offset, out, init, owned) -> list:
    """Every dispatch of the steps: (pipeline, input, its bytes, its offset, output, its bytes,
    workgroups, uniform bytes); the buffers between steps go to ``owned``. A strided step in
    the two-pass form (``_split``) is first a pass into an ``(outer, chunks, inner)`` scratch
    buffer, then the step ``(outer, chunks, inner)`` over it."""
    size = elem_type(ty).size
    dispatches = []
    steps = list(steps)
    s, depth = 0, 0               # depth: 1 the combine of a two-pass step, 2 its combine
    while s < len(steps):
        outer, n, inner = steps[s]
        kind = _kind(red, outer, n, inner, ty, src_offset)
        threads = outer * inner // codegen.outputs_per_invocation(kind)
        split = _split(red, kind, threads, n, probe, depth)
        depth = depth + 1 if split is not None else 0
        if split is not None:
            chunks, length = split
            dst = red.queue.pool.acquire(outer * chunks * inner * size)
            owned.append(dst)
            dispatches.append((red.pipeline(op, kind, probe, name), src,
                               outer * n * inner * size, src_offset, dst,
                               outer * chunks * inner * size,
                               _groups(red, kind, threads * chunks), codegen.reads_quads(kind),
                               codegen.uniform_bytes(threads * chunks, outer, n, inner, 0, n,
                                                     False, ty, None, chunks, length)))
            steps[s] = (outer, chunks, inner)
            src, src_offset = dst, 0
            continue
        last_step = s == len(steps) - 1
        dst = out.pooled if last_step else red.queue.pool.acquire(outer * inner * size)
        if not last_step:
            owned.append(dst)
        pipe = red.pipeline(op, kind, probe, name)
        groups = outer if kind in ("rows", "rows4") else _groups(red, kind, threads)
        chunks = _chunks(red, kind, n, probe)
        for c, (r0, r1) in enumerate(chunks):
            final = last_step and c == len(chunks) - 1
            dispatches.append((pipe, src, outer * n * inner * size, src_offset, dst,
                               outer * inner * size, groups, codegen.reads_quads(kind),
                               codegen.uniform_bytes(threads, outer, n, inner, r0, r1, c > 0,
                                                     ty, init if final else None)))
        src, src_offset = dst, 0
        s += 1
    return dispatches


def _groups(red, kind: str, threads: int) -> int:
    """Workgroups of a dispatch of ``threads`` outputs (a subgroup each for ``rowsg``)."""
    per = codegen.rowsg_rows(red.size) if kind.startswith("rowsg") else red.size
    return -(-threads // per)


def _submit(red, op, name, probe, ty, slot, packed, steps, out_shape, init, where):
    """Queue every step's dispatches; the result's DeviceSlot (waited for only when the loop
    probe must be read)."""
    queue = red.queue
    pool = queue.pool
    owned = []
    seq, failed = None, False
    if probe:
        red.status_word()
    out = device_array.allocate(queue, ty, out_shape, None, where)
    try:
        with residency.launch_lock:
            if slot is not None:
                (src, _), = _red._sources(red, slot, None, ty, where)
                src_offset = slot.offset
                out.writers.update(slot.writers)     # their bounds checks travel on
            else:
                src = queue.upload_new(packed)
                owned.append(src)
                src_offset = 0
            readback = Readback()
            if probe:
                readback.add_list(red.status.buffer, None, 4, "int")
            dispatches = _dispatches(red, op, name, probe, ty, steps, src, src_offset,
                                     out, init, owned)
            for k, (pipe, src, sb, so, dst, db, groups, quads, ubytes) in \
                    enumerate(dispatches):
                last = k == len(dispatches) - 1
                uniform = red.uniform(k % UNIFORMS)   # reused: the queue stages new bytes
                bg = red.bind_group(uniform, src, sb, so, dst, db, probe, quads)
                seq = queue.dispatch(pipe.pipeline, bg, groups, (uniform.buffer, ubytes),
                                     readback.copies(pool) if last and probe else (),
                                     (src, dst), more=not last)
        if probe:
            readback.fetch(queue, seq)
            with residency.launch_lock:
                readback.check(seq)
            if readback.raw[readback.lists[0].offset] != 0:
                red.status.reset()
                raise _red._loop_error(red, name)
    except BaseException:
        failed = True
        out.release()
        raise
    finally:
        if seq is not None:
            _red._release_when_done(queue, owned, seq, not failed)
        else:
            for buf in reversed(owned):
                pool.release(buf)
    return out


__all__ = ["normalize_axes", "plan_steps", "result_shape", "run_axis_reduction"]
