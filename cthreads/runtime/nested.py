"""N-dimensional arguments: the shape of a numpy array or a rectangular nested list, and the
flat row-major view the device buffer holds.

A ``list[list[float]]`` argument is a numpy array of two dimensions (C-contiguous: it is
uploaded from its own memory and written back in place) or a list of equally long row lists
(flattened once for the upload; results are written back into the same row lists). Ragged
rows are refused naming the first bad row, before anything is converted. Loops here run per
row, never per element (``itertools.chain`` does the elements in C).
"""

from __future__ import annotations

import itertools
import re
import sys

from ..errors import GpuArgumentTypeError, GpuInvalidArgument


def _type_name(v) -> str:
    cls = type(v)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def is_nested(value) -> bool:
    """A non-empty list whose first element is a list (an N-D list argument)."""
    return isinstance(value, list) and bool(value) and isinstance(value[0], list)


def depth(value) -> int:
    """Dimensions of a nested list, by its first elements (1 for a flat list)."""
    d = 1
    while value and isinstance(value[0], list):
        value = value[0]
        d += 1
    return d


def shape(value, ndim: int, where: str) -> tuple:
    """The shape of ``value`` (a numpy array, or a rectangular nested list of ``ndim``
    levels); raises naming the first row that is not a list or not as long as the first."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        return tuple(int(n) for n in value.shape)
    dims = []
    level = value
    for d in range(ndim):
        if not isinstance(level, list):
            raise GpuArgumentTypeError(
                f"{where}{'[0]' * d} is {_type_name(level)}, not a list: a {ndim}-D list "
                f"argument is a list of {'row ' if d else ''}lists{' of lists' * (ndim - 2)}")
        if not level:
            raise GpuInvalidArgument(f"{where}{'[0]' * d} is an empty list; the device needs at "
                                     "least one element per list")
        dims.append(len(level))
        level = level[0]
    if isinstance(level, list):
        raise GpuArgumentTypeError(f"{where}{'[0]' * ndim} is a list, but the kernel declares "
                                   f"{ndim} dimensions; pass a {ndim}-D list or array")
    _check_rows(value, dims, 1, where)
    return tuple(dims)


def _check_rows(rows: list, dims: list, d: int, where: str) -> None:
    """Every element of ``rows`` (a level-``d`` list) is a list of ``dims[d]`` elements."""
    want = dims[d]
    for i, row in enumerate(rows):
        if row.__class__ is not list:
            raise GpuArgumentTypeError(
                f"{where}[{i}] is {_type_name(row)}, not a list: every row of a "
                f"{len(dims)}-D list is a list of {want} elements")
        if len(row) != want:
            raise GpuInvalidArgument(
                f"{where}[{i}] has {len(row)} elements but {where}[0] has {want}: a "
                f"{len(dims)}-D list must be rectangular (pad the rows, or pass a numpy array)")
        if d + 1 < len(dims):
            _check_rows(row, dims, d + 1, f"{where}[{i}]")


def flatten(value: list, ndim: int) -> list:
    """The elements of a rectangular nested list, row-major."""
    flat = value
    for _ in range(ndim - 1):
        flat = itertools.chain.from_iterable(flat)
    return list(flat)


def fill(target: list, flat: list, ndim: int) -> None:
    """Write ``flat`` (row-major) back into the rows of the nested list ``target``."""
    if ndim == 1:
        target[:] = flat
        return
    per = len(flat) // len(target)
    for i, row in enumerate(target):
        fill(row, flat[i * per:(i + 1) * per], ndim - 1)


def count(dims: tuple) -> int:
    total = 1
    for n in dims:
        total *= n
    return total


def element_where(message: str, where: str, dims: tuple) -> str:
    """``message`` with a flat element position ``where[k]`` written as ``where[i][j]``."""
    def spell(m):
        k = int(m.group(1))
        parts = []
        for n in reversed(dims):
            parts.append(k % n)
            k //= n
        return where + "".join(f"[{p}]" for p in reversed(parts))
    return re.sub(re.escape(where) + r"\[(\d+)\]", spell, message, count=1)


__all__ = ["count", "depth", "element_where", "fill", "flatten", "is_nested", "shape"]
