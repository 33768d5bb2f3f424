"""Kernels over Dask arrays: ``map_blocks`` (the optional extra ``cthreads[dask]``).

``map_blocks(kernel, *args, out="y", threads=None)`` builds on ``dask.array.map_blocks``: one
task per block, each launching ``kernel`` on that block's numpy arrays in whatever process runs
it (the threaded, process and ``distributed`` schedulers alike). The kernel travels with the
task (``cthreads/pickling.py``: by reference, or by value from ``__main__``), and each process
opens its own device on first use. Scalars, and lists or numpy arrays that are not dask arrays,
are passed whole to every block; a kernel parameter named ``n`` is filled with the block's
length. Every list the kernel may write is a copy, so the input arrays never change; the result
is a dask array of parameter ``out``'s blocks after the kernel ran.

Devices: a task on worker ``k`` of a ``distributed`` cluster (a ``LocalCluster`` names its
workers 0, 1, ...) runs on device ``k % len(devices())`` unless ``CTHREADS_ADAPTER`` is set; a
task run in the process that called ``map_blocks`` (the threaded and synchronous schedulers)
uses the device selected there (``use_device``); elsewhere the default device.

``GpuArray`` blocks (``device_blocks``) and whole ``GpuArray`` arguments are launched on as they
are, on their device, with no host copy (``dask_blocks.py``; docs/scale.md, "Device-array
blocks").

Blocks of up to three dimensions: with ``threads=None`` a 1-D block launches its length and an
N-D block its shape with x along the last axis (``threads=(shape[-1], shape[-2], ...)``).
"""

from __future__ import annotations

import functools
import os

try:
    import dask.array as _da
except ImportError as exc:  # pragma: no cover - the optional extra is missing
    raise ImportError(f"cthreads.dask needs Dask ({exc}); install it with "
                      "`pip install 'cthreads[dask]'`") from None
import numpy as np

from .runtime import residency, sharing
from .backend import device as _device
from . import dask_blocks
from .dask_blocks import device_blocks, host_blocks
from .devices import use_device, worker_device
from .gpu_array import GpuArray
from .errors import GpuInvalidArgument
from .kernel import GpuKernel
from .launch import gpu

def _run_block(spec: dict, *blocks):
    """One task: launch the kernel on one block (in the process that runs the task)."""
    values = list(spec["values"])
    written = spec["written_pos"]
    for pos, block in zip(spec["array_pos"], blocks):
        # a block may be a strided view (chunks across columns): launches take C order
        values[pos] = block if pos in written or isinstance(block, GpuArray) \
            else np.ascontiguousarray(block)
    length = len(blocks[0]) if blocks else 1
    queue = dask_blocks.device_of(spec["kernel"].__name__, values, spec["names"])
    for pos in written:
        if values[pos] is not None:          # inputs never change (GpuArrays: a device copy)
            values[pos] = dask_blocks.writable_copy(values[pos])
    if spec["zeros"] is not None:            # out=None: a fresh block of zeros
        values[spec["out_pos"]] = dask_blocks.zero_block(tuple(blocks[0].shape),
                                                         spec["zeros"], queue)
    result = values[spec["out_pos"]]
    if spec["n_pos"] is not None:
        values.insert(spec["n_pos"], length)
    threads = spec["threads"]
    if threads is None and blocks and blocks[0].ndim > 1:
        threads = tuple(reversed(blocks[0].shape))       # x along the last axis
    kwargs = {} if threads is None else {"threads": threads}
    index = dask_blocks.launch_index(queue, dask_blocks.task_device(spec))
    if index is None:
        gpu(spec["kernel"], *values, **kwargs).join()
    else:
        with use_device(index):
            gpu(spec["kernel"], *values, **kwargs).join()
    return result


def _refuse_bound(name: str, value) -> None:
    """Refuse a list or numpy array bound in a GpuArena, or sharing memory with one (a view, a
    row of a bound nested list): a task reads its host memory (copied, or in another process),
    which is stale while the device copy is ahead. (Dask arrays hold copies of what they were
    made from: ``da.from_array`` of a bound array copies its host memory, which is current
    only after ``GpuArena.sync()``.)"""
    if not isinstance(value, (np.ndarray, list)):
        return
    slot = residency.lookup(value)
    if slot is None and isinstance(value, np.ndarray):
        slot = next(iter(sharing.overlapping(value)), None)
    elif slot is None:
        try:
            sharing.check_list_parts(value, f"map_blocks parameter {name!r}")
        except GpuInvalidArgument as exc:
            raise GpuInvalidArgument(f"{exc} (tasks read lists from host memory)") from None
    if slot is not None:
        raise GpuInvalidArgument(
            f"map_blocks parameter {name!r}: it is, or shares memory with, the list or array "
            f"bound as arena slot {slot.name!r}; tasks read it from host memory, which is "
            "behind the device copy until GpuArena.sync(). Call "
            f"arena.sync({slot.name!r}) and pass a copy (arr.copy(), list(x)), or release the "
            "arena first")


def map_blocks(kernel, *args, out: str = "y", threads=None):
    """Run ``kernel`` on every block of the dask arrays among ``args`` (the kernel's arguments
    in order, without ``n``); returns the dask array of parameter ``out`` after the kernel ran.

    The dask arrays must have the same chunks (``x.rechunk(y.chunks)``); other arguments are
    passed whole to every block. ``out`` names a list parameter: its argument is a dask array
    (the values the kernel starts from) or None (zeros of the parameter's element type). The
    input arrays are never changed. Blocks and whole arguments may be GpuArrays: the task
    launches on their device, and the result's blocks are GpuArrays where ``out``'s are (or
    ``out`` is None in a task with GpuArrays). ``threads`` is passed to every launch (None: a
    1-D block's length, an N-D block's shape with x along the last axis)."""
    if not isinstance(kernel, GpuKernel):
        raise TypeError(f"map_blocks: {getattr(kernel, '__name__', kernel)!r} is not a @Gpu "
                        "kernel; decorate the function with @Gpu")
    program = kernel.program
    params = list(program.params)
    n_pos = program.count_param
    taken = [p for k, p in enumerate(params) if k != n_pos]
    names = ", ".join(p.name for p in taken)
    if len(args) != len(taken):
        filled = " (n is filled with each block's length)" if n_pos is not None else ""
        raise TypeError(f"map_blocks({program.name}, ...) takes {len(taken)} kernel "
                        f"argument(s) ({names}){filled}, got {len(args)}")
    by_name = {p.name: k for k, p in enumerate(taken)}
    out_param = next((p for p in taken if p.name == out), None)
    if out_param is None or not out_param.is_list:
        lists = ", ".join(repr(p.name) for p in taken if p.is_list)
        raise GpuInvalidArgument(f"map_blocks({program.name}, ..., out={out!r}): out names the "
                                 f"list parameter whose blocks are returned; the kernel's "
                                 f"list parameters are {lists}")
    out_pos = by_name[out]
    args = list(args)
    arrays = [k for k, a in enumerate(args) if isinstance(a, _da.Array)]
    if not arrays:
        raise GpuInvalidArgument(f"map_blocks({program.name}, ...): no argument is a dask "
                                 "array; pass dask arrays (dask.array.from_array(x, chunks=...)) "
                                 "or launch with gpu()")
    first = args[arrays[0]]
    for k in arrays:
        a, p = args[k], taken[k]
        if not p.is_list or a.ndim != p.ndim or a.ndim > 3:
            what = f"a {p.ndim}-D list" if p.is_list else f"a scalar ({p.elem})"
            raise GpuInvalidArgument(
                f"map_blocks({program.name}, ...) parameter {p.name!r}: a {a.ndim}-D dask "
                f"array, but the kernel declares {what}; pass "
                + (f"a {p.ndim}-D dask array (blocks of up to 3 dimensions)" if p.is_list
                   else "a number"))
        dask_blocks.check_source(f"map_blocks({program.name}, ...)", f"parameter {p.name!r}", a)
        if a.chunks != first.chunks:
            raise GpuInvalidArgument(
                f"map_blocks({program.name}, ...) parameters {taken[arrays[0]].name!r} and "
                f"{taken[k].name!r} have different chunks ({first.chunks[0][:4]}... against "
                f"{a.chunks[0][:4]}...); rechunk one: "
                f"{taken[k].name}.rechunk({taken[arrays[0]].name}.chunks)")
    if args[out_pos] is None:
        if out_param.ndim != first.ndim:
            raise GpuInvalidArgument(
                f"map_blocks({program.name}, ..., out={out!r}): {out!r} is a "
                f"{out_param.ndim}-D list and the dask arrays are {first.ndim}-D; pass a "
                f"{out_param.ndim}-D dask array for it")
        zeros = dask_blocks.zeros_dtype(out_param, taken, args, arrays)
        result = _da.zeros(first.shape, chunks=first.chunks, dtype=zeros)   # its chunks only
    elif not isinstance(args[out_pos], _da.Array):
        raise GpuInvalidArgument(f"map_blocks({program.name}, ..., out={out!r}): the argument "
                                 f"for {out!r} must be a dask array (or None for zeros), got "
                                 f"{type(args[out_pos]).__name__}")
    else:
        zeros, result = None, args[out_pos]
    written = [k for k, p in enumerate(taken) if p.is_list and (p.written or p.atomic)]
    if sharing.bound_arrays or sharing.bound_lists:
        for k, a in enumerate(args):
            if k not in arrays:
                _refuse_bound(taken[k].name, a)
    values = [None if k in arrays else a for k, a in enumerate(args)]
    spec = {"kernel": kernel, "values": tuple(values), "array_pos": tuple(arrays),
            "names": tuple(p.name for p in taken),
            "written_pos": tuple(written), "n_pos": n_pos, "out_pos": out_pos,
            "zeros": zeros, "threads": threads, "pid": os.getpid(),
            "selection": _device.selection.get()}
    return _da.map_blocks(functools.partial(_run_block, spec), *[args[k] for k in arrays],
                          dtype=result.dtype, chunks=result.chunks,
                          meta=np.empty((0,) * result.ndim, dtype=result.dtype),
                          token=f"cthreads-{program.name}")


__all__ = ["device_blocks", "host_blocks", "map_blocks", "worker_device"]
