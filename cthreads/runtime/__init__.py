"""The host side of one launch: argument checks and packing (``convert``, ``nested``,
``packing``, ``sharing``), launch plans (``plan``), a kernel's state on one device
(``kernel_runtime``), readback and writeback (``readback``), arena-resident lists
(``residency``) and the settled checks of a repeated launch (``relaunch``).

May import: ``cthreads.errors``, ``cthreads.config``, ``cthreads.lang``, ``cthreads.codegen``
(its ``program`` and ``types`` tables, never the compiler passes) and ``cthreads.backend``.
Never the package root's user objects (kernels, jobs, arenas, ``gpu()``): those import this.
Nothing is imported here, so ``import cthreads.gpu`` stays light.
"""
