"""The host side of one launch: list arguments by kind (``args``: one handler per kind of list
argument, on ``convert``'s scalar and element checks, ``nested``'s shapes, ``packing``'s cffi
loop and ``sharing``'s registry of bound lists), launch plans (``plan``), a kernel's state on
one device (``kernel_runtime``), the choice of a launch's variant (``variants``), the plumbing
kernels and reductions share (``device_program``), the device side of ``func.reduce``
(``reducer``), readback and writeback (``readback``), arena-resident lists (``residency``) and
the settled checks of a repeated launch (``relaunch``).

May import: ``cthreads.errors``, ``cthreads.config``, ``cthreads.lang``, ``cthreads.codegen``
(its ``program`` and ``types`` tables, ``float_ops.device_form`` and the reduction shader
``reduction``, never the compiler passes) and ``cthreads.backend``.
Never the package root's user objects (kernels, jobs, arenas, ``gpu()``): those import this.
Nothing is imported here, so ``import cthreads.gpu`` stays light.
"""
