"""Device functions: every mistake is a located error (no device needed).

Errors inside a device function cite the function's own line; a wrong call cites the call.
Expected line numbers come from ``inspect.currentframe()`` so the tests survive edits above.
"""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelError, GpuKernelTypeError, GpuUnresolvedName
from cthreads.gpu import GlobalIdx, Gpu, GpuFunc, shared
from cthreads.sync import __sync_threads

HERE = __file__


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _at(info, lineno: int, fn: str) -> None:
    assert f'File "{HERE}", line {lineno}, in {fn}' in str(info.value), str(info.value)


def test_an_error_inside_a_function_cites_its_line_at_decoration():
    bad = line() + 4
    with pytest.raises(GpuKernelError) as info:
        @Gpu.func
        def f(v: float) -> float:
            return print(v)
    _at(info, bad, "f")
    assert "print() is a statement in kernels" in str(info.value)


def test_wrong_argument_count_cites_the_call():
    @Gpu.func
    def two(a: float, b: float) -> float:
        return a + b

    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, out: list[float]) -> None:
            i: int = GlobalIdx.x
            out[i] = two(1.0)
    _at(info, bad, "k")
    assert "two() takes 2 argument(s) (a, b), got 1" in str(info.value)
    assert "two(a: float, b: float) -> float" in str(info.value)


@pytest.mark.parametrize("call, message", [
    ("takes_int(1.5)", "argument 1 of takes_int() ('v: int') cannot take a float value"),
    ("takes_list(2.0)", "argument 1 of takes_list() ('xs: list[float]') must be a list"),
    ("takes_list(ints)", "cannot take 'ints', a list[int]"),
    ("takes_int(ints)", "takes a int, not the list 'ints'"),
    ("void(out)", "device function void returns None, so its call cannot be used as a value"),
])
def test_wrong_argument_types_cite_the_call(call, message):
    @Gpu.func
    def takes_int(v: int) -> float:
        return float(v)

    @Gpu.func
    def takes_list(xs: list[float]) -> float:
        return xs[0]

    @Gpu.func
    def void(xs: list[float]) -> None:
        xs[0] = 1.0

    src = (f"def k(n: int, out: list[float], ints: list[int]) -> None:\n"
           f"    out[0] = {call}\n")
    namespace = {"takes_int": takes_int, "takes_list": takes_list, "void": void}
    with pytest.raises((GpuKernelError, GpuKernelTypeError)) as info:
        _kernel_from(src, namespace)
    assert message in str(info.value)
    assert "line 2, in k" in str(info.value)


def _kernel_from(src: str, namespace: dict, tmp=[0]):
    import linecache
    tmp[0] += 1
    filename = f"<device-function-test-{tmp[0]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    code = compile(src, filename, "exec")
    exec(code, namespace)
    return Gpu(namespace["k"])


def test_direct_recursion_is_a_located_error():
    @Gpu.func
    def fact(n: int) -> int:
        return 1 if n <= 1 else n * fact(n - 1)
    bad = line() - 1

    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(n: int, out: list[int]) -> None:
            out[0] = fact(n)
    assert "recursive call of device function fact (fact -> fact)" in str(info.value)
    _at(info, bad, "fact")
    assert "write the recursion as a loop" in str(info.value)


def test_mutual_recursion_is_a_located_error():
    @Gpu.func
    def ping(n: int) -> int:
        return 0 if n == 0 else pong(n - 1)

    @Gpu.func
    def pong(n: int) -> int:
        return 1 if n == 0 else ping(n - 1)
    bad = line() - 1

    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(n: int, out: list[int]) -> None:
            out[0] = ping(n)
    assert "(ping -> pong -> ping)" in str(info.value)
    _at(info, bad, "pong")


def test_an_undefined_callee_waits_for_the_first_use():
    @Gpu
    def k(n: int, out: list[float]) -> None:
        out[0] = not_defined_anywhere(1.0)  # noqa: F821
    bad = line() - 1
    with pytest.raises(GpuUnresolvedName) as info:
        k.program
    assert "name 'not_defined_anywhere' is not defined" in str(info.value)
    assert "@Gpu.func" in str(info.value)
    _at(info, bad, "k")


def test_an_undecorated_helper_says_to_decorate_it():
    def helper(v: float) -> float:
        return v

    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(n: int, out: list[float]) -> None:
            out[0] = helper(1.0)
    assert "plain Python function" in str(info.value)
    assert "decorate it with @Gpu.func" in str(info.value)


def test_a_kernel_called_from_a_kernel_is_refused():
    @Gpu
    def inner(n: int, out: list[float]) -> None:
        out[0] = 1.0

    with pytest.raises(GpuKernelError, match="kernels cannot call kernels"):
        @Gpu
        def k(n: int, out: list[float]) -> None:
            inner(n, out)


@pytest.mark.parametrize("body, message", [
    ("    if v > 0.0:\n        return v\n",
     "may reach its end without returning a float"),
    ("    return\n", "returns a float, but this 'return' has no value"),
    ("    return v > 1.0\n", None),
    ("    __sync_threads()\n    return v\n", "barriers belong in kernels"),
    ("    t: list[float] = shared(8)\n    return v\n", "shared arrays are declared in kernels"),
])
def test_function_body_rules(body, message):
    src = "def f(v: float) -> float:\n" + body
    namespace = {"__sync_threads": __sync_threads, "shared": shared}
    import linecache
    filename = f"<device-function-body-{abs(hash(body))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    if message is None:                 # a bool result converts to float, as in assignments
        assert isinstance(Gpu.func(namespace["f"]), GpuFunc)
        return
    with pytest.raises((GpuKernelError, GpuKernelTypeError)) as info:
        Gpu.func(namespace["f"])
    assert message in str(info.value)


def test_signature_rules():
    with pytest.raises(GpuKernelTypeError, match="has no return annotation"):
        @Gpu.func
        def f(v: float):
            return v
    with pytest.raises(GpuKernelTypeError, match="returns a list"):
        @Gpu.func
        def g(v: float) -> list[float]:
            return v
    with pytest.raises(GpuKernelTypeError, match="is annotated '-> None' but returns a value"):
        @Gpu.func
        def h(v: float) -> None:
            return v


def test_plain_python_calls_run_the_body():
    @Gpu.func
    def mix(a: int, b: int) -> int:
        return a // b + a % b

    assert mix(-7, 2) == -7 // 2 + -7 % 2
    assert mix.__name__ == "mix" and "mix" in repr(mix)
