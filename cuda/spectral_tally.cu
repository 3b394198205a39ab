#include "spectral_tally.cuh"

#include "numerics/direction_chunks.h"
#include "tiling.cuh"

// 1 when this step's tallies are the one pass's (gate on, the step unsplit).
__device__ __forceinline__ bool spectral_in_pass(const spectral_gate &g, const active_regions *reg)
{
    return g.on && step_split_groups(reg, g.slot_pref, g.nslots, g.max_tiles, g.blocks) <= 1;
}

// A cell's weight in one bin summed over its directions (direction_chunks.h:
// chunks of C, each a pairwise tree in double, added in ascending order),
// for nth <= NCH * C: every load issued before the first add (the chunks in
// turn made each thread wait for one round of loads per chunk). Constant
// indices only: an array indexed at run time would live in local memory.
template <int C, int NCH>
__device__ __forceinline__ double direction_sum(const float *p, int64_t nth, int64_t slice)
{
    float f[NCH * C];
#pragma unroll
    for (int m = 0; m < NCH * C; m++)
        f[m] = m < nth ? __ldg(p + m * slice) : 0.0f;
    double w = 0.0;
#pragma unroll
    for (int k = 0; k < NCH; k++) {
        if (k * C >= nth)
            break;
        double t[C];
#pragma unroll
        for (int m = 0; m < C; m++)
            t[m] = (double)f[k * C + m];
        w += smx_chunk_tree(t, C);
    }
    return w;
}

// The same for any nth, one chunk's loads at a time (grids of more than 64
// directions, which no fused kernel takes).
template <int C>
__device__ __forceinline__ double direction_sum_any(const float *p, int64_t nth, int64_t slice)
{
    double w = 0.0;
    for (int64_t j0 = 0; j0 < nth; j0 += C) {
        double t[C];
#pragma unroll
        for (int m = 0; m < C; m++)
            t[m] = j0 + m < nth ? (double)__ldg(p + (j0 + m) * slice) : 0.0;
        w += smx_chunk_tree(t, C);
    }
    return w;
}

// Two passes, the order of cpu_spectral_tallies: first each (bin, cell)'s
// weight summed over its directions (in double, in the chunks of
// numerics/direction_chunks.h), a thread per
// (bin, cell), every load independent; then per (cell, band) the bins
// ascending, each sum times the bin's release by one fma. Outside a bin's
// box (where the run keeps boxes) the cell holds none of the bin's weight:
// the first pass skips it and the second adds nothing for it, as a zero
// would add nothing.

__device__ __forceinline__ bool spectral_holds(const box4 *boxes, int ie, int z, int x)
{
    if (!boxes)
        return true;
    const box4 b = boxes[ie];
    return !box_is_empty(b) && z >= b.z0 && z <= b.z1 && x >= b.x0 && x <= b.x1;
}

// The active volume: bins lo..hi, rows z0..z1, columns x0..x1 (the whole
// grid where the run keeps no region).
struct spectral_volume {
    int lo, hi, z0, z1, x0, x1;
};

__device__ __forceinline__ spectral_volume spectral_volume_of(const dev_dims &d,
                                                              const active_regions *reg)
{
    spectral_volume v{ 0, (int)d.ne - 1, 0, (int)d.nz - 1, 0, (int)d.nx - 1 };
    if (reg) {
        const box4 o = reg->occupied;
        if (box_is_empty(o) || reg->src_hi < reg->src_lo)
            return spectral_volume{ 0, -1, 0, -1, 0, -1 };
        v = spectral_volume{ reg->src_lo, reg->src_hi, o.z0, o.z1, o.x0, o.x1 };
    }
    return v;
}

// Grid-stride over (bin, row, column) of the active volume: the launch is
// sized once (graph replay), the volume read on the device.
__global__ void spectral_sum_kernel(const float *__restrict__ psi_a,
                                    const float *__restrict__ psi_b, int flip, const int64_t *step,
                                    double *wsum, dev_dims d, const active_regions *reg,
                                    const box4 *boxes, const int *stop, spectral_gate gate)
{
    if (*stop || spectral_in_pass(gate, reg))
        return;
    const spectral_volume v = spectral_volume_of(d, reg);
    const int64_t nxv = v.x1 - v.x0 + 1, nzv = v.z1 - v.z0 + 1, nev = v.hi - v.lo + 1;
    if (nxv <= 0 || nzv <= 0 || nev <= 0)
        return;
    const float *psi = flip && (*step & 1) ? psi_b : psi_a;
    const int64_t n = nev * nzv * nxv, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        const int x = v.x0 + (int)(u % nxv), z = v.z0 + (int)(u / nxv % nzv),
                  ie = v.lo + (int)(u / (nxv * nzv));
        if (!spectral_holds(boxes, ie, z, x))
            continue;
        const int64_t c = (int64_t)z * d.px + x;
        const float *p = psi + ie * d.nth * d.slice + c;
        // The chunk size is direction_chunks.h's; the templates cover what it gives.
        const int C = smx_direction_chunk(d.nth);
        double w;
        if (C == 4 && d.nth <= 16)
            w = direction_sum<4, 4>(p, d.nth, d.slice);
        else if (C == 8 && d.nth <= 64)
            w = direction_sum<8, 8>(p, d.nth, d.slice);
        else if (C == 8)
            w = direction_sum_any<8>(p, d.nth, d.slice);
        else
            w = direction_sum_any<4>(p, d.nth, d.slice);
        wsum[ie * d.slice + c] = w;
    }
}

// One (plane, cell)'s sum (the item u of the volume v): bins ascending, one
// fma each, added to the plane. A bin with a zero coefficient, or outside
// its box (where wsum holds nothing of this step), takes fma(r, 0, R) == R
// bitwise (R >= +0, r finite): the CPU skips it. The lanes of LANES threads
// (1, or a warp) load LANES bins at a time, each one bin's coefficient and
// sum, and every lane forms the chain from them in order: the chain then
// waits on memory once per LANES bins. One thread per item walked a band of
// a pencil's bins at about 400 cycles a bin on few SMs (21 us of a 70 MeV
// pencil's step on an H200, more than its one pass); a warp per item takes
// such small volumes, a thread per item the large ones (its loads coalesce
// along x).
template <int LANES>
__device__ __forceinline__ void
plane_item(int64_t u, const spectral_volume &v, const double *wsum, double *dose, const dev_dims &d,
           const spectral_tables_dev &t, const unsigned char *medium, const box4 *boxes)
{
    const int64_t nxv = v.x1 - v.x0 + 1, nzv = v.z1 - v.z0 + 1;
    const int x = v.x0 + (int)(u % nxv), z = v.z0 + (int)(u / nxv % nzv),
              q = (int)(u / (nxv * nzv));
    const int lo = max(t.bins[q].x, v.lo), hi = min(t.bins[q].y, v.hi);
    const int64_t c = (int64_t)z * d.px + x;
    const int64_t m = medium ? medium[c] : 0;
    const double *k = t.coef + ((int64_t)q * t.n_media + m) * d.ne;
    constexpr int U = LANES == 1 ? 8 : 1; // a lone thread's bins in flight
    const int lane = LANES == 1 ? 0 : (int)(threadIdx.x % LANES);
    double R = 0.0;
    for (int i0 = lo; i0 <= hi; i0 += LANES * U) {
        double r[U], w[U];
#pragma unroll
        for (int i = 0; i < U; i++) {
            const int ie = i0 + i * LANES + lane;
            r[i] = ie <= hi ? k[ie] : 0.0;
            const bool use = r[i] != 0.0 && spectral_holds(boxes, ie, z, x);
            w[i] = use ? wsum[ie * d.slice + c] : 0.0;
        }
        if constexpr (LANES == 1) {
#pragma unroll
            for (int i = 0; i < U; i++)
                R = __fma_rn(r[i], w[i], R);
        } else {
#pragma unroll
            for (int l = 0; l < LANES; l++) // lanes past hi hold 0, 0: R unchanged
                R = __fma_rn(__shfl_sync(0xffffffffu, r[0], l), __shfl_sync(0xffffffffu, w[0], l),
                             R);
        }
    }
    if (lane == 0)
        dose[(1 + q) * d.slice + c] += R;
}

// t is __grid_constant__: read in place, where a copy indexed by plane (its
// bins) would be a stack frame in local memory.
__global__ void spectral_plane_kernel(const double *__restrict__ wsum, double *dose, dev_dims d,
                                      const __grid_constant__ spectral_tables_dev t,
                                      const unsigned char *medium, const active_regions *reg,
                                      const box4 *boxes, const int *stop, spectral_gate gate)
{
    if (*stop || spectral_in_pass(gate, reg))
        return;
    const spectral_volume v = spectral_volume_of(d, reg);
    const int64_t nxv = v.x1 - v.x0 + 1, nzv = v.z1 - v.z0 + 1;
    if (nxv <= 0 || nzv <= 0 || v.hi < v.lo)
        return;
    const int64_t n = (int64_t)t.nplanes * nzv * nxv, threads = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (n * 32 <= threads) { // every item a warp of its own (uniform per warp)
        if (tid / 32 < n)
            plane_item<32>(tid / 32, v, wsum, dose, d, t, medium, boxes);
        return;
    }
    for (int64_t u = tid; u < n; u += threads)
        plane_item<1>(u, v, wsum, dose, d, t, medium, boxes);
}

cudaError_t spectral_launch(const spectral_args &a, cudaStream_t s)
{
    spectral_sum_kernel<<<a.blocks, 256, 0, s>>>(a.psi_a, a.psi_b, a.flip, a.step, a.wsum, a.d,
                                                 a.reg, a.boxes, a.stop, a.gate);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    spectral_plane_kernel<<<a.blocks, 256, 0, s>>>(a.wsum, a.dose, a.d, a.t, a.medium, a.reg,
                                                   a.boxes, a.stop, a.gate);
    return cudaGetLastError();
}

cudaError_t spectral_plane_launch(const spectral_args &a, cudaStream_t s)
{
    spectral_plane_kernel<<<a.blocks, 256, 0, s>>>(a.wsum, a.dose, a.d, a.t, a.medium, a.reg,
                                                   a.boxes, a.stop, a.gate);
    return cudaGetLastError();
}
