"""The device side of ``matmul``: dispatch the tiled product of ``codegen/matmul.py`` on
device buffers (``cthreads/matmul.py`` checks the operands, uploads host data and makes the
result array).

``run_product`` takes three ``Operand``s (a buffer, its element type, its first element and its
batch stride) and the product's sizes, and queues one dispatch per range of at most
``codegen.MAX_STEPS`` passes of the k loop along k (the later ones adding to C: the k loop is the shader's only
loop and stays far below a CPU driver's loop budget) and per 65,535 batches (the grid's z).

Per device a ``_Matmuls`` keeps the compiled pipelines (per element types and tiles: repeated
calls compile nothing), the uniform buffers (one per dispatch of a call) and a small cache of
bind groups. The tile configuration is the device class's: ``TILES_GPU`` on GPUs
(``TILES_GPU_OLD`` with ``CTHREADS_MATMUL_TILES=old``),
``TILES_CPU`` on CPU drivers (the lanes form of ``codegen/matmul_lanes.py`` where the driver's
lanes are known, ``cpu_tiles``; ``TILES_CPU_OLD``, the direct form, with
``CTHREADS_MATMUL_CPU=old``: measured with bench/matmul.py and bench/probe_matmul_cpu.py,
docs/performance.md).
"""

from __future__ import annotations

import os
from typing import Any
import weakref
from dataclasses import dataclass

from ..backend import device as _device
from .per_device import PerDevice
from ..backend import get_queue
from ..backend.bind_groups import BindGroupCache
from ..backend.pipeline import READ, READ_WRITE, UNIFORM, make_bind_group_layout
from ..codegen import matmul as codegen
from ..codegen import matmul_lanes
from .. import config
from ..errors import GpuInvalidArgument
from .device_program import Pipelines, internal_error

#: tiles per device class (docs/performance.md, "Matrix products")
#: (the direct form's history, lavapipe, 512^2 float32 on 2 shared cores: the shared-memory form's best, 64x64x8 tiles
#: of 8x8 blocks, 2-4 GFLOP/s (4x4 blocks 0.7, 32x32x8 of 8x4 1.0, 128x64x8 of 8x8 0.8); the
#: direct form of 8x8 blocks in 64x64 workgroup tiles 7-14 (4x4 blocks 6.4): llvmpipe runs
#: a workgroup's invocations as coroutines switched at every barrier, and the CPU's caches
#: hold the tiles anyway. At 1024^2 the direct form's 16x16 blocks in 128x128 tiles give
#: 10-24 GFLOP/s against 8-12 for 8x8: each load (a gather over the SIMD lanes) feeds more
#: products.)
#: GPUs since the H200's first figures (bench/results/h200-2026-12-02-*.txt: float64 0.17x
#: cuBLAS with TILES_GPU_OLD): float64 in 128x64x16 tiles of 8x4 blocks (each invocation reads
#: half the B vectors of workgroup memory per product that 4x4 blocks read: 1 byte a product,
#: where the H200's shared memory gives 2 an FP64 FMA at peak; 24 KiB of workgroup memory,
#: 256 invocations of about 100 registers), float32 in 128x128x16 tiles (half the barriers
#: per product), both reading the next step's tiles into registers before this step's
#: products (the loads' latency hidden behind them: about 24 registers more in float64).
#: CTHREADS_MATMUL_TILES=old selects TILES_GPU_OLD (read once, first matmul).
TILES_GPU = {"float32": codegen.Tiles(128, 128, 16, 8, 8, prefetch=True),
             "float64": codegen.Tiles(128, 128, 16, 8, 8, prefetch=True)}
#: (float64 since issue 27's sweep, bench/probe_matmul_tiles.py on the H200 at 4096^2,
#: bench/results/h200-2026-12-02-r3-tiles64.txt: 128x128x16 of 8x8 16.4 TFLOP/s, 128x128x8
#: of 8x8 15.6, the former 128x64x16 of 8x4 13.9; cuBLAS fp64 58.3 on its tensor cores)
#: the GPU tiles before (H200 2026-12-02: float32 4096^2 25.6 TFLOP/s, float64 8.8)
TILES_GPU_OLD = {"float32": codegen.Tiles(128, 128, 8, 8, 8),
                 "float64": codegen.Tiles(64, 64, 8, 4, 4)}
#: the variable choosing the GPU tiles: "" or "new" (TILES_GPU), "old" (TILES_GPU_OLD)
TILES_VARIABLE = "CTHREADS_MATMUL_TILES"
#: CPU drivers before issue 26's third round (CTHREADS_MATMUL_CPU=old): the direct form
TILES_CPU_OLD = {"float32": codegen.Tiles(128, 128, 1, 16, 16, shared=False),
                 "float64": codegen.Tiles(128, 128, 1, 16, 16, shared=False)}
#: CPU drivers: the lanes form (codegen/matmul_lanes.py), workgroups of one subgroup of 8
#: (llvmpipe's 256-bit vectors), each lane 4 rows x 24 columns (bench/probe_matmul_cpu.py on
#: lavapipe, 2026-12-02, float32 1024^2 best runs: 4x6 19.1 GFLOP/s, 3x8 19.1, 4x4 18.1, 2x8
#: 15.3, 3x6 10.6, the direct form 8.4; float64 512^2: 4x6 19.4, 4x4 17.1, 2x8 17.4, 2x4 14.9,
#: direct 8.9); the direct form where the lanes cannot be known (cpu_tiles)
TILES_CPU = {"float32": matmul_lanes.Lanes(4, 6), "float64": matmul_lanes.Lanes(4, 6)}
_SIZES = {"float32": 4, "float64": 8}
#: the grid's largest z (batches per dispatch)
MAX_BATCH = 65535

_BINDINGS = ((0, UNIFORM), (1, READ), (2, READ), (3, READ_WRITE))


@dataclass
class Operand:
    """A matrix operand (or the result) on the device: its ``pooled`` buffer, ``dtype``
    ("float32" / "float64"), the element where it starts and the elements between batches
    (0: one matrix for every batch)."""
    pooled: Any
    dtype: str
    offset: int
    stride: int
    count: int          # elements bound from ``offset``


class _Matmuls:
    """What matrix products need on one device."""

    def __init__(self):
        self.ctx = _device.get_context()
        self.queue = get_queue()
        self.generation = self.ctx.generation
        self.tiles = cpu_tiles(self.ctx) if self.ctx.is_cpu else gpu_tiles(self.ctx)
        self.layout = make_bind_group_layout(self.ctx, _BINDINGS)
        self.pipelines = Pipelines(self.ctx, 32)
        self.uniforms: list = []
        self.bind_groups = BindGroupCache(self.queue.pool, 32)

    def pipeline(self, a_ty: str, b_ty: str, c_ty: str, tiles, vec: tuple = (False, False)):
        key = (a_ty, b_ty, c_ty, tiles, vec)
        pipe = self.pipelines.get(key)
        if pipe is not None:
            return pipe
        if getattr(tiles, "form", "") == "lanes":
            wgsl = matmul_lanes.lanes_wgsl(a_ty, b_ty, c_ty, tiles, *vec)
        else:
            wgsl = codegen.matmul_wgsl(a_ty, b_ty, c_ty, tiles, *vec)
        return self.pipelines.compile(
            key, wgsl, codegen.ENTRY_POINT, _BINDINGS, self.layout, (),
            lambda exc, text: internal_error("the matmul shader", "shapes and dtypes", exc,
                                             text))

    def uniform(self, k: int):
        while len(self.uniforms) <= k:
            buf = self.queue.pool.acquire(codegen.UNIFORM_SIZE, "uniform")
            weakref.finalize(buf, self.queue.forget_uniform, buf.buffer)
            self.uniforms.append(buf)
        return self.uniforms[k]

    def bind_group(self, uniform, a: Operand, b: Operand, c: Operand):
        sizes = tuple(_bound_bytes(x) for x in (a, b, c))
        key = (id(uniform), id(a.pooled), id(b.pooled), id(c.pooled)) + sizes
        bg = self.bind_groups.get(key)
        if bg is not None:
            return bg
        bg = self.queue.bind_group(self.layout, [
            (0, uniform.buffer, codegen.UNIFORM_SIZE), (1, a.pooled.buffer, sizes[0]),
            (2, b.pooled.buffer, sizes[1]), (3, c.pooled.buffer, sizes[2])])
        self.bind_groups.put(key, bg, (uniform, a.pooled, b.pooled, c.pooled))
        return bg


_tiles_choice: list = []      # the value of TILES_VARIABLE, read once


def tiles_form() -> str:
    """The GPU tile configuration ``CTHREADS_MATMUL_TILES`` picks, "new" or "old" (read from
    the environment once per process)."""
    if not _tiles_choice:
        value = os.environ.get(TILES_VARIABLE, "").strip().lower() or "new"
        if value not in ("new", "old"):
            raise GpuInvalidArgument(
                f"{TILES_VARIABLE}={value!r}: expected 'new' (the default) or 'old' (the "
                "tiles before issue 26's second round); unset it or pick one")
        _tiles_choice.append(value)
    return _tiles_choice[0]


def gpu_tiles(ctx) -> dict:
    """The GPU tiles for ``ctx``: ``TILES_GPU`` (or ``TILES_GPU_OLD`` when chosen), each dtype
    falling back to the old tiles where its workgroup memory passes the device's limit."""
    if tiles_form() == "old":
        return TILES_GPU_OLD
    room = int(ctx.limits.get("max-compute-workgroup-storage-size", 16384))
    return {dt: t if t.workgroup_bytes(_SIZES[dt]) <= room else TILES_GPU_OLD[dt]
            for dt, t in TILES_GPU.items()}


def cpu_lanes(ctx) -> int:
    """The SIMD lanes of a CPU driver whose subgroups are its vectors (llvmpipe: its name
    says "(LLVM ..., 256 bits)", 32-bit lanes), or 0 when unknown or without subgroups."""
    import re
    found = re.search(r"llvmpipe.*\b(128|256|512) bits", ctx.name)
    if not found or ctx.missing(["subgroup"]):
        return 0
    return int(found[1]) // 32


def cpu_tiles(ctx) -> dict:
    """The CPU driver's tiles: the lanes form with the driver's lanes, or ``TILES_CPU_OLD``
    (``CTHREADS_MATMUL_CPU=old``, or where the lanes are unknown)."""
    lanes = cpu_lanes(ctx)
    if config.current().matmul_cpu == "old" or not lanes:
        return TILES_CPU_OLD
    return {dt: matmul_lanes.Lanes(t.tm, t.tn, lanes) for dt, t in TILES_CPU.items()}


def _bound_bytes(x: Operand) -> int:
    """The bytes bound for an operand: from byte 0 to its last element, a multiple of 4."""
    nbytes = (x.offset + x.count) * _SIZES[x.dtype]
    return min(-(-nbytes // 4) * 4, x.pooled.capacity)


_STATE = PerDevice(_Matmuls)
state = _STATE.now          # the matrix products' state on the caller's device


def check_f64(s: _Matmuls, dtypes, where: str) -> None:
    if "float64" in dtypes and s.ctx.missing(["shader-f64"]):
        raise GpuInvalidArgument(
            f"{where}: float64 products need the device feature shader-f64, which "
            f"{s.ctx.name!r} lacks; convert the operands to float32 (a.astype(np.float32))")


def run_product(s: _Matmuls, a: Operand, b: Operand, c: Operand, batch: int, m: int, n: int,
                k: int) -> int:
    """Queue ``C[z] = A[z] @ B[z]`` for ``z < batch`` (m, n, k >= 1); returns the number of the
    submission holding the last dispatch."""
    tiles = s.tiles[c.dtype]
    span = codegen.MAX_STEPS * tiles.step
    if getattr(tiles, "form", "") == "lanes":
        pairs = c.dtype == "float32" and not s.ctx.missing(["shader-int64"])
        vec = matmul_lanes.vector_loads(
            k, n, (a.offset, a.stride), (b.offset, b.stride), (c.offset, c.stride),
            (pairs and a.dtype == "float32" and tiles.lanes % 8 == 0,
             pairs and b.dtype == "float32" and tiles.tn % 2 == 0))
    else:
        vec = codegen.vector_loads(tiles, k, n, (a.offset, a.stride), (b.offset, b.stride),
                                   span)
    pipe = s.pipeline(a.dtype, b.dtype, c.dtype, tiles, vec)
    grid = (-(-n // tiles.bn), -(-m // tiles.bm))
    limit = s.ctx.limit("max-compute-workgroups-per-dimension")
    if max(grid) > limit:
        raise GpuInvalidArgument(
            f"matmul: a result of {m:,} x {n:,} needs {grid[1]:,} x {grid[0]:,} tiles, past "
            f"the device's {limit:,} workgroups per dimension; split the product")
    seq, d = 0, 0
    queue = s.queue
    for z0 in range(0, batch, MAX_BATCH):
        nz = min(MAX_BATCH, batch - z0)
        offsets = (a.offset + z0 * a.stride, b.offset + z0 * b.stride, c.offset + z0 * c.stride)
        for k0 in range(0, k, span):
            k1 = min(k, k0 + span)
            uniform = s.uniform(d)
            data = codegen.uniform_bytes(m, n, k, k0, k1, k0 > 0, offsets,
                                         (a.stride, b.stride, c.stride))
            bg = s.bind_group(uniform, a, b, c)
            seq = queue.dispatch(pipe.pipeline, bg, grid + (nz,), (uniform.buffer, data), (),
                                 (a.pooled, b.pooled, c.pooled))
            d += 1
    return seq


__all__ = ["Operand", "check_f64", "gpu_tiles", "run_product", "state", "tiles_form",
           "TILES_CPU", "TILES_CPU_OLD", "cpu_tiles", "cpu_lanes", "TILES_GPU", "TILES_GPU_OLD",
           "TILES_VARIABLE"]
