"""Loop-heavy kernels whose checks are proven per launch (codegen/range_proofs.py), on the
device against numpy and ``simulate``; launches where the proof's condition fails keep the
checks and raise the located ``GpuIndexError`` with the caller's data unchanged.

Run once per check form: ``CTHREADS_CHECK_FORM=select`` runs the previous form."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cthreads import config
from cthreads.gpu import Gpu, GpuIndexError, gpu, to_device, zeros
from tests.codegen import test_range_proofs as rk

mm = Gpu(rk.mm)
mm2 = Gpu(rk.mm2)
conv = Gpu(rk.conv)
stencil = Gpu(rk.stencil)
rgb = Gpu(rk.rgb)
nbody = Gpu(rk.nbody)
pairs = Gpu(rk.pairs)
tiles = Gpu(rk.tiles)
gathered = Gpu(rk.gathered)


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _rng():
    return np.random.default_rng(7)


def test_matrix_products_flat_and_2d_against_numpy(device_name):
    n = 24
    a = _rng().random((n, n), dtype=np.float32)
    b = _rng().random((n, n), dtype=np.float32) - 0.5
    c = np.zeros(n * n, np.float32)
    gpu(mm, n, a.ravel().copy(), b.ravel().copy(), c, threads=(n, n)).join()
    np.testing.assert_allclose(c.reshape(n, n), a @ b, rtol=1e-4, atol=1e-5)
    c2 = np.zeros((n, n), np.float32)
    gpu(mm2, n, a, b, c2, threads=(n, n)).join()
    np.testing.assert_allclose(c2, a @ b, rtol=1e-4, atol=1e-5)
    # a smaller n over the same lists: still in range, the product of the leading blocks
    c3 = np.zeros(n * n, np.float32)
    m = 10
    gpu(mm, m, a[:m, :m].ravel().copy(), b[:m, :m].ravel().copy(), c3, threads=(n, n)).join()
    np.testing.assert_allclose(c3[:m * m].reshape(m, m), a[:m, :m] @ b[:m, :m], rtol=1e-4,
                               atol=1e-5)
    assert not c3[m * m:].any()


def test_convolution_stencil_rgb_nbody_against_numpy_and_simulate(device_name):
    rng = _rng()
    n, m = 200, 7
    x = rng.random(n + m - 1, dtype=np.float32)
    w = rng.random(m, dtype=np.float32)
    out = np.zeros(n, np.float32)
    gpu(conv, n, m, x, w, out).join()
    np.testing.assert_allclose(out, np.correlate(x, w, "valid"), rtol=1e-5)
    sim = np.zeros(n, np.float32)
    conv.simulate(n, m, x, w, sim)
    np.testing.assert_allclose(out, sim, rtol=1e-5)

    wd, h = 13, 9
    u = rng.random((h, wd), dtype=np.float32)
    st = np.zeros((h, wd), np.float32)
    gpu(stencil, wd, h, u, st, threads=(wd, h)).join()
    want = np.zeros_like(st)
    want[1:-1, 1:-1] = sum(u[1 + dy:h - 1 + dy, 1 + dx:wd - 1 + dx]
                           for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    np.testing.assert_allclose(st, want, rtol=1e-5)

    img = rng.random(wd * h * 3, dtype=np.float32)
    sums = np.zeros(wd * h, np.float32)
    gpu(rgb, wd, h, img, sums, threads=(wd, h)).join()
    np.testing.assert_allclose(sums, img.reshape(-1, 3).sum(axis=1), rtol=1e-5)

    nb = 100
    px, py = rng.random(nb, dtype=np.float32), rng.random(nb, dtype=np.float32)
    ax, ay = np.zeros(nb, np.float32), np.zeros(nb, np.float32)
    gpu(nbody, nb, px, py, ax, ay).join()
    dx = px[None, :] - px[:, None]
    dy = py[None, :] - py[:, None]
    inv = 1.0 / (dx * dx + dy * dy + 0.01)
    np.testing.assert_allclose(ax, (dx * inv).sum(axis=1), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ay, (dy * inv).sum(axis=1), rtol=1e-3, atol=1e-3)

    q = rng.random(40, dtype=np.float32)
    got = np.zeros(40, np.float32)
    gpu(pairs, 40, q, got).join()
    sim = np.zeros(40, np.float32)
    pairs.simulate(40, q, sim)
    np.testing.assert_allclose(got, sim, rtol=1e-4, atol=1e-4)
    want = [sum(q[j] * q[k] - q[i] for j in range(i + 1, 40) for k in range(j, 40))
            for i in range(40)]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_mod_and_floordiv_indexes(device_name):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(40, np.float32)
    gpu(tiles, 40, 5, x, out).join()
    i = np.arange(40)
    np.testing.assert_array_equal(out, x[i % 5] + x[i // 4])
    out[:] = -1.0
    with pytest.raises(GpuIndexError, match="index 10 is out of range for list 'x'"):
        gpu(tiles, 40, 11, x, out).join()            # i % 11 reaches 10: checked, raises
    assert (out == -1.0).all()


def test_n_larger_than_the_lists_raises_located_and_changes_nothing(device_name):
    n = 8
    a = np.ones(n * n, np.float32)
    b = np.ones(n * n, np.float32)
    c = np.full(n * n, -1.0, np.float32)
    with pytest.raises(GpuIndexError) as info:
        gpu(mm, n + 1, a, b, c, threads=(n + 1, n + 1)).join()
    msg = str(info.value)
    assert "kernel mm" in msg and f"of length {n * n}" in msg
    # the first failure recorded: the loop's read (lavapipe runs invocations in order) or, on a
    # GPU where another invocation may record first, the write of c; each with its line
    read = f"line {_line(rk.mm, 's += a[i * n + k]')}, in mm"
    write = f"line {_line(rk.mm, 'c[i * n + j] = s')}, in mm"
    assert (read in msg and "s += a[i * n + k] * b[k * n + j]" in msg) or \
        (write in msg and "c[i * n + j] = s" in msg and "list 'c'" in msg), msg
    assert (c == -1.0).all() and (a == 1.0).all() and (b == 1.0).all()
    # the same kernel in range afterwards: the proven variant again, right results
    gpu(mm, n, a, b, c, threads=(n, n)).join()
    assert (c == n).all()


def test_device_arrays_flat_and_2d(device_name):
    n = 12
    a = _rng().random((n, n), dtype=np.float32)
    b = _rng().random((n, n), dtype=np.float32)
    ad, bd, cd = to_device(a), to_device(b), zeros((n, n))
    gpu(mm2, n, ad, bd, cd, threads=(n, n)).join()
    np.testing.assert_allclose(cd.numpy(), a @ b, rtol=1e-4, atol=1e-5)
    fa, fb, fc = to_device(a.ravel()), to_device(b.ravel()), zeros(n * n)
    gpu(mm, n, fa, fb, fc, threads=(n, n)).join()
    np.testing.assert_allclose(fc.numpy().reshape(n, n), a @ b, rtol=1e-4, atol=1e-5)
    with pytest.raises(GpuIndexError, match="kernel mm"):
        gpu(mm, n + 1, fa, fb, fc, threads=(n + 1, n + 1)).join()
    np.testing.assert_array_equal(fa.numpy(), a.ravel())     # (device arrays: no rollback)


def test_2d_shape_too_small_names_the_dimension(device_name):
    n = 6
    a = np.ones((n, n - 1), np.float32)          # one column short
    b = np.ones((n, n), np.float32)
    c = np.zeros((n, n), np.float32)
    with pytest.raises(GpuIndexError) as info:
        gpu(mm2, n, a, b, c, threads=(n, n)).join()
    msg = str(info.value)
    assert f"index {n - 1} is out of range for dimension 1" in msg and "'a'" in msg
    assert f"line {_line(rk.mm2, 's += a[i, k]')}, in mm2" in msg
    assert not c.any()


def test_convolution_with_a_short_input_raises(device_name):
    n, m = 50, 5
    x = np.ones(n + m - 2, np.float32)           # one element short of n + m - 1
    out = np.zeros(n, np.float32)
    with pytest.raises(GpuIndexError, match=f"index {n + m - 2} is out of range for list 'x'"):
        gpu(conv, n, m, x, np.ones(m, np.float32), out).join()
    assert not out.any()


@pytest.mark.parametrize("form", ["branch", "select"])
def test_both_check_forms_report_the_same_failure(device_name, form):
    with config.override(check_form=form):
        k = Gpu(rk.gathered)
        k.program                                # noqa: B018 - compiled under the form
    n = 16
    idx = np.arange(n, dtype=np.int32)
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    gpu(k, n, idx, x, out).join()
    assert (out == x.sum()).all()
    idx[3] = n + 4                               # one bad index among good ones
    with pytest.raises(GpuIndexError) as info:
        gpu(k, n, idx, x, np.zeros(n, np.float32)).join()
    msg = str(info.value)
    assert f"index {n + 4} is out of range for list 'x' of length {n}" in msg
    assert f"line {_line(rk.gathered, 'acc += x[idx[k]]')}, in gathered" in msg


def test_border_copy_then_return_against_numpy_and_out_of_range(device_name):
    """The border is copied in an ``if`` that then returns; the interior's 3 x 3 loop is
    proven by what that ``if`` leaves true. In range: numpy's result; ``w`` past the arrays:
    the located error, nothing written back."""
    border = Gpu(rk.border_copy)
    h, w = 9, 13
    u = _rng().random((h, w), dtype=np.float32)
    v = np.zeros_like(u)
    gpu(border, w, h, u, v, threads=(w, h)).join()
    want = u.copy()
    win = sum(u[dy:h - 2 + dy, dx:w - 2 + dx].astype(np.float64)
              for dy in range(3) for dx in range(3))
    want[1:-1, 1:-1] = win
    np.testing.assert_allclose(v, want, rtol=1e-5)
    keep = v.copy()
    with pytest.raises(GpuIndexError) as info:
        gpu(border, w + 1, h, u, v, threads=(w + 1, h)).join()
    assert "kernel border_copy" in str(info.value)
    assert (v == keep).all()
