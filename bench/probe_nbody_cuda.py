"""Is the interleaved (n, 3) layout slower for an all-pairs N-body kick in CUDA too? The same
kick as ``bench/vectors.py``'s ``kick_vec3`` / ``kick_xyz`` written in CUDA C for CuPy's
``RawKernel``: positions as one (n, 3) array (``p[3 * j + k]``) and as three arrays, float32
and float64, timed with CUDA events (median of ``--reps``). Needs CuPy and a CUDA GPU.

    python bench/probe_nbody_cuda.py [--bodies 32768] [--reps 9]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

SOURCE = r"""
template <typename T> __device__ T rsq3(T r2);
template <> __device__ float rsq3<float>(float r2) { return 1.0f / (r2 * sqrtf(r2)); }
template <> __device__ double rsq3<double>(double r2) { return 1.0 / (r2 * sqrt(r2)); }

template <typename T>
__device__ void kick_aos(int n, T dt, T eps2, const T* p, T* v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T xi = p[3 * i], yi = p[3 * i + 1], zi = p[3 * i + 2];
    T ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
        T dx = p[3 * j] - xi, dy = p[3 * j + 1] - yi, dz = p[3 * j + 2] - zi;
        T s = rsq3<T>(dx * dx + dy * dy + dz * dz + eps2);
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    v[3 * i] += ax * dt; v[3 * i + 1] += ay * dt; v[3 * i + 2] += az * dt;
}

template <typename T>
__device__ void kick_soa(int n, T dt, T eps2, const T* px, const T* py, const T* pz,
                         T* vx, T* vy, T* vz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T xi = px[i], yi = py[i], zi = pz[i];
    T ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
        T dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
        T s = rsq3<T>(dx * dx + dy * dy + dz * dz + eps2);
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    vx[i] += ax * dt; vy[i] += ay * dt; vz[i] += az * dt;
}

extern "C" {
__global__ void aos32(int n, float dt, float e, const float* p, float* v) { kick_aos<float>(n, dt, e, p, v); }
__global__ void aos64(int n, double dt, double e, const double* p, double* v) { kick_aos<double>(n, dt, e, p, v); }
__global__ void soa32(int n, float dt, float e, const float* x, const float* y, const float* z,
                      float* a, float* b, float* c) { kick_soa<float>(n, dt, e, x, y, z, a, b, c); }
__global__ void soa64(int n, double dt, double e, const double* x, const double* y, const double* z,
                      double* a, double* b, double* c) { kick_soa<double>(n, dt, e, x, y, z, a, b, c); }
}
"""


def main() -> None:
    import cupy as cp
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", type=int, default=32768)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    mod = cp.RawModule(code=SOURCE, options=("--std=c++11",))
    n = a.bodies
    grid, block = ((n + 255) // 256,), (256,)
    for bits, dt in ((32, np.float32), (64, np.float64)):
        p0 = np.random.default_rng(2).standard_normal((n, 3)).astype(dt)
        p, v = cp.asarray(p0), cp.zeros((n, 3), dt)
        xyz = [cp.asarray(np.ascontiguousarray(p0[:, k])) for k in range(3)]
        vxyz = [cp.zeros(n, dt) for _ in range(3)]
        s = dt(1e-3), dt(1e-2)
        runs = {"aos": (mod.get_function(f"aos{bits}"), (np.int32(n), *s, p, v)),
                "soa": (mod.get_function(f"soa{bits}"), (np.int32(n), *s, *xyz, *vxyz))}
        ms = {}
        for name, (fn, args) in runs.items():
            fn(grid, block, args)
            times = []
            for _ in range(a.reps):
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record()
                fn(grid, block, args)
                e1.record()
                e1.synchronize()
                times.append(cp.cuda.get_elapsed_time(e0, e1))
            ms[name] = statistics.median(times)
        print(f"CUDA kick float{bits}: (n, 3) array {ms['aos']:.3f} ms, x/y/z arrays "
              f"{ms['soa']:.3f} ms, ratio {ms['aos'] / ms['soa']:.3f}")


if __name__ == "__main__":
    main()
