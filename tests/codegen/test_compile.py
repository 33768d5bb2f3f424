"""Compiler output without a device: golden WGSL, layout, type rules, decorator behaviour."""

from __future__ import annotations

import linecache
import os
import sys
import typing
from pathlib import Path

import pytest

from cthreads.codegen import compile_kernel
from cthreads.codegen.program import Variant
from cthreads.errors import GpuKernelTypeError
from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu, GpuKernel, all_kernels

from . import golden_kernels

GOLDEN_DIR = Path(__file__).parent / "golden"


def check_golden(kernel, environ=os.environ) -> None:
    """Compare ``kernel``'s WGSL with its golden file; ``CTHREADS_UPDATE_GOLDEN=1`` rewrites
    the file first (a developer's step, reviewed in the diff), refused when ``CI`` is set: there
    the rewrite would compare the file with itself and the test could not fail."""
    path = GOLDEN_DIR / f"{kernel.__name__}.wgsl"
    if environ.get("CTHREADS_UPDATE_GOLDEN"):
        if environ.get("CI"):
            pytest.fail("CTHREADS_UPDATE_GOLDEN is refused when CI is set: update the golden "
                        "files locally and commit them")
        path.write_text(kernel.wgsl)
    assert kernel.wgsl == path.read_text()


@pytest.mark.parametrize("kernel", golden_kernels.GOLDEN, ids=lambda k: k.__name__)
def test_golden_wgsl(kernel):
    check_golden(kernel)


def test_golden_update_is_refused_on_ci():
    kernel = golden_kernels.saxpy
    path = GOLDEN_DIR / f"{kernel.__name__}.wgsl"
    before = path.read_bytes()
    with pytest.raises(pytest.fail.Exception, match="refused when CI is set"):
        check_golden(kernel, {"CI": "true", "CTHREADS_UPDATE_GOLDEN": "1"})
    assert path.read_bytes() == before


def test_wgsl_is_deterministic():
    again = compile_kernel(golden_kernels.reduce_sum.fn)
    assert again.render(Variant()) == golden_kernels.reduce_sum.program.render(Variant())


def test_layout_follows_the_contract():
    p = golden_kernels.saxpy.program
    assert [(q.name, q.kind, q.binding, q.offset, q.written) for q in p.params] == [
        ("n", "int", None, 4, False), ("a", "float", None, 8, False),
        ("x", "list[float]", 1, None, False), ("y", "list[float]", 2, None, True)]
    assert p.uniform_size == 16 and p.status_binding == 3
    assert not p.fixed_workgroup_size and p.entry_point == "ct_main"
    assert "var<storage, read> x: array<f32>" in p.wgsl()
    assert "var<storage, read_write> y: array<f32>" in p.wgsl()
    assert [c.list_name for c in p.checks] == ["x", "y", "y"]
    line = golden_kernels.saxpy.fn.__code__.co_firstlineno + 5
    assert {c.lineno for c in p.checks} == {line}
    assert p.checks[0].source == "y[i] = a * x[i] + y[i]"
    assert line in p.line_map.values()
    wgsl_lines = p.wgsl().split("\n")
    for wline, pyline in p.line_map.items():
        assert wline <= len(wgsl_lines)


def test_workgroup_memory_features_and_atomics_are_recorded():
    p = golden_kernels.reduce_sum.program
    assert p.fixed_workgroup_size and p.workgroup_bytes == 256
    assert p.needs_features == ("shader-float32-atomic",)
    total = [q for q in p.params if q.name == "total"][0]
    assert total.atomic and total.written
    assert "array<atomic<f32>>" in p.wgsl()


def test_workgroup_size_placeholder():
    p = golden_kernels.saxpy.program
    assert "@workgroup_size(256)" in p.wgsl(256)
    with pytest.raises(ValueError):
        golden_kernels.reduce_sum.program.wgsl(128)


def test_reserved_and_hidden_names_are_renamed():
    @Gpu
    def k(out: list[float], var: int, ct_u: float) -> None:
        fn = GlobalIdx.x
        loop: float = ct_u * var
        out[fn] = loop
    text = k.wgsl
    assert "ct_v_out" in text and "ct_v_var" in text and "ct_v_ct_u" in text
    assert "ct_v_fn" in text and "ct_v_loop" in text


def test_type_inference_and_unification():
    @Gpu
    def k(n: int, x: list[float], y: list[int]) -> None:
        i = GlobalIdx.x
        if i < n:
            v: float = 1.0
        else:
            v: float = 2.0
        acc = 0
        acc = acc + 0.5          # widens acc to float
        flag = False
        c = 3 if flag else 4
        x[i] = v + acc
        y[i] = c
    text = k.wgsl
    assert "var v: f32;" in text and "var acc: f32;" in text
    assert "var flag: bool;" in text and "var c: i32;" in text


def test_bool_and_int_storage():
    @Gpu
    def k(b: list[bool], i: list[int], f: bool) -> None:
        b[0] = f and i[0] > 0
    text = k.wgsl
    assert "array<u32>" in text and "ct_u.f != 0u" in text


def test_future_annotations_and_typing_list():
    ns = {}
    src = ("from __future__ import annotations\nimport typing\n"
           "from cthreads.lang.indexes import GlobalIdx\n"
           "def k(n: 'int', x: typing.List[float]) -> None:\n"
           "    x[GlobalIdx.x] = 1.0\n")
    fname = "<future-test>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), ns)
    k = Gpu(ns["k"])
    assert [q.kind for q in k.program.params] == ["int", "list[float]"]


def test_nested_function_kernel_with_closure_constant():
    def make(scale):
        @Gpu
        def scaled(n: int, x: list[float]) -> None:
            i = GlobalIdx.x
            if i < n:
                x[i] = x[i] * scale
        return scaled
    k = make(2.5)
    assert "2.5f" in k.wgsl
    x = [1.0, 2.0]
    k.simulate(2, x)
    assert x == [2.5, 5.0]


def test_decorated_object():
    k = golden_kernels.saxpy
    assert isinstance(k, GpuKernel) and k.__name__ == "saxpy" and k.__wrapped__ is not None
    assert k in all_kernels() and k.log is False and k.boundscheck is True
    y = [1.0, 1.0]
    k(2, 2.0, [1.0, 2.0], y)        # plain Python call (index builtins read thread 0)
    assert y == [3.0, 1.0]
    y = [1.0, 1.0, 1.0]
    k.simulate(3, 2.0, [1.0, 2.0, 3.0], y)
    assert y == [3.0, 5.0, 7.0]
    total = [0.0]                   # barriers and shared memory simulate too
    golden_kernels.reduce_sum.simulate(3, [1.0, 2.0, 4.0], total)
    assert total == [7.0]


def test_simulate_reports_the_thread():
    @Gpu(boundscheck=False)
    def k(n: int, x: list[float]) -> None:
        x[GlobalIdx.x] = 1.0
    with pytest.raises(IndexError) as info:
        k.simulate(3, [0.0, 0.0, 0.0])
    assert "GlobalIdx.x = 3" in "".join(getattr(info.value, "__notes__", []))


def test_log_flag_prints_nothing_without_a_device(capsys):
    @Gpu(log=True)
    def k(n: int) -> None:
        pass
    assert k.log
