"""The device side of ``func.reduce(values, init=None)`` (``cthreads/reduce.py`` checks the
operation): reduce a list or array on the device with an operation's WGSL (``OpSource``).

``run_reduction`` checks everything on the host first (the element kind, ``init``, the data's
size), then submits the passes of ``codegen/reduction.py`` as dispatches
on the device queue, the last one followed by a copy of its single result into a staging
buffer, and reads those few bytes back. The caller's data is only read: a list or numpy array
is uploaded into a pooled buffer, a list bound in an arena is reduced in its resident buffer
(never downloaded or uploaded; launches queued before that wrote it run first, the queue keeps
submission order). The status words of the kernels that wrote a resident list ride along in the
same readback, so a failed bounds check of theirs is raised here rather than hidden in a sum.

Data past the storage-binding limit (``BufferPool.binding_bytes()``) is reduced in parts: a
list or numpy array is uploaded into one pooled buffer per part (the parts a GpuArray of its
size has, ``parts.py``), a split GpuArray is reduced in its own parts; the first pass runs once
per part, each writing its partials at its own offset of the partials buffer, then the later
passes reduce all of them (``codegen.plan_parts``), and the result is read back once.

Data in one binding takes the one-pass form (``one_pass.py``: one dispatch, the last workgroup
folds the partials; on CPU drivers only where it measured faster, ``_one_pass_form``;
``CTHREADS_REDUCE_FORM=old`` the passes above everywhere). With ``device=True`` the result is
a new 0-d DeviceSlot the work writes, queued and never waited for.

Per device a ``_Reducer`` keeps the compiled pipelines (``device_program.Pipelines``, per
operation, element type and variant: repeated calls compile nothing), one uniform buffer per
dispatch (a part's first pass, a later pass), the loop probe's status word
(``device_program.StatusWords``), and a small cache of bind groups (input, partials and result
buffers come back from the pool, so steady loops reuse them).
"""

from __future__ import annotations

import functools
import hashlib
import weakref

from . import args, convert, device_array, one_pass, residency, sharing
from . import parts as _parts
from .. import config
from ..backend import device as _device
from .per_device import PerDevice
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import READ, READ_WRITE, UNIFORM, make_bind_group_layout
from ..codegen import reduction as codegen
from ..codegen.types import ELEM_TYPES
from ..codegen.types import elem as elem_type
from ..errors import GpuArgumentTypeError, GpuDeviceError, GpuInvalidArgument, GpuUseAfterDestroy
from .device_program import Pipelines, StatusWords, internal_error
from .readback import Readback

#: threads per workgroup (a multiple of every subgroup size in use) on GPUs and CPU drivers
SIZE_GPU, SIZE_CPU = 256, 64
#: (most workgroups of a pass, least and most groups of four each thread folds), and the groups
#: of four loaded per pass of a thread's loop; GPUs want every core busy, CPU drivers few
#: workgroups of long loops, each far below their loop limit (docs/performance.md, "Reductions")
SHAPE_GPU = (4096, 8, 8192)
SHAPE_CPU = (1024, 16, 4096)
#: on CPU drivers, for an operation with loops (whose passes count against the driver's loop
#: limit at every call): one group of four per thread, a dozen calls of the operation in all
SHAPE_CPU_LOOPS = (1 << 30, 1, 1)
UNROLL_GPU, UNROLL_CPU = 2, 1
#: CPU drivers: 32-bit reductions take the one-pass form up to this many workgroups
CPU_ONE_PASS_GROUPS = 32
BIND_GROUP_CACHE = 32
PIPELINE_CACHE = 64

_BINDINGS = ((0, UNIFORM), (1, READ), (2, READ), (3, READ_WRITE))
_PROBE_BINDINGS = _BINDINGS + ((4, READ_WRITE),)
#: the one-pass form's: 4 its ticket, 5 the result (``one_pass.py``)
_TICKET_BINDINGS = _PROBE_BINDINGS + ((5, READ_WRITE),)
_STATUS_BYTES = 4



class _Reducer:
    """What reductions need on one device."""

    def __init__(self):
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        cpu = self.ctx.is_cpu
        self.size = SIZE_CPU if cpu else SIZE_GPU
        self.shape = SHAPE_CPU if cpu else SHAPE_GPU
        self.unroll = UNROLL_CPU if cpu else UNROLL_GPU
        self.variant = "subgroup" if "subgroup" in self.ctx.features else "shared"
        self.layouts = {False: make_bind_group_layout(self.ctx, _BINDINGS),
                        True: make_bind_group_layout(self.ctx, _PROBE_BINDINGS),
                        "ticket": make_bind_group_layout(self.ctx, _TICKET_BINDINGS)}
        self.status = None          # the loop probe's status word (made on first need)
        self.pipelines = Pipelines(self.ctx, PIPELINE_CACHE)
        self.uniforms: list = []    # one uniform buffer per dispatch of a reduction
        self.bind_groups = BindGroupCache(self.queue.pool, BIND_GROUP_CACHE)
        #: the form of whole-array reductions (CTHREADS_REDUCE_FORM): "old" a pass per level,
        #: "new" one pass everywhere, "" one pass where it measured faster (``_one_pass_form``)
        self.form = config.current().reduce_form
        self.plans = one_pass.new_plans()     # the one-pass form's, per element count

    # -- caches --------------------------------------------------------------------------------

    def pipeline(self, op, variant: str, probe: bool, name: str, ticket: bool = False):
        """``ticket``: the one-pass form's (``one_pass.py``; its ticket is binding 4)."""
        key = (op.fn, _digest(op.text), op.ty, variant, probe, ticket)
        pipe = self.pipelines.get(key)
        if pipe is not None:
            return pipe
        wgsl = codegen.reduction_wgsl(op.fn, op.ty, op.text, variant, self.size, self.unroll,
                                      probe, ticket=ticket)
        return self.pipelines.compile(
            key, wgsl, codegen.ENTRY_POINT,
            _TICKET_BINDINGS if ticket else _PROBE_BINDINGS if probe else _BINDINGS,
            self.layouts["ticket" if ticket else probe], op.overrides,
            lambda exc, text: internal_error(f"the reduction shader of {name}",
                                             "function's source", exc, text))

    def uniform(self, level: int):
        while len(self.uniforms) <= level:
            buf = self.queue.pool.acquire(codegen.UNIFORM_SIZE, "uniform")
            weakref.finalize(buf, self.queue.forget_uniform, buf.buffer)
            self.uniforms.append(buf)
        return self.uniforms[level]

    def status_word(self):
        """The loop probe's status buffer, zero until a probe fires."""
        if self.status is None:
            self.status = StatusWords(self.queue, _STATUS_BYTES)
        return self.status

    def bind_group(self, uniform, src, src_bytes: int, quad_bytes: int, dst, dst_bytes: int,
                   probe: bool, src_offset: int = 0):
        """``src_offset``: the first pass of a GpuArray view reads from its byte offset."""
        key = (id(uniform), id(src), src_bytes, src_offset, id(dst), dst_bytes, probe)
        bg = self.bind_groups.get(key)
        if bg is not None:
            return bg
        entries = [(0, uniform.buffer, codegen.UNIFORM_SIZE),
                   (1, src.buffer, quad_bytes, src_offset),
                   (2, src.buffer, src_bytes, src_offset), (3, dst.buffer, dst_bytes)]
        if probe:
            entries.append((4, self.status.buffer, _STATUS_BYTES))
        bg = self.queue.bind_group(self.layouts[probe], entries)
        self.bind_groups.put(key, bg, (uniform, src, dst))
        return bg


@functools.lru_cache(maxsize=256)
def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_STATE = PerDevice(_Reducer)
_reducer_now = _STATE.now   # the reductions' state on the caller's device


# -- host checks -----------------------------------------------------------------------------

def array_kind(value) -> str | None:
    """The element kind a numpy array's dtype holds as it is (None: none of ours)."""
    for row in ELEM_TYPES.values():
        if value.dtype.name == row.array_dtype:
            return row.name
    return None


def _check_array(value, ty: str, where: str):
    """The contiguous 1-D view of a numpy array of ``ty`` elements, refusing other dtypes."""
    kind = array_kind(value)
    if kind != ty:
        raise GpuInvalidArgument(
            f"{where} is a numpy array of dtype {value.dtype}, but the operation reduces "
            f"{ty} values ({elem_type(ty).array_dtype} arrays): "
            f"{convert.dtype_fix(value.dtype, (elem_type(ty).array_dtype,))}; or reduce with "
            f"an operation declared on {kind or 'float, int or bool'} values")
    if not value.flags.c_contiguous:
        value = convert._np().ascontiguousarray(value)
    return value.reshape(-1)


def _slot_of(values, ty: str, where: str):
    """The device copy that stands for ``values``: a GpuArray's, an arena slot (or the slot
    of a reshape of a bound array), else None (uploaded)."""
    if isinstance(values, args.DeviceArrayBase):
        return _device_array_slot(values, ty, where)
    slot = residency.lookup(values)
    if slot is None and sharing.bound_arrays and convert.is_ndarray(values):
        # a reshape of a bound array reduces its device copy; another view of one raises
        slot = sharing.shared_slot(values, where)
    elif slot is None and sharing.bound_lists and isinstance(values, list):
        sharing.check_list_parts(values, where)          # a row of a bound nested list
    return slot


def _device_array_slot(values, ty: str, where: str):
    """The slot of a GpuArray reduced as ``ty`` values (its dtype must be ``ty``'s)."""
    values._slot.check_live(where)
    want = elem_type(ty).array_dtype
    # (the slot's element type first: numpy's dtype.name takes microseconds)
    if values._slot.elem != ty and values.dtype.name != want:
        raise GpuInvalidArgument(
            f"{where} is a GpuArray of shape {values.shape} and dtype {values.dtype}, but the "
            f"operation reduces {want} values; reduce a GpuArray of dtype {want}, or use an "
            f"operation on {values.dtype} values")
    if values._slot.offset and values._slot.count:   # a view: bound from its offset
        values._slot.check_offset(values, where)
    return values._slot


def _check_slot(slot, value, ty: str, where: str) -> None:
    if value is slot.target and convert.is_ndarray(value) and value.size != slot.count:
        raise GpuInvalidArgument(
            f"{where}: the array bound as arena slot {slot.name!r} was resized in place from "
            f"{slot.count:,} to {value.size:,} elements; re-bind it after resizing")
    if value is slot.target and len(value) != slot.length:
        raise GpuInvalidArgument(
            f"{where}: the list bound as arena slot {slot.name!r} changed length from "
            f"{slot.length} to {len(value)}; re-bind it after resizing")
    if slot.pooled is None:
        raise GpuInvalidArgument(f"{where}: the arena holding this list was released or the "
                                 "device was shut down; bind it again")
    if slot.elem != ty and not (slot.elem == "int" and ty == "float" and not slot.used):
        raise GpuInvalidArgument(
            f"{where}: the list bound as arena slot {slot.name!r} holds {slot.elem} elements, "
            f"but the operation reduces {ty} values; reduce it with an operation on "
            f"{slot.elem} values, or bind a list of {ty} values")


# -- the reduction ---------------------------------------------------------------------------

def run_reduction(op, values, init=None, name: str | None = None, variant: str | None = None,
                  device: bool = False):
    """The reduction of ``values`` by the operation ``op`` (an ``OpSource``); ``variant``
    forces ``"subgroup"`` or ``"shared"`` (tests), else the device's best. With ``device``
    the result stays on the device: a new 0-d ``DeviceSlot`` holding it, written by work
    queued behind what is pending (nothing is waited for)."""
    name = name or op.fn
    ty = op.ty
    where = f"{name}.reduce() argument 'values'"
    if ty not in ELEM_TYPES:
        raise GpuInvalidArgument(f"{name}.reduce(): {ty} values cannot be reduced on this "
                                 "version's devices")
    if init is not None:
        init = convert.check_scalar(init, ty, f"{name}.reduce() argument 'init'")
    slot, data, n = _source_of(values, ty, where)
    if n == 0:
        if init is None:
            raise ValueError(f"{name}.reduce() of an empty sequence with no init value; pass "
                             "init= for the result of an empty input")
        return _device_value(init, ty, where) if device else init
    red = _reducer_now()
    missing = [f for f in op.features if f not in red.ctx.features]
    if missing:
        raise GpuInvalidArgument(f"{name}.reduce(): the operation needs the device feature(s) "
                                 f"{', '.join(missing)}, which {red.ctx.name!r} lacks")
    size = elem_type(ty).size
    parts = None
    if slot is None:        # uploaded in parts of at most one storage binding each
        packed = args.pack(values if data is None else data, ty, where, writable=False)
        parts = host_parts(packed, n, size, red.queue.pool)
    variant = variant or _variant(red, ty, size)
    if variant == "subgroup" and "subgroup" not in red.ctx.features:
        raise GpuInvalidArgument(f"{red.ctx.name!r} lacks the subgroup feature")
    probe = red.ctx.is_cpu and codegen.has_loops(op.text)
    if device and probe:     # the loop probe's word must be read: the value, then uploaded
        value = run_reduction(op, values, init, name, variant)
        return _device_value(value, ty, where)
    return _run(red, op, name, variant, probe, ty, slot, parts, init, where, device, n)


def _variant(red, ty: str, size: int) -> str:
    """The device's tree variant for ``ty``. WGSL's subgroup shuffles take 32-bit values:
    64-bit types combine in workgroup memory, except float64 and int64 in the one-pass form
    on a device with shader-int64 (shuffled as two halves, ``codegen.WIDE_SHUFFLES``)."""
    if size == 4:
        return red.variant
    wide = red.form != "old" and elem_type(ty).storage in codegen.WIDE_SHUFFLES and \
        "shader-int64" in red.ctx.features
    return red.variant if wide else "shared"


def _source_of(values, ty: str, where: str) -> tuple:
    """(resident slot or None, checked numpy data or None, element count) of ``values``."""
    slot = _slot_of(values, ty, where)
    data = None
    if slot is not None:
        if slot.target is not None:       # an arena slot (a GpuArray's was checked above)
            _check_slot(slot, values, ty, where)
        n = slot.count                 # every element of an N-D array (len() is its rows)
    elif convert.is_ndarray(values):
        data = _check_array(values, ty, where)
        n = data.size
    elif isinstance(values, list):
        n = len(values)
    else:
        raise GpuArgumentTypeError(
            f"{where} expects a list, a numpy array or a list bound in a GpuArena, got "
            f"{convert._type_name(values)}; pass a list (e.g. list(values))")
    return slot, data, n


def _one_pass_form(red, probe: bool, held: int, n: int, size: int) -> bool:
    """Whether ``n`` elements of ``size`` bytes in ``held`` parts reduce in the one-pass form:
    one part (parts past the binding limit take a pass per level), no loop probe, and unless
    CTHREADS_REDUCE_FORM=new, on CPU drivers only where it measured faster: 64-bit values
    (their subgroup shuffles) or a first pass of at most CPU_ONE_PASS_GROUPS workgroups
    (llvmpipe's storage barriers cost ~1.4 us a workgroup, more than the saved pass
    beyond that; docs/performance.md, "Reductions")."""
    if red.form == "old" or probe or held != 1:
        return False
    if red.form == "new" or not red.ctx.is_cpu or size == 8:
        return True
    return codegen.plan_passes(n, red.size, *red.shape)[0].groups <= CPU_ONE_PASS_GROUPS


def _run(red, op, name, variant, probe, ty, slot, parts, init, where, device, n):
    """Submit the reduction in its form; the Python value, or with ``device`` the 0-d
    DeviceSlot holding it."""
    size = elem_type(ty).size
    one = _one_pass_form(red, probe, len(parts if slot is None else getattr(
        slot, "parts", None) or (None,)), n, size)
    pipe = red.pipeline(op, variant, probe, name, ticket=one)
    out = device_array.allocate(red.queue, ty, (), None, where) if device else None
    try:
        if one:
            raw, status = _one_pass(red, pipe, ty, size, slot, parts, init, where, out)
        else:
            raw, status = _submit_and_read(red, pipe, probe, ty, size, slot, parts, init,
                                           where, out)
    except BaseException:
        if out is not None:
            out.release()
        raise
    if out is not None:
        return out
    if status:
        red.status.reset()
        raise _loop_error(red, name)
    return _scalar(raw, ty)


def _device_value(value, ty: str, where: str):
    """A new 0-d DeviceSlot holding ``value`` (an empty input's ``init``)."""
    data = convert._np().full(1, value, dtype=elem_type(ty).host_dtype)
    return device_array.allocate(get_queue(), ty, (), data, where)


def _loop_error(red, name: str) -> GpuDeviceError:
    return GpuDeviceError(
        f"{name}.reduce(): the device {red.ctx.name!r} ended a loop of {name} before it "
        "finished, or came too close to its limit to tell. This CPU driver (Mesa's llvmpipe) "
        "stops the loops of a thread once they have made 65,535 passes together "
        "(docs/language.md, \"Long loops on CPU drivers\"), and each thread of a reduction "
        f"calls {name} about a dozen times. Nothing was changed. Make {name}'s loops shorter, "
        "or run on a GPU (CTHREADS_ADAPTER)")


def part_elems(pool, n: int, size: int) -> int:
    """Elements of ``size`` bytes in each part of ``n`` elements of data (``n`` when one
    binding, ``pool.binding_bytes()``, holds it): the parts of a GpuArray of that size
    (``parts.py``), so an array and its GpuArray reduce in the same tree."""
    return _parts.part_elems_for(n, size, pool.binding_bytes())


def host_parts(packed, n: int, size: int, pool) -> list:
    """The device bytes ``packed`` of ``n`` elements as the parts to upload: itself when one
    binding holds it, else byte views of ``part_elems`` elements each (the last shorter)."""
    per = part_elems(pool, n, size)
    if per >= n:
        return [packed]
    return _parts.byte_slices(packed, n, per, size)


def slot_parts(slot) -> list:
    """``[(PooledBuffer, elements), ...]``: the buffers holding a resident slot's elements, in
    order (launch lock held): a split GpuArray's parts (``DeviceSlot.parts``), else the one
    buffer of an arena slot or an unsplit GpuArray."""
    held = getattr(slot, "parts", None)
    if held is None or len(held) == 1:
        return [(slot.pooled, slot.count)]
    return list(zip(held, _parts.counts(slot.count, slot.part_elems)))


def _sources(red, slot, parts, ty: str, where: str) -> list:
    """The ``(buffer, elements)`` parts to reduce (launch lock held): the resident slot's,
    checked to be live and on this device, or ``(bytes, elements)`` of the host ``parts``,
    each uploaded right before its first pass (``_submit_and_read``)."""
    queue = red.queue
    if red.generation != _device.generation():
        raise GpuUseAfterDestroy(
            f"{where}: cthreads.gpu.shutdown() ran while this reduction was being "
            "prepared; nothing was submitted. Call reduce again to use a new device")
    if slot is None:
        size = elem_type(ty).size
        return [(part, memoryview(part).nbytes // size) for part in parts]
    if slot.queue is not queue and slot.pooled is not None:
        raise slot.other_device(red.ctx, where)
    if slot.pooled is None:
        raise GpuUseAfterDestroy(
            f"{where}: the device holding this arena list was shut down or lost "
            "meanwhile; nothing was submitted. Create a new GpuArena and bind it")
    if slot.elem != ty:       # an int list first used as float: as launches do
        slot.elem = ty
        queue.upload(slot.pooled, args.pack(slot.target, ty, where, False))
    slot.used = True
    return slot_parts(slot)


def _steps(sources, firsts, rest, bufs, size: int):
    """(input, pass, output, output bytes, first partial's index) of each dispatch: the first
    pass of every part into its range of ``bufs[0]``, then the later passes, whose partial
    results ping-pong between the two buffers."""
    partials = sum(p.groups for p in firsts)
    base = 0
    for (src, _), shape in zip(sources, firsts):
        yield src, shape, bufs[0], partials * size, base
        base += shape.groups
    for level, shape in enumerate(rest, 1):
        yield (bufs[(level - 1) % len(bufs)], shape, bufs[level % len(bufs)],
               shape.groups * size, 0)


def _readback(red, result, probe: bool, slot, size: int, ty: str) -> Readback:
    """The result first, then the loop probe's word and the status words of the slot's
    writers whose bounds checks were not read yet."""
    readback = Readback()
    readback.add_list(result.buffer, None, size, ty)
    if probe:
        readback.add_list(red.status_word().buffer, None, _STATUS_BYTES, "int")
    if slot is not None:
        for rt in slot.writers:
            if rt.unchecked:
                readback.add_status(rt)
    return readback


def _one_pass(red, pipe, ty, size, slot, parts, init, where, out):
    """``_submit_and_read`` in the one-pass form (``one_pass.py``; one part)."""
    queue = red.queue
    owned = []
    seq, failed = None, False
    try:
        with residency.launch_lock:
            (src, count), = _sources(red, slot, parts, ty, where)
            if out is not None and slot is not None:
                out.writers.update(slot.writers)     # their bounds checks travel on
            if slot is None:
                src = queue.upload_new(src)
                owned.append(src)
            seq, readback = one_pass.submit(red, pipe, ty, size, src, count,
                                            0 if slot is None else slot.offset, init, slot,
                                            out)
        if readback is None:
            return None, False
        readback.fetch(queue, seq)
        with residency.launch_lock:
            readback.check(seq)
        return readback.raw[:size], False
    except BaseException:
        failed = True
        raise
    finally:
        if seq is not None:
            _release_when_done(queue, owned, seq, not failed)
        else:
            for buf in owned:
                queue.pool.release(buf)


def _submit_and_read(red, pipe, probe, ty, size, slot, parts, init, where, out=None):
    """Submit the passes and read the result back: (result bytes, loop probe fired); with
    ``out`` (a 0-d DeviceSlot) the result is copied there instead and nothing is waited for
    ((None, False))."""
    queue = red.queue
    pool = queue.pool
    owned = []
    seq, failed = None, False
    try:
        with residency.launch_lock:
            sources = _sources(red, slot, parts, ty, where)
            if out is not None and slot is not None:
                out.writers.update(slot.writers)     # their bounds checks travel on
            firsts, rest = codegen.plan_parts(tuple(c for _, c in sources), red.size,
                                              *(SHAPE_CPU_LOOPS if probe else red.shape))
            partial_cap = sum(p.groups for p in firsts) * size + 16
            bufs = [pool.acquire(partial_cap), pool.acquire(partial_cap)] if rest \
                else [pool.acquire(16)]
            owned += bufs
            readback = _readback(red, bufs[len(rest) % len(bufs)], probe, slot, size, ty)
            steps = list(_steps(sources, firsts, rest, bufs, size))
            for k, (src, shape, dst, dst_bytes, base) in enumerate(steps):
                last = k == len(steps) - 1
                if slot is None and k < len(sources):
                    # a host part is uploaded right before its pass: a large upload submits
                    # the passes queued so far, which run while the next part is copied
                    src = queue.upload_new(src)
                    owned.append(src)
                # (under 4 elements: 16 bytes the shader does not read, never empty)
                quad_bytes = max(shape.quads * 4 * size, 4 * size)
                uniform = red.uniform(k)
                # a GpuArray view's first pass reads from its byte offset (aligned: checked)
                src_offset = slot.offset if slot is not None and k < len(sources) and \
                    len(sources) == 1 else 0
                bg = red.bind_group(uniform, src, shape.count * size, quad_bytes, dst,
                                    dst_bytes, probe, src_offset)
                copies, held = (), (src, dst)
                if last:
                    copies = readback.copies(pool) if out is None else \
                        [(dst.buffer, 0, out.pooled.buffer, 0, size)]
                    held = held if out is None else (src, dst, out.pooled)
                seq = queue.dispatch(
                    pipe.pipeline, bg, shape.groups,
                    (uniform.buffer,
                     codegen.uniform_bytes(shape, ty, init if last else None, base)),
                    copies, held, more=not last)
        if out is not None:
            return None, False
        readback.fetch(queue, seq)
        with residency.launch_lock:
            readback.check(seq)
        raw = readback.raw
    except BaseException:
        failed = True
        raise
    finally:
        _give_back(queue, owned, seq, failed)
    status = probe and raw[readback.lists[1].offset] != 0
    return raw[:size], status


def _give_back(queue, owned, seq, failed: bool) -> None:
    """A call's scratch: to the pool at once when nothing was submitted (``seq`` None),
    else as ``_release_when_done`` says."""
    if seq is None:
        for buf in reversed(owned):
            queue.pool.release(buf)
    else:
        _release_when_done(queue, owned, seq, not failed)


def _release_when_done(queue, owned, seq, pending_too: bool = False) -> None:
    """Give the scratch buffers of a submitted call back to the pool, in reverse (the next
    call takes the same buffers for the same parts, and its cached bind groups with them).

    Work still pending does not hold them back: every later use of a pooled buffer is a
    later dispatch or copy on the same queue, which runs after this call's work, or an
    upload, which submits a pending batch that binds the buffer first (``DeviceQueue.upload``)
    -- the order GpuArrays, the scanner's and the sorter's scratch rely on. Dropping them
    instead (as this did while the work was pending, ``CTHREADS_SCRATCH=old``) made every
    call that returns a device result without waiting (``to_device=True``, axis reductions,
    a host array's upload) create new buffers, new bind groups and, on GPUs, wgpu's
    zero-fill of each new buffer at its first use. Callers say so (``pending_too``: the
    reductions and the sorter, when they did not fail); otherwise, after an error, the
    buffers are given back only when the work is done, else simply dropped. Calls that did not
    fail never ask ``is_done``: it submits a pending batch, which made every queued call on a
    GPU a submission of its own (issue 27's queued 0-d sums). (The queue's
    staged uniform bytes have a free list of their own, ``"staged"``: they once took such a
    buffer while the batch being submitted still read it.)"""
    if pending_too and scratch_form() != "old":
        done = True                  # no is_done: it would submit the pending batch
    else:
        try:
            done = queue.is_done(seq)
        except Exception:
            done = False
    if done:
        for buf in reversed(owned):
            queue.pool.release(buf)


#: CTHREADS_SCRATCH, read once: "old" drops the scratch of a call whose work is pending
SCRATCH = None


def scratch_form() -> str:
    """``SCRATCH``, read from the settings the first time."""
    global SCRATCH
    if SCRATCH is None:
        SCRATCH = config.current().scratch
    return SCRATCH


def _scalar(raw: bytes, ty: str):
    """The Python value of one element's device bytes."""
    row = elem_type(ty)
    if row.kind == "c":                 # (real, imag)
        re, im = memoryview(raw).cast(row.code[0])[:2]
        return complex(re, im)
    value = memoryview(raw).cast(row.code)[0]
    if ty == "bool":
        return value != 0
    return row.python(value)


__all__ = ["run_reduction", "array_kind", "host_parts", "part_elems", "slot_parts"]
