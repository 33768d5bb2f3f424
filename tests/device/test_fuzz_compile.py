"""Valid kernels that failed to compile or launch (issue 21, item 4: C01-C07 of the random-
program search) run on the device and give the documented values, under every launch setting
that picks another shader: the four-lane variant on and off (``CTHREADS_VEC``), one or several
indexes per invocation (``CTHREADS_COARSEN``), 32- and 64-bit plain floats. Each result is
checked against numpy or the plain-Python run (``simulate``); the rule of the issue is that a
kernel that decorates never meets a WGSL refusal or an internal error at launch.

The compile-level side (the WGSL each fix writes): tests/codegen/test_fuzz_compile.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads import config
from cthreads.errors import GpuKernelError
from cthreads.gpu import GlobalIdx, Gpu, float32, gpu, int32, int64, uint32
from cthreads.launch import compile as compile_all

#: (CTHREADS_VEC, CTHREADS_COARSEN) pairs: each makes the runtime pick another shader
SETTINGS = [(True, None), (False, None), (True, 8), (False, 2)]
ALL = []


def kernel(fn):
    k = Gpu(fn)
    ALL.append(k)
    return k


@pytest.fixture(params=SETTINGS, ids=lambda s: f"vec{int(s[0])}-coarsen{s[1] or 'auto'}")
def setting(request, device_name):
    vec, coarsen = request.param
    for k in ALL:
        k.forget_runtimes()
    with config.override(vec=vec, coarsen=coarsen):
        yield request.param
    for k in ALL:
        k.forget_runtimes()


# ----------------------------------------------------------------------------- C01
@kernel
def literal_ops(n: int, x: list[int], o: list[int64]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[8 * i] = x[i] + 0 * (-7)
    o[8 * i + 1] = x[i] + 0 // (-7) + 0 % (-7)
    o[8 * i + 2] = x[i] + (3 + 10000000)
    o[8 * i + 3] = x[i] + (12 - (-5)) * (7 % (-3))
    o[8 * i + 4] = x[i] + (1024 >> 33) + ((-1024) >> 40)
    o[8 * i + 5] = 12345 + 2147483647
    o[8 * i + 6] = x[i] + ((-7) // 2) + 2 ** 10
    o[8 * i + 7] = 1 << 40


def test_c01_literal_operations_give_pythons_values(setting):
    x = np.arange(-3, 5, dtype=np.int32)
    o = np.zeros(8 * len(x), np.int64)
    gpu(literal_ops, len(x), x, o).join()
    want = np.array([[v + 0 * (-7), v + 0 // (-7) + 0 % (-7), v + (3 + 10000000),
                      v + (12 - (-5)) * (7 % (-3)), v + (1024 >> 33) + ((-1024) >> 40),
                      12345 + 2147483647, v + ((-7) // 2) + 2 ** 10, 1 << 40]
                     for v in x.tolist()], np.int64).ravel()
    np.testing.assert_array_equal(o, want)


# ----------------------------------------------------------------------------- C02
@Gpu.func
def first_plus(xs: list[int32]) -> float:
    return xs[0] + 1.5


@Gpu.func
def scaled(xs: list[float32], k: int) -> float:
    return xs[k] * 2.0


@Gpu.func
def corner(g: list[list[int32]]) -> int:
    return g[0, 0] + g[1, 1]


@kernel
def width_lists(n: int, a: list[int32], b: list[float32], g: list[list[int32]],
                o: list[float], p: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i] = first_plus(a) + scaled(b, i)
    p[i] = corner(g) + i


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_c02_device_functions_with_width_typed_lists(setting, dtype):
    n = 6
    a = np.array([7, 1, 2, 3, 4, 5], np.int32)
    b = np.arange(n, dtype=np.float32) / 4
    g = np.array([[10, 20], [30, 40]], np.int32)
    o = np.zeros(n, dtype)
    p = np.zeros(n, np.int32)
    gpu(width_lists, n, a, b, g, o, p).join()
    np.testing.assert_array_equal(o, (7 + 1.5 + b.astype(dtype) * 2).astype(dtype))
    np.testing.assert_array_equal(p, 10 + 40 + np.arange(n))


# ----------------------------------------------------------------------------- C03
@kernel
def literal_shifts(n: int, u: list[uint32], s: list[int], o: list[uint32],
                   t: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    v: uint32 = u[i]
    v <<= 33
    o[2 * i] = v
    o[2 * i + 1] = u[i] >> 32
    t[2 * i] = s[i] << 37
    t[2 * i + 1] = s[i] >> 40


def test_c03_literal_shift_counts_are_taken_modulo_32(setting):
    u = np.array([1, 2, 3, 0x80000001, 0xFFFFFFFF], np.uint32)
    s = np.array([1, -2, 3, 0x40000000, -0x80000000], np.int32)
    o = np.zeros(2 * len(u), np.uint32)
    t = np.zeros(2 * len(u), np.int32)
    gpu(literal_shifts, len(u), u, s, o, t).join()
    np.testing.assert_array_equal(o[0::2], u << np.uint32(1))
    np.testing.assert_array_equal(o[1::2], u)
    np.testing.assert_array_equal(t[0::2], s << np.int32(5))
    np.testing.assert_array_equal(t[1::2], s >> np.int32(8))


# ----------------------------------------------------------------------------- C04
@kernel
def chains(n: int, x: list[float32], y: list[float], u: list[uint32], o: list[bool],
           p: list[bool]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[i] = x[i] >= 3.14159 < y[i]
    p[i] = u[i] == 4 < n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_c04_literals_in_chains_of_two_types(setting, dtype):
    x = np.array([5.0, 3.14159, 1.0, 3.1416, 4.0], np.float32)
    y = np.array([7.0, 7.0, 7.0, 3.0, 3.14159], dtype)
    u = np.array([4, 4, 5, 4, 0], np.uint32)
    o = np.zeros(5, bool)
    p = np.zeros(5, bool)
    gpu(chains, 5, x, y, u, o, p).join()
    lit32 = float(np.float32(3.14159))
    lit_y = float(dtype(3.14159))
    want_o = [float(a) >= lit32 and lit_y < float(b) for a, b in zip(x, y)]
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(p, [int(v) == 4 and 4 < 5 for v in u])


# ----------------------------------------------------------------------------- C05
@kernel
def log_bases(n: int, x: list[float], o: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    o[3 * i] = math.log(x[i], -0.5)
    o[3 * i + 1] = math.log(x[i], 0.0)
    o[3 * i + 2] = math.log(x[i], 4.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_c05_a_literal_log_base_below_one(setting, dtype):
    x = np.array([2.0, 0.5, 16.0, 1.0], dtype)
    o = np.zeros(3 * len(x), dtype)
    gpu(log_bases, len(x), x, o).join()
    assert np.isnan(o[0::3]).all()                         # log of a negative base: NaN
    # log(x) / log(0) = log(x) / -inf: -0.0 above 1, +0.0 below, 0.0 at 1
    np.testing.assert_array_equal(o[1::3], [-0.0, 0.0, -0.0, -0.0])
    np.testing.assert_array_equal(np.signbit(o[1::3]), [True, False, True, True])
    np.testing.assert_allclose(o[2::3], np.log(x) / np.log(dtype(4.0)),
                               rtol=2e-6 if dtype == np.float32 else 1e-14)


# ----------------------------------------------------------------------------- C06
@Gpu.func
def constant(a: float, b: float) -> float:
    return 0.001


@Gpu.func
def first(a: float, b: float) -> float:
    return a


@kernel
def lanes(n: int, x0: list[float], o0: list[float], o1: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        o0[i] = constant(10.0, x0[i])
        o1[i] = first(10.0, x0[i]) + x0[i]


@pytest.mark.parametrize("n", [7, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_c06_four_lanes_and_functions_whose_result_drops_the_lanes(setting, n, dtype):
    x0 = np.arange(n, dtype=dtype)
    o0 = np.full(n + 1, -1.0, dtype)
    o1 = np.full(n + 1, -1.0, dtype)
    gpu(lanes, n, x0, o0, o1).join()
    np.testing.assert_array_equal(o0[:n], np.full(n, dtype(0.001)))
    np.testing.assert_array_equal(o1[:n], 10.0 + x0)
    assert o0[n] == -1.0 and o1[n] == -1.0


# ----------------------------------------------------------------------------- C07
@kernel
def loop_return(n: int, x0: list[int32], o: list[int]) -> None:
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
    o[0] = v + 100 * w7


@kernel
def loop_break(n: int, x0: list[int32], o: list[int]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    w: int = 0
    v: int = 0
    while w < 4:
        w += 1
        v = v + w + x0[i] % w
        if w == 0:
            break
    o[4 * i] = v + 100 * w
    s: int = 0
    for k in range(4):
        s = s + k + 1
        if k + 1 == 0:
            break
    o[4 * i + 1] = s
    d: int = 10
    t: int = 0
    while d > 6:
        d -= 1
        t = t + d
        if d == 10:
            break
    o[4 * i + 2] = t
    f: float = 0.0
    for k in range(5):
        f = f + 0.5
        if f < 0.25:
            break
    o[4 * i + 3] = int(f * 10.0)


def _simulated(kernel_, n, *arrays):
    copies = [a.tolist() for a in arrays]
    kernel_.simulate(n, *copies)
    return copies


def test_c07_a_loop_with_a_return_runs_to_its_end(setting):
    x0 = np.array([202599756, -978174644, 1, -458481, 20], np.int32)
    o = np.zeros(1, np.int32)
    gpu(loop_return, 5, x0, o).join()
    assert o.tolist() == _simulated(loop_return, 5, x0, o)[1] == [400]


def test_c07_loops_with_an_early_exit_run_every_pass(setting):
    x0 = np.array([202599756, -978174644, 1, -458481, 20, 7, 8, 9, 10], np.int32)
    n = len(x0)
    o = np.zeros(4 * n, np.int32)
    gpu(loop_break, n, x0, o).join()
    want = _simulated(loop_break, n, x0, o)[1]
    assert o.tolist() == want
    assert want[1:4] == [10, 30, 25]


@Gpu.func
def quarter_steps(a: float, b: float) -> float:
    k: int = 0
    s: float = a
    while k < 4:
        k += 1
        s = s + b * 0.25
        if k == 0:
            break
    return s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_c07_a_reductions_operation_with_an_early_exit_loop(device_name, dtype):
    import functools
    x = np.arange(1, 41, dtype=dtype)
    want = functools.reduce(lambda a, b: a + b, x.tolist())      # 4 quarters of b: a + b
    assert quarter_steps.reduce(x) == want == 820.0


# ---------------------------------------------- a literal only a float64 launch can take
@kernel
def times_huge(n: int, o0: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        o0[i] = o0[i] * (-1e200)


def test_a_float64_only_literal_runs_in_float64_and_refuses_float32_launches(setting):
    o = np.array([1e-190, 2.0, -3e-200, 0.0])
    want = o * -1e200
    gpu(times_huge, 4, o).join()
    np.testing.assert_array_equal(o, want)
    o32 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for data in (o32, [1.0, 2.0, 3.0, 4.0]):
        before = list(data)
        with pytest.raises(GpuKernelError) as info:
            gpu(times_huge, 4, data).join()
        assert str(info.value).startswith(
            "the float -1e+200 is beyond float32's range, and this launch's plain floats are "
            "float32\n")
        assert info.value.lineno == times_huge.fn.__code__.co_firstlineno + 4
        assert list(data) == before                          # nothing ran, nothing written


@Gpu.func
def huge_scale(x: float) -> float:
    return x * 1e200


@kernel
def times_huge_in_a_function(n: int, o0: list[float]) -> None:
    i = GlobalIdx.x
    if i < n:
        o0[i] = huge_scale(o0[i])


def test_a_float64_only_literal_in_a_device_function(setting):
    o = np.array([1e-190, 2.0, -3e-200, 0.0])
    want = o * 1e200
    gpu(times_huge_in_a_function, 4, o).join()
    np.testing.assert_array_equal(o, want)
    o32 = np.ones(4, np.float32)
    with pytest.raises(GpuKernelError, match="beyond float32's range, and this launch's"):
        gpu(times_huge_in_a_function, 4, o32).join()
    assert (o32 == 1.0).all()


def test_compile_and_prepare_leave_out_the_refused_32_bit_programs(device_name):
    summary = compile_all()
    assert {"times_huge", "times_huge_in_a_function"} <= set(summary["kernels"])


# ------------------------------------- every operator on two int literals: Python's value
EDGES = [0, 1, -1, 2, -7, 31, 32, 33, 63, 64, 65, 2**31 - 1, -2**31, 3000000000, -(2**40),
         2**63 - 1]
INT_OPS = ["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^"]


def _python_value(op: str, a: int, b: int):
    """Python's int value of ``a op b`` when it has one within 64 bits (else None)."""
    if op in ("**", "<<", ">>") and b > 65:
        return None                                   # not computed here either
    try:
        value = eval(f"({a}) {op} ({b})")
    except (ZeroDivisionError, ValueError):
        return None
    return value if type(value) is int and -2**63 <= value < 2**63 else None


@pytest.mark.parametrize("op", INT_OPS)
def test_every_operator_on_two_int_literals_gives_pythons_value(device_name, op):
    # docs/language.md: an operation on two int literals has Python's value (C01: the fold;
    # C03: shift counts of 32 and more); each pair is one statement of one kernel
    import linecache
    pairs = [(a, b) for a in EDGES for b in EDGES if _python_value(op, a, b) is not None]
    body = "\n".join(f"    o[{k}] = ({a}) {op} ({b})" for k, (a, b) in enumerate(pairs))
    src = (f"def k(n: int, o: list[int64]) -> None:\n    if GlobalIdx.x != 0:\n"
           f"        return\n{body}\n")
    filename = f"<literal-ops-{INT_OPS.index(op)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"int64": int64, "GlobalIdx": GlobalIdx}
    exec(compile(src, filename, "exec"), namespace)
    o = np.zeros(len(pairs), np.int64)
    gpu(Gpu(namespace["k"]), 1, o).join()
    wrong = [(a, op, b, int(got), _python_value(op, a, b)) for (a, b), got in zip(pairs, o)
             if int(got) != _python_value(op, a, b)]
    assert not wrong, wrong[:10]
    assert len(pairs) > 60


#: (numpy dtype, bits, signed) and the values read from the list, per int width type
WIDTHS = {"int32": (np.int32, 32, True, [5, -3, 0, 2**31 - 1, -2**31, 7]),
          "uint32": (np.uint32, 32, False, [5, 4294967293, 0, 2**31, 7, 1]),
          "int64": (np.int64, 64, True, [5, -3, 0, 2**63 - 1, -2**63, 7])}
TYPED_OPS = INT_OPS + ["<", "==", "!="]


def _wrap(v: int, bits: int, signed: bool) -> int:
    m = 1 << bits
    v %= m
    return v - m if signed and v >= m // 2 else v


def _documented(op: str, a: int, b: int, bits: int, signed: bool) -> int:
    """docs/language.md's value of ``a op b`` at a width: wrapping, Python's floor ``//``
    and ``%``, ``// 0`` and ``% 0`` give 0, shift counts modulo the width."""
    if op in ("<", "==", "!="):
        return int({"<": a < b, "==": a == b, "!=": a != b}[op])
    if op in ("//", "%"):
        return 0 if b == 0 else _wrap(a // b if op == "//" else a % b, bits, signed)
    if op == "**":
        return _wrap(pow(a, b, 1 << bits), bits, signed)
    if op in ("<<", ">>"):
        count = b % bits
        return _wrap(a << count, bits, signed) if op == "<<" else a >> count
    return _wrap({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b,
                  "^": a ^ b}[op], bits, signed)


@pytest.mark.parametrize("op", TYPED_OPS)
@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_operator_between_a_typed_int_and_a_literal(device_name, width, op):
    # a literal takes the type of the value it meets (C03, C04: as the driver accepts it);
    # literals that do not fit the type are located errors (not written here)
    import linecache
    dtype, bits, signed, xs = WIDTHS[width]
    fits = (lambda v: -(1 << bits - 1) <= v < 1 << bits - 1) if signed else \
        (lambda v: 0 <= v < 1 << bits)
    cases = [(side, lit) for side in "LR" for lit in EDGES + [4294967295] if fits(lit)
             and not (op in ("**", "<<", ">>") and (side == "R" or lit < 0))
             and not (op in ("//", "%") and side == "L" and lit == 0)]
    stmts = [f"        o[{len(xs)} * {k} + j] = int64("
             + (f"x[j] {op} ({lit})" if side == "L" else f"({lit}) {op} x[j]") + ")"
             for k, (side, lit) in enumerate(cases)]
    src = (f"def k(n: int, x: list[{width}], o: list[int64]) -> None:\n"
           "    if GlobalIdx.x != 0:\n        return\n    for j in range(n):\n"
           + "\n".join(stmts) + "\n")
    filename = f"<typed-literal-{width}-{TYPED_OPS.index(op)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"int64": int64, "int32": int32, "uint32": uint32, "GlobalIdx": GlobalIdx}
    exec(compile(src, filename, "exec"), namespace)
    o = np.zeros(len(xs) * len(cases), np.int64)
    gpu(Gpu(namespace["k"]), len(xs), np.array(xs, dtype), o).join()
    wrong = []
    for k, (side, lit) in enumerate(cases):
        for j, x in enumerate(xs):
            a, b = (x, lit) if side == "L" else (lit, x)
            want = _documented(op, a, b, bits, signed)
            if int(o[len(xs) * k + j]) != want:
                wrong.append((width, f"{a} {op} {b}", int(o[len(xs) * k + j]), want))
    assert not wrong, wrong[:10]


# ---------------------------------------------------------- every kernel above, every shader
def test_every_kernel_here_decorated_and_launched_without_an_internal_error():
    names = {k.__name__ for k in ALL}
    assert names == {"literal_ops", "width_lists", "literal_shifts", "chains", "log_bases",
                     "lanes", "loop_return", "loop_break", "times_huge",
                     "times_huge_in_a_function"}
