// The one-pass step of a run with media (fused_media.cuh says what it computes).
#include "fused_media.cuh"

#include <climits>

#include "angular_tally.cuh"
#include "conv_rows.cuh"
#include "tiling.cuh"

namespace {

constexpr int FM_THREADS = FM_GROUPS * 32;
// Resident blocks per SM the register budget is cut for (80 registers a
// thread): at 124 registers 4 blocks (16 warps) fitted, and a block walks its
// tile's bins with two barriers per bin, so resident warps are what hides
// them (staging four bins per barrier pair instead would take more shared
// memory and spill).
constexpr int FM_MIN_BLOCKS = 6;

size_t fm_smem_bytes(int nmax, int ring, int64_t ne)
{
    return (size_t)ring * nmax * 32 * sizeof(float) + (size_t)nmax * 32 * sizeof(float) +
           (size_t)ne * 4 * sizeof(int);
}

int fm_nmax(int64_t nth)
{
    return nth <= 16 ? 16 : nth <= 32 ? 32 : nth <= 48 ? 48 : 64;
}

template <int M>
__global__ void __launch_bounds__(FM_THREADS, FM_MIN_BLOCKS) fused_media_kernel(fused_media_args A)
{
    constexpr int NMAX = M * FM_GROUPS;
    extern __shared__ float fm_smem[];
    __shared__ int s_move[2][NMAX];
    __shared__ int s_stop;
    if (threadIdx.x == 0)
        s_stop = *(volatile const int *)A.stop;
    __syncthreads();
    if (s_stop)
        return; // uniform: a stopped step writes nothing
    const dev_dims d = A.d;
    const angular_tables_dev &at = A.at;
    const energy_media_dev &em = A.em;
    const int nth = (int)d.nth, ne = (int)d.ne, nz = (int)d.nz, px = (int)d.px;
    const int64_t slice = d.slice, estride = (int64_t)nth * slice;
    const int R = A.reach, RR = R + 1;
    float *s_ring = fm_smem; // [RR][NMAX][32] convolved sources
    float *s_in = s_ring + (size_t)RR * NMAX * 32; // [NMAX][32] the staged source bin
    int *sbox =
        reinterpret_cast<int *>(s_in + (size_t)NMAX * 32); // [ne][4] this block's output extents
    const int64_t n = *A.step;
    const float *in = (n & 1) ? A.psi1 : A.psi0;
    float *out = (n & 1) ? A.psi0 : A.psi1;
    for (int j = threadIdx.x; j < nth; j += blockDim.x) {
        s_move[0][j] = (int)stream_shift_of(A.st.sz[j], n);
        s_move[1][j] = (int)stream_shift_of(A.st.sx[j], n);
    }
    for (int k = threadIdx.x; k < ne; k += blockDim.x) {
        sbox[4 * k + 0] = INT_MAX;
        sbox[4 * k + 1] = -1;
        sbox[4 * k + 2] = INT_MAX;
        sbox[4 * k + 3] = -1;
    }
    for (int i = threadIdx.x; i < NMAX * 32; i += blockDim.x)
        s_in[i] = 0.0f; // directions past nth stay zero
    const active_regions rg = *A.reg;
    const box4 F = box_join(rg.occupied, rg.written);
    const tiling tl = tiling_of(F);
    const int64_t ntiles = tiles_of(tl);
    const int src_lo = rg.src_lo, src_hi = rg.src_hi;
    // Targets to write: those receiving weight now and those the output buffer
    // still holds; every other bin of it is zero.
    const int wlo = max(0, min(rg.tgt_lo, rg.wtgt_lo)),
              whi = min(ne - 1, max(rg.tgt_hi, rg.wtgt_hi));
    const int qlo = src_lo <= src_hi ? min(wlo, src_lo) : wlo;
    const int qhi = src_lo <= src_hi ? max(whi + R, src_hi) : whi + R;
    __syncthreads();

    const int col = threadIdx.x & 31, g = threadIdx.x >> 5, j0 = g * M;
    const bool use_thr = A.threshold > 0.0f, circular = at.circular != 0;
    theta_tally tal; // written with the other fields below (its write() assumes SMX_THREADS blocks)
    double dep_sum = 0.0;
    media_tally etl;
    double lw = 0.0, le = 0.0, wout = 0.0, eout = 0.0;

    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        int cz = 0, cx = 0;
        const bool live = tile_cell(F, tl, (int)tile, col, cz, cx);
        const int64_t c = (int64_t)cz * px + cx;
        const int m = live ? em.medium[c] : 0;
        // Which of this thread's directions land inside the domain, and which
        // own cells no visited column reaches (this column clears them).
        unsigned in_dom = 0u, own_zero = 0u;
        const int xs_lo = slot_lo(d, cx), xs_hi = xs_lo + (int)slot_w(d); // the column's slot
        if (live)
#pragma unroll
            for (int mm = 0; mm < M; mm++) {
                const int j = j0 + mm;
                if (j >= nth)
                    continue;
                const int tz = cz + s_move[0][j], tx = cx + s_move[1][j];
                if (tz >= 0 && tz < nz && tx >= xs_lo && tx < xs_hi)
                    in_dom |= 1u << mm;
                const int sz = cz - s_move[0][j], sx = cx - s_move[1][j];
                if (sz < F.z0 || sz > F.z1 || sx < F.x0 || sx > F.x1 || sx < xs_lo || sx >= xs_hi)
                    own_zero |= 1u << mm;
            }
        double D[M];
#pragma unroll
        for (int mm = 0; mm < M; mm++)
            D[mm] = 0.0;
        const unsigned char *low = em.lower + (int64_t)m * ne;

        for (int q = qlo; q <= qhi; q++) {
            if (q >= src_lo && q <= src_hi) {
                // Source bin q: staged (thresholded, the theta tallies), convolved
                // with the kernel of the lane's medium, deposited, kept in the ring.
                const int k = live ? at.kernel_of_energy[(int64_t)m * at.media_stride + q] : 0;
                const double *bf = at.boundary_frac + (int64_t)k * nth;
                column_input ci;
#pragma unroll
                for (int mm = 0; mm < M; mm++) {
                    const int j = j0 + mm;
                    if (j >= nth)
                        continue;
                    float v =
                        live ? __ldg(in + (int64_t)q * estride + (int64_t)j * slice + c) : 0.0f;
                    v = ci.take(v, j, use_thr, A.threshold, bf, !circular);
                    s_in[j * 32 + col] = v;
                }
                const double Eq = __ldg(em.E + q);
                if (live)
                    tal.add(ci, at.weight_sum[k], Eq);
                __syncthreads(); // the bin's stage is complete
                float acc[M];
                const int K = at.half_width[k];
                const float *w = at.weights + at.offset[k] + K;
                conv_rows<M>(
                    j0, nth, K, w, circular, [&](int src) { return s_in[src * 32 + col]; }, acc);
                const int64_t mq = (int64_t)m * ne + q;
                const double dm = em.deposit_mean[mq];
                const int64_t kk = media_table(em, ne, m, q);
                float *ring = s_ring + (size_t)(q % RR) * NMAX * 32 + col;
                double vs = 0.0;
#pragma unroll
                for (int mm = 0; mm < M; mm++) {
                    const int j = j0 + mm;
                    if (j >= nth)
                        continue;
                    ring[j * 32] = acc[mm]; // read back by this thread only
                    D[mm] = __fma_rn(dm, (double)acc[mm], D[mm]);
                    vs += acc[mm];
                }
                if (vs != 0.0)
                    etl.add(em, kk, dm, vs, Eq);
                __syncthreads(); // the stage is free for the next bin
            }
            const int T = q - R; // complete: its sources T .. T + R are convolved
            if (T < wlo || T > whi)
                continue;
            const int64_t row = (int64_t)m * ne + T;
            const double ET = __ldg(em.E + T);
            double kept = 0.0, leaked = 0.0;
            int zlo = INT_MAX, zhi = -1, xlo = INT_MAX, xhi = -1;
            float *pt = out + (int64_t)T * estride;
#pragma unroll
            for (int mm = 0; mm < M; mm++) {
                const int j = j0 + mm;
                if (j >= nth || !live)
                    continue;
                const float v = media_gather(em, row, low, src_lo, src_hi, [&](int src) {
                    return s_ring[(size_t)(src % RR) * NMAX * 32 + j * 32 + col];
                });
                const int tz = cz + s_move[0][j], tx = cx + s_move[1][j];
                if (in_dom & (1u << mm)) {
                    pt[(int64_t)j * slice + (int64_t)tz * px + tx] = v;
                    kept += v;
                    if (v != 0.0f) {
                        zlo = min(zlo, tz), zhi = max(zhi, tz);
                        xlo = min(xlo, tx), xhi = max(xhi, tx);
                    }
                } else {
                    leaked += v;
                }
                if (own_zero & (1u << mm))
                    pt[(int64_t)j * slice + c] = 0.0f;
            }
            wout += kept;
            eout += kept * ET;
            lw += leaked;
            le += leaked * ET;
            if (zhi >= 0) {
                atomicMin(&sbox[4 * T + 0], zlo);
                atomicMax(&sbox[4 * T + 1], zhi);
                atomicMin(&sbox[4 * T + 2], xlo);
                atomicMax(&sbox[4 * T + 3], xhi);
            }
        }
        if (live)
#pragma unroll
            for (int mm = 0; mm < M; mm++) {
                const int j = j0 + mm;
                if (j >= nth)
                    continue;
                A.dmap[(int64_t)j * slice + c] = (float)D[mm];
                dep_sum += D[mm];
            }
    }

    const double v[14] = { tal.wb,     tal.wc,     tal.eb,    tal.ec,    dep_sum,
                           etl.w_stop, etl.e_stop, etl.w_nuc, etl.e_nuc, etl.e_round,
                           lw,         le,         wout,      eout };
    const int f[14] = { TF_W_THETA_BOUNDARY,
                        TF_W_THETA_CUTOFF,
                        TF_E_THETA_BOUNDARY,
                        TF_E_THETA_CUTOFF,
                        TF_DEPOSITED,
                        TF_W_ENERGY_STOPPED,
                        TF_E_ENERGY_STOPPED,
                        TF_W_NUCLEAR,
                        TF_E_NUCLEAR,
                        TF_E_MEDIUM_ROUNDING,
                        TF_W_SPATIAL_LEAK,
                        TF_E_SPATIAL_LEAK,
                        TF_W_OUT,
                        TF_E_OUT };
    // FM_SLOTS blocks per partials slot: slot b / blocks, its block b % blocks
    // (the finish sums every slot).
    double *P = A.partials + (int64_t)(blockIdx.x / A.blocks) * (TF_COUNT - 1) * A.blocks;
    block_partials_at<14, FM_GROUPS>(v, f, P, A.blocks);
    __syncthreads();
    for (int k = threadIdx.x; k < ne; k += blockDim.x) {
        if (sbox[4 * k + 1] < 0)
            continue;
        atomicMin(&A.box_next[k].z0, sbox[4 * k + 0]);
        atomicMax(&A.box_next[k].z1, sbox[4 * k + 1]);
        atomicMin(&A.box_next[k].x0, sbox[4 * k + 2]);
        atomicMax(&A.box_next[k].x1, sbox[4 * k + 3]);
    }
}

template <int M>
cudaError_t launch(const fused_media_args &a, cudaStream_t s)
{
    const size_t smem = fm_smem_bytes(M * FM_GROUPS, a.reach + 1, a.d.ne);
    cudaError_t e = cudaFuncSetAttribute(fused_media_kernel<M>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    fused_media_kernel<M><<<a.blocks * FM_SLOTS, FM_THREADS, smem, s>>>(a);
    return cudaGetLastError();
}

} // namespace

int fused_media_supported(int64_t nth, int64_t ne, int reach_bins, size_t smem_optin)
{
    if (nth > FM_MAX_NTH || reach_bins < 0 || reach_bins + 1 > FM_MAX_RING ||
        nth * (int64_t)2 >= INT_MAX)
        return 0;
    return fm_smem_bytes(fm_nmax(nth), reach_bins + 1, ne) + 1024 <= smem_optin;
}

cudaError_t fused_media_step(const fused_media_args &a, cudaStream_t s)
{
    switch (fm_nmax(a.d.nth)) {
    case 16:
        return launch<4>(a, s);
    case 32:
        return launch<8>(a, s);
    case 48:
        return launch<12>(a, s);
    default:
        return launch<16>(a, s);
    }
}
