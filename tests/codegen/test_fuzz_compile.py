"""Valid kernels found by the random-program search compile (issue 21, item 4: C01-C07), a
literal beyond a launch's plain width is that launch's error, and calls kernels cannot make
get a precise hint (item 7). The launches themselves: tests/device/test_fuzz_compile.py.

Expected line numbers come from ``inspect.currentframe()`` so the tests survive edits above.
"""

from __future__ import annotations

import inspect
import math
import random
import re

import numpy as np
import pytest

from cthreads.codegen.program import Variant
from cthreads.codegen import compile_kernel
from cthreads.codegen.types import Widths
from cthreads.codegen.wgsl import literal
from cthreads.errors import GpuKernelError
from cthreads.func import GpuFunc
from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu
from cthreads.lang.widths import float32, int32, int64, uint32
from tests.conftest import run_python

HERE = __file__


def line() -> int:
    """The caller's current line number."""
    return inspect.currentframe().f_back.f_lineno


def define(src: str, namespace: dict | None = None) -> dict:
    """Run ``src`` (function definitions) as a file would, its source available to @Gpu."""
    import linecache
    filename = f"<fuzz-compile-{abs(hash(src))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {} if namespace is None else namespace
    exec(compile(src, filename, "exec"), namespace)
    return namespace


# ------------------------------------------------------------------- C01: literal folding
@pytest.mark.parametrize("op", ["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"])
def test_an_int_literal_and_a_negative_one_fold_with_their_operator(op):
    # 0 * (-7) was computed as 0 ** -7 too: ZeroDivisionError inside the compiler
    src = define(f"def k(o: list[int]) -> None:\n    o[0] = 0 {op} (-7)\n    o[1] = 12 {op} 5\n")
    compile_kernel(src["k"])


def test_literal_arithmetic_beyond_32_bits_keeps_each_operators_value():
    def k(o: list[int64]) -> None:
        o[0] = 12345 + 2147483647
        o[1] = 3 * 1000000000
        o[2] = 1024 >> 33
        o[3] = 5 - (-2147483647)
    text = compile_kernel(k).wgsl()
    assert "2147495992li" in text and "3000000000li" in text and "2147483652li" in text
    assert "1024i >>" not in text                    # Python's 0, not 1024 >> (33 % 32)


def test_huge_literal_powers_and_shifts_are_beyond_64_bits_without_computing_them():
    for expr in ("2 ** 100000000000", "(-3) ** 99999999999", "1 << 100000000000"):
        src = define(f"def k(o: list[int]) -> None:\n    o[0] = {expr}\n")
        with pytest.raises(GpuKernelError, match="does not fit in 64 bits"):
            compile_kernel(src["k"])
    def ones(o: list[int64]) -> None:
        o[0] = (-1) ** 100000000001 + 1 ** 100000000000 + 0 ** 100000000000
    compile_kernel(ones)


def test_a_big_literal_sum_decorates_in_a_fresh_process(tmp_path):
    # 3 + 100000000 computed 3 ** 100000000 (minutes); 12345 + 2147483647 exhausted memory
    script = tmp_path / "big_sum.py"
    script.write_text(
        "from cthreads.gpu import Gpu, GlobalIdx, int64\n"
        "@Gpu\n"
        "def k(n: int, o: list[int64]) -> None:\n"
        "    i: int = GlobalIdx.x\n"
        "    if i < n:\n"
        "        o[i] = 3 + 100000000\n"
        "        o[i] = 12345 + 2147483647\n"
        "print(int('2147495992li' in k.wgsl))\n")
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r})", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1"]


# ------------------------------------------------ C02: width-typed list parameters of functions
@pytest.mark.parametrize("ann, index", [("int32", "0"), ("float32", "0"),
                                        ("list[int32]", "0, 0"), ("uint32", "0")])
def test_device_functions_take_width_typed_lists(ann, index):
    namespace = {"Gpu": Gpu, "GlobalIdx": GlobalIdx, "int32": int32, "float32": float32,
                 "uint32": uint32}
    define(f"@Gpu.func\ndef f(xs: list[{ann}]) -> float:\n    return xs[{index}] + 1.5\n\n"
           f"def k(n: int, x: list[{ann}], o: list[float]) -> None:\n"
           f"    i: int = GlobalIdx.x\n    if i < n:\n        o[i] = f(x)\n", namespace)
    assert isinstance(namespace["f"], GpuFunc)
    compile_kernel(namespace["k"])


def test_a_list_int32_parameter_passes_on_to_a_list_int_one():
    @Gpu.func
    def g(ys: list[int]) -> int:
        return ys[0]

    @Gpu.func
    def f(xs: list[int32]) -> int:
        return g(xs) * 2

    def k(x: list[int32], o: list[int]) -> None:
        o[0] = f(x)
    compile_kernel(k)


# ----------------------------------------------------------------- C03: literal shift counts
def test_literal_shift_counts_are_written_modulo_the_width():
    def k(x: list[uint32], y: list[int], z: list[uint32]) -> None:
        i = GlobalIdx.x
        v: uint32 = x[i]
        v <<= 33
        x[i] = v >> uint32(40)
        y[i] = y[i] << 37
        z[i] = z[i] >> 32
    text = compile_kernel(k).wgsl()
    assert "<< 1u)" in text and "<< 5u)" in text and ">> 0u)" in text
    assert "& 31u)" in text                               # uint32(40): a cast, masked
    assert not re.search(r"[<>]{2} (3[2-9]|40)u", text)


# ----------------------------------------------------- C04: literals between two types compared
def test_a_64_bit_literal_in_a_chain_is_written_in_each_comparisons_type():
    def k(x: list[float32], y: list[float], o: list[bool]) -> None:
        i = GlobalIdx.x
        o[i] = x[i] >= 3.14159 < y[i]
    text = compile_kernel(k, widths=Widths("float64", "int")).wgsl()
    assert "f32(3.14159lf)" not in text
    assert "3.141590118408203f" in text and "3.14159lf" in text


# ------------------------------------------------------------ C05: math.log with a literal base
@pytest.mark.parametrize("base", ["-0.5", "0.0", "10.0"])
def test_a_literal_log_base_is_not_evaluated_by_wgsl(base):
    src = define(f"def k(x: list[float], o: list[float]) -> None:\n"
                 f"    i = GlobalIdx.x\n    o[i] = math.log(x[i], {base})\n",
                 {"math": math, "GlobalIdx": GlobalIdx})
    text = compile_kernel(src["k"]).wgsl()
    assert f", log(ct_fid({literal(float(base), 'float')})))" in text     # ct_div_f(log(x), log(b))


# ------------------------------------------------ C06: four lanes, a function returning a literal
def test_the_four_lane_variant_splats_a_functions_literal_result():
    @Gpu.func
    def f0(a: float, b: float) -> float:
        return 0.001

    def kern(n: int, x0: list[float], o0: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            o0[i] = f0(10.0, x0[i])
    program = compile_kernel(kern)
    text = program.render(Variant(form="vec_whole"))
    # (splat, and hidden from the driver as the scalar form's result is: literal_entry.py)
    assert "o0[ct_j] = vec4<f32>((vec4<f32>(ct_enter_f(0.001f))));" in text


# ------------------------------------------------- C07: loops with an early exit, on CPU drivers
def _loop_with_return(n: int, x0: list[int32]) -> None:
    i = GlobalIdx.x
    if i:
        return
    w7: int = 0
    v: int = 0
    while w7 < 4:
        w7 += 1
        v = int(x0[i]) % w7
        if not w7:
            return


def test_the_cpu_variant_hides_the_entry_values_of_a_loop_with_an_early_exit():
    program = compile_kernel(_loop_with_return)
    cpu, gpu_text = program.render(Variant(loop_report=True)), program.wgsl()
    assert "    ct_opq = (ct_nwg.z >> 31u) | (ct_u.ct_threads >> 31u);" in cpu and "var<private> ct_opq: u32;" in cpu
    assert "w7 = bitcast<i32>(bitcast<u32>(w7) ^ ct_opq);" in cpu
    assert "v = bitcast<i32>(bitcast<u32>(v) ^ ct_opq);" in cpu
    assert "ct_opq" not in gpu_text                        # GPUs run the loop as written


def test_a_literal_range_with_a_break_gets_the_cpu_variant():
    def k(o: list[float], f: list[bool]) -> None:
        v: float = 0.0
        for k in range(4):
            v = v + 1.5
            if f[k]:
                break
        o[0] = v

    def plain(o: list[float]) -> None:
        v: float = 0.0
        for k in range(4):
            v = v + 1.5
        o[0] = v
    program = compile_kernel(k)
    assert program.loops and "for (var ct_r1j: u32 = ct_opq;" in program.render(Variant(loop_report=True))
    assert "v = select(v, -v, ct_opq != 0u);" in program.render(Variant(loop_report=True))
    assert not compile_kernel(plain).loops                 # no early exit: as before


def test_a_device_functions_loop_with_an_early_exit_is_hidden_in_the_cpu_variant_only():
    @Gpu.func
    def first_at_least(xs: list[int], t: int) -> int:
        k: int = 0
        while k < len(xs):
            if xs[k] >= t:
                return k
            k += 1
        return -1

    def kern(n: int, xs: list[int], o: list[int]) -> None:
        i = GlobalIdx.x
        if i < n:
            o[i] = first_at_least(xs, i)
    program = compile_kernel(kern)
    assert "k = bitcast<i32>(bitcast<u32>(k) ^ ct_opq);" in program.render(Variant(loop_report=True))
    assert "ct_opq" not in program.wgsl()


def test_a_reductions_operation_hides_its_loops_entry_values_on_cpu_drivers_only():
    from cthreads.codegen import compile_operation
    from cthreads.codegen.reduction import reduction_wgsl

    @Gpu.func
    def op(a: float, b: float) -> float:
        k: int = 0
        s: float = a
        while k < 4:
            k += 1
            s = s + b * 0.25
            if k == 0:
                break
        return s
    source = compile_operation(op)
    assert "k = bitcast<i32>(bitcast<u32>(k) ^ ct_opq);" in source.text
    cpu = reduction_wgsl(source.fn, source.ty, source.text, "shared", 64, 1, probe=True)
    gpu_text = reduction_wgsl(source.fn, source.ty, source.text, "shared", 256, 4)
    assert "    ct_opq = nwg.z >> 31u;" in cpu
    assert "ct_opq =" not in gpu_text and "var<private> ct_opq: u32;" in gpu_text
    # the compiler says so itself, without the text being searched
    assert source.loops and source.opaque
    assert cpu == reduction_wgsl(source.fn, source.ty, source.text, "shared", 64, 1, probe=True,
                                 opaque=source.opaque)


def test_an_operations_loops_come_from_its_functions_and_helpers():
    from cthreads.codegen import compile_operation

    @Gpu.func
    def plain(a: int, b: int) -> int:
        return a + b

    @Gpu.func
    def power(a: int, b: int) -> int:
        return a ** (b % 3)           # int ** is a library helper with a loop (ct_pow_i)
    flat, helper = compile_operation(plain), compile_operation(power)
    assert not flat.loops and not flat.opaque
    assert helper.loops and not helper.opaque and "loop {" in helper.text


# ------------------------------------------ a literal beyond float32 in a plain-float kernel
def test_a_float64_only_literal_decorates_and_its_32_bit_launches_are_refused():
    bad = line() + 5
    @Gpu
    def scale(n: int, o0: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            o0[i] = o0[i] * (-1e200)
    assert scale.program_for(("float64", "int")).refused is None
    refused = scale.program.refused
    assert isinstance(refused, GpuKernelError)
    assert str(refused) == (
        "the float -1e+200 is beyond float32's range, and this launch's plain floats are "
        "float32\n"
        f'  File "{HERE}", line {bad}, in scale\n'
        "    o0[i] = o0[i] * (-1e200)\n"
        "                     ^^^^^^\n"
        "hint: pass float64 arrays for the plain list[float] parameters (the kernel then "
        "computes in float64), or write float64(...) around the value")
    with pytest.raises(GpuKernelError) as info:
        scale.program.wgsl()
    assert info.value is refused and info.value.lineno == bad


def test_a_literal_beyond_every_launchs_width_still_fails_at_decoration():
    with pytest.raises(GpuKernelError, match="beyond float32's range\n"):
        @Gpu
        def pinned(n: int, o0: list[float32]) -> None:
            i = GlobalIdx.x
            if i < n:
                o0[i] = o0[i] * (-1e200)
    with pytest.raises(GpuKernelError, match=r"does not fit in int32 \("):
        @Gpu
        def no_int_lists(n: int, o0: list[float]) -> None:
            v: int = 1099511627776
            o0[0] = float(v)


def test_a_device_function_with_a_float64_only_literal_decorates():
    @Gpu.func
    def big(x: float) -> float:
        return x * 1e200

    @Gpu
    def k(n: int, o: list[float]) -> None:
        i = GlobalIdx.x
        if i < n:
            o[i] = big(o[i])
    assert str(k.program.refused).startswith(
        "the float 1e+200 is beyond float32's range, and this launch's plain floats are "
        "float32\n")
    assert "1e+200lf" in k.program_for(("float64", "int")).wgsl()
    with pytest.raises(GpuKernelError, match="beyond float32's range\n"):
        @Gpu.func
        def pinned(x: float32) -> float32:
            return x * 1e200


def test_an_int64_only_literal_decorates_too():
    @Gpu
    def shift(n: int, o0: list[int]) -> None:
        i = GlobalIdx.x
        if i < n:
            o0[i] = o0[i] + 3000000000
    assert "plain ints are int32" in str(shift.program.refused)
    assert shift.program_for(("float", "int64")).refused is None


# -------------------------------------------------------- item 7: hints for calls kernels lack
rng = np.random.default_rng(0)


def helper(a: float) -> float:
    return a


CALLS = {
    "random.random()": (
        "'random.random': Python's and numpy's random numbers do not run in kernels",
        "use cthreads.gpu.Random: rng = Random(seed, GlobalIdx.x), then rng.random(), "
        "rng.uniform(a, b), rng.normal(mu, sigma), rng.randint(a, b)"),
    "rng.random()": (
        "'rng.random': Python's and numpy's random numbers do not run in kernels",
        "use cthreads.gpu.Random: rng = Random(seed, GlobalIdx.x), then rng.random(), "
        "rng.uniform(a, b), rng.normal(mu, sigma), rng.randint(a, b)"),
    "print(v)": (
        "print() is a statement in kernels: it has no value to use",
        "call print(...) on a line of its own (its lines are written at join())"),
    "np.tanh(v)": (
        "numpy function 'np.tanh' does not run in kernels",
        "write math.tanh(x) (import math): kernels compute one value at a time"),
    "np.maximum(v, 1.0)": (
        "numpy function 'np.maximum' does not run in kernels",
        "write max(a, b): kernels compute one value at a time"),
    "np.max(xs)": (
        "numpy function 'np.max' does not run in kernels",
        "loop over the list: acc = xs[0], then for k in range(1, len(xs)): acc = max(acc, "
        "xs[k]); max(a, b, ...) takes values, not a list; a whole array reduces on the device "
        "outside kernels, with f.reduce(array) of a @Gpu.func f(a, b)"),
    "np.sum(xs)": (
        "numpy function 'np.sum' does not run in kernels",
        "loop over the list: acc = xs[0], then for k in range(1, len(xs)): acc = acc + "
        "xs[k]; a whole array reduces on the device outside kernels, with f.reduce(array) "
        "of a @Gpu.func f(a, b)"),
    "np.float32(v)": (
        "numpy function 'np.float32' does not run in kernels",
        "write float32(x) (from cthreads.gpu import float32)"),
    "helper(v)": (
        "'helper' is a plain Python function, which kernels cannot call",
        "decorate it with @Gpu.func (def helper(...) with annotated parameters and result) "
        "to call it from kernels"),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_calls_kernels_cannot_make_get_a_precise_hint(call):
    message, hint = CALLS[call]
    src = f"def k(n: int, xs: list[float]) -> None:\n    v: float = 1.0\n    v = {call}\n"
    filename = f"<kernel-hint-{abs(hash(call))}>"
    import linecache
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"np": np, "random": random, "rng": rng, "helper": helper}
    exec(compile(src, filename, "exec"), namespace)
    with pytest.raises(GpuKernelError) as info:
        Gpu(namespace["k"])
    start = 8
    name = call.split("(")[0]
    assert str(info.value) == (
        f"{message}\n"
        f'  File "{filename}", line 3, in k\n'
        f"    v = {call}\n"
        f"{' ' * start}{'^' * len(name)}\n"
        f"hint: {hint}")
    assert info.value.lineno == 3


def test_the_generic_hint_names_device_functions():
    import time

    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(o: list[float]) -> None:
            o[0] = time.time()
    assert str(info.value).endswith(
        "hint: kernels can call int float bool abs min max len round, math functions "
        "(math.sqrt, math.tanh, math.floor, ...: docs/language.md lists them), atomic_*, the "
        "barrier forms and @Gpu.func device functions")
