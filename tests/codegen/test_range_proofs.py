"""Which accesses of loop-heavy kernels are proven in range (codegen/proofs.py,
codegen/range_proofs.py), read from the WGSL of the variant without per-launch checks, and the
launch-time conditions that choose it (runtime/launch_conditions.py), without a device."""

from __future__ import annotations

from cthreads import config
from cthreads.codegen.range_proofs import describe
from cthreads.gpu import GlobalIdx, Gpu
from cthreads.runtime.launch_conditions import compile_conditions
from cthreads.runtime.variants import DeviceFacts, launch_proven, launch_rules


def mm(n: int, a: list[float], b: list[float], c: list[float]) -> None:
    i: int = GlobalIdx.y
    j: int = GlobalIdx.x
    if i >= n or j >= n:
        return
    s: float = 0.0
    for k in range(n):
        s += a[i * n + k] * b[k * n + j]
    c[i * n + j] = s


def mm2(n: int, a: list[list[float]], b: list[list[float]], c: list[list[float]]) -> None:
    i: int = GlobalIdx.y
    j: int = GlobalIdx.x
    if i >= n or j >= n:
        return
    s: float = 0.0
    for k in range(n):
        s += a[i, k] * b[k, j]
    c[i, j] = s


def mm_shapes(a: list[list[float]], b: list[list[float]], c: list[list[float]]) -> None:
    i: int = GlobalIdx.y
    j: int = GlobalIdx.x
    if i >= len(c) or j >= c.shape[1]:
        return
    s: float = 0.0
    for k in range(a.shape[1]):
        s += a[i, k] * b[k, j]
    c[i, j] = s


def conv(n: int, m: int, x: list[float], w: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    s: float = 0.0
    for k in range(m):
        s += x[i + k] * w[k]
    out[i] = s


def stencil(w: int, h: int, u: list[list[float]], out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        return
    s: float = 0.0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            s += u[y + dy, x + dx]
    out[y, x] = s


def rgb(w: int, h: int, img: list[float], out: list[float]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    row: int = y * w
    s: float = 0.0
    for c in range(3):
        s += img[(row + x) * 3 + c]
    out[y * w + x] = s


def nbody(n: int, px: list[float], py: list[float], ax: list[float], ay: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    fx: float = 0.0
    fy: float = 0.0
    for j in range(n):
        dx = px[j] - px[i]
        dy = py[j] - py[i]
        inv = 1.0 / (dx * dx + dy * dy + 0.01)
        fx += dx * inv
        fy += dy * inv
    ax[i] = fx
    ay[i] = fy


def pairs(n: int, px: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = 0.0
    for j in range(i + 1, n):            # each pair once
        for k in range(j, n):
            acc += px[j] * px[k] - px[i]
    out[i] = acc


def tiles(n: int, w: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    out[i] = x[(i % w) + (i // 4) * 0] + x[i // 4]


def total(x: list[float], out: list[float]) -> None:
    acc: float = 0.0
    for j in range(len(x)):
        acc += x[j]
    out[0] = acc


def reversed_sum(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= 1:
        return
    acc: float = 0.0
    for k in range(n):
        acc += x[n - 1 - k]
    out[i] = acc


def gathered(n: int, idx: list[int], x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = 0.0
    for k in range(n):
        acc += x[idx[k]]             # x's index is data: never proven
    out[i] = acc


def from_below(n: int, x: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = 0.0
    for j in range(i - 1, n):            # j = -1 for i = 0: x[j] keeps its check
        acc += x[j]
    out[i] = acc


def reassigned(n: int, x: list[float], out: list[float]) -> None:
    acc: float = 0.0
    for k in range(n):
        acc += x[k]
        k = k + 1                    # noqa: PLW2901 - the loop variable changes: not proven
    out[0] = acc


def _body(kernel, checks: str = "proven") -> str:
    text = kernel.program._templates.template(checks, False, "flat")
    return text.split("fn ct_body")[1]


def _unchecked(kernel) -> bool:
    """No access helper (ct_ld_/ct_st_) left in the proven variant's body."""
    body = _body(kernel)
    return "ct_ld" not in body and "ct_st" not in body


def _test(kernel):
    p = kernel.program
    return compile_conditions(p.fast_conditions, {s.name: k for k, s in enumerate(p.scalars)},
                              {s.name: k for k, s in enumerate(p.lists)})


def test_flat_matrix_product_is_proven_by_conditions_on_n_and_the_lengths():
    k = Gpu(mm)
    assert _unchecked(k)
    assert "ct_ld_a(" in _body(k, "all")            # the checked variant keeps them
    text = [describe(c) for c in k.program.fast_conditions]
    assert "(((((n - 1) * n) + (n - 1)) + 1) <= a.shape[0])" in text
    test = _test(k)
    n = 64
    assert test([n], [n * n] * 3, None)
    assert not test([n + 1], [n * n] * 3, None)           # n larger than the lists
    assert not test([n], [n * n, n * n - 1, n * n], None)   # b one short
    assert not test([50_000], [1 << 40] * 3, None)         # (n - 1) * n past the i32 range


def test_two_d_matrix_product_is_proven_by_n_against_the_shapes():
    k = Gpu(mm2)
    assert _unchecked(k)
    assert set(k.program.fast_requires) == {(n, lst, d) for n in "n" for lst in "abc"
                                            for d in (0, 1)}


def test_shape_bounds_prove_outright_or_compare_two_shapes():
    k = Gpu(mm_shapes)
    assert _unchecked(k)
    assert k.program.proven_checks == 3          # a[i, k] along 1, c[i, j] along 0 and 1
    text = sorted(describe(c) for c in k.program.fast_conditions)
    assert "((a.shape[1] - 1) + 1) <= b.shape[0])" in " ".join(text)
    test = _test(k)
    assert test([], [4, 6, 4], [(4, 6), (6, 5), (4, 5)])
    assert not test([], [4, 5, 4], [(4, 6), (5, 5), (4, 5)])     # b has a row too few


def test_convolution_stencil_rgb_and_nbody_loops_are_proven():
    for fn in (conv, stencil, rgb, nbody, pairs):
        assert _unchecked(Gpu(fn)), fn.__name__
    tiles_test = _test(Gpu(tiles))
    assert _unchecked(Gpu(tiles))
    assert tiles_test([40, 5], [10, 40], None)               # i // 4 <= 9, i % 5 <= 4
    assert not tiles_test([40, 11], [10, 40], None)          # i % 11 reaches 10
    assert not tiles_test([40, 0], [10, 40], None)           # i % 0: the check stays
    assert not tiles_test([44, 5], [10, 44], None)           # i // 4 reaches 10
    pairs_test = _test(Gpu(pairs))
    assert pairs_test([10], [10, 10], None) and not pairs_test([10], [9, 10], None)
    test = _test(Gpu(conv))
    # x[i + k]: (n - 1) + (m - 1) + 1 <= len(x); w[k]: m <= len(w)
    assert test([100, 5], [104, 5, 100], None)
    assert not test([100, 5], [103, 5, 100], None)
    stencil_test = _test(Gpu(stencil))
    assert stencil_test([8, 6], [6, 6], [(6, 8), (6, 8)])
    assert not stencil_test([9, 6], [6, 6], [(6, 8), (6, 8)])


def test_len_bound_and_reversed_index():
    k = Gpu(total)
    assert k.program.proven_checks == 1         # x[j], j in range(len(x)): always
    # out[0]: one condition, len(out) >= 1
    assert [describe(c) for c in k.program.fast_conditions] == ["(1 <= out.shape[0])"]
    assert "ct_ld_x(" not in _body(k, "all")        # proven outright: in every variant
    r = Gpu(reversed_sum)
    assert _unchecked(r)
    assert _test(r)([10], [10, 1], None) and not _test(r)([11], [10, 1], None)


def test_data_indexes_and_changed_loop_variables_keep_their_checks():
    g = Gpu(gathered)
    assert "ct_ld_x(" in _body(g)
    assert "ct_ld_idx(" not in _body(g)             # idx[k] is proven
    assert "ct_ld_x(" in _body(Gpu(from_below))
    r = Gpu(reassigned)
    assert "ct_ld_x(" in _body(r)


def test_launch_rules_choose_the_proven_variant_only_when_the_conditions_hold():
    k = Gpu(mm)
    rules = launch_rules(k.program, DeviceFacts(is_cpu=False, max_groups=65535),
                         config.current())
    assert rules.fast_test is not None and rules.needs_dims
    assert launch_proven(rules, [8], [64, 64, 64], [None, None, None])
    assert not launch_proven(rules, [9], [64, 64, 64], [None, None, None])


def test_check_forms():
    with config.override(check_form="select"):
        s = Gpu(gathered)
        s.program      # noqa: B018 - compiled under the setting
    b = Gpu(gathered)
    assert "ct_bad = select(ct_bad, c, bad);" in s.wgsl
    assert "select(ct_bad" not in b.wgsl and "if (bad) {" in b.wgsl


def test_proven_variant_is_the_unchecked_kernel():
    """Where the launch's conditions hold, a matrix product, convolution and N-body loop run
    exactly the WGSL of ``@Gpu(boundscheck=False)``: the checks cost nothing on the device."""
    from cthreads.codegen.program import Variant
    for fn, form, wg in ((mm, "nd_tile", (32, 8, 1)), (mm2, "nd_tile", (32, 8, 1)),
                         (stencil, "nd_tile", (32, 8, 1)), (conv, "flat", (256, 1, 1)), (nbody, "flat", (256, 1, 1))):
        proven = Gpu(fn).program.render(Variant(checks="proven", form=form, workgroup=wg))
        plain = Gpu(boundscheck=False)(fn).program.render(Variant(form=form, workgroup=wg))
        assert proven == plain, fn.__name__


def border_copy(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    if x < 1 or y < 1 or x >= w - 1 or y >= h - 1:
        v[y, x] = u[y, x]           # the border is copied, then the invocation leaves
        return
    acc: float = 0.0
    for dy in range(3):
        for dx in range(3):
            acc += u[y + dy - 1, x + dx - 1]
    v[y, x] = acc


def border_falls_through(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x >= w or y >= h:
        return
    if x < 1 or y < 1:
        v[y, x] = u[y, x]           # no return: the code below runs at the border too
    v[y, x] = u[y - 1, x - 1]


def test_a_guard_whose_body_ends_in_return_bounds_what_follows():
    """An ``if`` with more than a ``return`` in its body (a border copied first) still bounds
    the code after it, since its body always leaves; a body that falls through does not."""
    k = Gpu(border_copy)
    assert _unchecked(k)
    test = _test(k)
    assert test([8, 6], [6, 6], [(6, 8), (6, 8)])
    assert not test([9, 6], [6, 6], [(6, 8), (6, 8)])
    assert "ct_ld2_u(" in _body(Gpu(border_falls_through))    # u[y - 1, x - 1] stays checked
