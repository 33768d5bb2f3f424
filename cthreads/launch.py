"""``gpu()``, ``prepare()``, ``compile()``: from a kernel call to submitted device work.

``gpu()`` is one story: check the call and every argument on the host (nothing is allocated or
uploaded for a call that raises; a list bound in an arena is checked against its resident slot),
pack the lists that are not resident, let the kernel's runtime ``plan`` the launch (runtime/kernel_runtime.py,
plan.py: buffers, readback, the variant runtime/variants.py chooses, shape, uniform), submit the plan as one dispatch plus its
readback copies (the queue may batch it with other launches not joined in between:
``backend/dispatch.py``), and return the ``GpuJob`` that owns the plan's buffers until it is
joined. ``compile()`` compiles every variant a plan may pick.
"""

from __future__ import annotations

from .runtime import args as launch_args
from .runtime import capture as _capture
from .runtime import residency
from .backend import capturing as _capturing
from .backend import device as _device
from .devices import use_device
from .codegen.types import elem as elem_type
from .errors import GpuInvalidArgument, GpuUseAfterDestroy
from .gpu_job import GpuJob
from .kernel import GpuKernel, all_kernels
from .notices import warn_nd_launch
from .func import GpuFunc
from .probes import shutdown
from .runtime.relaunch import LaunchMemo
from .runtime.vector_args import flat_args, vector_scalars
from .runtime.kernel_runtime import KernelRuntime


def _check_kernel(fn, caller: str) -> GpuKernel:
    if isinstance(fn, GpuFunc):
        raise TypeError(f"{caller}: {fn.name} is a device function (@Gpu.func); only @Gpu "
                        f"kernels launch. Call {fn.name}(...) from a kernel, or fold a list "
                        f"with {fn.name}.reduce(values)")
    if not isinstance(fn, GpuKernel):
        what = getattr(fn, "__name__", type(fn).__name__)
        raise TypeError(f"{caller}: {what} is not a @Gpu kernel; decorate the function with "
                        "@Gpu (from cthreads.gpu import Gpu)")
    return fn


def gpu(fn, *args, force: bool = False, device=None, threads=None, timed=None,
        **kwargs) -> GpuJob:
    """Launch kernel ``fn`` with ``args`` on the device (``device=``: an index into
    ``devices()`` or part of a name, for this launch; else the caller's ``use_device``
    selection or the default device); ``threads=``: n, or (nx, ny[, nz]) for an N-D launch
    (else the 1-D rule: ``n`` or the longest list); ``timed=True`` (or ``@Gpu(timed=True)``):
    the job's ``device_time`` is measured; returns the submitted ``GpuJob``."""
    if _capturing.active and _capturing.capturing():    # inside capture(): recorded, not run
        return _record(fn, args, force, device, threads, timed, kwargs)
    if device is not None:
        with use_device(device):
            return gpu(fn, *args, force=force, threads=threads, timed=timed, **kwargs)
    if timed is None:
        timed = getattr(fn, "timed", False)
    elif timed.__class__ is not bool:
        raise TypeError(f"gpu(..., timed={timed!r}): expects True or False")
    memo_slot = getattr(fn, "memo_slot", None)
    memo = memo_slot.memo if memo_slot is not None else None
    if memo is None or memo.vectors:       # (a memo knows the kernel has no vector parameters)
        if isinstance(fn, GpuKernel) and fn.program.has_vector_scalars:
            args = vector_scalars(fn.program, args)  # vec3: its components
        if isinstance(fn, GpuKernel) and fn.program.has_vector_lists:
            args = flat_args(fn.program, args)       # list[vec3]: the flat view of (n, 3)
    lists = memo.list_args(args, threads) if memo is not None and not (force or kwargs) \
        else None
    if lists is not None:                      # a repeat with the same arena lists
        return _repeat(fn, memo, lists, args, threads, timed)
    kernel = _check_call(fn, args, kwargs)
    shape = check_threads(threads, f"gpu({kernel.__name__}, ...)")
    if force:
        prepare(force=True)
    program = _launch_program(kernel, args)
    scalars, lists, n = launch_args.check_args(program, args, launch_args.wheres(program))
    nd = None
    if isinstance(shape, tuple):
        n, nd = shape, kernel.nd_workgroup(len(shape))
    elif shape is not None:
        n = shape
    with residency.launch_lock:
        rt = kernel.runtime_for(program.widths, nd)
    launch_args.pack_lists(program.name, rt.queue.pool, lists)   # before the launch lock is taken
    with residency.launch_lock:
        _check_generation(rt)
        plan = rt.plan(scalars, lists, n)
        timing = _timing(rt) if timed else None
        seq = _submit(rt, plan, timing)
    memo = LaunchMemo(threads, shape, program, rt, lists, launch_args.wheres(program)) \
        if LaunchMemo.eligible(lists) else None
    if memo is not None:
        memo.vectors = kernel.program.has_vector_scalars or kernel.program.has_vector_lists
    kernel.memo_slot.memo = memo
    if shape is None and kernel.nd_hint is not None:   # once submitted: a launch that raised
        warn_nd_launch(kernel, kernel.nd_hint)         # warns when it is called again
    return GpuJob(rt, seq, plan, timing)


def _record(fn, args: tuple, force: bool, device, threads, timed, kwargs: dict):
    """``gpu()`` inside ``capture()``: the call and its arguments checked as ``gpu()`` checks
    them, then recorded (runtime/capture.py) instead of submitted."""
    if device is not None:
        with use_device(device):
            return _record(fn, args, force, None, threads, timed, kwargs)
    if force or timed:
        raise GpuInvalidArgument(f"gpu(..., {'force' if force else 'timed'}=True) inside "
                                 "capture(): a recorded launch is neither forced nor timed "
                                 "(time the replay: graph.replay(timed=True))")
    if isinstance(fn, GpuKernel) and fn.program.has_vector_scalars:
        args = vector_scalars(fn.program, args)
    if isinstance(fn, GpuKernel) and fn.program.has_vector_lists:
        args = flat_args(fn.program, args)
    kernel = _check_call(fn, args, kwargs)
    shape = check_threads(threads, f"gpu({kernel.__name__}, ...)")
    program = _launch_program(kernel, args)
    scalars, lists, n = launch_args.check_args(program, args, launch_args.wheres(program))
    _capture.check_lists(program.name, lists)      # nothing is packed or uploaded
    nd = None
    if isinstance(shape, tuple):
        n, nd = shape, kernel.nd_workgroup(len(shape))
    elif shape is not None:
        n = shape
    with residency.launch_lock:
        rt = kernel.runtime_for(program.widths, nd)
        _check_generation(rt)
        return _capture.record(rt, scalars, lists, n)


def _repeat(fn, memo: LaunchMemo, lists: list, args: tuple, threads, timed) -> GpuJob:
    """``gpu()`` for a call its kernel's memo matched (``lists``: its ListArgs): the scalars
    checked, the plan made (from a ready launch when one matches: runtime/ready.py) and
    submitted."""
    scalars, n = memo.scalars(args)
    rt = memo.rt
    with residency.launch_lock:
        _check_generation(rt)
        ready = rt.ready
        plan = ready.plan(rt, scalars, lists, n) if ready is not None else \
            rt.plan(scalars, lists, n)
        timing = _timing(rt) if timed else None
        seq = _submit(rt, plan, timing)
    if threads is None and fn.nd_hint is not None:
        warn_nd_launch(fn, fn.nd_hint)
    return GpuJob(rt, seq, plan, timing)


def _timing(rt: KernelRuntime):
    """A timed launch's ``JobTiming`` (None on a device without timestamp queries)."""
    return rt.queue.job_timing()


def _submit(rt: KernelRuntime, plan, timing) -> int:
    if timing is None:
        return rt.submit(plan)
    try:
        return rt.submit(plan, timing)
    except BaseException:
        rt.queue.pool.release(timing.staging)
        raise


def check_threads(threads, caller: str):
    """``threads=`` checked: None, an int n (a 1-D launch of n), or a tuple (nx, ny[, nz])
    of an N-D launch; a 1-tuple counts as its int."""
    if threads is None:
        return None
    values = threads if isinstance(threads, (tuple, list)) else (threads,)
    if not 1 <= len(values) <= 3 or any(v.__class__ is bool or not isinstance(v, int)
                                        for v in values):
        raise TypeError(f"{caller}: threads={threads!r}; write threads=n or threads=(nx, ny) "
                        "or (nx, ny, nz) with ints")
    for v in values:
        if not 1 <= v <= 2**31 - 1:
            raise GpuInvalidArgument(f"{caller}: threads={threads!r}: each count must be "
                                     "between 1 and 2**31-1")
    if len(values) == 1:
        return int(values[0])
    return tuple(int(v) for v in values)


def _check_call(fn, args: tuple, kwargs: dict) -> GpuKernel:
    if kwargs:
        raise TypeError(f"gpu() takes the kernel's arguments positionally only; unexpected "
                        f"keyword argument(s) {', '.join(sorted(kwargs))} (force=, device=, threads= "
                        "and timed= are the keywords)")
    kernel = _check_kernel(fn, "gpu()")
    program = kernel.program
    params = program.params
    if len(args) != len(params):
        names = program.python_names                   # a vec3 parameter counts once
        raise TypeError(f"gpu({program.name}, ...) takes {len(names)} kernel argument(s) "
                        f"({', '.join(names)}), got {len(args)}")
    return kernel


def _launch_program(kernel: GpuKernel, args: tuple):
    """The program for this launch: plain ``list[float]`` / ``list[int]`` parameters given
    float64 / int64 numpy arrays (or arena lists of them) make plain float / int 64-bit for
    the launch; without such arrays, the 32-bit program."""
    program = kernel.program
    chosen: dict = {}                  # 'float' / 'int' -> (row, parameter name, what)
    for p, value in zip(program.params, args):
        if not p.is_list or p.plain is None:
            continue
        found = launch_args.width_of(value)
        if found is None:
            continue
        row, what = found
        if row not in _PLAIN_ROWS[p.plain]:
            continue                   # refused by the argument checks, with their message
        plain = p.plain
        if plain == "complex":         # complex128 arrays make plain float (and complex) 64-bit
            plain, row = "float", _COMPLEX_PART[row]
        seen = chosen.setdefault(plain, (row, p.name, what))
        if seen[0] != row:
            # the 32-bit one widens exactly (int32 -> int64, float32 -> float64), or pins
            narrow, wide = (seen[1], row) if seen[0] == plain else (p.name, seen[0])
            pin = f"list[{elem_type(p.plain).spelling}]"
            raise GpuInvalidArgument(
                f"{program.name}() parameters {seen[1]!r} ({seen[2]}) and {p.name!r} ({what}): "
                f"plain list[{p.plain}] parameters of one launch take one width; widen the "
                f"32-bit one (e.g. {narrow}.astype(np.{elem_type(wide).array_dtype}), which "
                f"keeps every value), or annotate it with a width type ('{narrow}: {pin}') to "
                "pin it")
    if not chosen:
        return program
    widths = (chosen.get("float", ("float",))[0], chosen.get("int", ("int",))[0])
    return kernel.program_for(widths)


#: the rows a plain float / int list parameter may take, by the argument's element type
_PLAIN_ROWS = {"float": ("float", "float64"), "int": ("int", "int64"),
               "complex": ("complex", "complex128")}
_COMPLEX_PART = {"complex": "float", "complex128": "float64"}


def _check_generation(rt: KernelRuntime) -> None:
    if rt.generation != _device.generation():
        raise GpuUseAfterDestroy(
            f"gpu({rt.program.name}, ...): cthreads.gpu.shutdown() ran while this launch was "
            "being prepared; nothing was submitted. Launch again to use a new device")


def compile(force: bool = False, threads=None) -> dict:  # noqa: A001 - the public API's name
    """Compile every kernel defined so far for the caller's device (``use_device``); returns a
    summary. ``threads=(nx, ny[, nz])`` also compiles the N-D launch variants of that many
    axes (``threads=n``: the 1-D ones, as without it)."""
    shape = check_threads(threads, "compile()")
    if force:
        for k in all_kernels():
            k.forget_runtimes()
    compiled = []
    with residency.launch_lock:
        for k in all_kernels():
            for program in k.variants():
                if program.refused is not None:
                    continue        # its launches raise the located error (no pipeline)
                k.runtime_for(program.widths).compile_all()
                if isinstance(shape, tuple):
                    k.runtime_for(program.widths, k.nd_workgroup(len(shape))).compile_all()
            compiled.append(k.program.name)
    ctx = _device.get_context()
    return {"device": ctx.name, "backend": ctx.info.backend, "kernels": compiled}


def prepare(force: bool = False, threads=None) -> dict:
    """Make sure a Vulkan device is usable and compile the kernels defined so far (with
    ``threads=``: as ``compile``)."""
    check_threads(threads, "prepare()")
    if force:
        shutdown()
    _device.get_context()
    return compile(force=False, threads=threads)
