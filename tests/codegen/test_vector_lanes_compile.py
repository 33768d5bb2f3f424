"""list[vecN] kernels at compile time: the four-lane variant over flat components
(codegen/vec_lanes.py) and one bounds check per element access (codegen/vec_checks.py)."""

from __future__ import annotations

import math

from cthreads.gpu import GlobalIdx, Gpu, dot, length_sq, vec2, vec3


def _vec_text(k) -> str:
    return k.program._templates.texts[("all", False, "vec_tail")]


def test_component_wise_kernel_steps_over_the_flat_components():
    @Gpu
    def k(n: int, dt: float, g: vec3, p: list[vec3], v: list[vec3]) -> None:
        i: int = GlobalIdx.x
        if i >= n:
            return
        v[i] += g * dt
        p[i] += v[i] * dt
    assert k.program.vec_guard == "n" and k.program.vec_width == 3
    text = _vec_text(k)
    assert "(3i * n)" in text and "% vec4<u32>(3u)" in text     # the guard, each lane's comp
    # g's components, lane by lane the one of the lane's component
    assert "select(select(vec4<f32>(" in text and "ct_c == vec4<u32>(2u)" in text


def test_vec2_without_per_component_leaves_is_the_plain_flat_kernel():
    @Gpu
    def k(n: int, a: float, x: list[vec2], y: list[vec2]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            y[i] = a * x[i] + y[i]
    assert k.program.vec_width == 2
    text = _vec_text(k)
    assert "(2i * n)" in text and "ct_c" not in text


def test_kernels_mixing_components_keep_the_scalar_form():
    @Gpu
    def swizzle(n: int, x: list[vec3], y: list[vec3]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            y[i] = vec3(x[i].y, x[i].z, x[i].x)

    @Gpu
    def mixed(n: int, x: list[vec3], s: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            s[i] = dot(x[i], x[i])

    @Gpu
    def shared_temp(n: int, x: list[vec3], y: list[vec3]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            t = x[i].x
            y[i] = vec3(t, t, t)
    for k in (swizzle, mixed, shared_temp):
        assert k.program.vec_guard is None, k


def _body(k) -> str:
    wgsl = k.program.wgsl()
    return wgsl.split("fn ct_body")[1].split("fn ct_main")[0]


def test_one_check_per_element_access():
    @Gpu
    def kick(n: int, eps2: float, p: list[vec3], v: list[vec3]) -> None:
        i: int = GlobalIdx.x
        if i >= n:
            return
        acc = vec3(0.0)
        for j in range(n):
            d = p[j] - p[i]
            r2 = dot(d, d) + eps2
            acc += d * (1.0 / (r2 * math.sqrt(r2)))
        v[i] = acc
    body = _body(kick)
    # p[j] and p[i] in the loop: one checked load each (of their last component)
    assert body.count("ct_ld_p(") == 2, body
    assert "ct_ld_p(((j * 3i) + 2i)" in body and "p[(j * 3i)]" in body


def test_components_in_a_lazy_operand_keep_their_checks():
    @Gpu
    def lazy(n: int, c: float, p: list[vec3], out: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            out[i] = 1.0 if c > 0.0 and length_sq(p[i + 1]) > 1.0 else 0.0

    @Gpu
    def eager(n: int, c: float, p: list[vec3], out: list[float]) -> None:
        i: int = GlobalIdx.x
        if i < n:
            out[i] = 1.0 if length_sq(p[i + 1]) > 1.0 and c > 0.0 else 0.0
    # length_sq reads each component twice: in the lazy operand (nothing may be hoisted out
    # of it) six loads, all checked; eagerly the three components are loaded once into hidden
    # locals before the statement, the last one's load checked
    assert _body(lazy).count("ct_ld_p(") == 6
    assert _body(eager).count("ct_ld_p(") == 1


def test_range_loop_index_is_proven_by_its_parameter_bound():
    """``for j in range(n)``: x[j] is in range when n <= len(x) (a per-launch proof); with a
    literal step too (every j < n); range(len(x)) proves it outright (test_range_proofs.py)."""
    @Gpu
    def total(n: int, x: list[float], out: list[float]) -> None:
        acc = 0.0
        for j in range(n):
            acc += x[j]
        out[0] = acc

    @Gpu
    def stepped(n: int, x: list[float], out: list[float]) -> None:
        acc = 0.0
        for j in range(0, n, 2):
            acc += x[j]
        out[0] = acc
    assert total.program.fast_requires == (("n", "x", 0),)
    assert stepped.program.fast_requires == (("n", "x", 0),)
    proven = total.program._templates.template("proven", False, "flat")
    assert "ct_ld_x(" not in proven.split("fn ct_body")[1]
