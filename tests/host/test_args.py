"""List arguments by kind (cthreads/runtime/args.py) without a device: which handler a value
gets, each handler's check / pack / writeback against numpy's conversion of the same values, a
launch's argument checks (check_args), the launch count's one rule (KernelProgram.count_param),
and the layering rules that keep settings and device state in one place."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from cthreads.errors import GpuArgumentTypeError, GpuInvalidArgument
from cthreads.gpu import GlobalIdx, Gpu
from cthreads.runtime import args

PACKAGE = pathlib.Path(args.__file__).resolve().parents[1]


class MyList(list):
    pass


class MyArray(np.ndarray):
    pass


@pytest.mark.parametrize("value, ndim, kind", [
    ([1.0, 2.0], 1, args.LIST), ([1.0, 2.0], None, args.LIST),
    ([[1.0], [2.0]], 2, args.NESTED), ([[1.0], [2.0]], None, args.NESTED),
    ([[1.0], [2.0]], 1, args.LIST),      # refused by the 1-D list's check, naming [0]
    (MyList([1.0]), 1, args.LIST), (np.zeros(3, np.float32), 1, args.ARRAY),
    (np.zeros(3, np.float32).view(MyArray), 1, args.ARRAY),
    ((1.0, 2.0), 1, args.OTHER), ("abc", None, args.OTHER),
])
def test_kind_of_picks_by_type(value, ndim, kind):
    assert args.kind_of(value, ndim) is kind


@Gpu
def scale(n: int, a: float, x: list[float], m: list[list[float]]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = a * x[i]


@Gpu
def no_count(a: float, x: list[float]) -> None:
    i: int = GlobalIdx.x
    x[i] = a * x[i]


@Gpu
def n_not_int(n: float, x: list[float]) -> None:
    i: int = GlobalIdx.x
    x[i] = n * x[i]


def test_count_param_is_the_int_scalar_named_n():
    assert scale.program.count_param == 0
    assert no_count.program.count_param is None
    assert n_not_int.program.count_param is None
    assert scale.problem_size((5, 1.0, [0.0] * 9, [[0.0]])) == 5
    assert no_count.problem_size((1.0, [0.0] * 9)) == 9


def test_check_args_by_kind_matches_numpy():
    x = [1.0, 2.0, 3.0]
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    scalars, lists, n = args.check_args(scale.program, (2, 0.5, x, m),
                                        args.wheres(scale.program))
    assert scalars[:2] == [2, 0.5] and n == 2
    assert [a.kind for a in lists] == [args.LIST, args.ARRAY]
    assert [a.dims for a in lists] == [(3,), (2, 3)] and [a.nbytes for a in lists] == [12, 24]
    rows = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    _, lists, _ = args.check_args(scale.program, (2, 0.5, x, rows), args.wheres(scale.program))
    assert lists[1].kind is args.NESTED and lists[1].dims == (2, 3)
    packed = lists[1].kind.pack(rows, "float", "m", True, 2)
    assert bytes(packed) == np.asarray(rows, np.float32).tobytes()


def test_check_args_errors_name_the_parameter_and_keep_the_data():
    ragged = [[1.0, 2.0], [3.0]]
    with pytest.raises(GpuInvalidArgument, match=r"scale\(\) parameter 'm'\[1\] has 1 elements"):
        args.check_args(scale.program, (2, 0.5, [1.0], ragged), args.wheres(scale.program))
    assert ragged == [[1.0, 2.0], [3.0]]
    with pytest.raises(GpuArgumentTypeError, match=r"scale\(\) parameter 'x' expects a "
                                                   r"list\[float\] \(or a 1-D numpy array\), "
                                                   r"got tuple"):
        args.check_args(scale.program, (2, 0.5, (1.0,), ragged), args.wheres(scale.program))


@pytest.mark.parametrize("value", [
    [1.5, -2.0, 3.25], [[1.5, -2.0], [3.25, 4.0]], np.array([1.5, -2.0], np.float32),
    np.array([[1.5], [-2.0]], np.float32),
])
def test_handlers_round_trip(value):
    expected = np.asarray(value, np.float32)
    ndim = expected.ndim
    kind = args.kind_of(value, ndim)
    assert kind.dims(value) == expected.shape
    assert kind.elements(value) == expected.size
    packed = kind.pack(value, "float", "xs", True, ndim)
    assert bytes(packed) == expected.tobytes()
    target = np.zeros_like(expected) if isinstance(value, np.ndarray) else \
        ([0.0] * len(value) if ndim == 1 else [[0.0] * len(r) for r in value])
    kind.writeback(target, memoryview((expected * 2).tobytes()), "float")
    np.testing.assert_array_equal(np.asarray(target, np.float32), expected * 2)


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text()


def test_settings_are_read_in_config_only():
    read = re.compile(r"""(environ\.get\(|environ\[|getenv\()\s*["']CTHREADS_""")
    found = [name for name, text in _sources() if name != "config.py" and read.search(text)]
    assert found == []


def test_no_private_state_read_or_written_across_modules():
    private = re.compile(r"\b(_device|device)\._context\b|\._runtime\b|\._memo\b|"
                         r"\.\_runtimes\b")
    found = [name for name, text in _sources() if not name.startswith("backend/")
             and name != "kernel.py" and private.search(text)]
    assert found == []
