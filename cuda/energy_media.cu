#include "energy_media.cuh"

namespace {

// energy_dither_low of src/physics/lut_energy.c, with the same operations
// (explicit roundings: nothing contracted into an fma).
#define DITHER_PHASE 0.6180339887498949

__device__ inline int dither_low(double p_low, int64_t step)
{
    const double a = __dadd_rn(__dmul_rn((double)(step + 1), p_low), DITHER_PHASE);
    const double b = __dadd_rn(__dmul_rn((double)step, p_low), DITHER_PHASE);
    return floor(a) - floor(b) >= 1.0;
}

__global__ void media_choose_kernel(energy_media_dev t, int64_t n, const int64_t *step_p, const int *stop)
{
    if (*stop)
        return;
    const int64_t step = *step_p;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        t.lower[i] = (unsigned char)dither_low(t.p_low[i], step);
}

__global__ void media_deposit_kernel(const float *__restrict__ psi, float *__restrict__ dmap, dev_dims d,
                                     energy_media_dev t, const int *stop,
                                     double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    double dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0, w_nuc = 0.0, e_nuc = 0.0, e_round = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < d.slice; c += stride) {
        const int64_t m = t.medium[c];
        const double *dm = t.deposit_mean + m * ne;
        const unsigned char *low = t.lower + m * ne;
        for (int64_t j = 0; j < d.nth; j++) {
            double D = 0.0;
            for (int64_t ie = 0; ie < ne; ie++) {
                const float v = psi[(ie * d.nth + j) * d.slice + c];
                D = __fma_rn(dm[ie], (double)v, D);
                const int64_t k = (m * 2 + (low[ie] ? 0 : 1)) * ne + ie;
                if (t.target[k] < 0) {
                    w_stop += v;
                    e_stop += (double)v * t.E[ie];
                } else {
                    w_nuc += (double)v * t.nuc_w[k];
                    e_nuc += (double)v * t.nuc_e[k];
                }
                e_round += (double)v * (t.deposit[k] - dm[ie]);
            }
            dmap[j * d.slice + c] = (float)D;
            dep_sum += D;
        }
    }
    const double v[6] = {dep_sum, w_stop, e_stop, w_nuc, e_nuc, e_round};
    const int fields[6] = {TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED,
                           TF_W_NUCLEAR, TF_E_NUCLEAR, TF_E_MEDIUM_ROUNDING};
    __shared__ double scratch[SMX_WARPS];
    for (int k = 0; k < 6; k++) {
        double s = block_sum(v[k], scratch);
        if (threadIdx.x == 0)
            partials[(int64_t)fields[k] * blocks + blockIdx.x] = s;
    }
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
        const energy_candidates_dev *gm = t.gather + m * ne;
        const unsigned char *low = t.lower + m * ne;
        float *p = psi + c; // (th, z, x) column; energy stride nth * slice
        for (int64_t j = 0; j < ne; j++) {
            const energy_candidates_dev e = gm[j];
            float v = 0.0f;
            bool first = true;
            for (int k = 0; k < e.count; k++) {
                if ((low[e.src[k]] ? 0 : 1) != e.upper[k])
                    continue; // the other table's term
                const float s = p[e.src[k] * estride];
                v = first ? __fmul_rn(e.coeff[k], s) : __fmaf_rn(e.coeff[k], s, v);
                first = false;
            }
            p[j * estride] = v;
        }
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
        const unsigned char *low = t.lower + m * ne;
        float *p = psi + c;
        for (int64_t s = 0; s < ne; s++) {
            const float v = p[s * estride];
            p[s * estride] = 0.0f;
            const int64_t k = (m * 2 + (low[s] ? 0 : 1)) * ne + s;
            const int tg = t.target[k];
            if (tg < 0)
                continue;
            const float4 c4 = t.coeff[k];
            const float cf[3] = {c4.x, c4.y, c4.z};
#pragma unroll
            for (int q = 0; q < 3; q++)
                if (cf[q] != 0.0f)
                    p[(tg - 1 + q) * estride] = __fmaf_rn(cf[q], v, p[(tg - 1 + q) * estride]);
        }
    }
}

} // namespace

cudaError_t energy_media_choose(energy_media_dev t, int64_t ne, const int64_t *step, const int *stop,
                                cudaStream_t s)
{
    const int64_t n = (int64_t)t.n_media * ne;
    media_choose_kernel<<<(unsigned)((n + SMX_THREADS - 1) / SMX_THREADS), SMX_THREADS, 0, s>>>(t, n, step, stop);
    return cudaGetLastError();
}

cudaError_t energy_media_deposit(const float *psi, float *dmap, dev_dims d, energy_media_dev t, const int *stop,
                                 double *partials, int blocks, cudaStream_t s)
{
    media_deposit_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, dmap, d, t, stop, partials, blocks);
    return cudaGetLastError();
}

cudaError_t energy_media_move(int gather, float *psi, dev_dims d, energy_media_dev t, const int *stop, int blocks,
                              cudaStream_t s)
{
    if (gather)
        media_gather_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d, t, stop);
    else
        media_scatter_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d, t, stop);
    return cudaGetLastError();
}
