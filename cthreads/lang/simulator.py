"""The plain-Python run of a launch (``GpuKernel.simulate``): every thread, workgroup by workgroup.

Three ways, chosen from the compiled program (``KernelProgram.barrier_lines`` and
``shared_arrays``):

* no barrier, no ``shared()``: the threads run one after another on the caller's thread (the
  fast path; x fastest over the whole launch);
* ``shared()`` without a barrier: the same, workgroup by workgroup, each workgroup's threads
  getting that workgroup's arrays;
* barriers: the threads of one workgroup run as cooperating Python threads that take turns,
  exactly one running at a time, in ``ThreadIdx`` order (x fastest), each until its next
  barrier or its end; when every thread has arrived or finished, the next phase starts. A
  thread that has returned counts as arrived at every later barrier: the device does the
  same for the kernels the compiler accepts (their early returns become a flag and the
  finished threads keep walking the barriers, docs/language.md). Threads of one phase waiting
  at different barriers (which the compiler's uniformity check should make impossible) stop
  the run with a ``GpuKernelError`` naming the kernel and both lines.

Since one simulated thread runs at a time and no barrier is inside an atomic, ``atomic_*`` are
atomic with respect to the other simulated threads; the interleaving is deterministic, so a run
repeats exactly (a kernel whose threads race gets one of the results the device could give).
An exception in a thread ends the run at once: the other threads are released from their
barriers and end, and the exception propagates with a note naming the thread.

``shared()`` and the barrier forms (``cthreads.lang.intrinsics``, ``cthreads.sync``) ask
``current()`` for the running thread's workgroup; outside a simulation it is None and they
keep their plain-Python meaning.
"""

from __future__ import annotations

import threading
import time

from . import indexes
from ..errors import GpuKernelError

_local = threading.local()


def current():
    """The workgroup context of the simulated thread running here, or None."""
    return getattr(_local, "ctx", None)


class Launch:
    """The shape of a simulated launch: ``block`` and ``grid`` are (x, y, z); ``one_d``: the
    1-D form (the notes say ``GlobalIdx.x = g``)."""

    def __init__(self, name: str, block: tuple, grid: tuple, one_d: bool, program):
        self.name, self.block, self.grid, self.one_d = name, block, grid, one_d
        self.program = program

    def note(self, index: tuple) -> str:
        if self.one_d:
            return f"(in simulated thread GlobalIdx.x = {index[0]} of kernel {self.name})"
        x, y, z = index
        return f"(in simulated thread GlobalIdx = ({x}, {y}, {z}) of kernel {self.name})"

    def blocks(self):
        gx, gy, gz = self.grid
        for bz in range(gz):
            for by in range(gy):
                for bx in range(gx):
                    yield (bx, by, bz)

    def local_indexes(self) -> list:
        bx, by, bz = self.block
        return [(x, y, z) for z in range(bz) for y in range(by) for x in range(bx)]

    def global_index(self, block: tuple, local: tuple) -> tuple:
        return tuple(b * s + t for b, s, t in zip(block, self.block, local))


def run(fn, args, launch: Launch) -> None:
    """Run ``fn(*args)`` once per thread of ``launch``, as the module docstring says."""
    program = launch.program
    launch.float64 = _float64_args(args)    # the layout of shared list[Particle] arrays
    if program.barrier_lines:
        _Cooperative(fn, args, launch).run()
    elif program.shared_arrays:
        _run_by_workgroup(fn, args, launch)
    else:
        _run_sequential(fn, args, launch)


def _run_sequential(fn, args, launch: Launch) -> None:
    (wx, wy, wz), (gx, gy, gz) = launch.block, launch.grid
    try:
        if launch.one_d:
            for g in range(gx * wx):
                indexes.set_thread(g, wx, gx)
                try:
                    fn(*args)
                except Exception as exc:
                    exc.add_note(launch.note((g, 0, 0)))
                    raise
            return
        for z in range(gz * wz):
            for y in range(gy * wy):
                for x in range(gx * wx):
                    indexes.set_thread_nd((x, y, z), launch.block, launch.grid)
                    try:
                        fn(*args)
                    except Exception as exc:
                        exc.add_note(launch.note((x, y, z)))
                        raise
    finally:
        indexes.clear_thread()


class _Workgroup:
    """One workgroup's shared() arrays, made on first use at each declaration."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.arrays: dict = {}

    def shared(self, size: int, frame) -> list:
        key = (frame.f_code, frame.f_lasti)
        array = self.arrays.get(key)
        if array is None and _struct_decl(self.launch.program, frame.f_lineno) is not None:
            array = self.arrays[key] = _struct_shared(
                _struct_decl(self.launch.program, frame.f_lineno), size,
                getattr(self.launch, "float64", False))
        if array is None:
            zero = _zero(self.launch.program, frame.f_lineno)
            # a shared list[vec3]: a fresh zero vector per element (vectors are mutable)
            array = self.arrays[key] = [zero() for _ in range(size)] if callable(zero) \
                else [zero] * size
        return array

    def barrier(self, frame) -> None:
        raise RuntimeError(
            f"kernel {self.launch.name} reached a barrier at line {frame.f_lineno} that its "
            "compiled program does not have; please report it to the cthreads developers")


def _struct_decl(program, lineno: int):
    """The shared() declaration of a list[Particle] on ``lineno``, or None."""
    for decl in program.shared_arrays:
        if decl.lineno <= lineno <= decl.end_lineno and getattr(decl, "struct", None):
            return decl
    return None


def _struct_shared(decl, size: int, float64: bool):
    """A zeroed shared list[Particle]: a structured array of the launch's layout (float64
    when an argument is a float64 array), seen as records (``structs.StructList``)."""
    import numpy as np  # noqa: PLC0415
    from .structs import StructList  # noqa: PLC0415
    width = "float64" if float64 or decl.elem == "float64" else "float32"
    return StructList(np.zeros(size, decl.struct.dtype_for(width)), decl.struct)


def _float64_args(args) -> bool:
    """Whether the launch is a float64 one: an argument is a float64 array or an array of a
    struct's float64 layout (8-byte words)."""
    for a in args:
        a = getattr(a, "array", a)              # a StructList / VecList's array
        dtype = getattr(a, "dtype", None)
        if dtype is None:
            continue
        if dtype.names:
            if any(dtype.fields[n][0].base.itemsize == 8 for n in dtype.names):
                return True
        elif dtype.kind == "f" and dtype.itemsize == 8:
            return True
    return False


def _zero(program, lineno: int):
    """The zero of the element type of the shared() declaration on ``lineno`` (a shared
    list[vec3]'s: the vector class, which makes a zero vector)."""
    for decl in program.shared_arrays:
        if decl.lineno <= lineno <= decl.end_lineno:
            if getattr(decl, "vec", 0):
                from .vectors import VECTOR_TYPES  # noqa: PLC0415
                cls = VECTOR_TYPES[("i" if "int" in decl.elem else "") + f"vec{decl.vec}"]
                return lambda: cls(0)
            return 0.0 if decl.elem.startswith("float") else \
                False if decl.elem == "bool" else 0
    return 0


def _run_by_workgroup(fn, args, launch: Launch) -> None:
    locals_ = launch.local_indexes()
    try:
        for block in launch.blocks():
            _local.ctx = _Workgroup(launch)
            for local in locals_:
                index = launch.global_index(block, local)
                indexes.set_thread_nd(index, launch.block, launch.grid)
                try:
                    fn(*args)
                except Exception as exc:
                    exc.add_note(launch.note(index))
                    raise
    finally:
        _local.ctx = None
        indexes.clear_thread()


class _Abort(BaseException):
    """Raised in a simulated thread at its barrier when the run has ended (a failure
    elsewhere): unwinds the kernel body (which has no try), never seen by the caller."""


_WAITING, _DONE = "waiting", "done"


class _Thread:
    """One simulated thread of the workgroup being run: a Python thread that waits for its
    turn (``go``), reused for the same local index of every workgroup."""

    def __init__(self, engine: _Cooperative, local: tuple):
        self.engine, self.local = engine, local
        self.go = threading.Lock()       # held while it is not this thread's turn
        self.go.acquire()
        self.state = _DONE
        self.site: tuple = ()            # (code, instruction) of the barrier it waits at
        self.lineno = 0
        self.index = (0, 0, 0)
        self.thread = threading.Thread(target=self._main, daemon=True,
                                       name=f"cthreads-simulate-{engine.launch.name}-{local}")

    # -- on the simulated thread -------------------------------------------------------------
    def _main(self) -> None:
        engine, launch = self.engine, self.engine.launch
        _local.ctx = self
        try:
            while True:
                self.go.acquire()
                if engine.abort:
                    return
                self.index = launch.global_index(engine.block, self.local)
                indexes.set_thread_nd(self.index, launch.block, launch.grid)
                try:
                    engine.fn(*engine.args)
                except _Abort:
                    return
                except BaseException as exc:       # noqa: BLE001 - handed to the caller
                    if isinstance(exc, Exception):
                        exc.add_note(launch.note(self.index))
                    engine.fail(exc)
                    continue
                self.state = _DONE
                engine.advance()
        except BaseException as exc:       # noqa: BLE001 - the engine's own failure: never
            engine.fail(exc)               # leave the caller waiting for this workgroup
        finally:
            _local.ctx = None
            indexes.clear_thread()

    def shared(self, size: int, frame) -> list:
        return self.engine.workgroup.shared(size, frame)

    def barrier(self, frame) -> None:
        self.site = (frame.f_code, frame.f_lasti)
        self.lineno = frame.f_lineno
        self.state = _WAITING
        self.engine.advance()
        self.go.acquire()
        if self.engine.abort:
            raise _Abort


def _wake(lock) -> None:
    """Let the thread waiting on ``lock`` (a lock used as a one-permit signal) go on; a second
    wake before it went on (only when the run is being stopped) is the same wake."""
    try:
        lock.release()
    except RuntimeError:
        pass


class _Cooperative:
    """Runs the workgroups one at a time, their threads taking turns between barriers."""

    def __init__(self, fn, args, launch: Launch):
        self.fn, self.args, self.launch = fn, args, launch
        self.threads = [_Thread(self, local) for local in launch.local_indexes()]
        self.done = threading.Lock()           # the caller's: a workgroup ended or failed
        self.done.acquire()
        self.abort = False
        self.failure: BaseException | None = None
        self.block = (0, 0, 0)
        self.workgroup = _Workgroup(launch)
        self.pending: list = []                 # this phase's threads, in turn order
        self.turn = 0

    def run(self) -> None:
        for t in self.threads:
            t.thread.start()
        try:
            for block in self.launch.blocks():
                self.block = block
                self.workgroup = _Workgroup(self.launch)
                self.pending, self.turn = self.threads, 0
                _wake(self.threads[0].go)
                self.done.acquire()
                if self.failure is not None:
                    raise self.failure
        finally:
            self._stop()

    def _stop(self) -> None:
        self.abort = True
        for t in self.threads:
            _wake(t.go)
        deadline = time.monotonic() + 5.0
        for t in self.threads:
            if t.thread.ident is not None:            # started
                t.thread.join(max(0.0, deadline - time.monotonic()))

    # -- called by the running simulated thread, the only one running ------------------------
    def advance(self) -> None:
        """The running thread arrived at a barrier or finished: start the next one's turn, or
        the next phase, or tell the caller that the workgroup is done."""
        turn = self.turn + 1
        if turn < len(self.pending):
            self.turn = turn
            _wake(self.pending[turn].go)
            return
        waiting = [t for t in self.pending if t.state is _WAITING]
        if not waiting:
            _wake(self.done)
            return
        first = waiting[0]
        other = next((t for t in waiting if t.site != first.site), None)
        if other is not None:
            self.fail(self._divergence(first, other))
            return
        self.pending, self.turn = waiting, 0
        _wake(first.go)

    def fail(self, exc: BaseException) -> None:
        if self.failure is None:                # the first failure is the one reported
            self.failure = exc
        _wake(self.done)

    def _divergence(self, a: _Thread, b: _Thread) -> GpuKernelError:
        import linecache  # noqa: PLC0415
        filename = a.site[0].co_filename
        text_a = linecache.getline(filename, a.lineno).strip()
        text_b = linecache.getline(b.site[0].co_filename, b.lineno).strip()
        bx, by, bz = self.block
        where = f"BlockIdx = ({bx}, {by}, {bz})"
        return GpuKernelError(
            f"kernel {self.launch.name}: in simulate(), threads of the workgroup {where} wait "
            f"at different barriers: ThreadIdx = {a.local} at line {a.lineno} ({text_a}), "
            f"ThreadIdx = {b.local} at line {b.lineno} ({text_b})\n"
            f'  File "{filename}", line {b.lineno}, in {b.site[0].co_name}\n    {text_b}\n'
            "every thread of a workgroup must reach the same barriers (a barrier may only sit "
            "under conditions and loops that are the same for the whole workgroup)",
            filename, b.lineno, None, text_b)


__all__ = ["Launch", "current", "run"]
