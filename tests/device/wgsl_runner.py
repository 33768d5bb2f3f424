"""Test support: run one WGSL expression per element on the device, through cthreads.backend.

``run_f64(helpers, expr, *columns)`` evaluates ``expr`` (a WGSL expression over the f64
arguments ``a0``, ``a1`` ...) once per row of the numpy float64 ``columns`` and returns the f64
results; a bool expression is written as 0.0 / 1.0. ``helpers`` is WGSL text defining the
functions ``expr`` calls. Everything goes through the backend's device, buffer pool, pipeline
cache and queue: no wgpu call here.
"""

from __future__ import annotations

import numpy as np

from cthreads.backend import get_context, get_queue
from cthreads.backend.pipeline import READ, READ_WRITE, make_pipeline

WORKGROUP = 64

#: ``ct_zero()``: 0 at run time, unknown to the driver's compiler (kernels emit their own from
#: their uniform block; here it is a word of the input, since the compiler bounds
#: ``arrayLength() >> 31`` to 0)
ZERO = """var<private> ct_zero_v: u32;
fn ct_zero() -> u32 { return ct_zero_v; }"""

_SHADER = """
@group(0) @binding(0) var<storage, read> ct_in: array<f64>;
@group(0) @binding(1) var<storage, read_write> ct_out: array<f64>;

{zero}

{helpers}

fn ct_as_f64_b(v: bool) -> f64 {{ return select(0.0lf, 1.0lf, v); }}
fn ct_as_f64_d(v: f64) -> f64 {{ return v; }}

@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {{
    let i = gid.x + gid.y * groups.x * {wg}u;
    if (i >= {n}u) {{ return; }}
    ct_zero_v = u32(bitcast<u64>(ct_in[{n}u * {nargs}u]) >> 40u);
{loads}
    ct_out[i] = ct_as_f64_{kind}({expr});
}}
"""


def shader(helpers: str, expr: str, nargs: int, n: int, kind: str = "d") -> str:
    loads = "\n".join(f"    let a{k} = ct_in[i * {nargs}u + {k}u];" for k in range(nargs))
    return _SHADER.format(zero=ZERO, helpers=helpers, wg=WORKGROUP, n=n, nargs=nargs,
                          loads=loads, expr=expr, kind=kind)


def run_f64(helpers: str, expr: str, *columns, kind: str = "d") -> np.ndarray:
    """``expr`` evaluated on the device for each row of ``columns`` (float64 arrays).

    ``kind``: "d" when ``expr`` is an f64, "b" when it is a bool (results 0.0 / 1.0).
    """
    cols = [np.ascontiguousarray(c, dtype=np.float64).ravel() for c in columns]
    n = len(cols[0])
    assert n > 0 and all(len(c) == n for c in cols)
    data = np.stack(cols, axis=1).ravel() if len(cols) > 1 else cols[0]
    data = np.concatenate([data, [0.0]])     # the word ct_zero() reads
    ctx = get_context()
    queue = get_queue()
    wgsl = shader(helpers, expr, len(cols), n, kind)
    pipe = make_pipeline(ctx, wgsl, "main", ((0, READ), (1, READ_WRITE)))
    src = queue.upload_new(data)
    nbytes = n * 8
    dst = queue.pool.acquire(nbytes)
    staging = queue.pool.acquire(nbytes, "staging")
    bg = queue.bind_group(pipe.layout, [(0, src.buffer, data.nbytes),
                                            (1, dst.buffer, nbytes)])
    groups = -(-n // WORKGROUP)
    seq = queue.dispatch(pipe.pipeline, bg, groups, None,
                         [(dst.buffer, 0, staging.buffer, 0, nbytes)], (src, dst))
    raw = queue.read_into(staging, nbytes, seq)
    for buf in (src, dst, staging):
        queue.pool.release(buf)
    return np.frombuffer(raw, dtype=np.float64).copy()
