"""The kernels of ``compute_bound.py``: each computation written three ways with the same
arithmetic, in the same order of operations.

* ours: a plain Python function, decorated twice: ``Gpu(f)`` (the default, bounds-checked) and
  ``Gpu(boundscheck=False)(f)`` (``CHECKED`` and ``UNCHECKED``, by name);
* ``wgsl(name, wg)``: hand-written WGSL for ``raw_wgpu.Raw`` (a uniform of parameters at binding
  0, then the lists in the order of the kernel's list parameters), one thread per output;
* ``CUDA_SOURCE``: CUDA C for CuPy's ``RawModule``, one thread per output (blocks of 256 or
  16 x 16).

The computations (float32 throughout; 2-D lists are row-major):

* ``matmul_flat`` / ``matmul_2d``: naive square product, ``c[r, col] = sum_k a[r, k] * b[k, col]``
  (flat ``a[r * n + k]`` and 2-D ``a[r, k]``), a 2-D launch ``threads=(n, n)``, x = column;
* ``conv1d``: ``out[i] = sum_j x[i + j] * f[j]`` over a filter of ``m`` taps (``x`` holds
  ``n + m - 1`` values);
* ``conv2d``: ``out[y, x] = sum_{dy, dx} img[y + dy, x + dx] * f[dy, dx]`` over a square filter
  of side ``m`` (``img`` is ``(h + m - 1, w + m - 1)``), a 2-D launch;
* ``nbody``: all-pairs accelerations over x/y/z arrays with masses and a softening;
* ``stencil9``: the 9-point average of each interior point, two loops over the neighbourhood
  (border copied), a 2-D launch;
* ``mandel``: Mandelbrot (``examples.samples.mandelbrot2d``'s arithmetic) with a 2-D launch.
"""

from __future__ import annotations

import math

from cthreads.gpu import GlobalIdx, Gpu

SOFT2 = 0.01          # the N-body softening (squared length)


def matmul_flat(n: int, a: list[float], b: list[float], c: list[float]) -> None:
    col: int = GlobalIdx.x
    row: int = GlobalIdx.y
    if col >= n or row >= n:
        return
    acc: float = 0.0
    for k in range(n):
        acc += a[row * n + k] * b[k * n + col]
    c[row * n + col] = acc


def matmul_2d(n: int, a: list[list[float]], b: list[list[float]], c: list[list[float]]) -> None:
    col: int = GlobalIdx.x
    row: int = GlobalIdx.y
    if col >= n or row >= n:
        return
    acc: float = 0.0
    for k in range(n):
        acc += a[row, k] * b[k, col]
    c[row, col] = acc


def conv1d(n: int, m: int, x: list[float], f: list[float], out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    acc: float = 0.0
    for j in range(m):
        acc += x[i + j] * f[j]
    out[i] = acc


def conv2d(w: int, h: int, m: int, img: list[list[float]], f: list[list[float]],
           out: list[list[float]]) -> None:
    px: int = GlobalIdx.x
    py: int = GlobalIdx.y
    if px >= w or py >= h:
        return
    acc: float = 0.0
    for dy in range(m):
        for dx in range(m):
            acc += img[py + dy, px + dx] * f[dy, dx]
    out[py, px] = acc


def nbody(n: int, soft2: float, x: list[float], y: list[float], z: list[float],
          m: list[float], ax: list[float], ay: list[float], az: list[float]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    xi: float = x[i]
    yi: float = y[i]
    zi: float = z[i]
    sx: float = 0.0
    sy: float = 0.0
    sz: float = 0.0
    for j in range(n):
        dx: float = x[j] - xi
        dy: float = y[j] - yi
        dz: float = z[j] - zi
        r2: float = dx * dx + dy * dy + dz * dz + soft2
        s: float = m[j] / (r2 * math.sqrt(r2))
        sx += dx * s
        sy += dy * s
        sz += dz * s
    ax[i] = sx
    ay[i] = sy
    az[i] = sz


def stencil9(w: int, h: int, u: list[list[float]], v: list[list[float]]) -> None:
    px: int = GlobalIdx.x
    py: int = GlobalIdx.y
    if px >= w or py >= h:
        return
    if px < 1 or py < 1 or px >= w - 1 or py >= h - 1:
        v[py, px] = u[py, px]
        return
    acc: float = 0.0
    for dy in range(3):
        for dx in range(3):
            acc += u[py + dy - 1, px + dx - 1]
    v[py, px] = acc * (1.0 / 9.0)


def mandel(width: int, height: int, max_iter: int, counts: list[list[int]]) -> None:
    px: int = GlobalIdx.x
    py: int = GlobalIdx.y
    if px >= width or py >= height:
        return
    cx: float = -2.2 + 3.0 * px / width
    cy: float = -1.2 + 2.4 * py / height
    x: float = 0.0
    y: float = 0.0
    k: int = 0
    while k < max_iter and x * x + y * y <= 4.0:
        xt: float = x * x - y * y + cx
        y = 2.0 * x * y + cy
        x = xt
        k += 1
    counts[py, px] = k


FUNCTIONS = {f.__name__: f for f in (matmul_flat, matmul_2d, conv1d, conv2d, nbody, stencil9,
                                     mandel)}
CHECKED = {name: Gpu(f) for name, f in FUNCTIONS.items()}
UNCHECKED = {name: Gpu(boundscheck=False)(f) for name, f in FUNCTIONS.items()}
#: 2-D launches (the rest are 1-D)
TWO_D = {"matmul_flat", "matmul_2d", "conv2d", "stencil9", "mandel"}


# -- hand-written WGSL (raw_wgpu) ------------------------------------------------------------

_WGSL_BODY = {
    "matmul_flat": ("n: u32", ["a", "b"], ["c"], """
    let col = g.x; let row = g.y; let n = p.n;
    if (col >= n || row >= n) { return; }
    var acc = 0.0;
    for (var k = 0u; k < n; k++) { acc += a[row * n + k] * b[k * n + col]; }
    c[row * n + col] = acc;"""),
    "matmul_2d": None,                    # the same WGSL: a 2-D list is row-major memory
    "conv1d": ("n: u32, m: u32", ["x", "f"], ["out"], """
    let i = g.x;
    if (i >= p.n) { return; }
    var acc = 0.0;
    for (var j = 0u; j < p.m; j++) { acc += x[i + j] * f[j]; }
    out[i] = acc;"""),
    "conv2d": ("w: u32, h: u32, m: u32", ["img", "f"], ["out"], """
    let px = g.x; let py = g.y; let m = p.m; let iw = p.w + m - 1u;
    if (px >= p.w || py >= p.h) { return; }
    var acc = 0.0;
    for (var dy = 0u; dy < m; dy++) {
        for (var dx = 0u; dx < m; dx++) {
            acc += img[(py + dy) * iw + px + dx] * f[dy * m + dx];
        }
    }
    out[py * p.w + px] = acc;"""),
    "nbody": ("n: u32, soft2: f32", ["x", "y", "z", "m"], ["ax", "ay", "az"], """
    let i = g.x; let n = p.n;
    if (i >= n) { return; }
    let xi = x[i]; let yi = y[i]; let zi = z[i];
    var sx = 0.0; var sy = 0.0; var sz = 0.0;
    for (var j = 0u; j < n; j++) {
        let dx = x[j] - xi; let dy = y[j] - yi; let dz = z[j] - zi;
        let r2 = dx * dx + dy * dy + dz * dz + p.soft2;
        let s = m[j] / (r2 * sqrt(r2));
        sx += dx * s; sy += dy * s; sz += dz * s;
    }
    ax[i] = sx; ay[i] = sy; az[i] = sz;"""),
    "stencil9": ("w: u32, h: u32", ["u"], ["v"], """
    let px = g.x; let py = g.y; let w = p.w;
    if (px >= w || py >= p.h) { return; }
    if (px < 1u || py < 1u || px >= w - 1u || py >= p.h - 1u) {
        v[py * w + px] = u[py * w + px];
        return;
    }
    var acc = 0.0;
    for (var dy = 0u; dy < 3u; dy++) {
        for (var dx = 0u; dx < 3u; dx++) { acc += u[(py + dy - 1u) * w + px + dx - 1u]; }
    }
    v[py * w + px] = acc * (1.0 / 9.0);"""),
    "mandel": ("width: i32, height: i32, max_iter: i32", [], ["counts"], """
    let px = i32(g.x); let py = i32(g.y);
    if (px >= p.width || py >= p.height) { return; }
    let cx = -2.2 + 3.0 * f32(px) / f32(p.width);
    let cy = -1.2 + 2.4 * f32(py) / f32(p.height);
    var x = 0.0; var y = 0.0; var k = 0;
    while (k < p.max_iter && x * x + y * y <= 4.0) {
        let xt = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = xt;
        k += 1;
    }
    counts[py * p.width + px] = k;"""),
}
_WGSL_BODY["matmul_2d"] = _WGSL_BODY["matmul_flat"]


def wgsl(name: str, wg: tuple) -> str:
    """The hand-written WGSL of ``name`` at workgroup size ``wg`` (x, y)."""
    params, ins, outs, body = _WGSL_BODY[name]
    elem = "i32" if name == "mandel" else "f32"
    fields = ", ".join([params] + [f"pad{k}: u32" for k in range(4 - params.count(":"))])
    lines = [f"struct Params {{ {fields} }}",
             "@group(0) @binding(0) var<uniform> p: Params;"]
    for k, v in enumerate(ins + outs):
        access = "read" if v in ins else "read_write"
        lines.append(f"@group(0) @binding({k + 1}) var<storage, {access}> {v}: array<{elem}>;")
    lines += [f"@compute @workgroup_size({wg[0]}, {wg[1]})",
              "fn main(@builtin(global_invocation_id) g: vec3<u32>) {" + body, "}"]
    return "\n".join(lines) + "\n"


# -- CUDA C (CuPy RawModule) -----------------------------------------------------------------

CUDA_SOURCE = r"""
extern "C" {

__global__ void cb_matmul(int n, const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= n || row >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

__global__ void cb_conv1d(int n, int m, const float* __restrict__ x,
                          const float* __restrict__ f, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int j = 0; j < m; j++)
        acc += x[i + j] * f[j];
    out[i] = acc;
}

__global__ void cb_conv2d(int w, int h, int m, const float* __restrict__ img,
                          const float* __restrict__ f, float* __restrict__ out)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h)
        return;
    int iw = w + m - 1;
    float acc = 0.0f;
    for (int dy = 0; dy < m; dy++)
        for (int dx = 0; dx < m; dx++)
            acc += img[(py + dy) * iw + px + dx] * f[dy * m + dx];
    out[py * w + px] = acc;
}

__global__ void cb_nbody(int n, float soft2, const float* __restrict__ x,
                         const float* __restrict__ y, const float* __restrict__ z,
                         const float* __restrict__ m, float* ax, float* ay, float* az)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float xi = x[i], yi = y[i], zi = z[i];
    float sx = 0.0f, sy = 0.0f, sz = 0.0f;
    for (int j = 0; j < n; j++) {
        float dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
        float r2 = dx * dx + dy * dy + dz * dz + soft2;
        float s = m[j] / (r2 * sqrtf(r2));
        sx += dx * s;
        sy += dy * s;
        sz += dz * s;
    }
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
}

__global__ void cb_stencil9(int w, int h, const float* __restrict__ u, float* __restrict__ v)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h)
        return;
    if (px < 1 || py < 1 || px >= w - 1 || py >= h - 1) {
        v[py * w + px] = u[py * w + px];
        return;
    }
    float acc = 0.0f;
    for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++)
            acc += u[(py + dy - 1) * w + px + dx - 1];
    v[py * w + px] = acc * (1.0f / 9.0f);
}

__global__ void cb_mandel(int width, int height, int max_iter, int* counts)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;
    float cx = -2.2f + 3.0f * px / width;
    float cy = -1.2f + 2.4f * py / height;
    float x = 0.0f, y = 0.0f;
    int k = 0;
    while (k < max_iter && x * x + y * y <= 4.0f) {
        float xt = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = xt;
        k++;
    }
    counts[py * width + px] = k;
}

}
"""

#: the CUDA function of each computation (both matmul forms are the same memory)
CUDA_NAME = {"matmul_flat": "cb_matmul", "matmul_2d": "cb_matmul", "conv1d": "cb_conv1d",
             "conv2d": "cb_conv2d", "nbody": "cb_nbody", "stencil9": "cb_stencil9",
             "mandel": "cb_mandel"}
