"""The device-program plumbing kernels (``kernel_runtime``) and reductions (``reducer``) share:
a pipeline cache keyed by variant, the internal-compiler-error text for WGSL a device rejects,
and status words zero until the device reports something.

The variant key is the caller's: a ``codegen.program.Variant`` for kernels; for reductions the
operation, element type, combining form and whether the loop probe is on. Pipelines are
compiled from the WGSL for a device (``float_ops.device_form``: the device's float32 forms)
with the device's pipeline constants (``backend.pipeline.device_constants``).
"""

from __future__ import annotations

from collections import OrderedDict

from ..backend.pipeline import ShaderCompileError, device_constants, make_pipeline
from ..codegen.float_ops import device_form
from ..codegen.rng import device_form as rng_device_form
from ..errors import GpuKernelError


def internal_error(what: str, source: str, exc: ShaderCompileError, wgsl: str,
                   filename: str | None = None, lineno: int | None = None) -> GpuKernelError:
    """The GpuKernelError for WGSL of ours that the device compiler rejected: ``what`` it was
    generated for, the ``source`` to report, naga's message and the numbered WGSL."""
    numbered = "\n".join(f"{i + 1:4d} | {line}" for i, line in enumerate(wgsl.splitlines()))
    message = (f"internal compiler error: the device compiler rejected {what}. This is a "
               f"cthreads bug; please report it with the {source}.\n{exc}\n\n"
               f"Generated WGSL:\n{numbered}")
    if filename is None:
        return GpuKernelError(message)
    return GpuKernelError(message, filename, lineno)


class Pipelines:
    """Compiled pipelines of one device, by variant key; ``limit``: the most kept (the oldest
    goes first), None for all."""

    def __init__(self, ctx, limit: int | None = None):
        self.ctx = ctx
        self.limit = limit
        self.compiled: OrderedDict = OrderedDict()

    def get(self, key):
        """The pipeline of ``key``, or None before it is compiled."""
        return self.compiled.get(key)

    def compile(self, key, wgsl: str, entry_point: str, bindings, layout, overrides: tuple,
                rejected, on_text=None):
        """Compile ``wgsl`` (device-independent text) for ``key`` and keep it. ``rejected``:
        ``(ShaderCompileError, wgsl) -> exception`` raised when the device compiler refuses
        it; ``on_text``: called with the text handed to the device (the WGSL dump)."""
        text = device_form(wgsl, self.ctx.exact_f32_in_f64)
        text = rng_device_form(text, not self.ctx.missing(["shader-int64"]))   # Random
        if on_text is not None:
            on_text(text)
        try:
            pipe = make_pipeline(self.ctx, text, entry_point, bindings, layout=layout,
                                 constants=device_constants(self.ctx, overrides))
        except ShaderCompileError as exc:
            raise rejected(exc, wgsl) from None
        self.compiled[key] = pipe
        if self.limit is not None and len(self.compiled) > self.limit:
            self.compiled.popitem(last=False)
        return pipe

    def keys(self) -> frozenset:
        return frozenset(self.compiled)


class StatusWords:
    """A status buffer of ``nbytes`` on ``queue``, zero until the device writes a report."""

    def __init__(self, queue, nbytes: int):
        self.queue = queue
        self.nbytes = nbytes
        self.pooled = queue.pool.acquire(nbytes)
        self.buffer = self.pooled.buffer
        self.reset()

    def reset(self) -> None:
        """Zero the words (after a report was read), so later work starts clean."""
        self.queue.write(self.buffer, bytes(self.nbytes))
