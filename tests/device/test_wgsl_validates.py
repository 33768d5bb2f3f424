"""Every kernel of the test corpus compiles into a pipeline on the device (naga validates it)."""

from __future__ import annotations

import math

import pytest

from cthreads.gpu import GlobalIdx, Gpu, gpu
from cthreads.kernel import all_kernels

from tests.codegen import golden_kernels  # noqa: F401  (registers kernels)
from tests.device import kernels, test_differential, test_workgroup  # noqa: F401


@Gpu
def matmul(n: int, w: int, a: list[float], b: list[float], c: list[float]) -> None:
    idx = GlobalIdx.x
    if idx >= n:
        return
    row = idx // w
    col = idx % w
    acc = 0.0
    for k in range(w):
        acc += a[row * w + k] * b[k * w + col]
    c[idx] = acc


@Gpu
def mandel(n: int, width: int, iters: list[int]) -> None:
    i = GlobalIdx.x
    if i >= n:
        return
    cx = -2.0 + 3.0 * (i % width) / width
    cy = -1.5 + 3.0 * (i // width) / (n // width)
    x = 0.0
    y = 0.0
    k = 0
    while k < 100 and x * x + y * y <= 4.0:
        x, y = x * x - y * y + cx, 2.0 * x * y + cy
        k += 1
    iters[i] = k


@Gpu
def everything(n: int, f: float, b: bool, xs: list[float], ys: list[int], zs: list[bool]) -> None:
    i = GlobalIdx.x
    if not b or i >= len(xs):
        return
    v = xs[i] if i % 2 == 0 else float(ys[i])
    v = v ** 2 + math.hypot(v, f) - math.copysign(1.0, v) + abs(v) // 3 % 2
    j = int(v) if math.isfinite(v) else 0
    j = j << 2 >> 1 | 5 & ~3 ^ 1
    zs[i] = (0 < j <= n) and not zs[i] or (v != v)
    ys[i] = max(j, -j, 3) + min(ys[i], 7) + round(f) + math.floor(f) + math.ceil(f)
    xs[i] = math.pow(f, 2.0) + math.log(abs(f) + 1.0, 10.0) + (1.0 if b else 0.0)


def test_every_kernel_creates_a_pipeline():
    names = []
    for k in all_kernels():
        if k.program.refused is not None:
            continue                         # its 32-bit launches raise (test_fuzz_compile.py)
        rt = k.runtime_for()
        rt.compile_all()                     # every variant: checked, and check-free if any
        assert rt.pipeline_for(rt.variants()[0]) is not None
        names.append(k.__name__)
    assert {"saxpy", "reduce_sum", "int_ops", "block_sums", "matmul", "everything"} <= set(names)


def test_matmul_and_mandel_compute():
    w = 8
    a = [float(k % 5) for k in range(w * w)]
    b = [float(k % 3) for k in range(w * w)]
    c = [0.0] * (w * w)
    gpu(matmul, w * w, w, a, b, c).join()
    expect = [sum(a[r * w + k] * b[k * w + col] for k in range(w))
              for r in range(w) for col in range(w)]
    assert c == expect
    it_dev = [0] * 256
    it_sim = [0] * 256
    gpu(mandel, 256, 16, it_dev).join()
    mandel.simulate(256, 16, it_sim)
    differ = sum(1 for p, q in zip(it_dev, it_sim) if p != q)
    assert differ <= 3      # float32 vs float64 at the set's boundary


# ------------------------------------------------------------------ the WGSL library
#: a tiny module around one library helper: its requirements, the shader's ct_zero(), and an
#: entry point that calls it with zero values of its parameter types
_LIBRARY_MODULE = """@group(0) @binding(0) var<storage, read_write> ct_out: array<u32>;
var<private> ct_zero_v: u32;
fn ct_zero() -> u32 {{ return ct_zero_v; }}

{helpers}

@compute @workgroup_size(1)
fn main() {{
    ct_zero_v = ct_out[0];
    {call}
}}
"""


def _library_records():
    from cthreads.codegen import library
    return list(library.helpers().values()) + list(library.forms("f64").values())


def _zero_call(rec) -> str:
    """``_ = name(T0(), T1() ...);`` for a function (zero values of its parameter types, read
    from its signature); nothing for a declaration (``var``, ``override``)."""
    import re
    start = rec.text.find(f"fn {rec.name}(")
    if start < 0:
        return ""
    sig = rec.text[start:rec.text.index("{", start)]
    params = sig[sig.index("(") + 1:sig.rindex(")")]
    types = [p.split(":", 1)[1].strip() for p in re.split(r",(?![^<]*>)", params) if p.strip()]
    call = f"{rec.name}({', '.join(t + '()' for t in types)});"
    return "_ = " + call if "->" in sig[sig.rindex(")"):] else call


@pytest.mark.parametrize("rec", _library_records(),
                         ids=lambda r: f"{r.source}:{r.name}{'@' + r.form if r.form else ''}")
def test_every_library_helper_validates_with_what_it_requires(rec):
    from cthreads.backend import get_context
    from cthreads.backend.pipeline import READ_WRITE, make_pipeline
    from cthreads.codegen import library
    ctx = get_context()
    recs = library.closure(rec.deps) + [rec]
    needs = {f for r in recs for f in r.features}
    missing = [f for f in sorted(needs) if f not in ctx.features]
    if missing:
        pytest.skip(f"the device lacks {', '.join(missing)}")
    wgsl = _LIBRARY_MODULE.format(helpers="\n\n".join(r.text for r in recs),
                                  call=_zero_call(rec))
    pipe = make_pipeline(ctx, wgsl, "main", ((0, READ_WRITE),))
    assert pipe is not None
