"""WGSL of the "lanes" form of ``matmul`` for CPU drivers (plain text; nothing here knows wgpu).

Why a form of its own (docs/performance.md, "Matrix products"): llvmpipe runs the invocations
of a workgroup ``lanes`` at a time in the lanes of one SIMD vector (8 for its 256-bit vectors),
and a storage load whose address is not a constant is a loop over the lanes (one scalar load,
bounds check and insert each), whatever the addresses: what costs is the number of load
instructions, not the bytes. A ``vec4`` load fills four components per pass of that loop, and a
subgroup broadcast from a constant lane is one shuffle. So a workgroup here is one subgroup of
``lanes`` invocations: lane ``x`` owns the rows ``row0 + x + lanes * i`` (``i < tm``) of its
workgroup's tile and all of its ``4 tn`` columns. Per pass of the k loop (``lanes`` k) lane x
reads row ``k0 + x`` of B across the tile's columns (``tn`` vec4 loads) and ``lanes`` k of each
of its rows of A (``lanes / 4`` vec4 loads a row); the product then takes row ``k0 + kk`` of B
from lane ``kk`` by ``subgroupBroadcast`` and multiplies it by the lane's A[row, k0 + kk]:
``(2 tm + tn)`` loads feed ``lanes * 4 * tm * tn`` products (for tm = tn = 4: 12 loads, 512
products; the direct form of ``codegen/matmul.py`` made 32 loads for 256). float32 operands
are read as ``vec4<u64>`` where their row length, offset and batch stride are multiples of 8
(``vector_loads``' width 8; the device's shader-int64): eight floats a load, taken apart by
bitcasts (``ct_pairs``), half the load instructions again (measured 1.3x on lavapipe).

Edges: rows past m read row m - 1 (their results are not stored), B's rows past the k range and
A's elements past it read as zero (a ``select``, so no Inf or NaN of a neighbouring element
enters), every index stays inside its operand's matrix, and the stores are guarded. Where
k (resp. n), the operand's offset and batch stride are multiples of 4, A (resp. B) is read as
``array<vec4<...>>``, else the vectors are made from four element loads.

The uniform block, bindings and entry point are ``codegen/matmul.py``'s (``CtMatmul``; 0 the
uniform, 1 A, 2 B, 3 C), and the runtime's dispatch loop is shared: the grid is (column tiles,
row tiles, batch), each pass advances ``lanes`` k.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .matmul import _TYPES, ENTRY_POINT, _header


@dataclass(frozen=True)
class Lanes:
    """The lanes form's tile: ``lanes`` invocations (one subgroup), each ``tm`` rows (every
    ``lanes``-th) by ``tn`` vectors of four columns."""
    tm: int
    tn: int
    lanes: int = 8
    shared = False
    prefetch = False
    form = "lanes"

    @property
    def bm(self) -> int:
        return self.lanes * self.tm

    @property
    def bn(self) -> int:
        return 4 * self.tn

    @property
    def step(self) -> int:
        """The k each pass of the k loop advances."""
        return self.lanes

    def workgroup_bytes(self, size: int) -> int:
        return 0

    def check(self) -> None:
        if self.lanes not in (4, 8, 16) or self.tm < 1 or self.tn < 1:
            raise ValueError(f"lanes tile {self}: lanes 4, 8 or 16, tm and tn >= 1")


def vector_loads(k: int, n: int, a_at: tuple, b_at: tuple, c_at: tuple = (1,),
                 pairs: tuple = (False, False)) -> tuple:
    """(vec_a, vec_b, vec_c) for a product: 0 (elements), 4 (the operand bound as vec4: its row
    length k / n / n, offset and batch stride multiples of 4) or, for A and B, 8 (``pairs``:
    a float32 operand bound as ``vec4<u64>``, eight floats a load: multiples of 8; the k
    ranges start at multiples of ``lanes``)."""
    def width(length, at, pair):
        if pair and length % 8 == 0 and all(x % 8 == 0 for x in at):
            return 8
        return 4 if length % 4 == 0 and all(x % 4 == 0 for x in at) else 0
    return width(k, a_at, pairs[0]), width(n, b_at, pairs[1]), width(n, c_at, False)


@functools.lru_cache(maxsize=32)
def lanes_wgsl(a_ty: str, b_ty: str, c_ty: str, t: Lanes, vec_a: int, vec_b: int,
               vec_c: int = 0) -> str:
    """The lanes form of ``C (+)= A @ B`` (see the module docstring); ``vec_a`` / ``vec_b`` /
    ``vec_c`` as ``vector_loads`` gives them (8: float32 pairs in ``vec4<u64>``, which needs
    the device's shader-int64, 8 lanes or 16 for A and an even ``tn`` for B)."""
    t.check()
    if (vec_a == 8 and (a_ty != "float32" or t.lanes % 8)) or (
            vec_b == 8 and (b_ty != "float32" or t.tn % 2)) or (
            8 in (vec_a, vec_b) and c_ty != "float32"):
        raise ValueError(f"lanes tile {t}: float32 pairs need float32 operands and result, "
                         "8 or 16 lanes (A) and an even tn (B)")
    tc = _TYPES[c_ty]
    v4 = f"vec4<{tc}>"
    lines = _declarations(a_ty, b_ty, c_ty, t, vec_a, vec_b, vec_c)
    L, tm, tn = t.lanes, t.tm, t.tn
    lines += [
        "",
        f"@compute @workgroup_size({L}, 1, 1)",
        f"fn {ENTRY_POINT}(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(subgroup_invocation_id) lane: u32) {",
        f"    let row0 = wid.y * {t.bm}u + lane;",
        f"    let col0 = wid.x * {t.bn}u;",
        "    let base_a = u.off_a + wid.z * u.stride_a;",
        "    let base_b = u.off_b + wid.z * u.stride_b;",
        "    let base_c = u.off_c + wid.z * u.stride_c;",
        f"    let zero = {v4}();",
        "    let klast = u.k_end - 1u;",
    ]
    for i in range(tm):       # each row's first element and its last one
        lines += [f"    let ra{i} = base_a + min(row0 + {L * i}u, u.m - 1u) * u.k;",
                  f"    let ea{i} = ra{i} + u.k - 1u;"]
    if vec_b == 8:
        lines += [f"    let qb{q} = min(col0 + {8 * q}u, u.n - 8u) / 8u;" for q in range(tn // 2)]
    elif vec_b:
        lines += [f"    let qb{j} = min(col0 + {4 * j}u, u.n - 4u) / 4u;" for j in range(tn)]
    else:
        lines += [f"    let qb{j}_{e} = min(col0 + {4 * j + e}u, u.n - 1u);"
                  for j in range(tn) for e in range(4)]
    lines += [f"    var c{i}_{j} = {v4}();" for i in range(tm) for j in range(tn)]
    lines += ["    var k0 = u.k_begin;", "    loop {",
              f"        if (k0 + {L}u > u.k_end) {{ break; }}"]
    lines += _pass(t, tc, vec_a, vec_b, False)
    lines += [f"        k0 = k0 + {L}u;", "    }",
              "    if (k0 < u.k_end) {      // the last k, fewer than the lanes"]
    lines += _pass(t, tc, vec_a, vec_b, True)
    lines.append("    }")
    lines += _stores(t, vec_c)
    return "\n".join(lines + ["}"]) + "\n"


def _declarations(a_ty: str, b_ty: str, c_ty: str, t: Lanes, vec_a: int, vec_b: int,
                  vec_c: int) -> list:
    """The uniform block, the bindings (as vec4 or vec4<u64> arrays where chosen) and, with
    float32 pairs, ``ct_pairs``."""
    ta, tb, tc = (_TYPES[x] for x in (a_ty, b_ty, c_ty))
    lines = _header(a_ty, b_ty, c_ty, _Named(t), ta, tb, tc)
    lines[0] = (f"// cthreads matmul: {a_ty} @ {b_ty} -> {c_ty}, lanes form: {t.lanes} lanes of "
                f"{t.tm} rows x {4 * t.tn} columns")
    if vec_a:
        wide = "u64" if vec_a == 8 else ta
        lines = [x.replace(f"ct_a: array<{ta}>", f"ct_a: array<vec4<{wide}>>") for x in lines]
    if vec_b:
        wide = "u64" if vec_b == 8 else tb
        lines = [x.replace(f"ct_b: array<{tb}>", f"ct_b: array<vec4<{wide}>>") for x in lines]
    if 8 in (vec_a, vec_b):       # a vec4<u64> of float32 pairs -> two vec4<f32>
        lines += [
            "fn ct_pairs(x: vec4<u64>) -> array<vec4<f32>, 2> {",
            "    let lo = bitcast<vec4<f32>>(vec4<u32>(x & vec4<u64>(0xfffffffflu)));",
            "    let hi = bitcast<vec4<f32>>(vec4<u32>(x >> vec4<u32>(32u)));",
            "    return array<vec4<f32>, 2>(vec4<f32>(lo.x, hi.x, lo.y, hi.y),",
            "                               vec4<f32>(lo.z, hi.z, lo.w, hi.w));",
            "}",
        ]
    if vec_c:
        lines = [x.replace(f"ct_c: array<{tc}>", f"ct_c: array<vec4<{tc}>>") for x in lines]
    return lines


def _pass(t: Lanes, tc: str, vec_a: int, vec_b: int, masked: bool) -> list:
    """One pass of ``lanes`` k from k0: the loads (``masked``: the last pass, k0 + lanes past
    k_end: indices clamped into the rows, elements past k_end zero), then the broadcasts and
    products."""
    L, tm, tn, v4 = t.lanes, t.tm, t.tn, f"vec4<{tc}>"
    lines = ["        let kb = k0 + lane;"]
    if masked:
        lines += ["        let brow = base_b + min(kb, klast) * u.n;",
                  "        let bin = kb < u.k_end;"]
    else:
        lines.append("        let brow = base_b + kb * u.n;")
    for q in range(tn // 2 if vec_b == 8 else 0):
        lines.append(f"        let bp{q} = ct_pairs(ct_b[brow / 8u + qb{q}]);")
    for j in range(tn):
        if vec_b == 8:
            load = f"bp{j // 2}[{j % 2}]"
        elif vec_b:
            load = f"{v4}(ct_b[brow / 4u + qb{j}])"
        else:
            load = f"{v4}(" + ", ".join(f"{tc}(ct_b[brow + qb{j}_{e}])" for e in range(4)) + ")"
        lines.append(f"        let b{j} = " + (f"select(zero, {load}, bin);" if masked
                                               else f"{load};"))
    for h in range(L // 4):
        if masked:
            lines.append(f"        let kin{h} = vec4<u32>(k0 + {4 * h}u) + vec4<u32>(0u, 1u, 2u, "
                         "3u) < vec4<u32>(u.k_end);")
        for i in range(tm):
            at = (lambda e: f"min(ra{i} + k0 + {4 * h + e}u, ea{i})") if masked else (
                lambda e: f"ra{i} + k0 + {4 * h + e}u")
            if vec_a == 8:
                if h % 2 == 0:     # eight k of row i: one load (clamped: the row's last 8)
                    at8 = (f"min(ra{i} + k0 + {4 * h}u, ea{i} - 7u)" if masked
                           else f"ra{i} + k0 + {4 * h}u")
                    lines.append(f"        let ap{i}_{h // 2} = ct_pairs(ct_a[({at8}) / 8u]);")
                load = f"ap{i}_{h // 2}[{h % 2}]"
            elif vec_a:
                load = f"{v4}(ct_a[({at(0)}) / 4u])"
            else:
                load = f"{v4}(" + ", ".join(f"{tc}(ct_a[{at(e)}])" for e in range(4)) + ")"
            lines.append(f"        let a{i}_{h} = " + (f"select(zero, {load}, kin{h});"
                                                       if masked else f"{load};"))
    for kk in range(L):
        for j in range(tn):
            lines.append(f"        let s{kk}_{j} = subgroupBroadcast(b{j}, {kk}u);")
            lines += [f"        c{i}_{j} = fma({v4}(a{i}_{kk // 4}[{kk % 4}]), s{kk}_{j}, "
                      f"c{i}_{j});" for i in range(tm)]
    return lines


def _stores(t: Lanes, vec_c: bool) -> list:
    """The block into C (or added to it), inside the matrix only: vec4 stores with ``vec_c``
    (n a multiple of 4: a vector is wholly inside or outside), else element by element."""
    lines = []
    for i in range(t.tm):
        lines.append(f"    let r{i} = row0 + {t.lanes * i}u;")
        for j in range(t.tn):
            if vec_c:
                lines += [
                    f"    if (r{i} < u.m && col0 + {4 * j}u < u.n) {{",
                    f"        let at = (base_c + r{i} * u.n + col0) / 4u + {j}u;",
                    f"        if (u.ct_acc != 0u) {{ ct_c[at] = ct_c[at] + c{i}_{j}; }}"
                    f" else {{ ct_c[at] = c{i}_{j}; }}",
                    "    }",
                ]
                continue
            for e in range(4):
                lines += [
                    f"    if (r{i} < u.m && col0 + {4 * j + e}u < u.n) {{",
                    f"        let at = base_c + r{i} * u.n + col0 + {4 * j + e}u;",
                    f"        if (u.ct_acc != 0u) {{ ct_c[at] = ct_c[at] + c{i}_{j}[{e}]; }}"
                    f" else {{ ct_c[at] = c{i}_{j}[{e}]; }}",
                    "    }",
                ]
    return lines


class _Named:
    """The fields ``_header`` reads (its first line is replaced)."""

    def __init__(self, t: Lanes):
        self.shared, self.prefetch = True, False
        self.bm, self.bn, self.bk, self.tm, self.tn = t.bm, t.bn, t.lanes, t.tm, 4 * t.tn


__all__ = ["Lanes", "lanes_wgsl", "vector_loads"]
