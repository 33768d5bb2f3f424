"""Finding a kernel's source: the whole function, whatever its layout, at its own lines."""

from __future__ import annotations

import inspect

import pytest

from cthreads.codegen.source import KernelSource

from . import source_kernels as sk

KERNELS = [sk.col0_comment_and_docstring, sk.continued_lines, sk.decorator_over_lines,
           sk.method]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.fn.__name__)
def test_source_is_the_whole_function(kernel):
    src = KernelSource(kernel.fn)
    lines, first = inspect.getsourcelines(kernel.fn)
    assert src.firstlineno == first
    assert "".join(src.lines).rstrip() == "".join(lines).rstrip()
    last = first + len(lines) - 1
    body_end = max(n.end_lineno for n in src.tree.body)
    assert src.abs_line(body_end) == last


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.fn.__name__)
def test_the_last_statement_is_translated(kernel):
    lines, first = inspect.getsourcelines(kernel.fn)
    store = max(k for k, text in enumerate(lines) if "y[i] =" in text)
    assert f"// line {first + store}: y[i] =" in kernel.wgsl
