"""Everything that uses wgpu-py's or cffi's internals (private modules, the C library, the
parsed header), fenced here so that a new wgpu-py or cffi release breaks one folder:
``encoder`` (the lean native command encoder behind each launch), ``header_cache`` (the cached
parse of wgpu.h that makes a cold start fast) and ``shipped_cache`` (the entry built at install
time, kept in ``backend/shipped/``).

May import: ``cthreads.errors``, ``cthreads.config`` and ``cthreads.backend``'s own modules.
"""
