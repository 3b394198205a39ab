#include "energy_media.cuh"

#include "numerics/dither_phase.h"

namespace {

__global__ void media_choose_kernel(energy_media_dev t, int64_t ne, const int64_t *step_p,
                                    const int *stop)
{
    if (*stop)
        return;
    const int64_t step = *step_p, n = (int64_t)t.n_media * ne;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        t.lower[i] = (unsigned char)smx_dither_lower(t.steps + i / ne * ne, (int)ne, t.p_low[i],
                                                     (int)(i % ne), (long long)step);
}

__global__ void media_deposit_kernel(const float *__restrict__ psi, float *__restrict__ dmap,
                                     dev_dims d, energy_media_dev t, const int *stop,
                                     double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    double dep_sum = 0.0;
    media_tally tl;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < d.slice; c += stride) {
        const int64_t m = t.medium[c];
        const double *dm = t.deposit_mean + m * ne;
        for (int64_t j = 0; j < d.nth; j++) {
            double D = 0.0;
            for (int ie = 0; ie < ne; ie++) {
                const float v = psi[(ie * d.nth + j) * d.slice + c];
                D = __fma_rn(dm[ie], (double)v, D);
                tl.add(t, media_table(t, ne, m, ie), dm[ie], v, t.E[ie]);
            }
            dmap[j * d.slice + c] = (float)D;
            dep_sum += D;
        }
    }
    media_partials(dep_sum, tl, partials, blocks);
}

__global__ void media_gather_kernel(float *psi, dev_dims d, energy_media_dev t, const int *stop)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    const int64_t cols = d.nth * d.slice, estride = d.nth * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
        const int64_t m = t.medium[c % d.slice];
        const unsigned char *low = t.lower + m * ne;
        float *p = psi + c; // (th, z, x) column; energy stride nth * slice
        for (int64_t j = 0; j < ne; j++)
            p[j * estride] = media_gather(t, m * ne + j, low, 0, (int)ne - 1, p, estride);
    }
}

__global__ void media_scatter_kernel(float *psi, dev_dims d, energy_media_dev t, const int *stop)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    const int64_t cols = d.nth * d.slice, estride = d.nth * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
        const int64_t m = t.medium[c % d.slice];
        float *p = psi + c;
        for (int64_t s = 0; s < ne; s++) {
            const float v = p[s * estride];
            p[s * estride] = 0.0f;
            const int64_t k = media_table(t, ne, m, (int)s);
            const int tg = t.target[k];
            if (tg < 0)
                continue;
            const float4 c4 = t.coeff[k];
            const float cf[3] = { c4.x, c4.y, c4.z };
#pragma unroll
            for (int q = 0; q < 3; q++)
                if (cf[q] != 0.0f)
                    p[(tg - 1 + q) * estride] = __fmaf_rn(cf[q], v, p[(tg - 1 + q) * estride]);
        }
    }
}

// energy_media_deposit and the gather of energy_media_move in one kernel,
// restricted to the active region: one thread per (direction, z, x) of the
// cells in occupied joined with written. The deposit chain runs over the
// source bins only (the others hold zeros, which add exact zeros); the gather
// writes every bin from the lowest target (this step's or the buffer's last)
// to the highest source or target, reading only source bins (the others may
// still hold last step's values: they count as the CPU's zeros, and skipping a
// zero term changes no bit).
__global__ void media_region_kernel(float *psi, float *__restrict__ dmap, dev_dims d,
                                    energy_media_dev t, const active_regions *reg, const int *stop,
                                    double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    double dep_sum = 0.0;
    media_tally tl;
    const box4 F = box_join(reg->occupied, reg->written);
    const int lo = reg->src_lo, hi = reg->src_hi;
    const int wl = max(0, min(reg->tgt_lo, reg->wtgt_lo));
    const int wh = min((int)ne - 1, max(hi, max(reg->tgt_hi, reg->wtgt_hi)));
    const int nxr = box_is_empty(F) ? 0 : F.x1 - F.x0 + 1;
    // With no source bin left the columns are still visited: their deposit map
    // and last step's values in the buffer become zeros.
    const int64_t per = box_is_empty(F) ? 0 : (int64_t)(F.z1 - F.z0 + 1) * nxr;
    const int64_t items = per * d.nth, estride = d.nth * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < items; q += stride) {
        const int64_t j = q / per, r = q - j * per, z = r / nxr;
        const int64_t c = (F.z0 + z) * d.px + F.x0 + (r - z * nxr);
        const int64_t m = t.medium[c];
        const double *dm = t.deposit_mean + m * ne;
        const unsigned char *low = t.lower + m * ne;
        float *p = psi + j * d.slice + c; // (j, z, x); energy stride nth * slice
        double D = 0.0;
        // The column's source bins that hold weight, s_lo .. s_hi: a +0 adds
        // nothing to the deposit's chain or the tallies, and a target whose
        // candidates all lie outside them gathers +0 (the first term c * 0,
        // then fma(c, 0, v) = v), so it is written as +0 without walking them.
        // Most columns of a union of spots' windows hold none.
        int s_lo = INT_MAX, s_hi = -1;
        for (int ie = lo; ie <= hi; ie++) {
            const float v = p[ie * estride];
            if (v == 0.0f)
                continue;
            s_lo = min(s_lo, ie);
            s_hi = ie;
            D = __fma_rn(dm[ie], (double)v, D);
            tl.add(t, media_table(t, ne, m, ie), dm[ie], v, t.E[ie]);
        }
        dmap[j * d.slice + c] = (float)D;
        dep_sum += D;
        for (int tb = wl; tb <= wh; tb++) {
            // Sources never lie below their targets, and a row's candidates
            // ascend: its last holds its highest source.
            const int64_t row = m * ne + tb;
            const int k0 = tb > s_hi ? 0 : __ldg(t.cand_start + row),
                      k1 = tb > s_hi ? 0 : __ldg(t.cand_start + row + 1);
            const bool none = k1 <= k0 || (__ldg(&t.cand[k1 - 1].src_table) >> 1) < s_lo;
            p[tb * estride] = none ? 0.0f : media_gather(t, row, low, lo, hi, p, estride);
        }
    }
    media_partials(dep_sum, tl, partials, blocks);
}

} // namespace

cudaError_t energy_media_choose(energy_media_dev t, int64_t ne, const int64_t *step,
                                const int *stop, cudaStream_t s)
{
    const int64_t n = (int64_t)t.n_media * ne;
    media_choose_kernel<<<(unsigned)((n + SMX_THREADS - 1) / SMX_THREADS), SMX_THREADS, 0, s>>>(
        t, ne, step, stop);
    return cudaGetLastError();
}

cudaError_t energy_media_deposit(const energy_media_args &a, cudaStream_t s)
{
    media_deposit_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.dmap, a.d, a.t, a.stop,
                                                          a.partials, a.blocks);
    return cudaGetLastError();
}

cudaError_t energy_media_move(int gather, const energy_media_args &a, cudaStream_t s)
{
    if (gather)
        media_gather_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, a.t, a.stop);
    else
        media_scatter_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, a.t, a.stop);
    return cudaGetLastError();
}

cudaError_t energy_media_region(const energy_media_args &a, cudaStream_t s)
{
    media_region_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.dmap, a.d, a.t, a.reg, a.stop,
                                                         a.partials, a.blocks);
    return cudaGetLastError();
}
