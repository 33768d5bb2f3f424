"""``@Gpu.func``: device functions, callable from kernels, from Python, and as reductions.

A ``GpuFunc`` is checked at decoration (signature, and the body when every function it calls
already exists; otherwise the first kernel that calls it checks it); kernels that call it
compile it in (``codegen/functions.py``). Called from Python, or inside ``simulate``, it runs
its Python body. ``reduce`` folds a list or array with it on the device (``reduce.py``, ``runtime/reducer.py``).
"""

from __future__ import annotations

from . import config, pickling
from .codegen import check_function, compile_operation
from .codegen.functions import DeviceFunction, OpSource
from .codegen.types import Widths
from .errors import GpuKernelError, GpuKernelTypeError, GpuUnresolvedName, as_raised_to_user
from .runtime.capture_library import recordable


class GpuFunc(DeviceFunction):
    """A ``@Gpu.func`` device function."""

    def __init__(self, fn):
        try:
            super().__init__(fn)
            try:
                check_function(self)
            except GpuUnresolvedName:
                pass        # a function defined further down: checked by the first caller
        except (GpuKernelError, GpuKernelTypeError) as exc:
            raise as_raised_to_user(exc, config.current().full_traceback)
        self._ops: dict = {}          # widths key -> OpSource

    def __call__(self, *args):
        return self.fn(*args)

    def __get__(self, obj, objtype=None):
        return self

    #: what ``pickle`` sends when the function travels by value (made on first need)
    _pickle_state = None

    def __reduce__(self):
        """By reference when importable, else by value (``cthreads/pickling.py``)."""
        return pickling.reduce(self, GpuFunc)

    def reduce_op(self, widths: tuple = ("float", "int")) -> OpSource:
        """The function as a binary operation (WGSL), plain float and int meaning ``widths``,
        for ``reduce``; ``TypeError`` unless it takes two parameters of one scalar type and
        returns that type."""
        op = self._ops.get(tuple(widths))
        if op is None:
            try:
                op = compile_operation(self, Widths(*widths))
            except (GpuKernelError, GpuKernelTypeError) as exc:
                raise as_raised_to_user(exc, config.current().full_traceback)
            self._ops[tuple(widths)] = op
        return op

    @recordable("f.reduce")       # inside capture(): recorded (runtime/capture_library.py)
    def reduce(self, values, init=None, *, axis=None, keepdims=False, to_device=False):
        """Fold ``values`` (a list, a 1-D numpy array, or a list resident in a ``GpuArena``)
        with this function on the device, as ``functools.reduce`` would up to the order of
        the operations (a tree); returns a Python scalar. Empty ``values``: ``init``, or
        ``ValueError`` without it; with ``init`` the result is ``f(init, reduction)``.
        ``axis`` (an int or a tuple of ints) reduces along those axes only, with numpy's
        result shape (``np.add.reduce(x, axis=...)``; ``keepdims`` as numpy's). With
        ``to_device=True`` the result stays on the device as a GpuArray (0-d without
        ``axis``), queued behind the pending work and never waited for."""
        from .reduce import reduce_values  # noqa: PLC0415
        return reduce_values(self, values, init, axis, keepdims, to_device)

    @recordable("f.accumulate")
    def accumulate(self, values, axis=None):
        """The inclusive scan of ``values`` by this (associative) function on the device, as
        ``np.add.accumulate`` / ``np.cumsum``: flattened when ``axis`` is None, else along
        ``axis``; a GpuArray for a GpuArray input, else a numpy array (``accumulate.py``)."""
        from .accumulate import accumulate_values  # noqa: PLC0415
        return accumulate_values(self, values, axis)


__all__ = ["GpuFunc"]
