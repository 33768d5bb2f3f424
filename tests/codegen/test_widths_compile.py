"""Width types in the compiler, without a device: typing rules, located errors, WGSL shape."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from cthreads.codegen import compile_kernel
from cthreads.codegen.types import ELEM_TYPES, Widths, elem
from cthreads.errors import GpuKernelError, GpuKernelTypeError
from cthreads.lang.indexes import GlobalIdx
from cthreads.lang.intrinsics import atomic_add, atomic_max, shared
from cthreads.kernel import Gpu
from cthreads.lang.widths import float32, float64, int32, int64, uint32

HERE = __file__
WIDE = Widths("float64", "int64")


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def local_types(wgsl: str) -> dict:
    """name -> WGSL type of the kernel body's locals (``var v: T;``)."""
    body = wgsl[wgsl.index("fn ct_body"):]
    return dict(re.findall(r"var (\w+): (\w+);", body))


# ----------------------------------------------------------------------------- promotion
def test_typed_values_promote_as_numpy():
    def k(a: list[int32], b: list[int64], c: list[uint32], d: list[float32],
          e: list[float64], out: list[float64]) -> None:
        i = GlobalIdx.x
        ab = a[i] + b[i]
        ac = a[i] * c[i]
        bc = b[i] - c[i]
        cc = c[i] + c[i]
        ad = a[i] + d[i]
        bd = b[i] * d[i]
        de = d[i] + e[i]
        ae = a[i] + e[i]
        cd = c[i] + d[i]
        out[i] = 0.0
    types = local_types(compile_kernel(k).wgsl())
    # numpy's result_type, except that an int meeting a float gives that float
    assert types["ab"] == "i64" and types["ac"] == "i64" and types["bc"] == "i64"
    assert types["cc"] == "u32" and types["ad"] == "f32" and types["bd"] == "f32"
    assert types["de"] == "f64" and types["ae"] == "f64" and types["cd"] == "f32"
    assert np.result_type(np.int32, np.uint32) == np.int64          # the rule followed


def test_python_scalars_take_the_type_of_the_value_they_meet():
    def k(c: list[uint32], d: list[float32], e: list[float64], b: list[int64],
          out: list[float64]) -> None:
        i = GlobalIdx.x
        u1 = c[i] + 1
        u2 = c[i] * 4000000000
        f1 = d[i] + 0.1
        f2 = e[i] + 0.1
        l1 = b[i] + 1
        bf = b[i] + 0.5           # a float literal among ints: the launch's float
        t1 = c[i] - int32(1)      # a typed int32: numpy's uint32 with int32 -> int64
        out[i] = 0.0
    narrow = compile_kernel(k).wgsl()
    types = local_types(narrow)
    assert types["u1"] == "u32" and types["u2"] == "u32"
    assert types["f1"] == "f32" and "0.1f" in narrow
    assert types["f2"] == "f64" and "0.1lf" in narrow
    assert types["l1"] == "i64" and types["bf"] == "f32" and types["t1"] == "i64"
    assert local_types(compile_kernel(k, widths=WIDE).wgsl())["bf"] == "f64"


def test_plain_types_follow_the_widths():
    def k(x: list[float], n: int, out: list[int]) -> None:
        i = GlobalIdx.x
        t = x[i] * 0.5 + n
        m = len(x) + i
        out[i] = int(t) + m
    narrow = compile_kernel(k)
    wide = compile_kernel(k, widths=WIDE)
    assert local_types(narrow.wgsl()) == {"i": "i32", "t": "f32", "m": "i32"}
    assert local_types(wide.wgsl())["t"] == "f64" and local_types(wide.wgsl())["m"] == "i64"
    assert narrow.needs_features == ()
    assert set(wide.needs_features) == {"shader-f64", "shader-int64"}
    assert "array<f64>" in wide.wgsl() and "array<i64>" in wide.wgsl()


def test_constant_expressions_beyond_32_bits_keep_python_values():
    def k(x: list[int64]) -> None:
        i = GlobalIdx.x
        x[i] = x[i] + 2**40 - (1 << 35) + (-2**31) + 3000000000 * 2
    text = compile_kernel(k).wgsl()
    assert "1099511627776li" in text and "34359738368li" in text and "3000000000li" in text
    assert "ct_pow_i" not in text                    # not computed (and wrapped) in int32


def test_a_32_bit_kernel_has_no_64_bit_types():
    def k(n: int, a: float, x: list[float], y: list[int], f: list[bool]) -> None:
        i = GlobalIdx.x
        if i < n and f[i]:
            x[i] = a * x[i] + 2.0 ** y[i] - float(y[i] // 3 % 5)
            y[i] = -2**31 + y[i]
    text = compile_kernel(k).wgsl()
    assert not re.search(r"\b(i64|u64|f64)\b|\dli\b|\dlf\b", text)
    assert compile_kernel(k).needs_features == ()


def test_wgsl_type_names_are_renamed():
    def k(f64: list[float64], i64: list[int64], u64: list[uint32]) -> None:
        i = GlobalIdx.x
        f32 = f64[i]
        i64[i] = i64[i] + int64(f32)
        u64[i] = u64[i] + 1
    text = compile_kernel(k).wgsl()
    assert "var<storage, read_write> f64:" not in text
    assert not re.search(r"var<storage, [a-z_]+> (f64|i64|u64):", text)


def test_uint32_widening_is_unsigned():
    def k(c: list[uint32], out: list[int64]) -> None:
        i = GlobalIdx.x
        out[i] = c[i]
    text = compile_kernel(k).wgsl()
    assert "ct_wide_u" in text and "u64(v)" in text            # zero-extended, not i64(v)


# ----------------------------------------------------------------------------- located errors
def _error(cls, bad_line: int, *words):
    return cls, bad_line, words


def check_error(info, bad: int, *words):
    msg = str(info.value)
    assert f"line {bad}" in msg, msg
    for w in words:
        assert w in msg, msg


def test_a_float_into_an_int64_local():
    bad = line() + 6
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(x: list[float64], out: list[int64]) -> None:
            i = GlobalIdx.x
            v: int64 = 0
            v = x[i]
            out[i] = v
    check_error(info, bad, "float64", "'v'", "int64(...)")


def test_a_float_into_an_int64_list():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(x: list[float64], out: list[int64]) -> None:
            i = GlobalIdx.x
            out[i] = x[i] * 2.0
    check_error(info, bad, "float64")


def test_atomics_on_float64_lists_name_the_float32_array():
    ns = {"GlobalIdx": GlobalIdx, "atomic_add": atomic_add, "float64": float64}
    src = """
def k(x: list[float64]) -> None:
    i = GlobalIdx.x
    atomic_add(x, i, 1)
"""
    path = "<widths-atomic-float64>"
    import linecache
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    exec(compile(src, path, "exec"), ns)
    with pytest.raises(GpuKernelTypeError) as info:
        compile_kernel(ns["k"])
    check_error(info, 4, "list[float64]", "atomic_add", "float32 array for 'x'",
                "np.zeros(n, np.float32)")


def test_atomics_on_int64_lists_need_the_64_bit_atomics_feature():
    def k(x: list[int64], old: list[int64]) -> None:
        i = GlobalIdx.x
        old[i] = atomic_add(x, 0, int64(i) << 40)
    program = compile_kernel(k)
    wgsl = program.wgsl(64)
    assert "array<atomic<i64>>" in wgsl and "atomicAdd(&x[" in wgsl
    assert "shader-int64-atomic-all-ops" in program.needs_features
    assert "shader-int64" in program.needs_features
    (feature, site), = program.feature_sites
    assert feature == "shader-int64-atomic-all-ops"
    assert f'File "{HERE}"' in site and "atomic_add(x, 0, int64(i) << 40)" in site


def test_atomic_max_on_list_int_in_an_int64_launch():
    def k(x: list[int]) -> None:
        i = GlobalIdx.x
        atomic_max(x, 0, i)
    narrow = compile_kernel(k)                        # 32-bit: int32 atomics, no feature
    assert "array<atomic<i32>>" in narrow.wgsl(64)
    assert "shader-int64-atomic-all-ops" not in narrow.needs_features
    assert narrow.feature_sites == ()
    wide = compile_kernel(k, widths=WIDE)             # int64 arrays: 64-bit atomics
    wgsl = wide.wgsl(64)
    assert "array<atomic<i64>>" in wgsl and "atomicMax(&x[" in wgsl, wgsl
    assert "shader-int64-atomic-all-ops" in wide.needs_features


def test_atomics_on_bool_lists_are_refused_with_the_int_list_to_use():
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(x: list[bool]) -> None:
            atomic_add(x, 0, 1)
    assert "list[bool]" in str(info.value) and "int list" in str(info.value)


def test_a_literal_that_does_not_fit_uint32():
    bad = line() + 5
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(u: list[uint32]) -> None:
            i = GlobalIdx.x
            u[i] = u[i] + 5000000000
    check_error(info, bad, "5000000000", "uint32")


def test_a_negative_literal_compared_with_uint32():
    bad = line() + 5
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(u: list[uint32], out: list[int]) -> None:
            i = GlobalIdx.x
            out[i] = 1 if u[i] > -1 else 0
    check_error(info, bad, "-1", "uint32")


def test_a_large_literal_compared_with_uint32_is_written_as_uint32():
    def k(u: list[uint32], out: list[int]) -> None:
        i = GlobalIdx.x
        out[i] = 1 if 5 < u[i] <= 4000000000 else 0
    text = compile_kernel(k).wgsl()
    assert "4000000000u" in text and "4000000000li" not in text


def test_a_float32_compared_with_a_literal_beyond_float32():
    bad = line() + 5
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(x: list[float32], out: list[int]) -> None:
            i = GlobalIdx.x
            out[i] = 1 if x[i] < 1e300 else 0
    check_error(info, bad, "float32", "float64")


def test_a_float32_plus_a_literal_beyond_float32():
    bad = line() + 5
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(x: list[float32]) -> None:
            i = GlobalIdx.x
            x[i] = x[i] + 1e39
    check_error(info, bad, "float32")


def test_range_over_int64_values_with_an_int32_loop_variable():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(lo: int64, out: list[int64]) -> None:
            s: int64 = 0
            for j in range(lo, lo + 10):
                s += j
            out[0] = s
    check_error(info, bad, "int64", "'j'", "32 bits")


def test_range_over_int64_values_in_an_int64_launch():
    def k(lo: int, out: list[int]) -> None:
        s = 0
        for j in range(lo, lo + 10):
            s += j
        out[0] = s
    text = compile_kernel(k, widths=WIDE).wgsl()
    assert "ct_range_count_l" in text and "var j: i64;" in text


def test_shared_arrays_of_width_types():
    def k(x: list[float64], out: list[float64]) -> None:
        t: list[float64] = shared(64)
        u: list[float] = shared(32)
        i = GlobalIdx.x
        t[i % 64] = x[i]
        u[i % 32] = 1.0
        out[i] = t[i % 64] + u[i % 32]
    narrow = compile_kernel(k)
    assert "array<f64, 64>" in narrow.wgsl() and "array<f32, 32>" in narrow.wgsl()
    assert narrow.workgroup_bytes == 64 * 8 + 32 * 4
    wide = compile_kernel(k, widths=WIDE)
    assert "array<f64, 32>" in wide.wgsl() and wide.workgroup_bytes == 96 * 8


def test_the_element_type_rows_are_numpy_dtypes():
    for name, row in ELEM_TYPES.items():
        if row.kind != "b":
            assert np.dtype(row.array_dtype).kind == row.kind
            assert np.dtype(row.array_dtype).itemsize * 8 == row.bits
    assert elem("uint32").spelling == "uint32" and elem("int").spelling == "int32"


def test_a_float_literal_compared_with_float64_is_float64():
    def k(x: list[float64], out: list[int]) -> None:
        i = GlobalIdx.x
        out[i] = 1 if x[i] < 0.1 else 0
    text = compile_kernel(k).wgsl()
    assert "0.1lf" in text and "f64(0.1f)" not in text        # not float32's 0.1 widened


def test_minus_two_to_the_63_is_int64_min():
    def k(x: list[int64]) -> None:
        i = GlobalIdx.x
        x[i] = max(x[i], -2**63) + (-(1 << 63) < x[i])
    text = compile_kernel(k).wgsl()
    assert text.count("(-9223372036854775807li - 1li)") == 2


def test_constant_expressions_beyond_64_bits_are_located_errors():
    bad = line() + 5
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(x: list[int64]) -> None:
            i = GlobalIdx.x
            x[i] = x[i] + 2**63
    check_error(info, bad, "64 bits")
