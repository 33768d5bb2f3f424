"""Every construct outside the kernel language fails at decoration, at the user's line.

Expected line numbers come from ``inspect.currentframe()`` so the tests survive edits above.
"""

from __future__ import annotations

import inspect
import math
import textwrap

import pytest

from cthreads.errors import GpuKernelError, GpuKernelTypeError
from cthreads.lang.indexes import GlobalIdx
from cthreads.kernel import Gpu
from cthreads.sync import Barrier

HERE = __file__


def line() -> int:
    """The caller's current line number."""
    return inspect.currentframe().f_back.f_lineno


def test_exact_text_of_list_iteration():
    bad = line() + 4
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(n: int, xs: list[float]) -> None:
            for v in xs:
                pass
    assert str(info.value) == (
        "iterating over a list ('for v in xs') is not supported in kernels\n"
        f'  File "{HERE}", line {bad}, in k\n'
        "    for v in xs:\n"
        "             ^^\n"
        "hint: write 'for k in range(len(xs)):' and read xs[k]")
    assert info.value.lineno == bad
    assert info.value.filename == HERE
    assert isinstance(info.value, SyntaxError)


def test_exact_text_of_unsupported_annotation():
    bad = line() + 3
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, names: list[str]) -> None:
            pass
    assert str(info.value) == (
        "parameter 'names' of kernel k: unsupported annotation 'str'\n"
        f'  File "{HERE}", line {bad}, in k\n'
        "    def k(n: int, names: list[str]) -> None:\n"
        "                              ^^^\n"
        "hint: annotate with int, float, bool, list[int], list[float] or list[bool] (or a "
        "width type: float32, float64, int32, int64, uint32)")
    assert isinstance(info.value, TypeError)


def test_exact_text_of_type_error_in_assignment():
    bad = line() + 5
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, x: list[float]) -> None:
            i: int = 0
            i = x[0] * 2.0
    assert str(info.value) == (
        "cannot assign a float value to local 'i' of type int\n"
        f'  File "{HERE}", line {bad}, in k\n'
        "    i = x[0] * 2.0\n"
        "    ^^^^^^^^^^^^^^\n"
        "hint: convert explicitly, e.g. int(...), or use a new local of type float")
    exc = info.value                 # located like a GpuKernelError, though a TypeError
    assert (exc.filename, exc.lineno, exc.offset) == (HERE, bad, 13)
    assert exc.text.strip() == "i = x[0] * 2.0"


CASES = [
    # (source body line, exception, message start)
    ("out[0] = [v for v in range(3)][0]", GpuKernelError, "list comprehensions are not"),
    ("out[0] = sum(v for v in range(3))", GpuKernelError, "generator expressions are not"),
    ("f = lambda: 1", GpuKernelError, "lambda is not supported"),
    ("try:\n    pass\nexcept Exception:\n    pass", GpuKernelError, "'try' is not supported"),
    ("with open('x'):\n    pass", GpuKernelError, "'with' is not supported"),
    ("class C:\n    pass", GpuKernelError, "class definitions are not"),
    ("def h():\n    pass", GpuKernelError, "nested 'def' is not supported"),
    ("assert n > 0", GpuKernelError, "'assert' is not supported"),
    ("raise ValueError()", GpuKernelError, "'raise' is not supported"),
    ("v = 1\ndel v", GpuKernelError, "'del' is not supported"),
    ("global G", GpuKernelError, "'global' is not supported"),
    ("import os", GpuKernelError, "importing 'os' inside a kernel"),
    ("return 5", GpuKernelError, "kernels cannot return a value"),
    ("out[0] = print(1)", GpuKernelError, "print() is a statement in kernels"),
    ("out[0] = undefined_name", GpuKernelError, "name 'undefined_name' is not defined"),
    ("b = Barrier(64)", GpuKernelTypeError, "Barrier(...) cannot be created"),
    ("for i in range(3):\n    pass\nelse:\n    pass", GpuKernelError, "'for ... else'"),
    ("while n > 0:\n    n -= 1\nelse:\n    pass", GpuKernelError, "'while ... else'"),
    ("for n in range(3):\n    pass", GpuKernelError, "for-loop target 'n' is a parameter"),
    ("for i in range(3):\n    for i in range(2):\n        pass", GpuKernelError,
     "'i' is already the target of an enclosing"),
    ("out = 3", GpuKernelTypeError, "list parameter 'out' cannot be reassigned"),
    ("out[0] = 'text'", GpuKernelError, "the constant 'text' is not supported"),
    ("out[0] = out[1:2]", GpuKernelError, "slices are not supported"),
    ("out[0.5] = 1.0", GpuKernelTypeError, "list index must be an int"),
    ("v: int = 1099511627776", GpuKernelError, "the integer 1099511627776 does not fit"),
    ("v: str = 'a'", GpuKernelTypeError, "local 'v': unsupported annotation 'str'"),
    ("v: float = 1.0\nv: int = 2", GpuKernelTypeError, "local 'v' is declared 'int' here but"),
    ("out[0] = n / 0", GpuKernelError, "division by a constant zero"),
    ("for i in range(0, 10, 0):\n    pass", GpuKernelTypeError, "range() step must not be zero"),
    ("out[0] = math.nosuch(1.0)", GpuKernelError, "name 'math.nosuch' is not defined"),
    ("out[0] = math.gcd(2, 4)", GpuKernelError, "math.gcd() is not among the math functions"),
    ("out[0] = min(out)", GpuKernelTypeError, "min() needs at least 2 arguments"),
    ("out.append(1.0)", GpuKernelError, "list methods such as '.append()'"),
    ("out[0] = 1.0 if n is None else 2.0", GpuKernelError, "the 'Is' comparison"),
    ("out[0] = 1.5 & 2", GpuKernelTypeError, "unsupported operand type for '&': float"),
    ("x = out", GpuKernelTypeError, "list 'out' cannot be used as a value"),
    ("out[0] = GlobalIdx.w", GpuKernelError, "GlobalIdx has no component 'w'"),
    ("out[0] = math", GpuKernelError, "'math' is a module object"),
    ("for v in range(3.5):\n    pass", GpuKernelTypeError, "range() arguments must be int"),
]


@pytest.mark.parametrize("body, exc, start", CASES)
def test_rejected_constructs_are_located(body, exc, start):
    src = "def k(n: int, out: list[float]) -> None:\n" + textwrap.indent(body, "    ") + "\n"
    namespace = {"GlobalIdx": GlobalIdx, "Barrier": Barrier, "math": math, "G": 1}
    filename = f"<kernel-test-{abs(hash(body))}>"
    import linecache
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    with pytest.raises(exc) as info:
        Gpu(namespace["k"])
    text = str(info.value)
    assert text.startswith(start), text
    assert f'File "{filename}", line {info.value.lineno}, in k' in text
    assert info.value.filename == filename and info.value.offset >= 1
    assert info.value.text == src.splitlines()[info.value.lineno - 1]
    assert "^" in text and "\nhint: " in text or "hint" not in text


def test_signature_errors():
    with pytest.raises(GpuKernelTypeError, match="has no return annotation"):
        @Gpu
        def k1(n: int):
            pass
    with pytest.raises(GpuKernelTypeError, match=r"is annotated '-> int'"):
        @Gpu
        def k2(n: int) -> int:
            pass
    with pytest.raises(GpuKernelTypeError, match=r"takes \*args"):
        @Gpu
        def k3(*args) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match=r"keyword-only parameter 'b'"):
        @Gpu
        def k4(a: int, *, b: int) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match="default parameter value"):
        @Gpu
        def k5(a: int = 3) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match="has no type annotation"):
        @Gpu
        def k6(a) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match="more than 3 dimensions"):
        @Gpu
        def k7(a: list[list[list[list[int]]]]) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match="bare 'list'"):
        @Gpu
        def k8(a: list) -> None:
            pass
    with pytest.raises(GpuKernelTypeError, match="'Barrier'"):
        @Gpu
        def k9(b: Barrier) -> None:
            pass


def test_source_not_available_is_actionable():
    namespace = {}
    exec("def k(n: int) -> None:\n    pass\n", namespace)
    with pytest.raises(GpuKernelError, match="source not available.*file or a notebook cell"):
        Gpu(namespace["k"])


def test_barrier_in_divergent_branch_is_rejected():
    from cthreads.sync import __sync_threads as sync
    bad = line() + 6
    with pytest.raises(GpuKernelError) as info:
        @Gpu
        def k(n: int, x: list[float]) -> None:
            i = GlobalIdx.x
            if x[i] > 0.0:
                sync()
    assert str(info.value).startswith(
        f"barrier in non-uniform control flow: not every thread of the workgroup reaches it "
        f"(the condition on line {bad - 1} differs between threads)")
    assert info.value.lineno == bad


def test_barrier_in_thread_dependent_loop_is_rejected():
    from cthreads.sync import __sync_threads as sync
    with pytest.raises(GpuKernelError, match="runs a different number of times"):
        @Gpu
        def k(n: int, x: list[float]) -> None:
            i = GlobalIdx.x
            for j in range(i):
                sync()


def test_shared_misuse():
    from cthreads.lang.intrinsics import shared
    with pytest.raises(GpuKernelError, match="positive int literal or module-level int"):
        @Gpu
        def k1(n: int) -> None:
            t: list[float] = shared(n)
    with pytest.raises(GpuKernelError, match="top level of the kernel body"):
        @Gpu
        def k2(n: int) -> None:
            if n > 0:
                t: list[float] = shared(64)
    with pytest.raises(GpuKernelError, match="must be the value of an annotated declaration"):
        @Gpu
        def k3(n: int, x: list[float]) -> None:
            v = shared(4)


def test_exact_text_of_shared_without_its_import():
    """``shared`` not imported: the error says so, not that the declaration lacks shared()."""
    bad = line() + 4
    with pytest.raises(GpuKernelTypeError) as info:
        @Gpu
        def k(n: int, x: list[int]) -> None:
            local: list[int] = shared(16)  # noqa: F821
            x[GlobalIdx.x] = local[0]
    assert str(info.value) == (
        "'shared' is not defined in the kernel's module\n"
        f'  File "{HERE}", line {bad}, in k\n'
        "    local: list[int] = shared(16)  # noqa: F821\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "hint: import it: from cthreads.gpu import shared")


def test_atomics_misuse():
    from cthreads.lang.intrinsics import atomic_add, atomic_max
    with pytest.raises(GpuKernelTypeError, match=r"atomic_max\(\) on a list\[float\]"):
        @Gpu
        def k1(x: list[float]) -> None:
            atomic_max(x, 0, 1.0)
    with pytest.raises(GpuKernelTypeError, match="needs an int value"):
        @Gpu
        def k2(x: list[int]) -> None:
            atomic_add(x, 0, 1.5)
    with pytest.raises(GpuKernelTypeError, match="not a list parameter"):
        @Gpu
        def k3(n: int) -> None:
            atomic_add(n, 0, 1)
