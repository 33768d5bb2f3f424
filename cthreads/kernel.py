"""``@Gpu``: what the decorator returns, a ``GpuKernel``.

Decoration translates the whole kernel at once (no device needed) and raises located errors;
calling the kernel directly runs the Python body; ``simulate`` runs the body once per thread
index (``simulator.py``; the threads of a workgroup together when the kernel has barriers), the
plain-Python oracle that tests compare the device against.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref

from . import config, notices, pickling
from .lang import simulator, structs, vectors
from .lang.random import launch_float32
from .runtime.args import width_of
from .codegen import compile_kernel
from .codegen.program import KernelProgram
from .codegen.types import Widths
from .func import GpuFunc
from .gpu_array import GpuArray
from .errors import GpuKernelError, GpuKernelTypeError, GpuUnresolvedName, as_raised_to_user

WORKGROUP_SIZE = 64

_registry: list = []            # weak references, in definition order
_registry_lock = threading.Lock()


def all_kernels() -> list:
    """Every kernel defined so far and still alive, in definition order."""
    with _registry_lock:
        alive = [r() for r in _registry]
        _registry[:] = [r for r, k in zip(_registry, alive) if k is not None]
        return [k for k in alive if k is not None]


def _new_lock_after_fork() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def _device_name():
    try:
        from .backend import device
        return device.current_name()
    except (ImportError, AttributeError):
        return None


class MemoSlot:
    """A kernel's relaunch memo, owned by ``gpu()`` (``launch.py``): the last resident
    launch's settled checks (``runtime/relaunch.LaunchMemo``), or None."""

    __slots__ = ("memo",)

    def __init__(self):
        self.memo = None


class GpuKernel:
    """A ``@Gpu`` kernel: compiled at decoration, runnable as plain Python."""

    def __init__(self, fn, *, log: bool = False, boundscheck: bool = True, workgroup=None,
                 timed: bool = False, print_limit: int = 1000):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise GpuKernelTypeError(
                f"@Gpu expects a function defined with 'def', got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.log = bool(log)
        self.boundscheck = bool(boundscheck)
        self.workgroup = _check_workgroup(workgroup)
        #: launches measure ``GpuJob.device_time`` (``gpu(..., timed=...)`` overrides)
        self.timed = bool(timed)
        self.print_limit = _check_print_limit(print_limit)
        self._runtimes = {}           # runtime key -> KernelRuntime (``runtime_for``)
        #: where ``gpu()`` keeps this kernel's last resident launch (``MemoSlot``)
        self.memo_slot = MemoSlot()
        self._logged = False
        self._program: KernelProgram | None = None
        self._wide: dict = {}         # widths key -> the program compiled for it
        self._compile_lock = threading.Lock()
        try:
            self._compile()
        except GpuUnresolvedName:
            pass        # maybe a device function defined further down: compiled on first use
        with _registry_lock:
            _registry.append(weakref.ref(self))

    @property
    def program(self) -> KernelProgram:
        """The compiled kernel (compiled at decoration, or at first use when it calls a name
        that was not defined yet at decoration)."""
        program = self._program
        if program is None:
            with self._compile_lock:
                if self._program is None:
                    self._compile()
                program = self._program
        return program

    def runtime_for(self, widths: tuple | None = None, nd: tuple | None = None):
        """The kernel's ``KernelRuntime`` (its pipelines, uniform and status words on one
        device) on the caller's device (``use_device``) for ``widths`` (what plain float and
        int mean, ``KernelProgram.widths``; None: 32-bit) and, for an N-D launch, the
        workgroup ``nd``; created on first need."""
        from .runtime import kernel_runtime  # noqa: PLC0415 - the launch side, loaded by gpu()
        key, ctx = kernel_runtime.runtime_key(widths, nd)
        rt = self._runtimes.get(key)
        if rt is None or rt.ctx is not ctx:
            rt = kernel_runtime.KernelRuntime(
                self, self.program_for(widths or kernel_runtime.NARROW_KEY), nd)
            self._runtimes[key] = rt
        return rt

    def forget_runtimes(self) -> None:
        """Drop every runtime of the kernel (and the relaunch memo that holds one), so that
        the next launch makes them again and reads the settings again."""
        self._runtimes.clear()
        self.memo_slot.memo = None

    def nd_workgroup(self, ndim: int) -> tuple:
        """The (x, y, z) workgroup of an N-D launch of ``ndim`` axes: ``@Gpu(workgroup=...)``,
        else 8 x 8 (2-D) or 4 x 4 x 4 (3-D)."""
        if self.workgroup is not None:
            return self.workgroup
        return (8, 8, 1) if ndim == 2 else (4, 4, 4)

    def program_for(self, widths: tuple) -> KernelProgram:
        """The program for a launch whose plain float and int mean ``widths`` (a
        ``Widths.key``): the 32-bit one, or a variant compiled on first use and kept."""
        program = self.program
        if tuple(widths) == program.widths:
            return program
        key = tuple(widths)
        wide = self._wide.get(key)
        if wide is None:
            with self._compile_lock:
                wide = self._wide.get(key)
                if wide is None:
                    try:
                        wide = compile_kernel(self.fn, boundscheck=self.boundscheck,
                                              widths=Widths(*key))
                    except (GpuKernelError, GpuKernelTypeError) as exc:
                        raise as_raised_to_user(exc, config.current().full_traceback)
                    self._wide[key] = wide
        return wide

    def variants(self) -> list:
        """The programs compiled so far (the 32-bit one first)."""
        return [self.program, *self._wide.values()]

    def _compile(self) -> None:
        try:
            program = compile_kernel(self.fn, boundscheck=self.boundscheck)
        except (GpuKernelError, GpuKernelTypeError) as exc:
            raise as_raised_to_user(exc, config.current().full_traceback)
        self._program = program
        # whether a launch without threads= warns (notices.py): once per kernel, not per launch
        self.nd_hint = notices.nd_hint(program)
        try:
            self._check_workgroup_memory()
        except GpuKernelError:
            self._program = None
            raise
        if self.log:
            name = _device_name()
            if name:
                self.announce(name)

    def _check_workgroup_memory(self) -> None:
        """shared() arrays beyond the device's workgroup memory: a located error at decoration
        when a device is already up (else the first launch checks, naming the kernel)."""
        need = self.program.workgroup_bytes
        try:
            from .backend import device  # noqa: PLC0415
            ctx = device.default_context()
            limit = ctx.limit("max-compute-workgroup-storage-size") if ctx is not None else None
        except Exception:
            limit = None
        if not need or limit is None or need <= limit:
            return
        import linecache  # noqa: PLC0415
        filename, decls = self.program.filename, self.program.shared_arrays
        lineno = decls[0].lineno if decls else self.program.firstlineno
        text = linecache.getline(filename, lineno).rstrip()
        raise GpuKernelError(
            f"kernel {self.__name__} declares {need:,} bytes of shared() memory, more than the "
            f"{limit:,} bytes per workgroup of {ctx.name!r}\n"
            f'  File "{filename}", line {lineno}, in {self.__name__}\n    {text.strip()}\n'
            "use smaller shared arrays (16,384 bytes fit every WebGPU device)",
            filename, lineno, None, text) from None

    def announce(self, device: str) -> None:
        """Print the log=True line once (at decoration if a device is up, else at launch)."""
        if self.log and not self._logged:
            self._logged = True
            print(f"cthreads: kernel {self.__name__} assigned to GPU device {device}",
                  file=sys.stderr, flush=True)

    @property
    def wgsl(self) -> str:
        """The generated WGSL for workgroup size 64."""
        return self.program.wgsl(WORKGROUP_SIZE)

    def __call__(self, *args):
        return self.fn(*self._plain(args))

    def _plain(self, args) -> tuple:
        """``args`` for a plain-Python run: list[vec3] parameters see (n, 3) arrays as lists
        of vec3 (``cthreads.lang.vectors.VecList``)."""
        params = self.__dict__.get("_vector_lists")
        if params is None:
            params = self.__dict__["_vector_lists"] = vectors.vector_list_params(self.fn)
        sparams = self.__dict__.get("_struct_lists")
        if sparams is None:
            sparams = self.__dict__["_struct_lists"] = structs.struct_list_params(self.fn)
        return structs.plain_args(sparams, vectors.plain_args(params, args))

    def __repr__(self) -> str:
        return f"<GpuKernel {self.fn.__module__}:{self.fn.__qualname__}>"

    def __get__(self, obj, objtype=None):
        return self

    #: what ``pickle`` sends when the kernel travels by value (made on first need)
    _pickle_state = None
    #: the GpuNDLaunchWarning text of a launch without threads= (notices.nd_hint), or None
    nd_hint = None

    def __reduce__(self):
        """By reference when importable, else by value (``cthreads/pickling.py``); compiled
        pipelines never travel."""
        return pickling.reduce(self, GpuKernel)

    # -- the plain-Python oracle -----------------------------------------------------------
    def problem_size(self, args) -> int:
        at = self.program.count_param
        if at is not None and at < len(args):
            return int(args[at])
        lengths = [len(a) for p, a in zip(self.program.params, args) if p.is_list]
        return max(lengths, default=0)

    def simulate(self, *args, n: int | None = None, threads=None) -> None:
        """Run the body once per thread (GlobalIdx.x = 0 .. groups*64-1), lists in place;
        ``threads=(nx, ny[, nz])``: once per thread of that N-D launch (whole workgroups of
        ``nd_workgroup``, x fastest), the index builtins reading every axis.

        Kernels with barriers run workgroup by workgroup, the threads of a workgroup taking
        turns between barriers, and ``shared()`` gives them their workgroup's arrays
        (``cthreads/lang/simulator.py``); the others run one thread after another.
        """
        prog = self.program
        names = prog.python_names
        if len(args) != len(names):
            raise TypeError(f"{self.__name__}.simulate() takes {len(names)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
        devs = [k for k, a in enumerate(args) if isinstance(a, GpuArray)]
        if devs:       # a GpuArray runs on a host copy, written back afterwards
            hosts = list(args)
            for k in devs:
                hosts[k] = args[k].numpy()
            self.simulate(*hosts, n=n, threads=threads)
            for k in devs:             # only what the kernel writes (a read-only view of
                p = prog.params[k]     # an array it writes must not undo those writes)
                if p.written or p.atomic:
                    args[k].set(hosts[k])
            return
        with launch_float32(_float32_launch(prog, args)):    # Random's draws (lang/random)
            self._simulate(args, n, threads)

    def _simulate(self, args, n, threads) -> None:
        prog = self.program
        if isinstance(threads, (tuple, list)) and len(threads) > 1:
            t = tuple(int(v) for v in threads)
            block = self.nd_workgroup(len(t))
            t = t + (1,) * (3 - len(t))
            grid = tuple(-(-t[k] // block[k]) for k in range(3))
            simulator.run(self.fn, self._plain(args), simulator.Launch(
                self.__name__, block, grid, False, prog))
            return
        if threads is not None:
            n = threads[0] if isinstance(threads, (tuple, list)) else threads
        size = self.problem_size(args) if n is None else int(n)
        groups = max(1, -(-size // WORKGROUP_SIZE))
        simulator.run(self.fn, self._plain(args), simulator.Launch(
            self.__name__, (WORKGROUP_SIZE, 1, 1), (groups, 1, 1), True, prog))


def _float32_launch(program, args) -> bool:
    """Whether a launch with ``args`` is a float32 one (no float64 / complex128 array for a
    plain ``list[float]`` / ``list[complex]``), as ``launch._launch_program`` decides."""
    for p, value in zip(program.params, args):
        if p.is_list and p.plain in ("float", "complex"):
            found = width_of(value)
            if found is not None and found[0] in ("float64", "complex128"):
                return False
    return True


def _check_workgroup(workgroup) -> tuple | None:
    """``@Gpu(workgroup=(x, y[, z]))`` as (x, y, z), checked; None when not given."""
    if workgroup is None:
        return None
    if not isinstance(workgroup, tuple) or not 2 <= len(workgroup) <= 3 or any(
            v.__class__ is bool or not isinstance(v, int) or v < 1 for v in workgroup):
        raise TypeError(f"@Gpu(workgroup={workgroup!r}): write workgroup=(x, y) or (x, y, z) "
                        "with positive ints, e.g. workgroup=(16, 16)")
    return tuple(workgroup) + (1,) * (3 - len(workgroup))


def _check_print_limit(limit) -> int:
    """``@Gpu(print_limit=...)``: the lines of print() kept per launch, checked."""
    if limit.__class__ is bool or not isinstance(limit, int) or limit < 0:
        raise TypeError(f"@Gpu(print_limit={limit!r}): write a number of lines, an int >= 0 "
                        "(the default is 1000)")
    return int(limit)


def Gpu(fn=None, *, log: bool = False, boundscheck: bool = True, workgroup=None,
        timed: bool = False, print_limit: int = 1000):
    """Decorate a kernel: ``@Gpu``, ``@Gpu(log=True)``, ``@Gpu(boundscheck=False)``,
    ``@Gpu(workgroup=(16, 16))`` (N-D launches), ``@Gpu(timed=True)`` (jobs measure their
    ``device_time``), ``@Gpu(print_limit=100)`` (print() lines kept per launch); ``@Gpu.func``
    decorates a device function (``cthreads.func.GpuFunc``)."""
    if fn is None:
        _check_workgroup(workgroup)
        _check_print_limit(print_limit)
        return lambda f: GpuKernel(f, log=log, boundscheck=boundscheck, workgroup=workgroup,
                                   timed=timed, print_limit=print_limit)
    if isinstance(fn, (bool, int, str)):
        raise TypeError("use @Gpu, @Gpu(log=True), @Gpu(boundscheck=False) or "
                        "@Gpu(workgroup=(x, y))")
    return GpuKernel(fn, log=log, boundscheck=boundscheck, workgroup=workgroup, timed=timed,
                     print_limit=print_limit)


Gpu.func = GpuFunc
Gpu.struct = structs.struct


__all__ = ["Gpu", "GpuKernel", "all_kernels"]
