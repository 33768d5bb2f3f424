"""Index builtins: ``GlobalIdx``, ``ThreadIdx``, ``BlockIdx``, ``BlockDim``, ``GridDim``.

Inside a kernel the compiler replaces them by device values. In a plain-Python call they read
as a single thread: indexes 0, sizes 1, unless ``GpuKernel.simulate`` is running the kernel
thread by thread, in which case they hold that simulated thread's values.
"""

from __future__ import annotations

import threading

_state = threading.local()


def _current() -> dict:
    cur = getattr(_state, "values", None)
    return cur if cur is not None else _DEFAULTS


_DEFAULTS = {
    "GlobalIdx": (0, 0, 0), "ThreadIdx": (0, 0, 0), "BlockIdx": (0, 0, 0),
    "BlockDim": (1, 1, 1), "GridDim": (1, 1, 1),
}


class IndexBuiltin:
    """One of the five index builtins; ``.x .y .z`` read the current thread's values."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    @property
    def x(self) -> int:
        return _current()[self._name][0]

    @property
    def y(self) -> int:
        return _current()[self._name][1]

    @property
    def z(self) -> int:
        return _current()[self._name][2]

    def __repr__(self) -> str:
        return f"<cthreads index builtin {self._name}>"

    def __reduce__(self):
        return self._name


GlobalIdx = IndexBuiltin("GlobalIdx")
ThreadIdx = IndexBuiltin("ThreadIdx")
BlockIdx = IndexBuiltin("BlockIdx")
BlockDim = IndexBuiltin("BlockDim")
GridDim = IndexBuiltin("GridDim")

INDEX_BUILTINS = {b._name: b for b in (GlobalIdx, ThreadIdx, BlockIdx, BlockDim, GridDim)}


def set_thread(global_x: int, block_dim: int, grid_dim: int) -> None:
    """Make the index builtins read as simulated thread ``global_x`` (used by simulate)."""
    _state.values = {
        "GlobalIdx": (global_x, 0, 0),
        "ThreadIdx": (global_x % block_dim, 0, 0),
        "BlockIdx": (global_x // block_dim, 0, 0),
        "BlockDim": (block_dim, 1, 1),
        "GridDim": (grid_dim, 1, 1),
    }


def set_thread_nd(index: tuple, block: tuple, grid: tuple) -> None:
    """Make the index builtins read as the simulated thread at ``index`` (x, y, z) of an N-D
    launch with workgroups ``block`` and ``grid`` workgroups per axis."""
    _state.values = {
        "GlobalIdx": tuple(index),
        "ThreadIdx": tuple(i % b for i, b in zip(index, block)),
        "BlockIdx": tuple(i // b for i, b in zip(index, block)),
        "BlockDim": tuple(block),
        "GridDim": tuple(grid),
    }


def clear_thread() -> None:
    _state.values = None
