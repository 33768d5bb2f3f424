"""``Array1D[T]`` ... ``Array3D[T]`` (cthreads/lang/arrays.py, the annotations type checkers
understand) compile exactly as the ``list[...]`` annotations they stand for; the misuses are
located errors."""

from __future__ import annotations

import inspect
import re

import pytest

import cthreads.gpu as g
from cthreads.codegen import compile_kernel
from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import Array1D, Array2D, Array3D, GlobalIdx, Gpu, atomic_add, float32, int64

HERE = __file__


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _typed():
    def k(n: int, a: Array1D[float32], u: Array2D[float], v: Array3D[int64],
          h: Array2D[int], m: Array1D[bool]) -> None:
        i: int = GlobalIdx.x
        j: int = GlobalIdx.y
        if i >= n or j >= u.shape[0] or i >= u.shape[1] or i >= len(a):
            return
        u[j, i] = u[j][i] * 2.0 + a[i] + a.shape[0]
        v[0, j, i] += 1
        atomic_add(h, (j, 0), 1)
        m[i] = u[j, i] > 0.0
    k.__qualname__ = "k"             # the WGSL header names it
    return k


def _lists():
    def k(n: int, a: list[float32], u: list[list[float]], v: list[list[list[int64]]],
          h: list[list[int]], m: list[bool]) -> None:
        i: int = GlobalIdx.x
        j: int = GlobalIdx.y
        if i >= n or j >= u.shape[0] or i >= u.shape[1] or i >= len(a):
            return
        u[j, i] = u[j][i] * 2.0 + a[i] + a.shape[0]
        v[0, j, i] += 1
        atomic_add(h, (j, 0), 1)
        m[i] = u[j, i] > 0.0
    k.__qualname__ = "k"             # the WGSL header names it
    return k


def _strings():
    def k(n: "int", a: "Array1D[float32]", u: "g.Array2D[float]", v: "g.Array3D[int64]",
          h: "Array2D[int]", m: "Array1D[bool]") -> None:
        i: int = GlobalIdx.x
        j: int = GlobalIdx.y
        if i >= n or j >= u.shape[0] or i >= u.shape[1] or i >= len(a):
            return
        u[j, i] = u[j][i] * 2.0 + a[i] + a.shape[0]
        v[0, j, i] += 1
        atomic_add(h, (j, 0), 1)
        m[i] = u[j, i] > 0.0
    k.__qualname__ = "k"             # the WGSL header names it
    return k


def _wgsl(prog) -> str:
    """The program's WGSL, its comments' line numbers left out (the kernels lie apart)."""
    return re.sub(r"// line \d+:", "// line:", prog.wgsl())


def _signature(prog) -> list:
    return [(p.name, p.kind, p.ndim, p.elem, p.plain, p.written, p.atomic) for p in prog.params]


def test_array_annotations_compile_as_the_list_annotations():
    lists = compile_kernel(_lists())
    assert [(p.name, p.kind, p.ndim) for p in lists.params] == [
        ("n", "int", 1), ("a", "list[float]", 1), ("u", "list[list[float]]", 2),
        ("v", "list[list[list[int64]]]", 3), ("h", "list[list[int]]", 2), ("m", "list[bool]", 1)]
    for other in (_typed(), _strings()):       # from __future__ annotations: strings too
        prog = compile_kernel(other)
        assert _signature(prog) == _signature(lists)
        assert _wgsl(prog) == _wgsl(lists)


def test_a_bare_array_type_is_a_located_error():
    bad = line() + 3
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(u: Array2D) -> None:
            pass
    assert str(info.value).startswith(
        "parameter 'u' of kernel k: a bare 'Array2D' annotation does not say the element type\n"
        f'  File "{HERE}", line {bad}, in k\n')
    assert str(info.value).endswith(
        "hint: write Array2D[float] (or int, bool, a width type)")


def test_an_array_of_lists_is_a_located_error():
    bad = line() + 3
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(u: Array2D[list[float]]) -> None:
            pass
    assert str(info.value).startswith(
        "parameter 'u' of kernel k: Array2D[...] takes an element type, not a list\n"
        f'  File "{HERE}", line {bad}, in k\n')
