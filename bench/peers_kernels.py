"""The kernels of the PEERS workload (``peers.py``): ours, and the CUDA peers' as their users
write them.

Ours are ``@Gpu`` kernels written the way the docs teach; the ones the demo, the examples and
other workloads already run are imported from there, so the same kernel is measured everywhere:
the saxpy and the 2-D Mandelbrot of ``examples.samples``, the 2-D stencil of ``nd.py``, the two histograms of
``examples/histogram.py`` (global atomics; per-workgroup ``shared`` bins merged with atomics),
the N-body accelerations of ``examples/nbody.py`` (device functions in the inner loop), and the
``add`` of ``reduction.py`` for ``add.reduce``.

The peers' kernels: ``CUDA_SOURCE`` (CuPy ``RawModule``, plain CUDA C: one thread per element,
blocks of 256 or 16 x 16, shared-memory atomics for the histogram) and ``saxpy_triton`` (the
classic Triton saxpy; None where Triton is not importable, with the reason in
``TRITON_MISSING``).

No ``from __future__ import annotations`` here: Triton reads the ``tl.constexpr`` annotation
(the kernel is defined only where Triton imports).
"""

from cthreads.gpu import GlobalIdx, Gpu
from examples.samples import mandelbrot2d, saxpy

from examples.histogram import BINS, histogram, histogram_private
from examples.nbody import SOFTENING2, accelerations
from nd import stencil2d
from reduction import add

try:
    import triton
    import triton.language as tl
    TRITON_MISSING = None
except Exception as exc:                      # not installed, or no usable CUDA toolchain
    triton = tl = None
    TRITON_MISSING = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


# -- ours ----------------------------------------------------------------------------------------

@Gpu
def clear_bins(n: int, bins: list[int]) -> None:
    """bins[:n] = 0 on the device (the histogram's bins before each count)."""
    i: int = GlobalIdx.x
    if i < n:
        bins[i] = 0


# -- CUDA C for CuPy (RawModule) -----------------------------------------------------------------

CUDA_SOURCE = r"""
extern "C" {

__global__ void saxpy_f32(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void saxpy_f64(int n, double a, const double* __restrict__ x,
                          double* __restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// 256 bins: each block counts into its own bins in shared memory, then adds them to the
// global bins (a grid-stride loop over the data).
__global__ void hist256_shared(const int* __restrict__ data, int n, unsigned int* bins)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&bins[b], local[b]);
}

__global__ void hist256_global(const int* __restrict__ data, int n, unsigned int* bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}

// 5-point stencil on a w x h row-major grid, 16 x 16 blocks; the border is left as it is.
__global__ void stencil5(const float* __restrict__ u, float* __restrict__ v, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return;
    int i = y * w + x;
    v[i] = 0.25f * (u[i - w] + u[i + w] + u[i - 1] + u[i + 1]);
}

__global__ void mandelbrot(int* counts, int width, int height, int max_iter)
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

// N-body accelerations, all pairs: a[i] = sum_j m[j] d / (|d|^2 + soft2)^1.5, d = p[j] - p[i]
__global__ void nbody_accel(int n, float soft2, const float* __restrict__ x,
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
        float w = m[j] / (r2 * sqrtf(r2));
        sx += dx * w;
        sy += dy * w;
        sz += dz * w;
    }
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
}

}
"""


# -- Triton ---------------------------------------------------------------------------------------

saxpy_triton = None
if triton is not None:
    try:
        @triton.jit
        def saxpy_triton(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
            pid = tl.program_id(axis=0)
            offsets = pid * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            x = tl.load(x_ptr + offsets, mask=mask)
            y = tl.load(y_ptr + offsets, mask=mask)
            tl.store(y_ptr + offsets, a * x + y, mask=mask)
    except Exception as exc:
        TRITON_MISSING = f"triton.jit: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"

__all__ = ["BINS", "CUDA_SOURCE", "SOFTENING2", "TRITON_MISSING", "accelerations", "add",
           "clear_bins", "histogram", "histogram_private", "mandelbrot2d", "saxpy", "saxpy_triton",
           "stencil2d", "triton"]
