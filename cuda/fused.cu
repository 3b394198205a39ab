#include "fused.cuh"

// Threads per block of the fused kernel: its per-thread state is large
// (2 x NMAX accumulators in registers, NMAX inputs in shared memory).
#define FUSED_THREADS 128

template <int NMAX>
__global__ void __launch_bounds__(FUSED_THREADS)
fused_kernel(const float *__restrict__ in, float *__restrict__ out, double *__restrict__ dose,
             dev_dims d, angular_tables_dev at, energy_tables_dev et, float threshold,
             const box4 *__restrict__ box_a, const active_regions *reg, const int *stop,
             double *partials, int blocks)
{
    __shared__ float s_in[NMAX][FUSED_THREADS]; // [theta][thread]: conflict-free
    const int nth = (int)d.nth; // <= NMAX; loops run to NMAX (registers need constant indices)
    __shared__ double scratch[FUSED_THREADS / 32];
    if (*stop)
        return;
    const int t = threadIdx.x;
    const int64_t estride = (int64_t)nth * d.slice;
    double tb = 0.0, tc = 0.0, eb = 0.0, ec = 0.0, dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0;

    // Columns to visit: where psi_a has weight, plus where psi_b still holds
    // last step's values (they must become zeros).
    const box4 F = box_join(reg->occupied, reg->written);
    const int64_t fw = box_is_empty(F) ? 0 : F.x1 - F.x0 + 1;
    const int64_t ncols = box_is_empty(F) ? 0 : (int64_t)(F.z1 - F.z0 + 1) * fw;
    // Warp-uniform trip count: every lane runs every iteration (the warp vote
    // needs all 32), lanes past the end are inactive but still vote.
    const int64_t step = (int64_t)gridDim.x * FUSED_THREADS;
    for (int64_t base = (int64_t)blockIdx.x * FUSED_THREADS; base < ncols; base += step) {
        const int64_t k = base + t;
        const bool inside = k < ncols;
        const int cz = inside ? F.z0 + (int)(k / fw) : 0, cx = inside ? F.x0 + (int)(k % fw) : 0;
        const int64_t c = (int64_t)cz * d.nx + cx;
        const bool live = inside;
        const float *pin = in + (live ? c : 0);
        float *pout = out + (live ? c : 0);
        double dacc = live ? dose[c] : 0.0;
        float acc0[NMAX], acc1[NMAX];
#pragma unroll
        for (int j = 0; j < NMAX; j++)
            acc0[j] = acc1[j] = 0.0f;
        int64_t T0 = -1;       // target held in acc0 (acc1 holds T0 + 1); -1 = none open
        int64_t next_out = 0;  // every target below this has been written

        for (int64_t s = 0; s < d.ne; s++) {
            // Stage the column of bin s; drop what is below the threshold.
            float vmax = 0.0f;
            double total = 0.0, dropped = 0.0, bnd = 0.0;
            const int kid = at.kernel_of_energy[s];
            const double *bf = at.boundary_frac + (int64_t)kid * nth;
            const box4 bs = box_a[s];
            const bool has = live && cz >= bs.z0 && cz <= bs.z1 && cx >= bs.x0 && cx <= bs.x1;
#pragma unroll
            for (int j = 0; j < NMAX; j++) {
                if (j >= nth)
                    break;
                float v = has ? pin[s * estride + (int64_t)j * d.slice] : 0.0f;
                if (v < threshold) {
                    dropped += v;
                    v = 0.0f;
                }
                s_in[j][t] = v;
                vmax = fmaxf(vmax, v);
                total += v;
                bnd += (double)v * bf[j];
            }
            const double E = et.E[s];
            const double cut = total * (1.0 - at.weight_sum[kid]) + dropped;
            tb += bnd;
            eb += bnd * E;
            tc += cut;
            ec += cut * E;
            const int tg = et.target[s];
            const double dep = et.deposit[s];
            // Nothing in this bin anywhere in the warp: its convolution is zero,
            // the dose gets +0 and the accumulators +0 (no bit changes).
            const bool skip = __all_sync(0xffffffffu, vmax == 0.0f);
            if (tg >= 0) {
                if (T0 < 0) {
                    T0 = tg;
                }
                while (T0 < tg) { // acc0's target is complete: write it
                    if (live) {
                        for (int64_t z = next_out; z < T0; z++)
#pragma unroll
                            for (int j = 0; j < NMAX; j++)
                                if (j < nth)
                                    pout[z * estride + (int64_t)j * d.slice] = 0.0f;
#pragma unroll
                        for (int j = 0; j < NMAX; j++)
                            if (j < nth)
                                pout[T0 * estride + (int64_t)j * d.slice] = acc0[j];
                    }
                    next_out = T0 + 1;
#pragma unroll
                    for (int j = 0; j < NMAX; j++) {
                        acc0[j] = acc1[j];
                        acc1[j] = 0.0f;
                    }
                    T0++;
                }
            }
            if (skip)
                continue;
            const int K = at.half_width[kid];
            const float *w = at.weights + at.offset[kid] + K;
            const float clo = tg >= 0 ? et.c_lo[s] : 0.0f, chi = tg >= 0 ? et.c_hi[s] : 0.0f;
            double wsum = 0.0;
#pragma unroll
            for (int j = 0; j < NMAX; j++) {
                if (j >= nth)
                    break;
                float conv = 0.0f;
                for (int dd = -K; dd <= K; dd++) {
                    int src = j - dd;
                    if (at.circular)
                        src = ((src % nth) + nth) % nth;
                    else if (src < 0 || src >= nth)
                        continue;
                    conv = __fadd_rn(conv, __fmul_rn(__ldg(w + dd), s_in[src][t]));
                }
                dacc = __dadd_rn(dacc, __dmul_rn(dep, (double)conv));
                wsum += conv;
                if (tg >= 0) {
                    acc0[j] = __fadd_rn(acc0[j], __fmul_rn(clo, conv));
                    if (chi != 0.0f)
                        acc1[j] = __fadd_rn(acc1[j], __fmul_rn(chi, conv));
                }
            }
            dep_sum += dep * wsum;
            if (tg < 0) {
                w_stop += wsum;
                e_stop += wsum * E;
            }
        }
        if (live) {
            dose[c] = dacc;
            // Flush the open targets and zero every target nothing reached.
            for (int64_t z = next_out; z < d.ne; z++) {
#pragma unroll
                for (int j = 0; j < NMAX; j++) {
                    if (j >= nth)
                        break;
                    float v = 0.0f;
                    if (z == T0)
                        v = acc0[j];
                    else if (z == T0 + 1)
                        v = acc1[j];
                    pout[z * estride + (int64_t)j * d.slice] = v;
                }
            }
        }
    }
    const double v[7] = {tb, eb, tc, ec, dep_sum, w_stop, e_stop};
    const int f[7] = {TF_W_THETA_BOUNDARY, TF_E_THETA_BOUNDARY, TF_W_THETA_CUTOFF, TF_E_THETA_CUTOFF,
                      TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED};
    for (int k = 0; k < 7; k++) {
        double sv = v[k];
        for (int off = 16; off > 0; off >>= 1)
            sv += __shfl_down_sync(0xffffffffu, sv, off);
        __syncthreads();
        if ((t & 31) == 0)
            scratch[t >> 5] = sv;
        __syncthreads();
        if (t == 0) {
            double bs = 0.0;
            for (int w = 0; w < FUSED_THREADS / 32; w++)
                bs += scratch[w];
            partials[(int64_t)f[k] * blocks + blockIdx.x] = bs;
        }
    }
}

int fused_theta_energy_supported(int64_t nth) { return nth >= 1 && nth <= 64; }

cudaError_t fused_theta_energy(const float *in, float *out, double *dose, dev_dims d,
                               angular_tables_dev at, energy_tables_dev et, float threshold,
                               const box4 *box_a, const active_regions *reg, const int *stop,
                               double *partials, int blocks, cudaStream_t s)
{
#define FUSED_LAUNCH(N)                                                                      \
    fused_kernel<N><<<blocks, FUSED_THREADS, 0, s>>>(in, out, dose, d, at, et, threshold, box_a, \
                                                     reg, stop, partials, blocks)
    if (d.nth <= 16)
        FUSED_LAUNCH(16);
    else if (d.nth <= 32)
        FUSED_LAUNCH(32);
    else if (d.nth <= 48)
        FUSED_LAUNCH(48);
    else if (d.nth <= 64)
        FUSED_LAUNCH(64);
    else
        return cudaErrorInvalidValue;
#undef FUSED_LAUNCH
    return cudaGetLastError();
}
