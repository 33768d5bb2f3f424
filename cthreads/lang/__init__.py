"""What a kernel body may name, and its plain-Python meaning: the index builtins (``indexes``),
the intrinsics (``intrinsics``: ``shared``, atomics), the width types (``widths``), the typing
forms of list parameters (``arrays``), ``Random`` (``random``: Philox-4x32-10 streams) and the
thread-by-thread runner behind ``GpuKernel.simulate`` (``simulator``).

May import: ``cthreads.errors`` only (the compiler in ``cthreads.codegen`` reads these
objects; nothing here knows of the compiler, the runtime or wgpu).
"""
