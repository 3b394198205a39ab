// The one-pass step of a run with media (fused_media.cuh says what it computes).
#include "fused_media.cuh"

#include <climits>

#include "angular_tally.cuh"
#include "async_copy.cuh"
#include "conv_rows.cuh"
#include "group_bins.cuh"
#include "tiling.cuh"

namespace {

constexpr int FM_THREADS = FM_GROUPS * 32;
// Resident blocks per SM the register budget is cut for (80 registers a
// thread): at 124 registers 4 blocks (16 warps) fitted, and a block walks its
// tile's bins with two barriers per bin, so resident warps are what hides
// them (staging four bins per barrier pair instead would take more shared
// memory and spill).
constexpr int FM_MIN_BLOCKS = 6;

// The spectral tallies' sums (nplanes > 0): each quad of directions' tree
// sum by the bin's parity [2][nmax / 4][32] and the tile's running sums
// [nplanes][32], in double; then the ring, the stage and a box per bin.
__host__ __device__ inline size_t fm_tally_doubles(int nmax, int nplanes)
{
    return nplanes > 0 ? (size_t)(2 * (nmax / 4) + nplanes) * 32 : 0;
}

size_t fm_smem_bytes(int nmax, int ring, int64_t ne, int nplanes)
{
    return fm_tally_doubles(nmax, nplanes) * sizeof(double) +
           (size_t)ring * nmax * 32 * sizeof(float) + (size_t)nmax * 32 * sizeof(float) +
           (size_t)ne * 4 * sizeof(int);
}

int fm_nmax(int64_t nth)
{
    return nth <= 16 ? 16 : nth <= 32 ? 32 : nth <= 48 ? 48 : 64;
}

// SLOTS: spots side by side (A.nslots > 1): each slot's box is visited, and
// each tile walks only the bins its cells hold (group_bins.cuh), as
// fused_step's slots' instance; an instance of its own, so that the one-box
// steps keep their registers.
template <int M, bool SLOTS>
__global__ void __launch_bounds__(FM_THREADS, FM_MIN_BLOCKS) fused_media_kernel(fused_media_args A)
{
    constexpr int NMAX = M * FM_GROUPS;
    extern __shared__ double fm_smem[];
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
    // The spectral tallies (nq planes; 0: taken apart, spectral_tally.cuh):
    // per source bin each quad of a column's directions summed by the thread
    // that holds it, and the tile's running sum of each plane, kept by warp
    // q % FM_GROUPS (its own: no barrier between them).
    const int nq = A.spec.nplanes;
    double *s_quad = fm_smem; // [2][NMAX / 4][32], source bins taken in turn (par)
    double *s_R = s_quad + 2 * (NMAX / 4) * 32; // [nq][32]
    float *s_ring = reinterpret_cast<float *>(
        fm_smem + fm_tally_doubles(NMAX, nq)); // [RR][NMAX][32] convolved sources
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
    for (int i = threadIdx.x; i < (RR + 1) * NMAX * 32; i += blockDim.x)
        s_ring[i] = 0.0f; // the ring and the stage: directions past nth stay zero
    const active_regions rg = *A.reg;
    const box4 F = box_join(rg.occupied, rg.written);
    const tiling tl = tiling_of(F);
    // Spots side by side: the tiles of each slot's box, slot after slot.
    const int64_t ntiles = SLOTS ? A.slot_pref[A.nslots] : tiles_of(tl);
    // With slots, per tile: the extent of its non-zero writes and their bins,
    // in three buffers taken in turn, so that one barrier a tile separates a
    // buffer's atomics, its reads and its reset (each two tiles apart).
    __shared__ int4 s_tbox[3];
    __shared__ int2 s_tbin[3];
    if (SLOTS && threadIdx.x < 3) {
        s_tbox[threadIdx.x] = int4{ INT_MAX, -1, INT_MAX, -1 };
        s_tbin[threadIdx.x] = group_bins_none();
    }
    const int src_lo = rg.src_lo, src_hi = rg.src_hi;
    // Targets to write: those receiving weight now and those the output buffer
    // still holds; every other bin of it is zero.
    const int wlo = max(0, min(rg.tgt_lo, rg.wtgt_lo)),
              whi = min(ne - 1, max(rg.tgt_hi, rg.wtgt_hi));
    __syncthreads();

    const int col = threadIdx.x & 31, g = threadIdx.x >> 5, j0 = g * M;
    const bool use_thr = A.threshold > 0.0f, circular = at.circular != 0;
    theta_tally tal; // written with the other fields below (its write() assumes SMX_THREADS blocks)
    double dep_sum = 0.0;
    media_tally etl;
    double lw = 0.0, le = 0.0, wout = 0.0, eout = 0.0;
    // This step's moves, for the column groups' bins (the same on every lane).
    const move_span span = SLOTS ? warp_move_span(s_move[0], s_move[1], nth) : move_span{};

    int it = 0; // the block's tiles so far (the buffers' turn)
    int par = 0; // the quads' buffer of the next source bin
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x, it = it == 2 ? 0 : it + 1) {
        int cz = 0, cx = 0, slot = 0;
        box4 Fi = F; // the box the tile lies in: F, or with slots its slot's
        bool live;
        if (!SLOTS) {
            live = tile_cell(F, tl, (int)tile, col, cz, cx);
        } else {
            slot = slot_of_tile(A.slot_pref, A.nslots, tile);
            Fi = slot_visit(A.slot_boxes, slot);
            live = tile_cell(Fi, tiling_of(Fi), (int)(tile - A.slot_pref[slot]), col, cz, cx);
        }
        // The sources to convolve [p_lo, p_hi] and the targets to write [t_lo,
        // t_hi]: the step's, or with slots the tile's own, the bins its cells
        // hold and as targets theirs (a source s feeds T in s - R .. s) and
        // those its output buffer holds where it writes. Bins absent from a
        // cell's group are zero there: skipping them adds the +0 the step
        // would have added (the same bits).
        int p_lo = src_lo, p_hi = src_hi, t_lo = wlo, t_hi = whi;
        if constexpr (SLOTS) {
            const int4 gbr = tile_group_bins(A.gbins, n, nz, live, cz, cx, span);
            p_lo = max(src_lo, gbr.x), p_hi = min(src_hi, gbr.y);
            int a = gbr.z, b = gbr.w;
            if (p_lo <= p_hi)
                a = min(a, p_lo - R), b = max(b, p_hi);
            t_lo = max(wlo, a), t_hi = min(whi, b);
        }
        const int q_lo = p_lo <= p_hi ? min(t_lo, p_lo) : t_lo;
        const int q_hi = p_lo <= p_hi ? max(t_hi + R, p_hi) : t_hi + R;
        int4 te{ INT_MAX, -1, INT_MAX, -1 }; // this lane's extent of non-zero writes
        int2 tb = group_bins_none(); // ... and their bins
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
                if (sz < Fi.z0 || sz > Fi.z1 || sx < Fi.x0 || sx > Fi.x1 || sx < xs_lo ||
                    sx >= xs_hi)
                    own_zero |= 1u << mm;
            }
        double D[M];
#pragma unroll
        for (int mm = 0; mm < M; mm++)
            D[mm] = 0.0;
        const unsigned char *low = em.lower + (int64_t)m * ne;
        const double *coef =
            nq > 0 ? A.spec.coef + (A.spec.n_media > 1 ? m : 0) * (int64_t)ne : nullptr;
        const int64_t coef_plane = (int64_t)A.spec.n_media * ne;
        for (int qq = g; qq < nq; qq += FM_GROUPS)
            s_R[qq * 32 + col] = 0.0;
        // Source bin sq's values of this thread's directions into the stage
        // (zeros where the lane has no cell), in flight while the block forms
        // the targets before it: the load's latency was the kernel's largest
        // stall when each bin was read as it was staged.
        auto issue = [&](int sq) {
            const float *p = in + (int64_t)sq * estride + (int64_t)j0 * slice + c;
#pragma unroll
            for (int mm = 0; mm < M; mm++)
                if (j0 + mm < nth)
                    cp_async4(s_in + (j0 + mm) * 32 + col, p + (int64_t)mm * slice, live);
            cp_async_commit();
        };
        if (p_lo <= p_hi)
            issue(p_lo);

        for (int q = q_lo; q <= q_hi; q++) {
            if (q >= p_lo && q <= p_hi) {
                // Source bin q: staged (thresholded, the theta tallies), convolved
                // with the kernel of the lane's medium, deposited, kept in the ring.
                const int k = live ? at.kernel_of_energy[(int64_t)m * at.media_stride + q] : 0;
                const double *bf = at.boundary_frac + (int64_t)k * nth;
                column_input ci;
                cp_async_wait<0>(); // this thread's own copies: no barrier needed to read them
                float raw[M]; // the step's values, before the threshold (the tallies' input)
#pragma unroll
                for (int mm = 0; mm < M; mm++) {
                    const int j = j0 + mm;
                    raw[mm] = 0.0f;
                    if (j >= nth)
                        continue;
                    float *sv = s_in + j * 32 + col;
                    raw[mm] = *sv;
                    *sv = ci.take(raw[mm], j, use_thr, A.threshold, bf, !circular);
                }
                // Each quad's pairwise tree: a subtree of its chunk's (direction_chunks.h).
                if (nq > 0)
#pragma unroll
                    for (int k = 0; k < M / 4; k++)
                        s_quad[(par * (NMAX / 4) + j0 / 4 + k) * 32 + col] =
                            ((double)raw[4 * k] + (double)raw[4 * k + 1]) +
                            ((double)raw[4 * k + 2] + (double)raw[4 * k + 3]);
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
                if (q < p_hi)
                    issue(q + 1);
                if (g < nq && live) {
                    // The cell's weight in bin q over its directions (the chunks
                    // of 4 or 8 ascending, as the CPU), into each plane's running
                    // sum by one fma (bins ascending; a zero coefficient adds
                    // nothing, as on the CPU). After the stage's second barrier,
                    // beside the targets' work: the quads' buffer `par` is next
                    // written for the block's source bin after next, past the
                    // next source bin's barriers (in this tile or the next).
                    const double *qs = s_quad + par * (NMAX / 4 * 32) + col;
                    double W;
                    if (nth <= 16) {
                        W = qs[0];
                        for (int k = 1; 4 * k < nth; k++)
                            W += qs[k * 32];
                    } else {
                        W = qs[0] + qs[32];
                        for (int k = 1; 8 * k < nth; k++)
                            W += qs[2 * k * 32] + qs[(2 * k + 1) * 32];
                    }
                    for (int qq = g; qq < nq; qq += FM_GROUPS) {
                        const double kq = __ldg(coef + qq * coef_plane + q);
                        if (kq != 0.0)
                            s_R[qq * 32 + col] = __fma_rn(kq, W, s_R[qq * 32 + col]);
                    }
                }
                par ^= 1;
            }
            const int T = q - R; // complete: its sources T .. T + R are convolved
            if (T < t_lo || T > t_hi)
                continue;
            const int64_t row = (int64_t)m * ne + T;
            const double ET = __ldg(em.E + T);
            double kept = 0.0, leaked = 0.0;
            int zlo = INT_MAX, zhi = -1, xlo = INT_MAX, xhi = -1;
            float *pt = out + (int64_t)T * estride;
            float tv[M];
            if (live) {
                // Source src in T .. T + R sits in ring slot (T mod RR) + (src - T),
                // less RR past the ring's end: one modulo per target.
                const int t_slot = T % RR;
                media_gather_dirs<M>(em, row, low, p_lo, p_hi, tv, [&](int src) {
                    int r = t_slot + (src - T);
                    r -= r >= RR ? RR : 0;
                    return s_ring + (size_t)r * NMAX * 32 + j0 * 32 + col;
                });
            }
#pragma unroll
            for (int mm = 0; mm < M; mm++) {
                const int j = j0 + mm;
                if (j >= nth || !live)
                    continue;
                const float v = tv[mm];
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
                te = int4{ min(te.x, zlo), max(te.y, zhi), min(te.z, xlo), max(te.w, xhi) };
                tb = int2{ min(tb.x, T), T };
            }
        }
        if constexpr (SLOTS) {
            // The tile's extent joins its slot's measured box, and its bins
            // every column group its moves reach (uniform branch). Buffer it
            // was last read two tiles ago, before the last tile's barrier; the
            // one reset here was read before it too, and is next written after
            // this tile's barrier.
            te = int4{ warp_min(te.x), warp_max(te.y), warp_min(te.z), warp_max(te.w) };
            tb = int2{ warp_min(tb.x), warp_max(tb.y) };
            if (col == 0 && te.y >= 0) {
                atomicMin(&s_tbox[it].x, te.x);
                atomicMax(&s_tbox[it].y, te.y);
                atomicMin(&s_tbox[it].z, te.z);
                atomicMax(&s_tbox[it].w, te.w);
                atomicMin(&s_tbin[it].x, tb.x);
                atomicMax(&s_tbin[it].y, tb.y);
            }
            if (threadIdx.x == 0) {
                const int nx = it == 2 ? 0 : it + 1;
                s_tbox[nx] = int4{ INT_MAX, -1, INT_MAX, -1 };
                s_tbin[nx] = group_bins_none();
            }
            __syncthreads();
            const int2 wb = s_tbin[it];
            if (g == 0 && wb.y >= 0)
                join_group_bins(A.gbins, n, nz, live, cz, cx, span, wb.x, wb.y);
            const int4 e = s_tbox[it];
            if (threadIdx.x == 0 && e.y >= 0) {
                box4 *nb = &A.slot_boxes[SB_NEXT * FUSED_SLOTS + slot];
                atomicMin(&nb->z0, e.x);
                atomicMax(&nb->z1, e.y);
                atomicMin(&nb->x0, e.z);
                atomicMax(&nb->x1, e.w);
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
        if (live) // each warp its planes' sums (its own, complete)
            for (int qq = g; qq < nq; qq += FM_GROUPS)
                A.spec_dose[(int64_t)(1 + qq) * slice + c] += s_R[qq * 32 + col];
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

template <int M, bool SLOTS>
cudaError_t launch_as(const fused_media_args &a, cudaStream_t s)
{
    const size_t smem = fm_smem_bytes(M * FM_GROUPS, a.reach + 1, a.d.ne, a.spec.nplanes);
    cudaError_t e = cudaFuncSetAttribute(fused_media_kernel<M, SLOTS>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    fused_media_kernel<M, SLOTS><<<a.blocks * FM_SLOTS, FM_THREADS, smem, s>>>(a);
    return cudaGetLastError();
}

template <int M>
cudaError_t launch(const fused_media_args &a, cudaStream_t s)
{
    return a.nslots > 1 ? launch_as<M, true>(a, s) : launch_as<M, false>(a, s);
}

} // namespace

int fused_media_supported(int64_t nth, int64_t ne, int reach_bins, int nplanes, size_t smem_optin)
{
    if (nth > FM_MAX_NTH || reach_bins < 0 || reach_bins + 1 > FM_MAX_RING ||
        nth * (int64_t)2 >= INT_MAX)
        return 0;
    return nplanes <= SPECTRAL_PLANES_MAX &&
           fm_smem_bytes(fm_nmax(nth), reach_bins + 1, ne, nplanes) + 1024 <= smem_optin;
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
