"""Random in kernels: what is refused fails at decoration, at the user's line, with the fix;
the WGSL of a kernel carries only the Random helpers it uses (none for kernels without it)."""

from __future__ import annotations

import inspect

import pytest

from cthreads.errors import GpuKernelTypeError
from cthreads.gpu import GlobalIdx, Gpu, Random


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _raises(match: str):
    return pytest.raises(GpuKernelTypeError, match=match)


def test_a_draw_in_a_lazy_operand_is_refused():
    bad = line() + 6
    with _raises("inside 'and', 'or'") as info:
        @Gpu
        def k(out: list[float]) -> None:
            i: int = GlobalIdx.x
            rng = Random(1, i)
            if i > 3 and rng.random() < 0.5:
                out[i] = 1.0
    assert info.value.lineno == bad
    assert "draw into a local first" in str(info.value)


def test_a_draw_in_a_while_test_is_refused():
    with _raises("while test"):
        @Gpu
        def k(out: list[float]) -> None:
            i: int = GlobalIdx.x
            rng = Random(1, i)
            while rng.random() < 0.5:
                out[i] += 1.0


def test_a_random_is_not_a_value():
    bad = line() + 6
    with _raises("the Random 'rng' is used as a value") as info:
        @Gpu
        def k(out: list[float]) -> None:
            i: int = GlobalIdx.x
            rng = Random(1, i)
            other = rng
            out[i] = other.random()
    assert info.value.lineno == bad
    assert "pass it to a device function by name" in str(info.value)


def test_a_random_local_takes_only_a_random():
    with _raises("'rng' is a Random; it cannot be assigned"):
        @Gpu
        def k(out: list[float]) -> None:
            i: int = GlobalIdx.x
            rng = Random(1, i)
            out[i] = rng.random()
            rng = 3


def test_bad_method_and_arguments():
    with _raises("Random has no method 'shuffle'"):
        @Gpu
        def k1(out: list[float]) -> None:
            rng = Random(1, GlobalIdx.x)
            rng.shuffle(out)
    with _raises("randint\\(\\) takes ints, not float"):
        @Gpu
        def k2(out: list[int]) -> None:
            rng = Random(1, GlobalIdx.x)
            out[0] = rng.randint(0.5, 3)
    with _raises("randrange\\(\\) with a step"):
        @Gpu
        def k3(out: list[int]) -> None:
            rng = Random(1, GlobalIdx.x)
            out[0] = rng.randrange(0, 10, 2)
    with _raises("the seed of Random must be an int"):
        @Gpu
        def k4(s: float, out: list[int]) -> None:
            rng = Random(s, GlobalIdx.x)
            out[0] = rng.randrange(10)
    with _raises("normal\\(\\) got an unexpected keyword 'scale'"):
        @Gpu
        def k5(out: list[float]) -> None:
            rng = Random(1, GlobalIdx.x)
            out[0] = rng.normal(scale=2.0)


@Gpu.func
def _draw(rng: Random) -> float:
    return rng.random()


@Gpu.func
def _pair(a: Random, b: Random) -> float:
    return a.random() + b.random()


def test_device_function_arguments():
    with _raises("must be a Random local of the caller"):
        @Gpu
        def k1(out: list[float]) -> None:
            out[0] = _draw(3)
    with _raises("the Random 'rng' is passed twice"):
        @Gpu
        def k2(out: list[float]) -> None:
            rng = Random(1, GlobalIdx.x)
            out[0] = _pair(rng, rng)
    with _raises("draws from a Random"):
        @Gpu
        def k3(out: list[float]) -> None:
            rng = Random(1, GlobalIdx.x)
            x: float = 1.0 if GlobalIdx.x > 2 else _draw(rng)
            out[0] = x


def test_only_the_helpers_used_are_emitted():
    @Gpu
    def plain(out: list[float]) -> None:
        out[GlobalIdx.x] = 1.0

    @Gpu
    def uniform(out: list[float]) -> None:
        rng = Random(7, GlobalIdx.x)
        out[GlobalIdx.x] = rng.random()

    assert "ct_philox" not in plain.program.wgsl()
    text = uniform.program.wgsl()
    assert "fn ct_philox(" in text and "fn ct_mulhi32(" in text
    assert "ct_rng_normal_f" not in text and "ct_rng_below" not in text


def test_a_kernel_parameter_cannot_be_a_random():
    with _raises("kernel parameter 'rng' is a Random") as info:
        @Gpu
        def k(rng: Random, out: list[float]) -> None:
            out[GlobalIdx.x] = rng.random()
    assert "Random(seed, GlobalIdx.x)" in str(info.value)
