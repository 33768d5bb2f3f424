"""``GpuArray`` blocks in Dask: what a ``cthreads.dask`` task does with device arrays.

A dask array may hold ``GpuArray`` chunks, as CuPy-backed dask arrays hold CuPy arrays:
``device_blocks(x)`` uploads each block of a numpy-backed dask array once, on the device of
the process that runs its task (worker ``k`` of a cluster: device ``k % len(devices())``), and
``host_blocks(x)`` downloads them again. ``map_blocks`` launches its kernel on such blocks as
they are (no host copy): a task whose arguments include GpuArrays (blocks, or a whole
``GpuArray`` argument) runs on their device, which must be one; a GpuArray the kernel may write
is copied on the device first (the inputs never change), and ``out=None`` makes a zero block
on that device. A GpuArray that travels to another process pickles by value and unpickles onto
that process's task device (``devices.unpickle_device``): the one transfer.

``compute()`` of a dask array of GpuArray blocks gathers them (by value, onto the client's
device) and joins them into one GpuArray (``concatenate``, registered with dask's
``concatenate_lookup``: device copies along the first axis, host memory along the others).
Dask tokenizes graph arguments: a GpuArray's token is new each time (``normalize_token``), as
dask does for objects it cannot hash, so building a graph never downloads it.
"""

from __future__ import annotations

import functools
import os
import uuid

import numpy as np
from dask.array.dispatch import concatenate_lookup
from dask.base import normalize_token

from .backend import device as _device
from .codegen.types import elem as elem_type
from .devices import worker_device
from .errors import GpuInvalidArgument
from .gpu_array import GpuArray, to_device, zeros
from .runtime import device_array


def task_device(spec: dict) -> int | None:
    """The device of a task made by ``spec`` (``pid`` and ``selection`` of the caller): this
    process's worker device, else, in the caller's process, the caller's selection, else
    None (the default device)."""
    index = worker_device()
    if index is None and spec["pid"] == os.getpid():
        index = spec["selection"]
    return index


def _queue(d: GpuArray):
    d._slot.check_live("map_blocks")
    return d._slot.queue


def device_of(name: str, values: list, names: tuple):
    """The queue of the GpuArrays among ``values`` (None when there are none); a
    GpuInvalidArgument naming two of them when they live on different devices."""
    found = None
    for k, v in enumerate(values):
        if isinstance(v, GpuArray):
            queue = _queue(v)
            if found is None:
                found = (queue, k)
            elif queue is not found[0]:
                first = names[found[1]]
                raise GpuInvalidArgument(
                    f"map_blocks({name}, ...): the GpuArrays for {first!r} ({found[0].ctx.label}) "
                    f"and {names[k]!r} ({queue.ctx.label}) live on different devices; a "
                    "task launches on one. Move one: to_device(arr, device=...), or make the "
                    "blocks with cthreads.dask.device_blocks on the device the tasks use")
    return None if found is None else found[0]


def writable_copy(value):
    """A copy the kernel may write (the task's input never changes): on the device for a
    GpuArray, a C-ordered numpy array otherwise."""
    if isinstance(value, GpuArray):
        return value.copy()
    return np.array(value, copy=True, order="C")


def zeros_dtype(param, params: list, args: list, arrays: list):
    """The dtype of ``out=None``'s zeros for list parameter ``param``: its element type's,
    except that a plain ``list[float]`` / ``list[int]`` follows the 64-bit dask arrays given
    for the other plain parameters of its kind (they make plain float / int 64-bit)."""
    want = np.dtype(elem_type(param.elem).array_dtype)
    if param.plain is None:
        return want
    for k in arrays:
        p, dtype = params[k], np.dtype(args[k].dtype)
        if p.plain == param.plain and dtype.itemsize == 8 and dtype.kind == want.kind:
            return dtype
    return want


def zero_block(shape: tuple, dtype, queue):
    """``out=None``'s block: zeros on ``queue``'s device (a GpuArray), or numpy zeros."""
    if queue is None:
        return np.zeros(shape, dtype)
    return zeros(shape, dtype, device=queue)


def launch_index(queue, index):
    """The device index a task launches on: its GpuArrays' device, else ``index``."""
    return index if queue is None else queue.ctx.index


def _upload(spec: dict, block):
    if isinstance(block, GpuArray):
        return block
    index = task_device(spec)
    return to_device(np.ascontiguousarray(block), device=index)


def _download(block):
    return block.numpy() if isinstance(block, GpuArray) else block


def device_blocks(x):
    """The dask array of ``x``'s blocks as GpuArrays, each uploaded by its task on the device
    of the process that runs it (``map_blocks``'s rule); blocks that are GpuArrays already are
    kept."""
    _check_dask_array(x, "device_blocks")
    check_source("cthreads.dask.device_blocks()", "argument", x)
    spec = {"pid": os.getpid(), "selection": _device.selection.get()}
    return x.map_blocks(functools.partial(_upload, spec), dtype=x.dtype,
                        meta=np.empty((0,) * x.ndim, dtype=x.dtype),
                        token="cthreads-device-blocks")


def host_blocks(x):
    """The dask array of ``x``'s blocks as numpy arrays (GpuArray blocks downloaded)."""
    _check_dask_array(x, "host_blocks")
    return x.map_blocks(_download, dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype),
                        token="cthreads-host-blocks")


def check_source(caller: str, what: str, x) -> None:
    """Refuse a dask array made by ``da.from_array`` of a GpuArray: its tasks would slice the
    GpuArray, which kernels cannot take in pieces (views at an offset) and which would travel
    whole to every worker."""
    for name, layer in x.dask.layers.items():
        if not name.startswith("original-") or len(layer) != 1:
            continue
        if any(isinstance(v, GpuArray) for v in layer.values()):
            raise GpuInvalidArgument(
                f"{caller} {what}: a dask array made by da.from_array of a GpuArray, whose "
                "tasks would slice the GpuArray; make its blocks on the device instead: "
                "cthreads.dask.device_blocks(da.from_array(d.numpy(), chunks=...)) (one "
                "download here, each block uploaded by its task), or keep the data in numpy "
                "until then")


def _check_dask_array(x, caller: str) -> None:
    import dask.array as da  # noqa: PLC0415

    if not isinstance(x, da.Array):
        raise GpuInvalidArgument(
            f"cthreads.dask.{caller}() takes a dask array, got {type(x).__name__}; for one "
            "array use cthreads.gpu.to_device(a) / d.numpy()")


@normalize_token.register(GpuArray)
def _token(d: GpuArray) -> tuple:
    """Dask's token of a GpuArray: a new one each time (hashing its data would download it;
    dask tokenizes the arguments of every graph it builds)."""
    return ("cthreads.GpuArray", d.shape, d.dtype.name, uuid.uuid4().hex)


@concatenate_lookup.register(GpuArray)
def concatenate(arrays, axis: int = 0) -> GpuArray:
    """GpuArray blocks joined into one GpuArray on the first block's device (what dask's
    ``compute()`` calls): along the first axis by device copies; along another axis, or with
    blocks of several devices or kinds, through host memory (one download of each block and
    one upload)."""
    arrays = list(arrays)
    if len(arrays) == 1 and isinstance(arrays[0], GpuArray):
        return arrays[0]
    first = next(a for a in arrays if isinstance(a, GpuArray))
    queue = _queue(first)
    if axis == 0 and all(isinstance(a, GpuArray) and a.dtype == first.dtype
                         and a.shape[1:] == first.shape[1:] and _queue(a) is queue
                         for a in arrays):
        shape = (sum(a.shape[0] for a in arrays),) + first.shape[1:]
        return GpuArray(device_array.concatenate([a._slot for a in arrays], shape), first.dtype)
    host = np.concatenate([_download(a) for a in arrays], axis=axis)
    return to_device(host, device=queue)


__all__ = ["concatenate", "device_blocks", "host_blocks"]
