#include "spectral_tally.cuh"

#include "numerics/direction_chunks.h"
#include "tiling.cuh"

// 1 when this step's tallies are the one pass's (gate on, the step unsplit).
__device__ __forceinline__ bool spectral_in_pass(const spectral_gate &g, const active_regions *reg)
{
    return g.on && step_split_groups(reg, g.slot_pref, g.nslots, g.max_tiles, g.blocks) <= 1;
}

// One chunk's pairwise sum (direction_chunks.h), C directions from j0.
template <int C>
__device__ __forceinline__ double chunk_sum(const float *p, int64_t j0, int64_t nth, int64_t slice)
{
    double t[C];
#pragma unroll
    for (int m = 0; m < C; m++)
        t[m] = j0 + m < nth ? (double)__ldg(p + (j0 + m) * slice) : 0.0;
    return smx_chunk_tree(t, C);
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
        // The chunks in registers (a constant size: an array indexed at run
        // time would live in local memory).
        double w = 0.0;
        if (smx_direction_chunk(d.nth) == 8)
            for (int64_t j0 = 0; j0 < d.nth; j0 += 8)
                w += chunk_sum<8>(p, j0, d.nth, d.slice);
        else
            for (int64_t j0 = 0; j0 < d.nth; j0 += 4)
                w += chunk_sum<4>(p, j0, d.nth, d.slice);
        wsum[ie * d.slice + c] = w;
    }
}

__global__ void spectral_plane_kernel(const double *__restrict__ wsum, double *dose, dev_dims d,
                                      spectral_tables_dev t, const unsigned char *medium,
                                      const active_regions *reg, const box4 *boxes, const int *stop,
                                      spectral_gate gate)
{
    if (*stop || spectral_in_pass(gate, reg))
        return;
    const spectral_volume v = spectral_volume_of(d, reg);
    const int64_t nxv = v.x1 - v.x0 + 1, nzv = v.z1 - v.z0 + 1;
    if (nxv <= 0 || nzv <= 0 || v.hi < v.lo)
        return;
    const int64_t n = (int64_t)t.nplanes * nzv * nxv, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        const int x = v.x0 + (int)(u % nxv), z = v.z0 + (int)(u / nxv % nzv),
                  q = (int)(u / (nxv * nzv));
        const int lo = max(t.bins[q].x, v.lo), hi = min(t.bins[q].y, v.hi);
        const int64_t c = (int64_t)z * d.px + x;
        const int64_t m = medium ? medium[c] : 0;
        const double *k = t.coef + ((int64_t)q * t.n_media + m) * d.ne;
        double R = 0.0;
        for (int ie = lo; ie <= hi; ie++) {
            const double r = k[ie];
            if (r == 0.0 || !spectral_holds(boxes, ie, z, x))
                continue;
            R = __fma_rn(r, wsum[ie * d.slice + c], R);
        }
        dose[(1 + q) * d.slice + c] += R;
    }
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
