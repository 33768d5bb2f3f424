"""print(...) in kernels and device functions (issue 25, v3.md section 3): the device's lines
against simulate()'s (Python's own print) and Python's format, in thread order; sep/end,
vectors, widths, print_limit, jobs (wait, download=False, queued launches, a failed bounds
check, await), GpuArrays, arenas and their relaunches, pickled kernels, dask; the located
errors; breakpoint() under simulate; kernels that do not print declare nothing."""

from __future__ import annotations

import asyncio
import pickle
import sys

import numpy as np
import pytest

from cthreads.gpu import (
    BlockIdx, GlobalIdx, Gpu, GpuArena, GpuIndexError, GpuKernelError, GpuKernelTypeError,
    ThreadIdx, float64, gpu, int64, ivec3, shared, to_device, uint32, vec3,
)
from cthreads.codegen import compile_kernel
from cthreads.sync import __sync_threads


@Gpu
def several(n: int, x: list[float], out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    print("thread", i)
    if i % 3 == 0:
        print("  fizz", i // 3, i % 2 == 0)
    print(f"  x[{i}] = {x[i]} half={x[i] / 2.0:.2f}")
    out[i] = i * 2


@Gpu
def grid_print(a: list[list[list[int]]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    z: int = GlobalIdx.z
    if x < a.shape[2] and y < a.shape[1] and z < a.shape[0]:
        print(f"({x}, {y}, {z})", a[z][y][x])
        print("  second", x + 10 * y + 100 * z)


@Gpu
def specs(n: int, k: list[int], f: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(f"{k[i]:d}|{k[i]:x}|{k[i]:5d}|{k[i]:<6}|{k[i]:+d}|{f[i]:.3f}|{f[i]:e}|"
              f"{f[i]:10.4g}|{f[i]:g}|{k[i]:08.2f}|{k[i]!r}|{f[i]}")


@Gpu
def wide_values(n: int, a: list[int64], u: list[uint32], d: list[float64],
                b: list[bool]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(a[i], u[i], d[i], b[i], f"{a[i]:x} {d[i]:.17g} {u[i]:d}")


@Gpu
def plain_wide(n: int, d: list[float], m: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(d[i] * 3.0, m[i] * 3)


@Gpu
def vectors(n: int, p: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        v: vec3 = p[i] * 2.0
        w: ivec3 = ivec3(i, -i, 7)
        print(v, w)
        print(f"v={v} w={w!r} x={v.x:.1f}")


@Gpu
def separators(n: int) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(i, i + 1, i + 2, sep="-", end="")
        print("", "!", sep="")
        print()
        print("a", "b", sep="", end="\n\n")


@Gpu.func
def shout(v: int) -> int:
    print("  in shout:", v)
    return v * 10


@Gpu
def calls_func(n: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print("before", i)
        out[i] = shout(i) + shout(i + 1)
        print("after", out[i])


@Gpu(print_limit=10)
def limited(n: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print("line", i)
        out[i] = i


@Gpu
def checked(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print("reading", i)
        x[i] = x[i + 1]


@Gpu
def resident(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] += 1.0
        print(i, x[i])


@Gpu
def silent(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = x[i] * 2.0


@Gpu
def with_barrier(n: int, x: list[float]) -> None:
    t: list[float] = shared(64)
    i: int = GlobalIdx.x
    t[ThreadIdx.x] = 1.0 * i
    __sync_threads()
    if i < n:
        print("block", BlockIdx.x, "thread", ThreadIdx.x, "sees", t[63 - ThreadIdx.x])
        x[i] = t[63 - ThreadIdx.x]


@Gpu(workgroup=(4, 2))
def tiles(a: list[list[int]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < a.shape[1] and y < a.shape[0]:
        print(x, y, "tile", BlockIdx.x, BlockIdx.y, "at", ThreadIdx.x, ThreadIdx.y)


@Gpu
def with_loop(n: int, x: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        s: int = 0
        for k in range(i):
            s += k
            if k % 2 == 1:
                print(i, k, s)
        x[i] = s


@Gpu
def literals(n: int, z: list[complex], k: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(1, 2.5, True, None, "text", f"{k[i]!s:>4}|{k[i]!a}|{z[i]}|{z[i]:.2f}")


@Gpu(boundscheck=False)
def unchecked(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        print(i, x[i])


@Gpu.func
def noisy_add(a: float, b: float) -> float:
    print(a, b)
    return a + b


@Gpu
def stops(n: int, x: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        breakpoint()
        x[i] = 1.0


def _simulated(capsys, kernel, *args, **kw) -> str:
    capsys.readouterr()
    kernel.simulate(*args, **kw)
    return capsys.readouterr().out


def _device(capsys, kernel, *args, **kw) -> str:
    capsys.readouterr()
    gpu(kernel, *args, **kw).join()
    return capsys.readouterr().out


def test_lines_in_thread_order_as_simulate_prints_them(device_name, capsys):
    n = 100
    x = np.arange(n, dtype=np.float32) * 0.25
    out = np.zeros(n, np.int32)
    want = _simulated(capsys, several, n, x.copy(), out.copy())
    got = _device(capsys, several, n, x, out)
    assert got == want
    assert got.count("\n") == 2 * n + len(range(0, n, 3))
    np.testing.assert_array_equal(out, np.arange(n) * 2)
    assert got.startswith("thread 0\n  fizz 0 True\n  x[0] = 0.0 half=0.00\nthread 1\n")


def test_nd_launch_prints_x_fastest_then_y_then_z(device_name, capsys):
    a = np.arange(3 * 4 * 5, dtype=np.int32).reshape(3, 4, 5)
    want = _simulated(capsys, grid_print, a, threads=(5, 4, 3))
    got = _device(capsys, grid_print, a, threads=(5, 4, 3))
    assert got == want
    heads = [line for line in got.splitlines() if line.startswith("(")]
    order = [tuple(int(v) for v in h[1:h.index(")")].split(", ")) for h in heads]
    assert order == [(x, y, z) for z in range(3) for y in range(4) for x in range(5)]


def test_format_specs_are_pythons(device_name, capsys):
    k = np.array([0, 7, -255, 123456, 2**31 - 1], np.int32)
    f = np.array([0.0, 1.5, -2.25e-5, 3.0e7, 0.1], np.float32)
    got = _device(capsys, specs, len(k), k, f)
    want = "".join(
        f"{int(a):d}|{int(a):x}|{int(a):5d}|{int(a):<6}|{int(a):+d}|{float(b):.3f}|"
        f"{float(b):e}|{float(b):10.4g}|{float(b):g}|{int(a):08.2f}|{int(a)!r}|{float(b)}\n"
        for a, b in zip(k, f))
    assert got == want
    assert "0.10000000149011612" in got          # a float32 prints as its exact value


def test_int64_uint32_float64_and_bool_values(device_name, capsys):
    a = np.array([-2**40 - 3, 2**62, -1], np.int64)
    u = np.array([0, 2**32 - 1, 2**31], np.uint32)
    d = np.array([0.1, -1e300, 2.0 / 3.0])
    b = np.array([True, False, True])
    got = _device(capsys, wide_values, 3, a, u, d, b)
    want = "".join(f"{int(p)} {int(q)} {float(r)} {bool(s)} {int(p):x} {float(r):.17g} "
                   f"{int(q):d}\n" for p, q, r, s in zip(a, u, d, b))
    assert got == want


def test_a_float64_launch_prints_plain_floats_at_its_width(device_name, capsys):
    d = np.array([0.1, 1.0 / 3.0])
    m = np.array([2**40, -5], np.int64)
    got = _device(capsys, plain_wide, 2, d, m)
    assert got == "".join(f"{float(v) * 3.0} {int(w) * 3}\n" for v, w in zip(d, m))


def test_vectors_print_as_their_python_class(device_name, capsys):
    p = np.array([[1.0, 2.0, 3.0], [0.5, -0.25, 8.0]], np.float32)
    got = _device(capsys, vectors, 2, p)
    want = ""
    for i, row in enumerate(p):
        v = vec3(*row) * 2.0
        w = ivec3(i, -i, 7)
        want += f"{v} {w}\nv={v} w={w!r} x={v.x:.1f}\n"
    assert got == want
    assert got.startswith("vec3(2.0, 4.0, 6.0) ivec3(0, 0, 7)\n")
    assert got == _simulated(capsys, vectors, 2, p)


def test_sep_and_end(device_name, capsys):
    got = _device(capsys, separators, 2)
    assert got == "0-1-2!\n\nab\n\n1-2-3!\n\nab\n\n"
    assert got == _simulated(capsys, separators, 2)


def test_device_functions_print_in_program_order(device_name, capsys):
    out = np.zeros(4, np.int32)
    want = _simulated(capsys, calls_func, 4, out.copy())
    got = _device(capsys, calls_func, 4, out)
    assert got == want
    assert got.startswith("before 0\n  in shout: 0\n  in shout: 1\nafter 10\nbefore 1\n")
    np.testing.assert_array_equal(out, [10, 30, 50, 70])


def test_print_limit_keeps_the_first_lines_and_counts_the_rest(device_name, capsys):
    out = np.zeros(30, np.int32)
    got = _device(capsys, limited, 30, out)
    lines = got.splitlines()
    assert lines[:10] == [f"line {i}" for i in range(10)]
    assert len(lines) == 11
    assert lines[10].startswith("[cthreads] kernel limited: 20 more print() line(s) dropped "
                                "(print_limit=10")
    np.testing.assert_array_equal(out, np.arange(30))    # the kernel ran every thread


def test_print_limit_beyond_the_buffer_still_counts_every_line(device_name, capsys):
    n = 5000                        # more than the buffer's 4 * print_limit records
    out = np.zeros(n, np.int32)
    lines = _device(capsys, limited, n, out).splitlines()
    assert len(lines) == 11
    kept = [int(line.split()[1]) for line in lines[:10]]
    assert kept == sorted(kept) and len(set(kept)) == 10 and all(0 <= i < n for i in kept)
    assert f"{n - 10} more print() line(s) dropped" in lines[10]


def test_print_limit_is_checked():
    with pytest.raises(TypeError, match="print_limit"):
        Gpu(print_limit=-1)
    with pytest.raises(TypeError, match="print_limit"):
        Gpu(print_limit=True)


def test_a_kernel_without_print_declares_nothing_of_it():
    prog = compile_kernel(silent.fn)
    assert prog.print_binding is None and prog.print_sites == ()
    assert "ct_print" not in silent.wgsl and "ct_ptid" not in silent.wgsl
    assert "ct_print" in several.wgsl


def test_wait_prints_once_and_join_download_false_prints(device_name, capsys):
    n = 5
    x = np.zeros(n, np.float32)
    out = np.zeros(n, np.int32)
    capsys.readouterr()
    job = gpu(several, n, x, out)
    assert job.wait()
    first = capsys.readouterr().out
    assert first.startswith("thread 0\n")
    job.join()
    assert capsys.readouterr().out == ""
    gpu(several, n, x, out).join(download=False)
    assert capsys.readouterr().out == first


def test_queued_launches_print_at_their_own_joins(device_name, capsys):
    outs = [np.zeros(3, np.int32) for _ in range(3)]
    capsys.readouterr()
    jobs = [gpu(several, 3, np.full(3, k, np.float32), outs[k]) for k in range(3)]
    assert capsys.readouterr().out == ""
    for k, job in enumerate(jobs):
        job.join()
        text = capsys.readouterr().out
        assert text.count("thread") == 3
        assert f"x[2] = {float(k)} " in text
    asyncio.run(_awaited(capsys))


async def _awaited(capsys):
    await gpu(several, 2, np.ones(2, np.float32), np.zeros(2, np.int32))
    assert capsys.readouterr().out.startswith("thread 0\n  fizz 0 True\n  x[0] = 1.0 ")


def test_lines_come_before_a_failed_bounds_check(device_name, capsys):
    x = np.arange(4, dtype=np.float32)
    capsys.readouterr()
    with pytest.raises(GpuIndexError):
        gpu(checked, 4, x).join()
    got = capsys.readouterr().out
    assert got == "".join(f"reading {i}\n" for i in range(4))
    np.testing.assert_array_equal(x, np.arange(4))        # nothing written back


def test_gpuarrays_and_arena_relaunches_print_each_launch(device_name, capsys):
    a = to_device(np.zeros(3, np.float32))
    got = _device(capsys, resident, 3, a)
    assert got == "0 1.0\n1 1.0\n2 1.0\n"
    got = _device(capsys, resident, 3, a)                 # the relaunch memo's path
    assert got == "0 2.0\n1 2.0\n2 2.0\n"
    x = np.zeros(2, np.float32)
    with GpuArena() as arena:
        arena.bind(x=x)
        for step in range(1, 4):
            capsys.readouterr()
            gpu(resident, 2, x).join(download=False)
            assert capsys.readouterr().out == f"0 {float(step)}\n1 {float(step)}\n"
        arena.sync("x")
    np.testing.assert_array_equal(x, [3.0, 3.0])


def test_a_pickled_kernel_prints(device_name, capsys):
    again = pickle.loads(pickle.dumps(limited))
    got = _device(capsys, again, 12, np.zeros(12, np.int32))
    assert got.splitlines()[-1].startswith("[cthreads] kernel limited: 2 more")
    src = ("def k(n: int) -> None:\n    i: int = GlobalIdx.x\n    if i < n:\n"
           "        print('k', i)\n")
    made, _ = _kernel(src)
    made = Gpu(print_limit=3)(made.fn)
    copy = pickle.loads(pickle.dumps(made))          # by value: not importable
    assert copy is not made and copy.print_limit == 3
    lines = _device(capsys, copy, 5).splitlines()
    assert lines[:3] == ["k 0", "k 1", "k 2"] and "2 more" in lines[3]


def test_barriers_workgroup_indexes_and_loops(device_name, capsys):
    x = np.zeros(100, np.float32)
    want = _simulated(capsys, with_barrier, 100, x.copy())
    assert want.count("\n") == 100
    assert _device(capsys, with_barrier, 100, x) == want
    y = np.zeros(9, np.int32)
    want = _simulated(capsys, with_loop, 9, y.copy())
    assert _device(capsys, with_loop, 9, y) == want
    np.testing.assert_array_equal(y, [k * (k - 1) // 2 for k in range(9)])


def test_nd_workgroup_tiles_print_in_thread_order(device_name, capsys):
    a = np.zeros((5, 9), np.int32)
    want = _simulated(capsys, tiles, a, threads=(9, 5))
    got = _device(capsys, tiles, a, threads=(9, 5))
    assert got == want
    assert [tuple(int(v) for v in line.split()[:2]) for line in got.splitlines()] == \
        [(x, y) for y in range(5) for x in range(9)]


def test_split_arrays_print(device_name, capsys):
    from cthreads import config
    with config.override(binding_bytes=4096):
        a = to_device(np.zeros(3000, np.float32))            # split in parts
        lines = _device(capsys, resident, 3000, a).splitlines()
    assert len(lines) == 1001 and lines[:2] == ["0 1.0", "1 1.0"]
    assert lines[999] == "999 1.0" and "2000 more" in lines[1000]
    np.testing.assert_array_equal(a.numpy(), np.ones(3000))


def test_compile_and_prepare_with_print(device_name, capsys):
    from cthreads.gpu import compile as compile_all, prepare
    compile_all()
    prepare()
    assert _device(capsys, separators, 1) == "0-1-2!\n\nab\n\n"


def _kernel(src: str, name: str = "k"):
    import linecache
    filename = f"<print-test-{abs(hash(src))}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"GlobalIdx": GlobalIdx, "sys": sys}
    exec(compile(src, filename, "exec"), namespace)
    return Gpu(namespace[name]), filename


@pytest.mark.parametrize("line, message", [
    ("print(i, file=sys.stderr)", "print(file=...) is not supported in kernels"),
    ("print(f'{x[i]:d}')", "format spec 'd' does not apply to a float value"),
    ("print(f'{i:{i}}')", "a format spec with {...} inside"),
    ("print(i, sep=s)", "print(sep=...) must be a string literal"),
    ("print(*x)", "print(*args) is not supported"),
    ("v = print(i)", "print() is a statement in kernels"),
])
def test_errors_are_located(line, message):
    src = ("def k(n: int, x: list[float]) -> None:\n    i: int = GlobalIdx.x\n    s = 2\n"
           f"    {line}\n")
    with pytest.raises((GpuKernelError, GpuKernelTypeError)) as info:
        _kernel(src)
    text = str(info.value)
    assert message in text, text
    assert ", line 4, in k" in text and line in text


def test_literals_conversions_and_complex(device_name, capsys):
    z = np.array([1.5 - 2j, 0.25j], np.complex64)
    k = np.array([-3, 12], np.int32)
    got = _device(capsys, literals, 2, z, k)
    assert got == "".join(f"1 2.5 True None text {int(b)!s:>4}|{int(b)!a}|{complex(a)}|"
                          f"{complex(a):.2f}\n" for a, b in zip(z, k))
    assert got.startswith("1 2.5 True None text   -3|-3|(1.5-2j)|1.50-2.00j\n")


def test_without_bounds_checks(device_name, capsys):
    assert unchecked.program.status_binding is None
    x = np.array([0.5, 4.0], np.float32)
    assert _device(capsys, unchecked, 2, x) == "0 0.5\n1 4.0\n"


def test_a_reduction_operation_cannot_print(device_name):
    with pytest.raises(TypeError, match="calls print"):
        noisy_add.reduce(np.ones(4, np.float32))


def test_breakpoint_stops_simulate_and_is_refused_on_the_device(device_name, monkeypatch):
    calls = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: calls.append(1))
    x = np.zeros(3, np.float32)
    stops.simulate(3, x)
    assert len(calls) == 3 and list(x) == [1.0, 1.0, 1.0]
    y = np.zeros(3, np.float32)
    with pytest.raises(GpuKernelError) as info:
        gpu(stops, 3, y).join()
    text = str(info.value)
    assert "breakpoint()" in text and "simulate" in text and "breakpoint()\n" in text
    assert list(y) == [0.0, 0.0, 0.0]


def test_dask_blocks_print_on_the_worker(device_name, capsys):
    dask = pytest.importorskip("dask")
    import dask.array as da
    from cthreads.dask import map_blocks
    x = da.from_array(np.arange(8, dtype=np.float32), chunks=4)
    with dask.config.set(scheduler="threads"):
        y = map_blocks(resident, x, out="x").compute()
    np.testing.assert_array_equal(y, np.arange(8) + 1.0)
    lines = sorted(capsys.readouterr().out.splitlines())       # blocks in any order
    assert lines == sorted(f"{i} {b * 4 + i + 1.0}" for b in range(2) for i in range(4))
