#include "fused.cuh"

// A block is 32 columns (consecutive x: coalesced loads and stores) times G
// threads per column, each owning the directions th = g, g + G, ... of its
// column. The bin being processed is staged in shared memory, so each thread
// convolves its own directions; per bin there are two barriers.
#define FUSED_COLS 32
#define FUSED_G 4
#define FUSED_THREADS (FUSED_COLS * FUSED_G)

template <int NMAX>
__global__ void __launch_bounds__(FUSED_THREADS)
fused_kernel(const float *__restrict__ in, float *__restrict__ out, double *__restrict__ dose,
             dev_dims d, angular_tables_dev at, energy_tables_dev et, float threshold,
             const box4 *__restrict__ box_a, const active_regions *reg, const int *stop,
             double *partials, int blocks)
{
    constexpr int M = (NMAX + FUSED_G - 1) / FUSED_G; // directions per thread
    __shared__ float s_in[NMAX][FUSED_COLS];
    __shared__ float s_conv[2][NMAX][FUSED_COLS]; // alternating: deposit of one bin overlaps the next
    __shared__ double scratch[FUSED_THREADS / 32];
    if (*stop)
        return;
    const int col = threadIdx.x % FUSED_COLS, g = threadIdx.x / FUSED_COLS;
    const int nth = (int)d.nth;
    const int64_t estride = (int64_t)nth * d.slice;
    double tb = 0.0, tc = 0.0, eb = 0.0, ec = 0.0, dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0;

    // Columns to visit: where psi_a has weight, plus where psi_b still holds
    // last step's values (they must become zeros).
    const box4 F = box_join(reg->occupied, reg->written);
    const int64_t fw = box_is_empty(F) ? 0 : F.x1 - F.x0 + 1;
    const int64_t ncols = box_is_empty(F) ? 0 : (int64_t)(F.z1 - F.z0 + 1) * fw;
    for (int64_t base = (int64_t)blockIdx.x * FUSED_COLS; base < ncols;
         base += (int64_t)gridDim.x * FUSED_COLS) {
        const int64_t k = base + col;
        const bool live = k < ncols;
        const int cz = live ? F.z0 + (int)(k / fw) : 0, cx = live ? F.x0 + (int)(k % fw) : 0;
        const int64_t c = (int64_t)cz * d.nx + cx;
        const float *pin = in + c;
        float *pout = out + c;
        double dacc = (live && g == 0) ? dose[c] : 0.0;
        float acc0[M], acc1[M];
#pragma unroll
        for (int m = 0; m < M; m++)
            acc0[m] = acc1[m] = 0.0f;
        int64_t T0 = -1; // target held in acc0 (acc1 holds T0 + 1); block-uniform
        // Target bins to write: those receiving weight now and those psi_b
        // still holds from the last step; every other bin of psi_b is zero.
        const int wlo = min(reg->tgt_lo, reg->wtgt_lo), whi = max(reg->tgt_hi, reg->wtgt_hi);
        int64_t next_out = wlo; // every target below this is written or known zero

        // Software pipelining: bin s + 1 is loaded into registers while bin s is
        // convolved and deposited, so its memory latency is hidden.
        float cur[M];
        auto fetch = [&](int64_t sb, float (&v)[M]) {
            const box4 b = box_a[sb];
            const bool h = live && cz >= b.z0 && cz <= b.z1 && cx >= b.x0 && cx <= b.x1;
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int j = g + FUSED_G * m;
                v[m] = (h && j < nth) ? __ldg(pin + sb * estride + (int64_t)j * d.slice) : 0.0f;
            }
        };
        if (reg->src_lo <= reg->src_hi)
            fetch(reg->src_lo, cur);
        // The deposit of a bin (by the g == 0 threads, in the CPU's order:
        // theta ascending), done once every group's convolution of it is in
        // s_conv, which the next bin's staging barrier guarantees.
        int64_t pend = -1; // bin whose deposit is still to do, its convolution in s_conv[pbuf]
        int buf = 0, pbuf = 0; // s_conv buffer of the bin being convolved / of pend
        // (alternating per PROCESSED bin: skipped bins must not make two
        // consecutive processed bins share a buffer)
        auto deposit = [&](int64_t sb) {
            const float(*sc)[FUSED_COLS] = s_conv[pbuf];
            const double dep = et.deposit[sb];
            double wsum = 0.0;
            for (int j = 0; j < nth; j++) {
                const float cv = sc[j][col];
                dacc = __dadd_rn(dacc, __dmul_rn(dep, (double)cv));
                wsum += cv;
            }
            if (live) {
                dep_sum += dep * wsum;
                if (et.target[sb] < 0) {
                    w_stop += wsum;
                    e_stop += wsum * et.E[sb];
                }
            }
        };
        for (int64_t s = reg->src_lo; s <= reg->src_hi; s++) {
            const int tg = et.target[s];
            // Target bookkeeping depends on the bin only, so it is uniform.
            if (tg >= 0) {
                if (T0 < 0)
                    T0 = tg;
                while (T0 < tg) { // acc0's target is complete: write it
                    if (live) {
                        for (int64_t zt = next_out; zt < T0; zt++)
#pragma unroll
                            for (int m = 0; m < M; m++) {
                                const int j = g + FUSED_G * m;
                                if (j < nth)
                                    pout[zt * estride + (int64_t)j * d.slice] = 0.0f;
                            }
#pragma unroll
                        for (int m = 0; m < M; m++) {
                            const int j = g + FUSED_G * m;
                            if (j < nth)
                                pout[T0 * estride + (int64_t)j * d.slice] = acc0[m];
                        }
                    }
                    next_out = T0 + 1;
#pragma unroll
                    for (int m = 0; m < M; m++) {
                        acc0[m] = acc1[m];
                        acc1[m] = 0.0f;
                    }
                    T0++;
                }
            }
            const box4 bs = box_a[s];
            const bool has = live && cz >= bs.z0 && cz <= bs.z1 && cx >= bs.x0 && cx <= bs.x1;
            // No column of this tile holds weight in bin s: everything adds +0.
            if (!__syncthreads_or(has)) {
                if (s < reg->src_hi)
                    fetch(s + 1, cur);
                continue;
            }
            const int kid = at.kernel_of_energy[s];
            const double E = et.E[s];
            const double *bf = at.boundary_frac + (int64_t)kid * nth;
            double total = 0.0, dropped = 0.0, bnd = 0.0;
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int j = g + FUSED_G * m;
                if (j < nth) {
                    float v = cur[m];
                    if (v < threshold) {
                        dropped += v;
                        v = 0.0f;
                    }
                    s_in[j][col] = v;
                    total += v;
                    bnd += (double)v * bf[j];
                }
            }
            const double cut = total * (1.0 - at.weight_sum[kid]) + dropped;
            tb += bnd;
            eb += bnd * E;
            tc += cut;
            ec += cut * E;
            if (s < reg->src_hi)
                fetch(s + 1, cur); // in flight during the convolution below
            __syncthreads(); // s_in complete; also every convolution of bin pend
            if (g == 0 && pend >= 0)
                deposit(pend);
            pend = -1;
            const int K = at.half_width[kid];
            const float *w = at.weights + at.offset[kid] + K;
            const float clo = tg >= 0 ? et.c_lo[s] : 0.0f, chi = tg >= 0 ? et.c_hi[s] : 0.0f;
            // Kernel offset outer, this thread's directions inner: M independent
            // sums in flight, each still summed for dd ascending (the CPU's order).
            float conv[M];
#pragma unroll
            for (int m = 0; m < M; m++)
                conv[m] = 0.0f;
            for (int dd = -K; dd <= K; dd++) {
                const float wd = __ldg(w + dd);
#pragma unroll
                for (int m = 0; m < M; m++) {
                    const int j = g + FUSED_G * m;
                    int src = j - dd;
                    if (at.circular)
                        src = src < 0 ? src + nth * ((-src + nth - 1) / nth) : src % nth;
                    const bool ok = j < nth && src >= 0 && src < nth;
                    if (ok)
                        conv[m] = __fadd_rn(conv[m], __fmul_rn(wd, s_in[src][col]));
                }
            }
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int j = g + FUSED_G * m;
                if (j >= nth)
                    continue;
                s_conv[buf][j][col] = conv[m];
                if (tg >= 0) {
                    acc0[m] = __fadd_rn(acc0[m], __fmul_rn(clo, conv[m]));
                    if (chi != 0.0f)
                        acc1[m] = __fadd_rn(acc1[m], __fmul_rn(chi, conv[m]));
                }
            }
            pend = s;
            pbuf = buf;
            buf ^= 1;
        }
        __syncthreads(); // the last bin's convolutions are in s_conv
        if (g == 0 && pend >= 0)
            deposit(pend);
        if (live) {
            if (g == 0)
                dose[c] = dacc;
            // Flush the open targets and zero every other target bin in range.
            for (int64_t zt = next_out; zt <= whi; zt++) {
#pragma unroll
                for (int m = 0; m < M; m++) {
                    const int j = g + FUSED_G * m;
                    if (j >= nth)
                        continue;
                    float v = 0.0f;
                    if (zt == T0)
                        v = acc0[m];
                    else if (zt == T0 + 1)
                        v = acc1[m];
                    pout[zt * estride + (int64_t)j * d.slice] = v;
                }
            }
        }
    }
    const double v[7] = {tb, eb, tc, ec, dep_sum, w_stop, e_stop};
    const int f[7] = {TF_W_THETA_BOUNDARY, TF_E_THETA_BOUNDARY, TF_W_THETA_CUTOFF, TF_E_THETA_CUTOFF,
                      TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED};
    const int t = threadIdx.x;
    for (int q = 0; q < 7; q++) {
        double sv = v[q];
        for (int off = 16; off > 0; off >>= 1)
            sv += __shfl_down_sync(0xffffffffu, sv, off);
        __syncthreads();
        if ((t & 31) == 0)
            scratch[t >> 5] = sv;
        __syncthreads();
        if (t == 0) {
            double bsum = 0.0;
            for (int wv = 0; wv < FUSED_THREADS / 32; wv++)
                bsum += scratch[wv];
            partials[(int64_t)f[q] * blocks + blockIdx.x] = bsum;
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
