"""Vectors and complex numbers with the rest of the language (issue 24, slice "vecmore"): vectors in
tuple results, shared arrays of vectors with barriers, atomics on int vector components,
list[vec3] parameters of device functions, run-time component indexes (with their bounds
checks), and func.reduce over complex lists -- float32 and float64, against numpy and the
plain-Python run (simulate) of the same kernels."""

from __future__ import annotations

import numpy as np
import pytest

from cthreads.gpu import (
    BlockIdx, GlobalIdx, Gpu, GpuIndexError, ThreadIdx, atomic_add, atomic_max, dot, gpu, ivec2,
    length, length_sq, shared, to_device, uint32, vec3,
)
from cthreads.sync import __sync_threads

TILE = 64
WIDTHS = [np.float32, np.float64]


def _tol(dtype):
    return 2e-5 if dtype is np.float32 else 1e-12


# -- vectors in tuple results ------------------------------------------------------------------

@Gpu.func
def split_length(v: vec3) -> tuple[vec3, float]:
    d = length(v)
    return v / d, d


@Gpu.func
def passed_on(v: vec3) -> tuple[vec3, float]:
    return split_length(v)                      # a tuple with a vector, passed on whole


@Gpu.func
def cell_of(v: vec3) -> tuple[int, ivec2]:
    return 7, ivec2(int(v.x), int(v.y))


@Gpu
def tuple_vectors(n: int, p: list[vec3], u: list[vec3], d: list[float], c: list[ivec2]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        q, s = split_length(p[i])               # new locals: a vec3 and a float
        u[i] = q * s
        u[i], d[i] = passed_on(p[i])            # list elements as targets
        d[i] += split_length(p[i])[1] + split_length(p[i])[0].y    # one member by index
        z, c[i] = cell_of(p[i] * 3.0)
        c[i].x += z


@pytest.mark.parametrize("dtype", WIDTHS)
def test_vectors_in_tuple_results(dtype):
    n = 50
    p = np.random.default_rng(1).random((n, 3)).astype(dtype) + dtype(0.5)
    ints = np.int32 if dtype is np.float32 else np.int64
    outs = [np.zeros_like(p), np.zeros(n, dtype), np.zeros((n, 2), ints)]
    gpu(tuple_vectors, n, p, *outs).join()
    sims = [np.zeros_like(o) for o in outs]
    tuple_vectors.simulate(n, p, *sims)
    length_ = np.linalg.norm(p.astype(np.float64), axis=1)
    np.testing.assert_allclose(outs[0], p / length_[:, None], rtol=_tol(dtype))
    np.testing.assert_allclose(outs[1], 2 * length_ + p[:, 1] / length_, rtol=_tol(dtype))
    cells = (p * dtype(3.0)).astype(ints)[:, :2]
    cells[:, 0] += 7
    np.testing.assert_array_equal(outs[2], cells)
    for got, sim in zip(outs, sims):
        np.testing.assert_allclose(got, sim, rtol=_tol(dtype))
    # from Python, a device function returns a Python tuple holding a vec3
    v, s = split_length(vec3(3.0, 0.0, 4.0))
    assert s == 5.0 and (v.x, v.y, v.z) == (0.6, 0.0, 0.8)


# -- shared arrays of vectors: a workgroup-tiled N-body sum ------------------------------------

@Gpu
def tiled_accel(n: int, eps: float, p: list[vec3], a: list[vec3]) -> None:
    tile: list[vec3] = shared(TILE)
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    me = vec3(0.0)
    if i < n:
        me = vec3(p[i])
    acc = vec3(0.0)
    base: int = 0
    while base < n:                             # every thread walks every tile
        if base + t < n:
            tile[t] = p[base + t]
        __sync_threads()
        for k in range(TILE):
            if base + k < n:
                d: vec3 = tile[k] - me
                r2: float = length_sq(d) + eps
                acc += d / (r2 * r2)
        __sync_threads()
        base += TILE
    if i < n:
        a[i] = acc


def _accel_reference(p, eps):
    p = p.astype(np.float64)
    d = p[None, :, :] - p[:, None, :]
    r2 = (d ** 2).sum(-1) + eps
    return (d / (r2 ** 2)[..., None]).sum(1)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_shared_vector_tiles_nbody(dtype):
    n = 150                                     # 3 workgroups, the last tile partly filled
    p = np.random.default_rng(2).random((n, 3)).astype(dtype)
    a = np.zeros_like(p)
    gpu(tiled_accel, n, 0.01, p, a).join()
    want = _accel_reference(p, 0.01)
    scale = np.abs(want).max()
    np.testing.assert_allclose(a, want, rtol=1e-3 if dtype is np.float32 else 1e-10,
                               atol=scale * (1e-5 if dtype is np.float32 else 1e-12))
    sim = np.zeros_like(p)
    tiled_accel.simulate(n, 0.01, p, sim)
    np.testing.assert_allclose(sim, want, rtol=1e-3 if dtype is np.float32 else 1e-10,
                               atol=scale * 1e-5)


@Gpu
def shared_counts(n: int, xs: list[int], out: list[ivec2]) -> None:
    bins: list[ivec2] = shared(4)               # zero vectors at the start
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    if i < n:
        atomic_add(bins[xs[i] % 4], 0, 1)
        atomic_max(bins[xs[i] % 4], 1, xs[i])
    __sync_threads()
    if t < len(bins):
        out[BlockIdx.x * 4 + t] = bins[t]


def test_shared_int_vectors_with_atomics():
    n = 200
    xs = np.random.default_rng(3).integers(0, 1000, n).astype(np.int32)
    groups = -(-n // 64)
    out = np.zeros((4 * groups, 2), np.int32)
    gpu(shared_counts, n, xs, out).join()
    want = np.zeros_like(out)
    for i, x in enumerate(xs):
        row = (i // 64) * 4 + x % 4
        want[row, 0] += 1
        want[row, 1] = max(want[row, 1], x)
    np.testing.assert_array_equal(out, want)
    sim = np.zeros_like(out)
    shared_counts.simulate(n, xs, sim)
    np.testing.assert_array_equal(sim, want)


# -- atomics on int vector components of list elements -----------------------------------------

@Gpu
def histogram2(n: int, xs: list[float], h: list[ivec2]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        b: int = int(xs[i] * 4.0)
        atomic_add(h[b], 0, 1)                  # component 0 (.x): a count
        k: int = i % 2
        atomic_max(h[b], k - k - 1, i)          # a run-time component (-1: .y): the last index


@pytest.mark.parametrize("ints", [np.int32, np.int64])
def test_atomics_on_int_vector_components(ints):
    n = 300
    xs = np.random.default_rng(4).random(n).astype(np.float32)
    h = np.zeros((4, 2), ints)
    gpu(histogram2, n, xs, h).join()
    b = (xs * 4).astype(int)
    want = np.stack([np.bincount(b, minlength=4),
                     [max(np.flatnonzero(b == k), default=0) for k in range(4)]], axis=1)
    np.testing.assert_array_equal(h, want)
    sim = np.zeros_like(h)
    histogram2.simulate(n, xs, sim)
    np.testing.assert_array_equal(sim, want)


# -- list[vec3] parameters of device functions ---------------------------------------------------

@Gpu.func
def kick(p: list[vec3], i: int, d: vec3) -> float:
    p[i] += d
    p[i].y = p[i].y * 2.0
    p[i][2] -= 1.0
    return dot(p[i], p[i]) + len(p)


@Gpu
def kicks(n: int, p: list[vec3], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = kick(p, i, vec3(1.0, 2.0, 3.0))


@Gpu.func
def sum_tile(t: list[vec3], count: int) -> vec3:
    s = vec3(0.0)
    for k in range(count):
        s += t[k]
    return s


@Gpu
def block_sums(n: int, p: list[vec3], out: list[vec3]) -> None:
    tile: list[vec3] = shared(TILE)
    i: int = GlobalIdx.x
    t: int = ThreadIdx.x
    if i < n:
        tile[t] = p[i]
    __sync_threads()
    if t == 0:
        out[BlockIdx.x] = sum_tile(tile, TILE)  # a shared list[vec3] passed by name


@pytest.mark.parametrize("dtype", WIDTHS)
def test_vector_list_parameters_of_device_functions(dtype):
    n = 70
    p = np.arange(3 * n, dtype=dtype).reshape(n, 3) / dtype(7)
    out = np.zeros(n, dtype)
    want_p = p + np.array([1.0, 2.0, 3.0], dtype)
    want_p[:, 1] *= 2
    want_p[:, 2] -= 1
    sim_p, sim_out = p.copy(), out.copy()
    gpu(kicks, n, p, out).join()
    np.testing.assert_allclose(p, want_p, rtol=_tol(dtype))
    np.testing.assert_allclose(out, (want_p.astype(np.float64) ** 2).sum(1) + n,
                               rtol=_tol(dtype))
    kicks.simulate(n, sim_p, sim_out)
    np.testing.assert_allclose(sim_p, p, rtol=_tol(dtype))
    np.testing.assert_allclose(sim_out, out, rtol=_tol(dtype))
    sums = np.zeros((2, 3), dtype)
    gpu(block_sums, n, p, sums).join()
    np.testing.assert_allclose(sums, [p[:64].sum(0), p[64:].sum(0)], rtol=_tol(dtype))


def test_vector_list_parameter_bounds_check_names_the_function():
    p = np.zeros((4, 3), np.float32)
    out = np.zeros(5, np.float32)
    with pytest.raises(GpuIndexError, match=r"index 4 is out of range for list 'p' of length "
                                            r"4") as info:
        gpu(kicks, 5, p, out).join()
    assert ", in kick\n" in str(info.value)        # the device function's file and line
    assert not p.any() and not out.any()         # nothing written back


# -- run-time component indexes ------------------------------------------------------------------

@Gpu
def components(n: int, p: list[vec3], ks: list[int], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        k: int = ks[i]
        v = vec3(p[i])
        out[i] = v[k] + p[i][k] * 10.0          # a local's and an element's component k
        v[k] = 100.0
        v[(k + 4) % 3] += 1.0
        p[i][k] -= v[k] + v.x


@Gpu(boundscheck=False)
def components_unchecked(n: int, p: list[vec3], ks: list[int], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        v = vec3(p[i])
        out[i] = v[ks[i]]


@Gpu
def image_components(img: list[list[vec3]], k: int, out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < img.shape[1] and y < img.shape[0]:
        out[y, x] = img[y, x][k] + img[y][x][k - 1]


@pytest.mark.parametrize("dtype", WIDTHS)
def test_runtime_component_indexes(dtype):
    n = 64
    p = np.arange(3 * n, dtype=dtype).reshape(n, 3)
    ks = (np.arange(n) % 6 - 3).astype(np.int32)          # -3 .. 2: every valid index
    out = np.zeros(n, dtype)
    sim_p, sim_out = p.copy(), out.copy()
    want_out = p[np.arange(n), ks % 3] * 11
    gpu(components, n, p, ks, out).join()
    components.simulate(n, sim_p, ks, sim_out)
    np.testing.assert_allclose(out, want_out, rtol=_tol(dtype))
    np.testing.assert_allclose(sim_out, want_out, rtol=_tol(dtype))
    np.testing.assert_allclose(p, sim_p, rtol=_tol(dtype))
    img = np.random.default_rng(5).random((5, 9, 3)).astype(dtype)
    grid = np.zeros((5, 9), dtype)
    gpu(image_components, img, 2, grid, threads=(9, 5)).join()
    np.testing.assert_allclose(grid, img[..., 2] + img[..., 1], rtol=_tol(dtype))


def test_runtime_component_index_out_of_range_is_located():
    n = 8
    p = np.ones((n, 3), np.float32)
    ks = np.zeros(n, np.int32)
    ks[5] = 3
    out = np.zeros(n, np.float32)
    with pytest.raises(GpuIndexError, match=r"component index 3 is out of range for 'v', a "
                                            r"vector of 3 components") as info:
        gpu(components, n, p, ks, out).join()
    assert "test_vector_combos.py" in str(info.value)
    assert (p == 1.0).all() and not out.any()            # nothing written back
    with pytest.raises(IndexError, match="component index 3 is out of range for vec3"):
        components.simulate(n, p.copy(), ks, out.copy())   # Python's meaning
    ks[5] = -4
    with pytest.raises(GpuIndexError, match=r"component index -4 is out of range"):
        gpu(components, n, p, ks, out).join()


def test_runtime_component_index_unchecked_reads_x():
    """Without bounds checks an out-of-range component index of a local reads .x (documented
    in docs/language.md, Vectors)."""
    p = np.array([[1.0, 2.0, 3.0]] * 4, np.float32)
    out = np.zeros(4, np.float32)
    gpu(components_unchecked, 4, p, np.array([2, -1, 5, -7], np.int32), out).join()
    np.testing.assert_array_equal(out, [3.0, 3.0, 1.0, 1.0])


# -- complex reductions ---------------------------------------------------------------------------

@Gpu.func
def cadd(a: complex, b: complex) -> complex:
    return a + b


@Gpu.func
def cmul(a: complex, b: complex) -> complex:
    return a * b


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("n", [1, 3, 7, 1000, 300_001])
def test_reduce_complex(dtype, n):
    rng = np.random.default_rng(n)
    z = (rng.random(n) - 0.5 + 1j * (rng.random(n) - 0.5)).astype(dtype)
    got = cadd.reduce(z)
    assert type(got) is complex
    want = z.astype(np.complex128).sum()
    bound = (1e-5 if dtype is np.complex64 else 1e-12) * max(1.0, np.abs(z).sum())
    assert abs(got - want) <= bound
    assert abs(cadd.reduce(to_device(z)) - want) <= bound


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_reduce_complex_product_init_and_lists(dtype):
    w = np.exp(1j * np.random.default_rng(9).random(50)).astype(dtype)
    assert abs(cmul.reduce(w) - np.prod(w.astype(np.complex128))) < 1e-4
    got = cadd.reduce(w[:5], init=2j)
    assert abs(got - (w[:5].astype(np.complex128).sum() + 2j)) < 1e-5
    assert cadd.reduce([1 + 2j, 3, 4j]) == 4 + 6j
    assert cadd.reduce([], init=1j) == 1j


@Gpu.func
def count_in(h: list[ivec2], b: int, c: int) -> int:
    return atomic_add(h[b], c, 1)               # the caller's list becomes atomic


@Gpu
def counts_2d(n: int, xs: list[int], h: list[ivec2], g: list[list[ivec2]]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        count_in(h, xs[i] % 3, i % 2)
        atomic_add(g[xs[i] % 2, i % 3], 1, 2)   # an element of a 2-D list of ivec2


def test_vector_atomics_in_functions_nd_lists_and_gpuarrays():
    n = 100
    xs = np.arange(n, dtype=np.int32) * 7
    want_h, want_g = np.zeros((3, 2), np.int32), np.zeros((2, 3, 2), np.int32)
    for i, x in enumerate(xs):
        want_h[x % 3, i % 2] += 1
        want_g[x % 2, i % 3, 1] += 2
    h, g = np.zeros_like(want_h), np.zeros_like(want_g)
    gpu(counts_2d, n, xs, h, g).join()
    np.testing.assert_array_equal(h, want_h)
    np.testing.assert_array_equal(g, want_g)
    dh, dg = to_device(np.zeros_like(want_h)), to_device(np.zeros_like(want_g))
    gpu(counts_2d, n, xs, dh, dg).join()
    np.testing.assert_array_equal(dh.numpy(), want_h)
    np.testing.assert_array_equal(dg.numpy(), want_g)
    sh, sg = np.zeros_like(want_h), np.zeros_like(want_g)
    counts_2d.simulate(n, xs, sh, sg)
    np.testing.assert_array_equal(sh, want_h)
    np.testing.assert_array_equal(sg, want_g)


@Gpu
def components_u32(p: list[vec3], ks: list[uint32], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < len(out):
        v = vec3(p[i])
        out[i] = v[ks[i]] + p[i][ks[i]]


@pytest.mark.parametrize("ints", [np.int64, np.uint32])
def test_runtime_component_indexes_of_wide_ints(ints):
    """int64 (a 64-bit int launch) and uint32 indexes: valid ones pick their component, one
    beyond the i32 range fails the check (never wraps back into range)."""
    p = np.arange(12, dtype=np.float32).reshape(4, 3)
    ks = np.array([0, 1, 2, 2], ints)
    if ints is np.int64:
        ks[1] = -2
    kernel = components if ints is np.int64 else components_u32
    out = np.zeros(4, np.float32)
    if ints is np.int64:
        gpu(components_unchecked, 4, p, ks, out).join()
        np.testing.assert_array_equal(out, p[np.arange(4), ks % 3])
    else:
        gpu(components_u32, p, ks, out).join()
        np.testing.assert_array_equal(out, 2 * p[np.arange(4), ks])
    ks[3] = 2**32 + 1 if ints is np.int64 else 2**31 + 1
    with pytest.raises(GpuIndexError, match=r"component index 2147483647 is out of range"):
        args = (4, p.copy(), ks, out) if ints is np.int64 else (p.copy(), ks, out)
        gpu(kernel, *args).join()


# -- complex members of tuple results ------------------------------------------------------------

@Gpu.func
def square_and_size(z: complex) -> tuple[complex, float, vec3]:
    return z * z, abs(z), vec3(z.real, z.imag, 0.0)


@Gpu
def complex_tuples(n: int, z: list[complex], sq: list[complex], size: list[float],
                   parts: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        sq[i], size[i], parts[i] = square_and_size(z[i])
        w, s, v = square_and_size(sq[i])
        size[i] += s - abs(sq[i]) + v.z + (w + square_and_size(z[i])[0]).imag * 0.0


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_members_of_tuple_results(dtype):
    n = 40
    rng = np.random.default_rng(11)
    z = (rng.random(n) - 0.5 + 1j * (rng.random(n) - 0.5)).astype(dtype)
    real = np.float32 if dtype is np.complex64 else np.float64
    sq, size, parts = np.zeros(n, dtype), np.zeros(n, real), np.zeros((n, 3), real)
    gpu(complex_tuples, n, z, sq, size, parts).join()
    tol = 1e-5 if dtype is np.complex64 else 1e-13
    np.testing.assert_allclose(sq, z * z, rtol=tol)
    np.testing.assert_allclose(size, np.abs(z), rtol=tol, atol=tol)
    np.testing.assert_allclose(parts, np.stack([z.real, z.imag, 0 * z.real], 1), rtol=tol)
    sims = [np.zeros_like(sq), np.zeros_like(size), np.zeros_like(parts)]
    complex_tuples.simulate(n, z, *sims)
    for got, sim in zip((sq, size, parts), sims):
        np.testing.assert_allclose(got, sim, rtol=tol, atol=tol)


# -- pickled by value: the kernel's source travels, another process compiles it -----------------

PICKLED_SOURCE = '''
from cthreads.gpu import Gpu, GlobalIdx, ThreadIdx, atomic_add, ivec2, length, shared, vec3
from cthreads.sync import __sync_threads


@Gpu.func
def unit(v: vec3) -> tuple[vec3, float]:
    d = length(v)
    return v / d, d


@Gpu
def mixed(n: int, p: list[vec3], k: int, u: list[vec3], h: list[ivec2]) -> None:
    t: list[vec3] = shared(64)
    i: int = GlobalIdx.x
    if i < n:
        t[ThreadIdx.x] = p[i]
    __sync_threads()
    if i < n:
        u[i], d = unit(t[ThreadIdx.x])
        atomic_add(h[0], k, 1)
        u[i][k] += d
'''


def test_pickled_kernel_with_vector_combinations_runs_elsewhere(tmp_path, device_name):
    import pickle
    import textwrap

    from tests.conftest import run_python

    path = tmp_path / "script.py"
    path.write_text(PICKLED_SOURCE)
    namespace = {"__name__": "__main__"}
    exec(compile(PICKLED_SOURCE, str(path), "exec"), namespace)  # noqa: S102
    blob = tmp_path / "mixed.pickle"
    blob.write_bytes(pickle.dumps(namespace["mixed"]))
    path.unlink()
    out = run_python(textwrap.dedent(f'''
        import pickle
        import numpy as np
        from cthreads.gpu import gpu
        kernel = pickle.loads(open({str(blob)!r}, "rb").read())
        p = np.arange(30, dtype=np.float32).reshape(10, 3) + 1
        u, h = np.zeros_like(p), np.zeros((1, 2), np.int32)
        gpu(kernel, 10, p, 1, u, h).join()
        d = np.linalg.norm(p, axis=1)
        want = p / d[:, None]
        want[:, 1] += d
        print(np.allclose(u, want, rtol=1e-5), h.tolist())
    '''))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "True [[0, 10]]"


@Gpu.func
def pick(v: vec3, k: int) -> float:
    return v[k]


@Gpu
def picks(n: int, p: list[vec3], ks: list[int], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        out[i] = pick(p[i], ks[i])


def test_component_index_in_a_device_function_names_its_line():
    p = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    gpu(picks, 4, p, np.array([0, -1, 2, -3], np.int32), out).join()
    np.testing.assert_array_equal(out, [0.0, 5.0, 8.0, 9.0])
    with pytest.raises(GpuIndexError, match=r"component index -5 is out of range for 'v'") \
            as info:
        gpu(picks, 4, p, np.array([0, -5, 2, 1], np.int32), out).join()
    assert ", in pick\n    return v[k]" in str(info.value)


@Gpu
def shared_ends(n: int, p: list[vec3], out: list[float]) -> None:
    t: list[vec3] = shared(8)
    i: int = GlobalIdx.x
    if i < 8:
        t[i] = p[i]
    __sync_threads()
    if i < n:
        out[i] = t[-1].z + float(len(t)) + t[i].x


def test_shared_vector_length_negative_index_and_bounds_check():
    p = np.arange(24, dtype=np.float32).reshape(8, 3)
    out = np.zeros(9, np.float32)
    gpu(shared_ends, 8, p, out).join()
    np.testing.assert_array_equal(out[:8], 23.0 + 8.0 + p[:, 0])
    out[:] = -1.0
    with pytest.raises(GpuIndexError, match=r"index 8 is out of range for list 't' of length 8"):
        gpu(shared_ends, 9, p, out).join()
    assert (out == -1.0).all()
    with pytest.raises(IndexError):
        shared_ends.simulate(9, p, np.zeros(9, np.float32))
