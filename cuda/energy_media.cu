#include "energy_media.cuh"

#include "angular.cuh"
#include "spectral_tally.cuh"
#include "numerics/dither_phase.h"

namespace {

// The step's fields of the one pass's record of (medium m, bin ie),
// i = m * ne + ie (media_bin; the rest is written at upload): the values the
// whole-grid kernels read from the chosen table, the difference formed here
// as they form it.
__device__ void write_bin(const energy_media_dev &t, int64_t ne, int64_t i, int low)
{
    const int64_t m = i / ne;
    const int ie = (int)(i % ne);
    const int64_t k = (m * 2 + (low ? 0 : 1)) * ne + ie; // media_table's
    media_bin *r =
        reinterpret_cast<media_bin *>(t.bins.out + ((size_t)ie * t.n_media + m) * t.bins.rec_bytes);
    r->flags = (low ? MEDIA_BIN_LOWER : 0) | (t.target[k] < 0 ? MEDIA_BIN_STOP : 0);
    r->nuc_w = t.nuc_w[k];
    r->nuc_e = t.nuc_e[k];
    r->round = t.deposit[k] - t.deposit_mean[i];
}

__global__ void media_records_kernel(energy_media_dev t, int64_t ne, angular_tables_dev at,
                                     spectral_tables_dev tal)
{
    const int64_t n = (int64_t)t.n_media * ne;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t m = i / ne;
        const int ie = (int)(i % ne);
        unsigned char *rec = t.bins.out + ((size_t)ie * t.n_media + m) * t.bins.rec_bytes;
        media_bin *r = reinterpret_cast<media_bin *>(rec);
        const int kid = at.kernel_of_energy[m * at.media_stride + ie];
        r->kid = kid;
        r->K = at.half_width[kid];
        r->woff = at.offset[kid];
        r->deposit_mean = t.deposit_mean[i];
        r->cut = 1.0 - at.weight_sum[kid];
        double *cf = reinterpret_cast<double *>(rec + sizeof(media_bin));
        const int64_t mc = tal.n_media > 1 ? m : 0; // the tallies' medium (one: every medium's)
        for (int q = 0; q < tal.nplanes; q++)
            cf[q] = tal.coef[((int64_t)q * tal.n_media + mc) * ne + ie];
        float *w = reinterpret_cast<float *>(rec + t.bins.w_off);
        for (int d = 0; d <= 2 * r->K; d++)
            w[d] = at.weights[r->woff + d];
    }
}

__global__ void media_choose_kernel(energy_media_dev t, int64_t ne, const int64_t *step_p,
                                    const int *stop)
{
    if (*stop)
        return;
    const int64_t step = *step_p, n = (int64_t)t.n_media * ne;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int low = smx_dither_lower(t.steps + i / ne * t.n_steps, t.n_steps, t.p_low[i],
                                         (int)(i % ne), (long long)step);
        t.lower[i] = (unsigned char)low;
        if (t.bins.out)
            write_bin(t, ne, i, low);
    }
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

} // namespace

cudaError_t energy_media_records(const energy_media_dev &t, int64_t ne,
                                 const angular_tables_dev &at, const spectral_tables_dev &tal,
                                 cudaStream_t s)
{
    const int64_t n = (int64_t)t.n_media * ne;
    if (!t.bins.out || t.bins.w_off != media_rec_weights(tal.nplanes) ||
        t.bins.rec_bytes < media_rec_bytes(tal.nplanes, at.max_half_width))
        return cudaErrorInvalidValue;
    media_records_kernel<<<(unsigned)((n + SMX_THREADS - 1) / SMX_THREADS), SMX_THREADS, 0, s>>>(
        t, ne, at, tal);
    return cudaGetLastError();
}

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
