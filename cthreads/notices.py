"""Warnings of ours: ``GpuNDLaunchWarning``, for a launch that runs, but surely not as meant.

A kernel that takes N-D lists and reads ``GlobalIdx.y`` (or any index builtin's ``.y`` or
``.z``) launched without ``threads=`` gets the 1-D rule of 0.2 (``n`` or the longest list's
``len()``, ``.y`` and ``.z`` reading 0): it computes row 0 only. The launch keeps that rule
(0.2 kernels rely on it) and warns, once per kernel and call site, pointing at the caller's
line. ``GpuKernel.nd_hint`` (made once per kernel, at compilation) says whether a kernel
qualifies; a launch of one that does only looks at its caller's frame.
"""

from __future__ import annotations

import os
import sys
import warnings


class GpuNDLaunchWarning(UserWarning):
    """A kernel over N-D lists that reads an index builtin's ``.y`` or ``.z`` was launched
    without ``threads=``: a 1-D launch, where those read 0, so only row 0 is computed. Pass
    ``threads=(w, h)`` (or ``(w, h, d)``); ``threads=n`` keeps the 1-D launch silently."""


#: the package's directory: frames of files under it are ours, the first other one the caller's
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def nd_hint(program) -> str | None:
    """The warning text's core for a kernel that qualifies (see the module docstring), or
    None: the N-D axes it reads and its N-D list parameters."""
    reads = [f"{name}.{axis}" for name, axis in program.index_reads if axis != "x"]
    lists = [p.name for p in program.params if p.is_list and p.ndim > 1]
    if not reads or not lists:
        return None
    ndim = max(p.ndim for p in program.params if p.is_list)
    shape = "(w, h)" if ndim == 2 else "(w, h, d)"
    names = ", ".join(repr(n) for n in lists)
    return (f"kernel {program.name} reads {', '.join(reads)} and takes the N-D list "
            f"parameter(s) {names}, but this launch has no threads=: it runs the 1-D rule (n "
            "or the longest list's len(), its first dimension), where .y and .z read 0, so "
            f"only row 0 is computed. Pass threads={shape} for an N-D launch (x along the "
            f"last axis: threads=(a.shape[1], a.shape[0]) for a 2-D array a), or threads=n to "
            "keep the 1-D launch without this warning")


def warn_nd_launch(kernel, text: str) -> None:
    """Warn (``GpuNDLaunchWarning``) about a 1-D launch of ``kernel``, once per call site: the
    first frame outside the package, which the warning points at."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    if frame is None:
        return
    site = (frame.f_code.co_filename, frame.f_lineno)
    seen = kernel.__dict__.setdefault("_nd_warned", set())
    if site in seen:
        return
    seen.add(site)
    warnings.warn(text, GpuNDLaunchWarning, stacklevel=level)


__all__ = ["GpuNDLaunchWarning"]
