"""Type inference of unannotated locals reaches its fixed point, and compiler failures are
located: the generated WGSL gives every local the type of every value assigned to it."""

from __future__ import annotations

import re

import pytest

from cthreads.codegen import compile_kernel, frontend
from cthreads.errors import GpuInvalidArgument, GpuKernelError
from cthreads.kernel import Gpu


def copy_chain(n: int, out: list[float]) -> None:
    a = False
    b = False
    c = False
    d = False
    e = False
    f = False
    g = False
    h = False
    k = 0
    while k < n:
        a = b
        b = c
        c = d
        d = e
        e = f
        f = g
        g = h
        h = 1.5
        k += 1
    out[0] = a
    out[1] = b
    out[2] = c
    out[3] = d
    out[4] = e
    out[5] = f
    out[6] = g
    out[7] = h


def min_int_literal(out: list[int]) -> None:
    x: int = -2147483648
    out[0] = x
    out[1] = -2147483648 + 5
    out[2] = x // -2147483648


def test_widening_through_eight_copies_reaches_every_local():
    wgsl = compile_kernel(copy_chain).wgsl()
    for name in "abcdefgh":
        assert re.search(rf"var {name}: f32;", wgsl), name
        assert not re.search(rf"^\s*{name} = (true|false);", wgsl, re.M), name


def test_inference_that_does_not_settle_is_a_located_error(monkeypatch):
    monkeypatch.setattr(frontend, "inference_bound", lambda nlocals: 2)
    with pytest.raises(GpuKernelError) as info:
        compile_kernel(copy_chain)
    exc = info.value
    assert "types of the locals did not settle" in str(exc)
    assert exc.lineno == copy_chain.__code__.co_firstlineno


def test_unexpected_compiler_failure_names_the_kernel_line(monkeypatch):
    from cthreads.codegen import wgsl

    def broken(value, ty):
        raise KeyError("boom")

    monkeypatch.setattr(wgsl, "literal", broken)
    with pytest.raises(GpuKernelError) as info:
        compile_kernel(copy_chain)
    exc = info.value
    assert str(exc).startswith("internal compiler error in kernel copy_chain")
    assert "please report" in str(exc)
    assert exc.filename == __file__
    assert exc.lineno == copy_chain.__code__.co_firstlineno + 1      # a = False
    assert isinstance(exc.__cause__, KeyError)
    with pytest.raises(GpuKernelError, match="internal compiler error"):
        Gpu(copy_chain)


def _broken_literal(monkeypatch):
    from cthreads.codegen import wgsl

    def broken(value, ty):
        raise KeyError("boom")

    monkeypatch.setattr(wgsl, "literal", broken)


def test_an_internal_error_is_cut_to_the_users_line_by_default(monkeypatch):
    _broken_literal(monkeypatch)
    with pytest.raises(GpuKernelError) as info:
        Gpu(copy_chain)
    exc = info.value
    assert exc.__cause__ is None and exc.__suppress_context__
    assert exc.lineno == copy_chain.__code__.co_firstlineno + 1


def test_full_traceback_keeps_the_compilers_internal_traceback(monkeypatch):
    import traceback

    from cthreads import config

    _broken_literal(monkeypatch)
    with config.override(full_traceback=True), pytest.raises(GpuKernelError) as info:
        Gpu(copy_chain)
    exc = info.value
    assert exc.lineno == copy_chain.__code__.co_firstlineno + 1
    cause = exc.__cause__
    assert isinstance(cause, KeyError)
    frames = [f.name for f in traceback.extract_tb(cause.__traceback__)]
    assert frames[-1] == "broken" and "_compile" in frames
    printed = "".join(traceback.format_exception(exc))
    assert "KeyError: 'boom'" in printed and "direct cause" in printed


def test_full_traceback_setting_reads_from_the_environment():
    from cthreads import config

    assert config.from_environ({"HOME": "/h"}).full_traceback is False
    assert config.from_environ({"HOME": "/h", "CTHREADS_FULL_TRACEBACK": "1"}).full_traceback
    bad = config.from_environ({"HOME": "/h", "CTHREADS_FULL_TRACEBACK": "yes"})
    with pytest.raises(GpuInvalidArgument, match="use 0 .off, the default. or 1 .on."):
        bad.full_traceback


def test_most_negative_int_literal_compiles():
    wgsl = compile_kernel(min_int_literal).wgsl()
    assert "2147483648" in wgsl
    assert "(-2147483647i - 1i)" in wgsl or "i32(-2147483648)" in wgsl
