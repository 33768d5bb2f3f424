"""WGSL of the tiled matrix product behind ``matmul`` (plain text; nothing here knows wgpu).

One dispatch computes ``C[b] (+)= A[b] @ B[b]`` for row-major ``A[b]`` (m x k), ``B[b]``
(k x n) and ``C[b]`` (m x n), over a k range ``[k_begin, k_end)`` (``ct_acc`` 1: add to ``C``,
for the later ranges of a long k). The grid is (column tiles, row tiles, batch): each workgroup
computes one ``bm x bn`` tile of ``C`` with ``(bn / tn) x (bm / tm)`` invocations, each one a
``tm x tn`` block of registers. Per step of ``bk`` along k the workgroup copies an ``bm x bk``
tile of A (stored k-major) and a ``bk x bn`` tile of B into workgroup memory (edges read as
zero), waits, and each invocation accumulates its block from them, reading workgroup memory in
vectors of four rows of A / four columns of B: its rows are four at ``4 ty`` and every
``4 bm / tm`` after, its columns four at ``4 tx`` and every ``4 bn / tn`` after (neighbouring
invocations read neighbouring vectors of B, the same vector of A). Every inner loop is unrolled here, so
the k loop is the shader's only loop: ``(k_end - k_begin) / bk`` passes per invocation, which
the runtime keeps below a CPU driver's loop budget (``MAX_STEPS``).

With ``Tiles.prefetch`` (GPUs) the tiles of the next step are read from memory into registers
before this step's products and stored into workgroup memory at the top of the next pass (the
first ones before the loop): the same two barriers a pass, the loads' latency behind the
products.

The direct form (``Tiles.shared`` False, CPU drivers) has no workgroup memory and no barrier:
invocation (x, y) computes the ``tm x tn`` block at row ``tile row + y * tm``, column ``tile
column + x * tn``, reading its rows of A and columns of B from the buffers, one k per pass of the
k loop (indices clamped into the matrices; only the stores are guarded).

In the shared form A and B are read from memory in vectors of four (``vec4``) where their row
length, offset and batch stride allow it (``vector_loads``: k, resp. n, a multiple of 4), else
element by element.

Elements are addressed from element offsets in the uniform block (``ct_off_*``: a view's start,
a batch's), with batch strides (0: one matrix broadcast against every batch), so buffers are
bound whole from byte 0. A and B may hold different float types (f32 / f64); the products are
summed in the result's type.

Binding layout (group 0): 0 the uniform ``CtMatmul``; 1 A (read); 2 B (read); 3 C (read-write).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
import struct

ENTRY_POINT = "ct_matmul"
#: byte size of the uniform block (twelve u32 fields)
UNIFORM_SIZE = 48
#: the most k steps one dispatch makes (the k loop's passes per invocation): far below
#: lavapipe's 65,535 loop passes per invocation (docs/language.md)
MAX_STEPS = 16384

_TYPES = {"float32": "f32", "float64": "f64"}


@dataclass(frozen=True)
class Tiles:
    """A tile configuration: ``bm x bn`` outputs per workgroup, ``bk`` along k per step,
    ``tm x tn`` outputs per invocation."""
    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    #: False: the "direct" form, no workgroup memory: each invocation reads its rows of A and
    #: columns of B from the buffers, one k per pass (CPU drivers: their caches hold the
    #: tiles, and workgroup barriers cost a switch between invocations, docs/performance.md)
    shared: bool = True
    #: (the shared form) the next step's tiles of A and B are read from memory into registers
    #: before this step's products, and stored into workgroup memory after them: the loads'
    #: latency hides behind the products (GPUs)
    prefetch: bool = False

    @property
    def step(self) -> int:
        """The k each pass of the k loop advances."""
        return self.bk if self.shared else 1

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def workgroup_bytes(self, size: int) -> int:
        """The workgroup memory of the A and B tiles for elements of ``size`` bytes."""
        return (self.bm + self.bn) * self.bk * size if self.shared else 0

    def check(self) -> None:
        if self.bm % self.tm or self.bn % self.tn:
            raise ValueError(f"tiles {self}: bm must be a multiple of tm, bn of tn")
        if self.shared and (self.tm % 4 or self.tn % 4):
            raise ValueError(f"tiles {self}: the shared form reads workgroup memory in "
                             "vectors of four: tm and tn must be multiples of 4")


def uniform_bytes(m: int, n: int, k: int, k_begin: int, k_end: int, accumulate: bool,
                  offsets: tuple, strides: tuple) -> bytes:
    """The ``CtMatmul`` bytes of one dispatch (``offsets``, ``strides``: elements of A, B, C)."""
    return struct.pack("<12I", m, n, k, k_begin, k_end, int(accumulate), *offsets, *strides)


@functools.lru_cache(maxsize=64)
def matmul_wgsl(a_ty: str, b_ty: str, c_ty: str, tiles: Tiles, vec_a: bool = False,
                vec_b: bool = False) -> str:
    """The WGSL of the product of an ``a_ty`` A and a ``b_ty`` B into a ``c_ty`` C (each
    ``"float32"`` or ``"float64"``) with ``tiles``. ``vec_a`` / ``vec_b`` (the shared form
    only): A / B is read from memory in vectors of four along its rows, which needs k / n, the
    operand's offset and batch stride to be multiples of 4 (``vector_loads``)."""
    tiles.check()
    ta, tb, tc = (_TYPES[t] for t in (a_ty, b_ty, c_ty))
    t = tiles
    wx, wy = t.bn // t.tn, t.bm // t.tm
    lines = _header(a_ty, b_ty, c_ty, t, ta, tb, tc)
    if vec_a or vec_b:
        lines = [line.replace(f"ct_a: array<{ta}>", f"ct_a: array<vec4<{ta}>>") if vec_a
                 else line for line in lines]
        lines = [line.replace(f"ct_b: array<{tb}>", f"ct_b: array<vec4<{tb}>>") if vec_b
                 else line for line in lines]
    if not t.shared:
        return "\n".join(lines + _direct_body(t, wx, wy, tc)) + "\n"
    lines += [
        f"var<workgroup> sa: array<vec4<{tc}>, {t.bk * t.bm // 4}>;   // k-major, 4 rows a "
        "vector",
        f"var<workgroup> sb: array<vec4<{tc}>, {t.bk * t.bn // 4}>;   // 4 columns a vector",
        "",
        f"@compute @workgroup_size({wx}, {wy}, 1)",
        f"fn {ENTRY_POINT}(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(local_invocation_id) lid: vec3<u32>) {",
        f"    let row0 = wid.y * {t.bm}u;",
        f"    let col0 = wid.x * {t.bn}u;",
        "    let base_a = u.off_a + wid.z * u.stride_a;",
        "    let base_b = u.off_b + wid.z * u.stride_b;",
        "    let base_c = u.off_c + wid.z * u.stride_c;",
        f"    let lin = lid.y * {wx}u + lid.x;",
    ]
    zero = f"{tc}(0.0)"
    for i in range(t.tm):
        for j in range(t.tn):
            lines.append(f"    var c{i}_{j}: {tc} = {zero};")
    if t.prefetch:
        lines += _prefetch_loop(t, wx, wy, tc, vec_a, vec_b) + _stores(t, wx, wy) + ["}"]
        return "\n".join(lines) + "\n"
    lines += [
        "    var k0 = u.k_begin;",
        "    loop {",
        "        if (k0 >= u.k_end) { break; }",
    ]
    lines += _tile_loads_a(t, t.threads, tc, vec_a) + _tile_loads_b(t, t.threads, tc, vec_b)
    lines.append("        workgroupBarrier();")
    lines += _block_steps(t, wx, wy)
    lines += [
        "        workgroupBarrier();",
        f"        k0 = k0 + {t.bk}u;",
        "    }",
    ]
    lines += _stores(t, wx, wy)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _header(a_ty, b_ty, c_ty, t: Tiles, ta: str, tb: str, tc: str) -> list:
    form = f"tiles {t.bm}x{t.bn}x{t.bk}" if t.shared else f"direct {t.bm}x{t.bn}"
    form += ", prefetched" if t.prefetch else ""
    return [
        f"// cthreads matmul: {a_ty} @ {b_ty} -> {c_ty}, {form}, {t.tm}x{t.tn} per "
        "invocation",
        "struct CtMatmul {",
        "    m: u32, n: u32, k: u32, k_begin: u32,",
        "    k_end: u32, ct_acc: u32, off_a: u32, off_b: u32,",
        "    off_c: u32, stride_a: u32, stride_b: u32, stride_c: u32,",
        "}",
        "@group(0) @binding(0) var<uniform> u: CtMatmul;",
        f"@group(0) @binding(1) var<storage, read> ct_a: array<{ta}>;",
        f"@group(0) @binding(2) var<storage, read> ct_b: array<{tb}>;",
        f"@group(0) @binding(3) var<storage, read_write> ct_c: array<{tc}>;",
    ]


def _direct_body(t: Tiles, wx: int, wy: int, tc: str) -> list:
    """The direct form: invocation (x, y) computes the rows row0 .. row0 + tm and columns
    col0 .. col0 + tn of its workgroup's tile, reading A and B from the buffers (indices
    clamped into the matrices, so no load is guarded; the stores are)."""
    lines = [
        "",
        f"@compute @workgroup_size({wx}, {wy}, 1)",
        f"fn {ENTRY_POINT}(@builtin(workgroup_id) wid: vec3<u32>,",
        "        @builtin(local_invocation_id) lid: vec3<u32>) {",
        f"    let row0 = wid.y * {t.bm}u + lid.y * {t.tm}u;",
        f"    let col0 = wid.x * {t.bn}u + lid.x * {t.tn}u;",
        "    let base_a = u.off_a + wid.z * u.stride_a;",
        "    let base_b = u.off_b + wid.z * u.stride_b;",
        "    let base_c = u.off_c + wid.z * u.stride_c;",
    ]
    lines += [f"    let ra{i} = base_a + min(row0 + {i}u, u.m - 1u) * u.k;" for i in range(t.tm)]
    lines += [f"    let qb{j} = base_b + min(col0 + {j}u, u.n - 1u);" for j in range(t.tn)]
    lines += [f"    var c{i}_{j}: {tc} = {tc}(0.0);" for i in range(t.tm) for j in range(t.tn)]
    lines += ["    var k = u.k_begin;", "    loop {", "        if (k >= u.k_end) { break; }",
              "        let kn = k * u.n;"]
    lines += [f"        let a{i} = {tc}(ct_a[ra{i} + k]);" for i in range(t.tm)]
    lines += [f"        let b{j} = {tc}(ct_b[qb{j} + kn]);" for j in range(t.tn)]
    lines += [f"        c{i}_{j} = fma(a{i}, b{j}, c{i}_{j});"
              for i in range(t.tm) for j in range(t.tn)]
    lines += ["        k = k + 1u;", "    }"]
    for i in range(t.tm):
        for j in range(t.tn):
            lines += [
                f"    if (row0 + {i}u < u.m && col0 + {j}u < u.n) {{",
                f"        let at = base_c + (row0 + {i}u) * u.n + col0 + {j}u;",
                f"        if (u.ct_acc != 0u) {{ ct_c[at] = ct_c[at] + c{i}_{j}; }}"
                f" else {{ ct_c[at] = c{i}_{j}; }}",
                "    }",
            ]
    return lines + ["}"]


def vector_loads(tiles: Tiles, k: int, n: int, a_at: tuple, b_at: tuple, span: int) -> tuple:
    """(vec_a, vec_b) for a product: whether A / B can be read in vectors of four (the shared
    form, k / n a multiple of 4, the operand's (offset, stride) too, and every k range)."""
    if not tiles.shared or span % 4 or tiles.bk % 4:
        return False, False
    return (k % 4 == 0 and all(x % 4 == 0 for x in a_at),
            n % 4 == 0 and all(x % 4 == 0 for x in b_at))


def _spread(count: int, threads: int, body) -> list:
    """``body(e)`` for elements ``e = lin + r * threads`` below ``count`` (guarded when the
    count is not a multiple of the threads)."""
    lines = []
    for r in range(-(-count // threads)):
        inner = body()
        head = f"        {{ let e = lin + {r * threads}u;"
        if (r + 1) * threads > count:
            lines += [head, f"          if (e < {count}u) {{"] + inner + ["          }", "        }"]
        else:
            lines += [head] + inner + ["        }"]
    return lines


def _tile_loads_a(t: Tiles, threads: int, tc: str, vec: bool) -> list:
    """Copy the A tile (bm x bk) into workgroup memory, stored k-major (four rows a vector):
    element (or, with ``vec``, four along k) e of the tile; outside A (or past k_end) 0."""
    zero = f"{tc}(0.0)"
    if not vec:
        return _spread(t.bm * t.bk, threads, lambda: [
            f"          let gr = row0 + e / {t.bk}u; let gk = k0 + e % {t.bk}u;",
            f"          var v = {zero};",
            "          if (gr < u.m && gk < u.k_end) {",
            f"              v = {tc}(ct_a[base_a + gr * u.k + gk]); }}",
            f"          let ra = e / {t.bk}u;",
            f"          sa[(e % {t.bk}u) * {t.bm // 4}u + ra / 4u][ra % 4u] = v;"])
    q = t.bk // 4
    return _spread(t.bm * q, threads, lambda: [
        f"          let ra = e / {q}u; let gr = row0 + ra; let kq = (e % {q}u) * 4u;",
        f"          var v = vec4<{tc}>();",
        "          if (gr < u.m && k0 + kq < u.k_end) {",
        f"              v = vec4<{tc}>(ct_a[(base_a + gr * u.k + k0 + kq) / 4u]); }}",
    ] + [f"          sa[(kq + {c}u) * {t.bm // 4}u + ra / 4u][ra % 4u] = v[{c}];"
         for c in range(4)])


def _tile_loads_b(t: Tiles, threads: int, tc: str, vec: bool) -> list:
    """Copy the B tile (bk x bn) into workgroup memory (four columns a vector): element (or,
    with ``vec``, four along the row) e of the tile; outside B (or past k_end) 0."""
    zero = f"{tc}(0.0)"
    if not vec:
        return _spread(t.bk * t.bn, threads, lambda: [
            f"          let gk = k0 + e / {t.bn}u; let gc = col0 + e % {t.bn}u;",
            f"          var v = {zero};",
            "          if (gk < u.k_end && gc < u.n) {",
            f"              v = {tc}(ct_b[base_b + gk * u.n + gc]); }}",
            "          sb[e / 4u][e % 4u] = v;"])
    q = t.bn // 4
    return _spread(t.bk * q, threads, lambda: [
        f"          let gk = k0 + e / {q}u; let gc = col0 + (e % {q}u) * 4u;",
        f"          var v = vec4<{tc}>();",
        "          if (gk < u.k_end && gc < u.n) {",
        f"              v = vec4<{tc}>(ct_b[(base_b + gk * u.n + gc) / 4u]); }}",
        "          sb[e] = v;"])


def _slots(count: int, threads: int, body) -> list:
    """``body(r)`` for the elements ``e = lin + r * threads`` below ``count`` (guarded when
    the count is not a multiple of the threads), each in a block of its own."""
    lines = []
    for r in range(-(-count // threads)):
        head = f"        {{ let e = lin + {r * threads}u;"
        if (r + 1) * threads > count:
            lines += [head, f"          if (e < {count}u) {{"] + body(r) + ["          }", "        }"]
        else:
            lines += [head] + body(r) + ["        }"]
    return lines


def _prefetch_parts(t: Tiles, tc: str, vec_a: bool, vec_b: bool) -> tuple:
    """(declarations, loads at k ``kt`` into the registers pa*/pb*, stores of them into
    workgroup memory) of the prefetching form: the same elements and layout as
    ``_tile_loads_a`` / ``_tile_loads_b``, outside A / B (or past k_end) 0."""
    n = t.threads
    qa, qb = t.bk // 4, t.bn // 4
    ca, cb = (t.bm * qa if vec_a else t.bm * t.bk), (t.bk * qb if vec_b else t.bk * t.bn)
    ta, tb = (f"vec4<{tc}>" if vec_a else tc), (f"vec4<{tc}>" if vec_b else tc)
    decl = [f"    var pa{r}: {ta};" for r in range(-(-ca // n))]
    decl += [f"    var pb{r}: {tb};" for r in range(-(-cb // n))]
    if vec_a:
        la = lambda r: [
            f"          let gr = row0 + e / {qa}u; let kq = kt + (e % {qa}u) * 4u;",
            f"          pa{r} = vec4<{tc}>();",
            "          if (gr < u.m && kq < u.k_end) {",
            f"              pa{r} = vec4<{tc}>(ct_a[(base_a + gr * u.k + kq) / 4u]); }}"]
        sa = lambda r: [f"          let ra = e / {qa}u; let kq = (e % {qa}u) * 4u;"] + [
            f"          sa[(kq + {c}u) * {t.bm // 4}u + ra / 4u][ra % 4u] = pa{r}[{c}];"
            for c in range(4)]
    else:
        la = lambda r: [
            f"          let gr = row0 + e / {t.bk}u; let gk = kt + e % {t.bk}u;",
            f"          pa{r} = {tc}(0.0);",
            "          if (gr < u.m && gk < u.k_end) {",
            f"              pa{r} = {tc}(ct_a[base_a + gr * u.k + gk]); }}"]
        sa = lambda r: [
            f"          let ra = e / {t.bk}u;",
            f"          sa[(e % {t.bk}u) * {t.bm // 4}u + ra / 4u][ra % 4u] = pa{r};"]
    if vec_b:
        lb = lambda r: [
            f"          let gk = kt + e / {qb}u; let gc = col0 + (e % {qb}u) * 4u;",
            f"          pb{r} = vec4<{tc}>();",
            "          if (gk < u.k_end && gc < u.n) {",
            f"              pb{r} = vec4<{tc}>(ct_b[(base_b + gk * u.n + gc) / 4u]); }}"]
        sb = lambda r: [f"          sb[e] = pb{r};"]
    else:
        lb = lambda r: [
            f"          let gk = kt + e / {t.bn}u; let gc = col0 + e % {t.bn}u;",
            f"          pb{r} = {tc}(0.0);",
            "          if (gk < u.k_end && gc < u.n) {",
            f"              pb{r} = {tc}(ct_b[base_b + gk * u.n + gc]); }}"]
        sb = lambda r: [f"          sb[e / 4u][e % 4u] = pb{r};"]
    loads = _slots(ca, n, la) + _slots(cb, n, lb)
    return decl, loads, _slots(ca, n, sa) + _slots(cb, n, sb)


def _prefetch_loop(t: Tiles, wx: int, wy: int, tc: str, vec_a: bool, vec_b: bool) -> list:
    """The k loop of the prefetching form: the first tiles read before the loop; each pass
    stores the registers into workgroup memory, waits, reads the next step's tiles into the
    registers, accumulates from workgroup memory and waits again."""
    decl, loads, stores = _prefetch_parts(t, tc, vec_a, vec_b)
    return decl + ["    var k0 = u.k_begin;", "    { let kt = k0;"] + loads + ["    }",
                   "    loop {", "        if (k0 >= u.k_end) { break; }"] + stores + [
        "        workgroupBarrier();",
        f"        let kt = k0 + {t.bk}u;"] + loads + _block_steps(t, wx, wy) + [
        "        workgroupBarrier();",
        "        k0 = kt;",
        "    }"]


def _block_steps(t: Tiles, wx: int, wy: int) -> list:
    """The bk steps of an invocation's tm x tn block from the tiles (unrolled): one vector load
    of workgroup memory per four rows (columns); neighbouring invocations read neighbouring
    vectors of B and the same vector of A."""
    lines = []
    for kk in range(t.bk):
        for i4 in range(t.tm // 4):
            lines.append(f"        let av{kk}_{i4} = sa[{kk * t.bm // 4}u + lid.y + {i4 * wy}u];")
        for j4 in range(t.tn // 4):
            lines.append(f"        let bv{kk}_{j4} = sb[{kk * t.bn // 4}u + lid.x + {j4 * wx}u];")
        for i in range(t.tm):
            for j in range(t.tn):
                lines.append(f"        c{i}_{j} = fma(av{kk}_{i // 4}[{i % 4}], "
                             f"bv{kk}_{j // 4}[{j % 4}], c{i}_{j});")
    return lines


def _stores(t: Tiles, wx: int, wy: int) -> list:
    """Each element of the block into C (or added to it), inside the matrix only: row
    ``i`` of the block is row ``(i / 4) * 4 wy + 4 y + i % 4`` of the tile, column ``j`` column
    ``(j / 4) * 4 wx + 4 x + j % 4``."""
    lines = [f"    let r{i} = row0 + lid.y * 4u + {(i // 4) * 4 * wy + i % 4}u;"
             for i in range(t.tm)]
    lines += [f"    let q{j} = col0 + lid.x * 4u + {(j // 4) * 4 * wx + j % 4}u;"
              for j in range(t.tn)]
    for i in range(t.tm):
        for j in range(t.tn):
            lines += [
                f"    if (r{i} < u.m && q{j} < u.n) {{",
                f"        let at = base_c + r{i} * u.n + q{j};",
                f"        if (u.ct_acc != 0u) {{ ct_c[at] = ct_c[at] + c{i}_{j}; }}"
                f" else {{ ct_c[at] = c{i}_{j}; }}",
                "    }",
            ]
    return lines

__all__ = ["ENTRY_POINT", "MAX_STEPS", "Tiles", "UNIFORM_SIZE", "matmul_wgsl",
           "uniform_bytes", "vector_loads"]
