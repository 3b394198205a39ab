#include "energy.cuh"

// The first half of src/numerics/deposit_path.h: per cell and direction, the
// deposit chain over the bins in ascending order, stored as float in dmap.
// One thread per cell walks its directions; the tallies sum in any order.
__global__ void energy_deposit_kernel(const float *__restrict__ psi, float *__restrict__ dmap,
                                      dev_dims d, energy_tables_dev t, const int *stop,
                                      double *partials, int blocks)
{
    if (*stop)
        return;
    double dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0, w_nuc = 0.0, e_nuc = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < d.slice; c += stride) {
        for (int64_t j = 0; j < d.nth; j++) {
            double D = 0.0;
            for (int64_t ie = 0; ie < d.ne; ie++) {
                const float v = psi[(ie * d.nth + j) * d.slice + c];
                D = __fma_rn(t.deposit[ie], (double)v, D);
                if (t.target[ie] < 0) {
                    w_stop += v;
                    e_stop += (double)v * t.E[ie];
                } else {
                    w_nuc += (double)v * t.nuc_w[ie];
                    e_nuc += (double)v * t.nuc_e[ie];
                }
            }
            dmap[j * d.slice + c] = (float)D;
            dep_sum += D;
        }
    }
    const double v[5] = { dep_sum, w_stop, e_stop, w_nuc, e_nuc };
    const int fields[5] = { TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED, TF_W_NUCLEAR,
                            TF_E_NUCLEAR };
    __shared__ double scratch[SMX_WARPS];
    for (int k = 0; k < 5; k++) {
        double s = block_sum(v[k], scratch);
        if (threadIdx.x == 0)
            partials[(int64_t)fields[k] * blocks + blockIdx.x] = s;
    }
}

__global__ void energy_gather_kernel(float *psi, dev_dims d, energy_tables_dev t, const int *stop)
{
    if (*stop)
        return;
    const int64_t cols = d.nth * d.slice, estride = d.nth * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
        float *p = psi + c; // (th, z, x) column; energy stride nth * slice
        for (int64_t j = 0; j < d.ne; j++) {
            const energy_gather_dev e = t.gather[j];
            float v = 0.0f;
            if (e.count > 0)
                v = __fmul_rn(e.coeff[0], p[e.src[0] * estride]);
            for (int k = 1; k < e.count; k++)
                v = __fmaf_rn(e.coeff[k], p[e.src[k] * estride], v);
            p[j * estride] = v;
        }
    }
}

__global__ void energy_scatter_kernel(float *psi, dev_dims d, energy_tables_dev t, const int *stop)
{
    if (*stop)
        return;
    const int64_t cols = d.nth * d.slice, estride = d.nth * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
        float *p = psi + c;
        for (int64_t s = 0; s < d.ne; s++) {
            const float v = p[s * estride];
            p[s * estride] = 0.0f;
            const int tg = t.target[s];
            if (tg < 0)
                continue;
            const float4 c4 = t.coeff[s];
            const float c[3] = { c4.x, c4.y, c4.z };
#pragma unroll
            for (int k = 0; k < 3; k++) // zero outside the grid (lut_energy.h)
                if (c[k] != 0.0f)
                    p[(tg - 1 + k) * estride] = __fmaf_rn(c[k], v, p[(tg - 1 + k) * estride]);
        }
    }
}

cudaError_t energy_deposit(const energy_args &a, cudaStream_t s)
{
    energy_deposit_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.dmap, a.d, a.t, a.stop,
                                                           a.partials, a.blocks);
    return cudaGetLastError();
}

cudaError_t energy_move(int gather, const energy_args &a, cudaStream_t s)
{
    if (gather)
        energy_gather_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, a.t, a.stop);
    else
        energy_scatter_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, a.t, a.stop);
    return cudaGetLastError();
}
