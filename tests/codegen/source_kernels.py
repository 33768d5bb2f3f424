"""Kernels laid out in ways that make their source harder to find (tests/codegen/test_source.py)."""

from __future__ import annotations

from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu


@Gpu
def col0_comment_and_docstring(n: int, y: list[float]) -> None:
    """A docstring with
text at column 0
"""
    i = GlobalIdx.x
# a comment at column 0 inside the body
    if i >= n:
        return
    y[i] = 19.0


@Gpu(boundscheck=False)
def continued_lines(n: int,
y: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        y[i] = 2.0 + \
3.0


@Gpu(
    boundscheck=False,
)
def decorator_over_lines(n: int, y: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        y[i] = (1.0 +
2.0)


class Holder:
    @staticmethod
    def method(n: int, y: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            y[i] = 7.0


method = Gpu(Holder.method)
