"""Array types for kernel annotations that type checkers understand: ``Array1D``, ``Array2D``,
``Array3D`` (from ``cthreads.gpu``). Imported by the compiler (``codegen/types.py``), so it
imports nothing of cthreads.

A kernel may write ``u[i, j]``, ``u[i][j]``, ``u[i, j] += v``, ``len(u)`` and ``u.shape[d]`` on a
2-D list parameter. Annotated ``list[list[float]]``, mypy refuses ``u[i, j]`` and ``u.shape``
(a Python list has neither); annotated ``Array2D[float]`` it accepts them. The compiler reads
``ArrayND[T]`` exactly as the ``list[...]`` annotation of ``N`` dimensions with element type
``T`` (any of ``int float bool`` and the width types): same arguments (numpy arrays, nested
lists), same WGSL. The classes are ``typing.Protocol`` types and never instantiated; numpy arrays
and lists are passed as before (``gpu()`` takes its arguments untyped).

Element writes are typed as the compiler allows them: a bool list takes bools, an int list ints
(and bools), a float list any number (to a checker a width type is its plain type:
``widths.pyi``; the compiler rounds or wraps a narrower width, as numpy's element assignment
does, docs/language.md).
"""

from __future__ import annotations

from typing import Protocol, SupportsIndex, TypeVar, overload

E = TypeVar("E")
_I = SupportsIndex


class Array1D(Protocol[E]):
    """A 1-D list parameter (``list[T]``) that also has ``.shape``."""

    @property
    def shape(self) -> tuple[int]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: _I, /) -> E: ...
    @overload
    def __setitem__(self: Array1D[bool], index: _I, value: bool, /) -> None: ...
    @overload
    def __setitem__(self: Array1D[int], index: _I, value: int, /) -> None: ...
    @overload
    def __setitem__(self: Array1D[float], index: _I, value: float, /) -> None: ...


class Array2D(Protocol[E]):
    """A 2-D list parameter (``list[list[T]]``): ``a[i, j]``, ``a[i][j]``, ``a.shape``."""

    @property
    def shape(self) -> tuple[int, int]: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: tuple[_I, _I], /) -> E: ...
    @overload
    def __getitem__(self, index: _I, /) -> Array1D[E]: ...
    @overload
    def __setitem__(self: Array2D[bool], index: tuple[_I, _I], value: bool, /) -> None: ...
    @overload
    def __setitem__(self: Array2D[int], index: tuple[_I, _I], value: int, /) -> None: ...
    @overload
    def __setitem__(self: Array2D[float], index: tuple[_I, _I], value: float, /) -> None: ...


class Array3D(Protocol[E]):
    """A 3-D list parameter (``list[list[list[T]]]``): ``a[i, j, k]``, ``a[i][j][k]``."""

    @property
    def shape(self) -> tuple[int, int, int]: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: tuple[_I, _I, _I], /) -> E: ...
    @overload
    def __getitem__(self, index: _I, /) -> Array2D[E]: ...
    @overload
    def __setitem__(self: Array3D[bool], index: tuple[_I, _I, _I], value: bool, /) -> None: ...
    @overload
    def __setitem__(self: Array3D[int], index: tuple[_I, _I, _I], value: int, /) -> None: ...
    @overload
    def __setitem__(self: Array3D[float], index: tuple[_I, _I, _I], value: float, /) -> None: ...


#: annotation class -> the number of dimensions of the list type it stands for
ARRAY_DIMS: dict[type, int] = {Array1D: 1, Array2D: 2, Array3D: 3}


__all__ = ["Array1D", "Array2D", "Array3D", "ARRAY_DIMS"]
