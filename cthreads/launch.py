"""``gpu()``, ``prepare()``, ``compile()``: from a kernel call to submitted device work.

A launch checks every argument before the device sees it (nothing is allocated or uploaded for
a call that raises), takes resident buffers for arena-bound lists and pooled buffers for the
rest, picks the compiled variant and launch shape (``runtime.py``: check-free, four-lane,
indexes per invocation), and hands the queue one dispatch plus readback copies for the lists
the kernel may write (the queue may batch it with other launches not joined in between:
``backend/dispatch.py``). The returned ``GpuJob`` owns the pooled buffers until it is joined.
"""

from __future__ import annotations

import threading

from . import arena as _arena
from . import convert
from .backend import device as _device
from .backend import get_queue
from .errors import GpuInvalidArgument, GpuUseAfterDestroy
from .gpu_job import GpuJob
from .kernel import GpuKernel, all_kernels
from .readback import Readback
from .runtime import runtime_for

#: serialises launches, joins and arena transfers across Python threads
launch_lock = threading.RLock()


def _new_lock_after_fork() -> None:
    global launch_lock
    launch_lock = threading.RLock()     # another thread of the parent may have held it


_device.on_fork_child(_new_lock_after_fork)


def _check_kernel(fn, caller: str) -> GpuKernel:
    if not isinstance(fn, GpuKernel):
        what = getattr(fn, "__name__", type(fn).__name__)
        raise TypeError(f"{caller}: {what} is not a @Gpu kernel; decorate the function with "
                        "@Gpu (from cthreads.gpu import Gpu)")
    return fn


def gpu(fn, *args, force: bool = False, **kwargs) -> GpuJob:
    """Launch kernel ``fn`` with ``args`` on the device; returns the submitted ``GpuJob``."""
    if kwargs:
        raise TypeError(f"gpu() takes the kernel's arguments positionally only; unexpected "
                        f"keyword argument(s) {', '.join(sorted(kwargs))} (only force= is a "
                        "keyword)")
    kernel = _check_kernel(fn, "gpu()")
    program = kernel.program
    params = program.params
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise TypeError(f"gpu({program.name}, ...) takes {len(params)} kernel argument(s) "
                        f"({names}), got {len(args)}")
    if force:
        prepare(force=True)
    # -- check everything on the host first (no device work for a call that raises) --------
    scalars = []
    lists = []          # (param, value, resident slot or None, packed array or None)
    n_value = None
    for p, value in zip(params, args):
        where = f"{program.name}() parameter {p.name!r}"
        if not p.is_list:
            v = convert.check_scalar(value, p.elem, where)
            scalars.append(v)
            if p.name == "n" and p.kind == "int":
                n_value = v
            continue
        slot = _arena.lookup(value)
        if slot is not None:
            if len(value) != slot.length:
                raise GpuInvalidArgument(
                    f"{where}: the list bound as arena slot {slot.name!r} changed length from "
                    f"{slot.length} to {len(value)}; re-bind it after resizing")
            if slot.pooled is None:
                raise GpuInvalidArgument(f"{where}: the arena holding this list was released "
                                         "or the device was shut down; bind it again")
            if slot.elem != p.elem and not (slot.elem == "int" and p.elem == "float"
                                            and not slot.used):
                raise GpuInvalidArgument(
                    f"{where}: the list bound as arena slot {slot.name!r} holds {slot.elem} "
                    f"elements but the kernel declares list[{p.elem}]; bind a list of "
                    f"{p.elem} values")
            lists.append((p, value, slot, None))
        else:
            convert.check_container(value, p.elem, where, p.written or p.atomic)
            lists.append((p, value, None, None))
    n = n_value if n_value is not None else max((len(v) for _, v, _, _ in lists), default=1)
    with launch_lock:
        rt = runtime_for(kernel)
    pool = rt.queue.pool
    for p, value, slot, _ in lists:
        if slot is None:
            pool.check_size(4 * len(value),
                            f"{program.name}() parameter {p.name!r} ({len(value):,} elements)")
    lists = [(p, value, slot, None if slot is not None else
              convert.pack(value, p.elem, f"{program.name}() parameter {p.name!r}",
                           p.written or p.atomic))
             for p, value, slot, _ in lists]
    with launch_lock:
        return _submit(rt, scalars, lists, n)


def _submit(rt, scalars, lists, n) -> GpuJob:
    queue = rt.queue
    if rt.generation != _device.generation():
        raise GpuUseAfterDestroy(
            f"gpu({rt.program.name}, ...): cthreads.gpu.shutdown() ran while this launch was "
            "being prepared; nothing was submitted. Launch again to use a new device")
    pool = queue.pool
    owned = []            # pooled buffers the job returns to the pool at join
    entries = []
    readback = Readback()
    resident_written = []
    try:
        for p, value, slot, data in lists:
            nbytes = 4 * len(value)
            if slot is not None:
                if slot.pooled is None:
                    raise GpuUseAfterDestroy(
                        f"{rt.program.name}() parameter {p.name!r}: cthreads.gpu.shutdown() "
                        "released the arena holding this list while the launch was being "
                        "prepared; nothing was submitted. Create a new GpuArena and bind it")
                if slot.elem != p.elem:            # an int list first used as float: re-upload
                    slot.elem = p.elem
                    queue.upload(slot.pooled, convert.pack(value, p.elem, "arena list"))
                slot.used = True
                if p.written or p.atomic:
                    slot.mark_written(rt)
                    resident_written.append(slot)
                entries.append((p.binding, slot.pooled, nbytes))
                continue
            buf = queue.upload_new(data)
            owned.append(buf)
            entries.append((p.binding, buf, nbytes))
            if p.written or p.atomic:
                readback.add_list(buf.buffer, value, nbytes, p.elem,
                                  f"{rt.program.name}() parameter {p.name!r}")
        if rt.status is not None:
            entries.append((rt.program.status_binding, rt.status, rt.status_nbytes))
            if readback:                   # the status rides along with this job's results
                readback.add_status(rt)
        copies = readback.copies(pool) if readback else ()
        vec, bound = rt.vec_entries(scalars, lists, entries) if rt.vec_check else (None, None)
        vec = vec or ""
        hidden, groups, coarsen = rt.launch_shape(n, bool(vec))
        bind_group = rt.bind_group(bound if vec else tuple(entries))
        uniform = rt.uniform_struct.pack(hidden, *scalars)
        fast = not vec and bool(rt.fast_checks) and all(scalars[si] <= len(lists[li][1])
                                                        for si, li in rt.fast_checks)
        seq = queue.dispatch(rt.pipeline_for(fast, coarsen, vec).pipeline, bind_group, groups,
                             (rt.uniform.buffer, uniform), copies)
        rt.unchecked = True
        rt.last_launch = seq
    except BaseException:
        for buf in owned:
            pool.release(buf)
        if readback.staging is not None:
            pool.release(readback.staging)
        raise
    return GpuJob(rt, seq, readback if readback else None, resident_written, owned)


def download_slots(slots, runtimes=()) -> None:
    """Copy resident buffers back into their lists (arena.sync, join of resident lists).

    The status of every kernel that wrote these slots (and of ``runtimes``) is read in the
    same map; a failed bounds check raises before any list is written.
    """
    last = max((rt.last_launch for s in slots for rt in s.writers), default=0)
    if last and all(s.pooled is not None for s in slots):   # wait with the launch lock free
        get_queue().wait(last)
    with launch_lock:
        readback = Readback()
        for s in slots:
            if s.pooled is None:
                raise GpuUseAfterDestroy(
                    f"arena slot {s.name!r}: cthreads.gpu.shutdown() released the device before "
                    "the kernel's results in this resident list were downloaded; they are "
                    "lost. Call join() or GpuArena.sync() before shutdown()")
            readback.add_list(s.pooled.buffer, s.target, s.nbytes, s.elem,
                              f"the list bound as arena slot {s.name!r}")
            for rt in s.writers:
                if rt.unchecked:
                    readback.add_status(rt)
        for rt in runtimes:
            readback.add_status(rt)
        if not readback:
            return
        queue = get_queue()
        copies = readback.copies(queue.pool)
        seq = queue.submit_copies(copies)
        readback.finish(queue, seq)
        # only once the lists hold the device's data: after a failed bounds check nothing was
        # written back, and a later sync() must still download what the other launches changed
        for s in slots:
            s.written = False
            s.writers.clear()


def compile(force: bool = False) -> dict:  # noqa: A001 - the public API's name
    """Compile every kernel defined so far for the current device; returns a summary."""
    if force:
        for k in all_kernels():
            k._runtime = None
    compiled = []
    with launch_lock:
        for k in all_kernels():
            runtime_for(k).compile_all()
            compiled.append(k.program.name)
    ctx = _device.get_context()
    return {"device": ctx.name, "backend": ctx.info.backend, "kernels": compiled}


def prepare(force: bool = False) -> dict:
    """Make sure a Vulkan device is usable and compile the kernels defined so far."""
    if force:
        from .probes import shutdown  # noqa: PLC0415
        shutdown()
    _device.get_context()
    return compile(force=False)
