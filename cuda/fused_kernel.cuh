// The fused step kernel's body (fused.cuh says what it computes), its
// launcher and the occupancy check that takes the address of its instances,
// for the instance files: each cuda/fused_nmax*.cu includes this and
// instantiates the kernel for one NMAX (fused_instance.cuh), so that the
// instances build in parallel and a change to the dispatch rebuilds none.
// Everything here is in an anonymous namespace: each instance file has its
// own copy of what it instantiates. Its includer includes fused_layout.cuh
// first (the layout and the kernel's arguments): this header does not, so
// that the fused module's own files stay the only way back to fused.cuh
// (scripts/check-layers.sh, rule (c)).
#ifndef SMX_CUDA_FUSED_KERNEL_CUH
#define SMX_CUDA_FUSED_KERNEL_CUH

#include <climits>

#include "async_copy.cuh"
#include "group_bins.cuh"
#include "numerics/direction_chunks.h"
#include "pair_tree.cuh"

namespace {

// A pointer the compiler cannot see through: offsets added to it stay 32-bit
// adds of a 64-bit base (one IMAD.WIDE per access), instead of being folded
// into 64-bit index arithmetic redone for every access (~5 instructions each).
template <typename T>
__device__ __forceinline__ T *opaque(T *p)
{
    asm("" : "+l"(p));
    return p;
}

// Per column of a tile, the facts about this thread's directions that do not
// change from bin to bin: which targets lie in the domain, which own cells no
// visited column reaches, and the extent of the in-domain targets.
struct column_moves {
    unsigned in_domain, own_zero;
    int zlo, zhi, xlo, xhi;
};

// The bounds-checked convolution of a kernel wider than the padded stage, kept
// out of line: the rare path must not shape the register allocation and
// schedule of the hot loop, which it does when inlined.
template <int M>
struct conv_out {
    float v[M];
};

template <int M>
__device__ __noinline__ conv_out<M> conv_wide(const float *stage, int j0, int nth, int K,
                                              const float *w, bool circular)
{
    conv_out<M> o;
    conv_rows(
        j0, nth, K, w, circular, [&](int src) { return stage[src * FUSED_COLS]; }, o.v);
    return o;
}

// The weight this thread's directions scatter past the window's edges, for
// a kernel of half-width K <= FUSED_EDGE (edge: the bin's fused_tables_dev
// edge pair) and nth >= 2 FUSED_EDGE, so that only the first thread of a
// column (j0 = 0) meets the low edge, and the low and high edges are apart.
template <int M, bool EXACT>
__device__ __forceinline__ double edge_loss(const float (&cur)[M], const float4 *edge, int j0,
                                            int nth)
{
    static_assert(M >= FUSED_EDGE && FUSED_EDGE == 4, "one float4 per edge, held by one thread");
    float b = 0.0f;
    if (j0 < FUSED_EDGE) {
        const float4 lo = edge[0];
        b = __fmaf_rn(cur[0], lo.x,
                      __fmaf_rn(cur[1], lo.y, __fmaf_rn(cur[2], lo.z, cur[3] * lo.w)));
    }
    if (j0 + M > nth - FUSED_EDGE) {
        if (EXACT) { // nth = NMAX: the last thread, whose last four directions are the edge
            const float4 hi = edge[1];
            b += __fmaf_rn(
                cur[M - 4], hi.x,
                __fmaf_rn(cur[M - 3], hi.y, __fmaf_rn(cur[M - 2], hi.z, cur[M - 1] * hi.w)));
        } else {
            const float *hi = reinterpret_cast<const float *>(edge + 1) - (nth - FUSED_EDGE);
#pragma unroll
            for (int m = 0; m < M; m++)
                if (j0 + m >= nth - FUSED_EDGE && j0 + m < nth)
                    b = __fmaf_rn(cur[m], hi[j0 + m], b);
        }
    }
    return b;
}

// EXACT: nth == NMAX, so every thread's M directions exist (no guards).
// SPLIT: the instance for steps whose tiles are split (split_groups > 1);
// both instances are launched every step and the other returns at once, so
// that the split's bookkeeping costs the dense step no registers.
// SUB: tiles per block (FUSED_SUB, or 1 for the split instance and where
// FUSED_SUB stage rings do not fit).
// SLOTS: spots side by side, each slot's box visited (A.nslots > 1, single
// pass); an instance of its own, so that the one-box steps (a field's total,
// a pencil, the dense benchmark) keep their registers and per-item work (in
// one instance, the total's steps were 1.4 times longer).
// Bins whose convolved weights the split's last group loads at once when it
// forms the deposit chains: the chain then waits one memory latency per four
// bins, not per bin (over a field's 659 bins that wait was a quarter of its
// total's steps). Eight measured the same and made the 48-direction instance
// spill.
constexpr int SPLIT_LOADS = 4;

// MEDIA: cells of several media (A.em): the same walk, stage ring, split,
// clusters, slots and writes, with what depends on the medium taken per lane
// (fused.cuh, "Media").
template <int NMAX, bool STREAM, bool EXACT, bool SPLIT, int SUB, bool SLOTS = false,
          bool MEDIA = false>
__global__ void __launch_bounds__(FUSED_THREADS(NMAX) * SUB, FUSED_MIN_BLOCKS(NMAX, SPLIT) / SUB)
    fused_kernel(fused_args A)
{
    static_assert(!SLOTS || STREAM, "the slots' boxes are the single pass's");
    static_assert(!MEDIA || (STREAM && !EXACT && SUB == 1),
                  "media: the single pass, any direction count, one tile a block");
    constexpr int M = fused_m(NMAX), G = fused_g(NMAX);
    constexpr int R = FUSED_RING, NT = FUSED_THREADS(NMAX);
    static_assert(FUSED_MIN_BLOCKS(NMAX, SPLIT) % SUB == 0,
                  "the register budget of FUSED_MIN_BLOCKS tiles per SM");
    static_assert(!SPLIT || SUB == 1, "the split's last-group bookkeeping is per block");
    __shared__ int s_move[2][NMAX]; // this step's whole-cell move (z, x) of each direction
    // j * slice + move offset: target of direction j from a cell (16-byte
    // aligned: a thread reads its M offsets as M / 4 vector loads)
    __shared__ __align__(16) int s_toff[NMAX];
    static_assert(FUSED_COLS == 32, "s_wbox and s_full are per warp: one warp per direction chunk");
    __shared__ int4 s_wbox[SUB * G]; // per warp: the extent of its tile's in-domain targets
    // Slots (per_slot): per warp the lowest and highest target bin its tile
    // wrote a non-zero value into (then its s_wbox joins the slot's box, and
    // the bins its cells' groups, group_bins.cuh); per group its tile's slot.
    __shared__ int2 s_wt[SUB * G];
    __shared__ int s_tslot[SUB];
    extern __shared__ float4 dyn_smem[]; // fused_layout
    const fused_layout L = fused_layout_of(
        NMAX, A.kp, A.d.ne, STREAM, SUB,
        fused_extras{ A.ft.n_wide, A.spec.nplanes, SPLIT, A.spec_wsum != nullptr,
                      MEDIA ? A.reach + 1 : 0, MEDIA ? media_stage_bytes(A.em) : 0 });
    // The block's SUB groups of NT threads each walk their own tile, with
    // their own stage ring and barrier (named barrier 1 + sub).
    const unsigned utid =
        SUB == 1 ? threadIdx.x : threadIdx.x % NT; // unsigned: % and / are masks and shifts
    const int sub = SUB == 1 ? 0 : threadIdx.x / NT, tid = (int)utid;
    auto tile_sync = [&]() {
        if constexpr (SUB == 1)
            __syncthreads();
        else
            named_sync(1 + sub, NT);
    };
    char *const smem = reinterpret_cast<char *>(dyn_smem);
    // Ring stages ring0 .. ring0 + R - 1 of the block's SUB * R are this
    // group's (indices, not a per-group base pointer: one register less,
    // which kept the inexact instances from spilling).
    float *s_in = reinterpret_cast<float *>(smem);
    float *s_w = reinterpret_cast<float *>(smem + L.w_off);
    const int ring0 = sub * R;
    int4 *s_step = reinterpret_cast<int4 *>(smem + L.step_off);
    fused_bin *s_bin = reinterpret_cast<fused_bin *>(smem + L.bin_off);
    float4 *s_edge = reinterpret_cast<float4 *>(smem + L.edge_off);
    box4 *s_boxa = reinterpret_cast<box4 *>(smem + L.boxa_off);
    int *sbox = reinterpret_cast<int *>(smem + L.box_off);
    const int *s_bfrow = reinterpret_cast<const int *>(smem + L.bfrow_off);
    const float *s_bfw = reinterpret_cast<const float *>(smem + L.bfw_off);
    const int nfull = (int)((A.d.ne + 31) / 32); // words of s_full
    // The spectral tallies (the unsplit single pass; a split step's run
    // apart, spectral_launch): each thread's chunk sums of a bin by the
    // bin's parity [2][G][cols], the tile's running sums [nq][cols]. Warp g
    // of a group keeps planes g, g + G, ... (its own running sums: no
    // barrier between them); the coefficients [nq][ne] are the block's copy.
    const int nq = STREAM && !SPLIT ? A.spec.nplanes : 0;
    const bool split_sums =
        SPLIT && STREAM && NMAX <= FUSED_SPLIT_SUMS_MAX_NTH && A.spec_wsum != nullptr; // fused.cuh
    double *const s_spec = reinterpret_cast<double *>(smem + L.spec_off) + sub * 2 * G * FUSED_COLS;
    double *const s_R = reinterpret_cast<double *>(smem + L.sr_off) + sub * nq * FUSED_COLS;
    double *const s_coef = reinterpret_cast<double *>(smem + L.coef_off);
    // Media: the ring of the bins' records (media_bin, FUSED_RING stages of
    // stage_recs bytes, copied with the bins) and the bins' centres (s_E).
    unsigned char *const s_mbin = reinterpret_cast<unsigned char *>(smem + L.mbin_off);
    // Media: the tile's media in order of their first lane, and their count.
    __shared__ int s_tmed[MEDIA ? FUSED_COLS + 1 : 1];
    const int rec_bytes = A.em.bins.rec_bytes; // media: one record
    const int stage_recs = MEDIA ? media_stage_bytes(A.em) : 0;
    double *const s_E = reinterpret_cast<double *>(smem + L.mE_off);
    unsigned *const s_full =
        reinterpret_cast<unsigned *>(smem + L.full_off) + threadIdx.x / FUSED_COLS * nfull;
    // Columns to visit: where the input has weight, plus where the output
    // buffer still holds values (they must become zeros).
    const active_regions *reg = A.reg;
    const box4 F = box_join(reg->occupied, reg->written);
    const tiling tl = tiling_of(F);
    // Spots side by side: the tiles of each slot's box, slot after slot
    // (slot_pref: the bookkeeping's prefix sums; computed here, before the
    // block's first barrier, they made the kernel spill).
    constexpr bool per_slot = SLOTS;
    const int64_t ntiles = per_slot ? A.slot_pref[A.nslots] : tiles_of(tl);
    const int src_lo = reg->src_lo, src_hi = reg->src_hi;
    // gridDim.x * SUB = A.blocks tiles in flight in either instance: both
    // must agree on whether this step splits (exactly one of them works).
    const int step_groups =
        split_groups(ntiles, src_hi - src_lo + 1, A.split.max_tiles, (int)gridDim.x * SUB);
    if (*A.stop || (step_groups > 1) != SPLIT)
        return;
    const dev_dims d = A.d;
    const angular_tables_dev &at = A.at;
    const int nth = EXACT ? NMAX : (int)d.nth, ne = (int)d.ne, nz = (int)d.nz;
    const int px = (int)d.px; // row pitch (nx: the domain's width)
    const int slice = (int)d.slice; // nth * slice < 2^31: fused_step_supported
    const int64_t n = STREAM ? *A.step : 0;
    const float *in = (STREAM && (n & 1)) ? A.psi1 : A.psi0;
    float *out = (STREAM && (n & 1)) ? A.psi0 : A.psi1;
    for (int j = threadIdx.x; j < nth; j += blockDim.x) {
        const int mz = STREAM ? (int)stream_shift_of(A.st.sz[j], n) : 0;
        const int mx = STREAM ? (int)stream_shift_of(A.st.sx[j], n) : 0;
        s_move[0][j] = mz;
        s_move[1][j] = mx;
        s_toff[j] = j * slice + mz * px + mx;
    }
    for (int j = nth + threadIdx.x; j < NMAX; j += blockDim.x)
        s_toff[j] = 0; // read by the last thread's vector loads, never used
    for (int i = threadIdx.x; i < SUB * R * L.rows * FUSED_COLS; i += blockDim.x)
        s_in[i] = 0.0f; // the padding rows stay zero in window mode
    if (STREAM)
        for (int i = threadIdx.x; i < SUB * G * nfull; i += blockDim.x)
            reinterpret_cast<unsigned *>(smem + L.full_off)[i] = 0u;
    for (int w = threadIdx.x; w < SUB * G; w += blockDim.x)
        s_wt[w] = group_bins_none();
    for (int k = threadIdx.x; k < ne; k += blockDim.x) {
        if constexpr (!MEDIA) {
            s_step[k] = A.ft.bin_step[k];
            s_bin[k] = A.ft.bins[k];
            s_edge[2 * k] = A.ft.edge[2 * k];
            s_edge[2 * k + 1] = A.ft.edge[2 * k + 1];
        } else {
            s_E[k] = A.em.E[k];
        }
        s_boxa[k] = A.box_a[k];
        if (STREAM) {
            sbox[4 * k + 0] = INT_MAX;
            sbox[4 * k + 1] = -1;
            sbox[4 * k + 2] = INT_MAX;
            sbox[4 * k + 3] = -1;
        }
    }
    if constexpr (!MEDIA) // with media each lane reads its medium's
        for (int i = threadIdx.x; i < nq * ne; i += blockDim.x)
            s_coef[i] = A.spec.coef[i]; // [nq][n_media = 1][ne]
    if (A.ft.n_wide > 0) {
        for (int k = threadIdx.x; k < ne; k += blockDim.x)
            reinterpret_cast<int *>(smem + L.bfrow_off)[k] = A.ft.bf_row[k];
        for (int i = threadIdx.x; i < A.ft.n_wide * NMAX; i += blockDim.x)
            reinterpret_cast<float *>(smem + L.bfw_off)[i] = A.ft.bf_wide[i];
    }
    __syncthreads();

    const int col = utid % FUSED_COLS, g = utid / FUSED_COLS, warp = threadIdx.x / FUSED_COLS;
    const int j0 = g * M; // this thread's directions j0 .. j0 + M - 1 (those < nth)
    const bool any_dir = EXACT || j0 < nth;
    auto dir_ok = [&](int m) { return EXACT || j0 + m < nth; };
    const int64_t estride = (int64_t)nth * slice;
    double tb = 0.0, tc = 0.0, eb = 0.0, ec = 0.0, dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0;
    float wnf = 0.0f, enf = 0.0f; // NUCLEAR (~5e-4 of the weight a step: float suffices)
    double lw = 0.0, le = 0.0, wout = 0.0, eout = 0.0;
    media_tally etl; // media: A_E's tallies of the owned sources

    // Target bins to write: those receiving weight now and those the output
    // buffer still holds; every other bin of it is zero.
    // (One medium: bin -1 of a source whose target is 0 is a target too.)
    const int wlo = MEDIA ? max(0, min(reg->tgt_lo, reg->wtgt_lo)) : min(reg->tgt_lo, reg->wtgt_lo);
    const int whi =
        MEDIA ? min(ne - 1, max(reg->tgt_hi, reg->wtgt_hi)) : max(reg->tgt_hi, reg->wtgt_hi);
    // Media: a target's sources lie in T .. T + R; each thread's convolved
    // sources, the last R + 1 of them, in its own part of the ring.
    const int R_m = MEDIA ? A.reach : 0, RR_m = R_m + 1;
    float *const s_mring = reinterpret_cast<float *>(smem + L.ring_off);
    const int n_dirs =
        EXACT ? M : max(0, min(M, nth - j0)); // directions j0 .. j0 + n_dirs - 1 exist
    const unsigned dir_mask = (1u << n_dirs) - 1u; // n_dirs <= 16
    const int stage_floats = L.rows * FUSED_COLS;

    // Energy split (few tiles, as in a pencil beam's step): each tile's bin
    // range [rlo, rhi] is cut into ng groups of B bins, one work item each,
    // so that more blocks than tiles have work. A group owns its sources
    // (their tallies and their deposit, which goes through split.ws so that
    // the last block of the tile sums the column's dose in the usual order)
    // and its targets (written by it alone); it also convolves the sources
    // feeding its targets from below, recomputing what the group below owns.
    const int ng = SPLIT ? step_groups : 1;
    const int rlo = min(src_lo, wlo), rhi = max(src_hi, whi);
    const int B = (rhi - rlo + ng) / ng;
    // First source bin whose target is >= v (targets never decrease with the bin).
    auto first_tg_ge = [&](int v) {
        int lo = src_lo, hi = src_hi + 1;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if (s_step[mid].w >= v)
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo;
    };
    __shared__ bool s_last; // this block completed its tile's last group

    // Clusters of CL blocks of SUB tiles take CL * SUB consecutive work
    // items at a time; every tile of a cluster makes the same number of trips
    // (an item past the last is walked with no live column) and walks the
    // same bins. The grid is whole clusters (static_assert at BLOCKS_PER_SM,
    // backend_cuda_setup.cu), so the items are the same with or without a
    // cluster launch (without, the cluster barriers do nothing). The slots'
    // tiles walk bins of their own (group_bins.cuh), so their instance runs
    // without clusters (measured: the per-spot steps as fast without them).
    constexpr int CL = SPLIT || SLOTS ? 1 : FUSED_CLUSTER;
    const int64_t n_items = ntiles * ng, nclusters = gridDim.x / CL;
    for (int64_t grp = blockIdx.x / CL; grp < (n_items + CL * SUB - 1) / (CL * SUB);
         grp += nclusters) {
        const int64_t item = (grp * CL + blockIdx.x % CL) * SUB + sub;
        const int64_t tile = item / ng;
        const int q = (int)(item % ng);
        // Owned sources [os_lo, os_hi], owned targets [ot_lo, ot_hi], and the
        // sources to convolve [p_lo, p_hi] (all of them without the split).
        int os_lo = src_lo, os_hi = src_hi, ot_lo = wlo, ot_hi = whi, p_lo = src_lo, p_hi = src_hi;
        if constexpr (SPLIT) {
            const int qlo = rlo + q * B, qhi = min(rhi, qlo + B - 1);
            os_lo = max(src_lo, qlo), os_hi = min(src_hi, qhi);
            ot_lo = max(wlo, qlo), ot_hi = min(whi, qhi);
            p_lo = os_lo, p_hi = os_hi;
            if (MEDIA && ot_lo <= ot_hi) {
                // Source s feeds targets s - R .. s.
                const int f_lo = max(src_lo, ot_lo), f_hi = min(src_hi, ot_hi + R_m);
                if (f_lo <= f_hi) {
                    p_lo = p_lo <= p_hi ? min(p_lo, f_lo) : f_lo;
                    p_hi = os_lo <= os_hi ? max(p_hi, f_hi) : f_hi;
                }
            } else if (ot_lo <= ot_hi) {
                // Source s feeds targets target[s] - 1 .. target[s] + 1.
                const int f_lo = first_tg_ge(ot_lo - 1), f_hi = first_tg_ge(ot_hi + 2) - 1;
                if (f_lo <= f_hi) {
                    p_lo = p_lo <= p_hi ? min(p_lo, f_lo) : f_lo;
                    p_hi = max(p_hi, f_hi);
                }
            }
        }
        // The box the tile lies in: F, or with slots its slot's.
        int cz = 0, cx = 0;
        box4 Fi = F;
        bool live = false;
        if (!per_slot) {
            live = item < n_items && tile_cell(F, tl, (int)tile, col, cz, cx);
        } else if (item < n_items) {
            const int lo = slot_of_tile(A.slot_pref, A.nslots, tile);
            Fi = slot_visit(A.slot_boxes, lo);
            live = tile_cell(Fi, tiling_of(Fi), (int)(tile - A.slot_pref[lo]), col, cz, cx);
            if (utid == 0)
                s_tslot[sub] = lo;
        }
        if constexpr (SLOTS && !SPLIT) {
            // The tile's own bins: the sources its cells hold, and as
            // targets those sources' and the bins its output buffer holds
            // where it writes (with the step's ranges, which bound them).
            const int4 gbr = tile_group_bins(A.gbins, n, nz, live, cz, cx,
                                             warp_move_span(s_move[0], s_move[1], nth));
            p_lo = max(src_lo, gbr.x), p_hi = min(src_hi, gbr.y);
            int t_lo = gbr.z, t_hi = gbr.w;
            if (MEDIA && p_lo <= p_hi) { // sources feed s - R .. s
                t_lo = min(t_lo, p_lo - R_m), t_hi = max(t_hi, p_hi);
            } else if (p_lo <= p_hi) {
                const int f = max(p_lo, first_tg_ge(0)); // the first source with a target
                if (f <= p_hi) // sources feed target[s] - 1 .. target[s] + 1
                    t_lo = min(t_lo, s_step[f].w - 1), t_hi = max(t_hi, s_step[p_hi].w + 1);
            }
            ot_lo = max(wlo, t_lo), ot_hi = min(whi, t_hi);
        }
        const int64_t c = (int64_t)cz * px + cx;
        const float *pin = in + c + (int64_t)j0 * slice;
        const int med = MEDIA && live ? A.em.medium[c] : 0; // the lane's medium
        // Media: the tile's distinct media (s_tmed: their count, then each;
        // every warp of the tile holds its 32 cells, so each finds the same)
        // and this lane's place among them. A tile of at most
        // MEDIA_STAGED_MAX media stages each bin's records of those alone;
        // a tile of more reads each lane's record from global memory.
        const unsigned char *rec0 = nullptr; // media: this lane's record of bin 0, or of stage 0
        bool staged = false;
        int rec_step = 0; // from a lane's first record to bin s's: s's stage, or s, times this
        if constexpr (MEDIA) {
            const unsigned same = __match_any_sync(0xffffffffu, med);
            const int first = __ffs(same) - 1; // the lowest lane of this medium
            const unsigned firsts = __ballot_sync(0xffffffffu, col == first);
            const int tmed = __popc(firsts & ((1u << first) - 1u));
            staged = __popc(firsts) <= MEDIA_STAGED_MAX;
            if (staged && g == 0 && col == first)
                s_tmed[1 + tmed] = med;
            if (utid == 0)
                s_tmed[0] = staged ? __popc(firsts) : 0;
            tile_sync(); // the list before the first copy
            rec0 = staged ? s_mbin + tmed * rec_bytes : A.em.bins.out + (int64_t)med * rec_bytes;
            rec_step = staged ? stage_recs : A.em.n_media * rec_bytes; // < 256 * 2^10
        }

        // Sends bin sb (if any) into ring stage `slot`: this thread's M values of
        // its column (zeros where the column lies outside the bin's box) and
        // weight threadIdx.x of the bin's kernel. One commit group per call,
        // even when empty, so that the groups count bins.
        auto issue = [&](int sb, int slot) {
            if (sb <= p_hi) {
                const int4 bs = MEDIA ? int4{ 0, 0, 0, 0 } : s_step[sb];
                const box4 b = s_boxa[sb];
                const bool h = live && cz >= b.z0 && cz <= b.z1 && cx >= b.x0 && cx <= b.x1;
                float *dst = s_in + slot * stage_floats + (L.lo + j0) * FUSED_COLS + col;
                const float *p = opaque(pin + (int64_t)sb * estride);
#pragma unroll
                for (int m = 0; m < M; m++) {
                    if (dir_ok(m))
                        cp_async4(dst + m * FUSED_COLS, p, h);
                    p = opaque(p + slice); // one IMAD.WIDE per load
                }
                const int t = tid;
                // (with media each lane reads its medium's kernel)
                if (!MEDIA && bs.y <= A.kp && t < L.wn)
                    cp_async4(s_w + slot * L.wn + t, at.weights + bs.z + (t <= 2 * bs.y ? t : 0),
                              t <= 2 * bs.y);
                if (MEDIA) { // the bin's records of the tile's media (none: not staged)
                    const int nck = rec_bytes / 16;
                    for (int i = t; i < s_tmed[0] * nck; i += NT) {
                        const int k = i / nck, ck = i - k * nck;
                        cp_async16(s_mbin + slot * stage_recs + k * rec_bytes + 16 * ck,
                                   A.em.bins.out +
                                       ((int64_t)sb * A.em.n_media + s_tmed[1 + k]) * rec_bytes +
                                       16 * ck);
                    }
                }
            }
            cp_async_commit();
        };

        // Single pass: direction j of this column lands on (cz, cx) + move[j].
        // Cells of `out` whose source (cell - move) lies outside F (or the
        // domain) receive from no visited column: their own column clears them.
        column_moves cm{ 0u, 0u, INT_MAX, -1, INT_MAX, -1 };
        // The column's domain along x: its slot (the grid without slots).
        const int xs_lo = slot_lo(d, cx), xs_hi = xs_lo + (int)slot_w(d);
        if (live)
#pragma unroll
            for (int m = 0; m < M; m++) {
                if (!dir_ok(m))
                    continue;
                const int tz = cz + s_move[0][j0 + m], tx = cx + s_move[1][j0 + m];
                if (tz >= 0 && tz < nz && tx >= xs_lo && tx < xs_hi) {
                    cm.in_domain |= 1u << m;
                    cm.zlo = min(cm.zlo, tz), cm.zhi = max(cm.zhi, tz);
                    cm.xlo = min(cm.xlo, tx), cm.xhi = max(cm.xhi, tx);
                }
                const int sz = cz - s_move[0][j0 + m], sx = cx - s_move[1][j0 + m];
                if (sz < Fi.z0 || sz > Fi.z1 || sx < Fi.x0 || sx > Fi.x1 || sx < xs_lo ||
                    sx >= xs_hi)
                    cm.own_zero |= 1u << m;
            }
        if (!STREAM)
            cm.own_zero = 0u; // moves are zero: every cell is its own target
        // The extent of the warp's in-domain targets, one warp reduction per
        // tile (emit uses it for every bin in which all of them hold weight,
        // instead of four reductions per bin). It lives in shared memory:
        // four registers held across the bin loop made the kernel spill.
        if (STREAM) {
            const int4 wb{ warp_min(cm.zlo), warp_max(cm.zhi), warp_min(cm.xlo), warp_max(cm.xhi) };
            if (col == 0)
                s_wbox[warp] = wb;
        }

        auto E_of = [&](int T) { return MEDIA ? s_E[T] : s_bin[T].E; };
        // Source bin sb's mean deposit per unit weight in this lane's cell.
        auto deposit_of = [&](int sb) {
            if constexpr (MEDIA)
                return live ? __ldg(A.em.deposit_mean + (int64_t)med * ne + sb) : 0.0;
            else
                return s_bin[sb].deposit;
        };
        // Writes target bin T of this column: v (or zeros), moved when
        // streaming, with the leak, the output sums and the extent measured.
        // Called by every thread of the block for the same T.
        auto emit = [&](int T, const float(&v)[M], bool zero) {
            float *pt = opaque(out + (int64_t)T * estride + c);
            bool any_nz = false, all_nz = true; // over this thread's in-domain targets
            if (live) {
                if (cm.in_domain == dir_mask) { // every target inside the domain: the usual case
                    int toff[M];
                    static_assert(M % 4 == 0, "whole int4 loads of s_toff");
#pragma unroll
                    for (int k = 0; k < M / 4; k++) {
                        const int4 q = reinterpret_cast<const int4 *>(s_toff + j0)[k];
                        toff[4 * k] = q.x, toff[4 * k + 1] = q.y;
                        toff[4 * k + 2] = q.z, toff[4 * k + 3] = q.w;
                    }
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m))
                            pt[toff[m]] = zero ? 0.0f : v[m];
                    // psi >= 0 (non-negative kernels and coefficients)
                    all_nz = !zero && pair_min(v, n_dirs) != 0.0f;
                    if (STREAM && !zero) {
                        const float kept = pair_sum(v, n_dirs);
                        any_nz = kept != 0.0f; // a sum of non-negative floats is 0 only if all are
                        if (any_nz) {
                            const double E = E_of(T);
                            wout += kept;
                            eout += (double)kept * E;
                        }
                    }
                } else {
                    double kept = 0.0, leaked = 0.0;
#pragma unroll
                    for (int m = 0; m < M; m++) {
                        if (!dir_ok(m))
                            continue;
                        const float val = zero ? 0.0f : v[m];
                        if (cm.in_domain & (1u << m)) {
                            pt[s_toff[j0 + m]] = val;
                            any_nz = any_nz || val != 0.0f;
                            all_nz = all_nz && val != 0.0f;
                            kept += val;
                        } else {
                            leaked += val;
                        }
                    }
                    if (STREAM && (kept != 0.0 || leaked != 0.0)) {
                        const double E = E_of(T);
                        wout += kept;
                        eout += kept * E;
                        lw += leaked;
                        le += leaked * E;
                    }
                }
                if (STREAM && cm.own_zero)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (cm.own_zero & (1u << m))
                            pt[(j0 + m) * slice] = 0.0f;
            }
            if (!STREAM)
                return;
            if (__all_sync(0xffffffffu, !live || (any_nz && all_nz))) {
                // Every live lane holds weight in all its targets (the dense
                // case): the warp's extent is its tile extent s_wbox[g]; T is
                // marked in s_full, and its extent joins sbox after the tile.
                if (col == 0)
                    s_full[T >> 5] |= 1u << (T & 31);
            } else if (any_nz) {
                int zlo = cm.zlo, zhi = cm.zhi, xlo = cm.xlo, xhi = cm.xhi;
                if (!all_nz) { // some directions hold zero: the exact extent
                    zlo = xlo = INT_MAX, zhi = xhi = -1;
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if ((cm.in_domain & (1u << m)) && v[m] != 0.0f) {
                            const int tz = cz + s_move[0][j0 + m], tx = cx + s_move[1][j0 + m];
                            zlo = min(zlo, tz), zhi = max(zhi, tz);
                            xlo = min(xlo, tx), xhi = max(xhi, tx);
                        }
                }
                // Shared atomics from the lanes holding weight: the compiler
                // turns each into one warp reduction and one atomic.
                atomicMin(&sbox[4 * T + 0], zlo);
                atomicMax(&sbox[4 * T + 1], zhi);
                atomicMin(&sbox[4 * T + 2], xlo);
                atomicMax(&sbox[4 * T + 3], xhi);
            }
            if (per_slot && any_nz) { // the warp's bins with values (one atomic each)
                atomicMin(&s_wt[warp].x, T);
                atomicMax(&s_wt[warp].y, T);
            }
        };

        auto emit_own = [&](int T, const float(&v)[M], bool zero) {
            if (!SPLIT || (T >= ot_lo && T <= ot_hi))
                emit(T, v, zero);
        };
        // The spectral tallies of bin sb, after the barrier that completes its
        // chunk sums: the cell's sum over its directions, the chunks added in
        // order (direction_chunks.h), formed by each warp that keeps a plane;
        // each plane's running sum takes it by one fma (bins ascending; a zero
        // coefficient adds nothing, as on the CPU).
        // (mcoef, media: the lane's medium's coefficients [nq] of the bin, from its record)
        auto spectral_bin = [&](int sb, bool any_has, const double *mcoef) {
            if (g >= nq || !any_has)
                return;
            const double *cs = s_spec + (sb & 1) * G * FUSED_COLS + col;
            double W = cs[0];
            for (int k = 1; k < G; k++)
                W += cs[k * FUSED_COLS];
            for (int q = g; q < nq; q += G) {
                const double k = MEDIA ? mcoef[q] : s_coef[q * ne + sb];
                if (k != 0.0)
                    s_R[q * FUSED_COLS + col] = __fma_rn(k, W, s_R[q * FUSED_COLS + col]);
            }
        };
        // This tile's convolved weight by bin (from src_lo), direction and column.
        float *const ws_tile = SPLIT ? A.split.ws + tile * ne * NMAX * FUSED_COLS : nullptr;
        auto ws_at = [&](int sb, int m) {
            return ws_tile + ((int64_t)(sb - src_lo) * NMAX + j0 + m) * FUSED_COLS + col;
        };

        // Media: target T of this column, gathered from the ring (sources T ..
        // T + R convolved, those outside [p_lo, p_hi] zero: none at all gives
        // zeros) by the candidates of the lane's medium and this step's
        // tables (energy_media.cuh: the CPU's operations), then written.
        // Bit r: the table the lane's medium takes at the source in ring
        // place r (MEDIA_BIN_LOWER), set as each source is convolved.
        unsigned ring_low = 0u;
        auto media_target = [&](int T) {
            float v[M];
#pragma unroll
            for (int m = 0; m < M; m++)
                v[m] = 0.0f;
            const bool none = T + R_m < p_lo || T > p_hi;
            if (live && any_dir && !none) {
                const int64_t row = (int64_t)med * ne + T;
                const int t_slot = T % RR_m;
                auto place = [&](int src) { // the ring place of source src (T .. T + R)
                    const int r = t_slot + (src - T);
                    return r >= RR_m ? r - RR_m : r;
                };
                media_gather_dirs<M>(
                    A.em, row, [&](int src) { return (ring_low >> place(src) & 1u) != 0u; }, p_lo,
                    p_hi, v,
                    [&](int src) {
                        return s_mring + ((size_t)place(src) * NMAX + j0) * FUSED_COLS + col;
                    });
            }
            emit_own(T, v, none);
        };

        // The three open targets T0 .. T0 + 2 in banks b0, b0 + 1, b0 + 2 (mod
        // 3), so that closing T0 moves nothing: its bank is written, cleared
        // and becomes T0 + 3's (shifting the banks down cost 16 moves per bin
        // or more). Banks are indexed by constants only, so that they stay in
        // registers.
        float acc[3][M];
#pragma unroll
        for (int b = 0; b < 3; b++)
#pragma unroll
            for (int m = 0; m < M; m++)
                acc[b][m] = 0.0f;
        auto bank_copy = [&](int b, float(&v)[M]) {
#pragma unroll
            for (int m = 0; m < M; m++)
                v[m] = b == 0 ? acc[0][m] : b == 1 ? acc[1][m] : acc[2][m];
        };
        constexpr int UNSET = INT_MIN / 2; // before the first source with a target
        int T0 = UNSET; // lowest open target; block-uniform (may be -1: bin t - 1 of t = 0)
        int b0 = 0; // T0's bank
        int next_out = ot_lo; // every owned target below this is written or known zero
        double D[M]; // this thread's directions' deposit (deposit_path.h)
#pragma unroll
        for (int m = 0; m < M; m++)
            D[m] = 0.0;
        float tcf = 0.0f,
              ecf = 0.0f; // THETA_CUTOFF of this tile (~1e-7 of the weight: float suffices)

        // The tile's spectral sums start at zero, each plane by its warp.
        for (int q = g; q < nq; q += G) {
            s_R[q * FUSED_COLS + col] = 0.0;
        }
        // Software pipelining: bins s + 1 .. s + R - 1 are on their way into
        // the ring while bin s is convolved; nothing of them is held in registers.
#pragma unroll
        for (int i = 0; i < R - 1; i++)
            issue(p_lo + i, ring0 + i);
        int slot = ring0;
        for (int s = p_lo; s <= p_hi; s++) {
            int kid, K, tg;
            if constexpr (MEDIA) {
                // Targets below s - R have every source convolved: written
                // (block-uniform), before bin s takes the oldest ring slot.
                for (; next_out <= min(ot_hi, s - 1 - R_m); next_out++)
                    media_target(next_out);
                kid = 0, K = 0; // the lane's medium's, from the bin's record after the barrier
                tg = -1; // unused
            } else {
                const int4 bs = s_step[s];
                kid = bs.x, K = bs.y, tg = bs.w;
            }
            // Target bookkeeping depends on the bin only, so it is uniform.
            if (!MEDIA && tg >= 0) {
                const int low = tg - 1; // the lowest target of bin s
                if (T0 == UNSET)
                    T0 = low;
                while (T0 < low) { // T0 is complete: write it
                    if (T0 >= next_out) { // below: not this group's, or bin -1
                        float v[M];
                        bank_copy(b0, v);
                        if constexpr (SPLIT) {
                            // The targets no source reached and T0 through the same
                            // emit, which pays where a group leaves many unreached targets;
                            // the unsplit (dense) instance has few and keeps two.
                            for (int zt = next_out; zt <= T0; zt++)
                                emit_own(zt, v, zt < T0);
                        } else {
                            for (int zt = next_out; zt < T0; zt++)
                                emit_own(zt, v, true);
                            // One emit for every bank, the bank chosen per value: no
                            // slower than an emit inlined for each bank, and fewer
                            // spilled bytes.
                            emit_own(T0, v, false);
                        }
                        next_out = T0 + 1;
                    }
#pragma unroll
                    for (int m = 0; m < M; m++) { // T0's bank becomes T0 + 3's
                        acc[0][m] = b0 == 0 ? 0.0f : acc[0][m];
                        acc[1][m] = b0 == 1 ? 0.0f : acc[1][m];
                        acc[2][m] = b0 == 2 ? 0.0f : acc[2][m];
                    }
                    b0 = b0 == 2 ? 0 : b0 + 1;
                    T0++;
                }
            }
            const box4 b = s_boxa[s];
            const bool has = live && cz >= b.z0 && cz <= b.z1 && cx >= b.x0 && cx <= b.x1;
            fused_bin fb;
            if constexpr (MEDIA) // the lane's medium's deposit is read below, where used
                fb.E = s_E[s], fb.E_f = (float)fb.E;
            else
                fb = s_bin[s];
            const bool own_s = !SPLIT || (s >= os_lo && s <= os_hi);
            float *stage = s_in + slot * stage_floats + L.lo * FUSED_COLS + col; // direction 0
            float *row = stage + j0 * FUSED_COLS;
            cp_async_wait<R - 2>(); // this thread's part of bin s has landed
            float cur[M];
#pragma unroll
            for (int m = 0; m < M; m++)
                cur[m] = dir_ok(m) ? row[m * FUSED_COLS] : 0.0f;
            if (nq > 0 || (split_sums && own_s)) { // this thread's chunk (direction_chunks.h)
                double t[M];
#pragma unroll
                for (int m = 0; m < M; m++)
                    t[m] = (double)cur[m]; // 0 past nth (cur's load above)
                s_spec[((s & 1) * G + g) * FUSED_COLS + col] = smx_chunk_tree(t, M);
            }
            // The bin's media record of this lane's medium (valid after the
            // barrier below, which completes every thread's copies of bin s).
            const media_bin *mrec =
                reinterpret_cast<const media_bin *>(rec0 + (int64_t)(staged ? slot : s) * rec_step);
            // Theta tallies of the weight the cell keeps (total) and drops:
            // in float within the thread (~1e-7 channels: the total only
            // scales the kernel's truncation, 1 - weight_sum). With media
            // after the barrier, where the lane's kernel is known.
            auto theta_tallies = [&](float kept_w, float dropped_w) {
                double bnd = 0.0;
                // Window mode: only directions within K of an edge scatter past it.
                if (!at.circular && (j0 < K || j0 + M > nth - K)) {
                    if (!MEDIA && K <= FUSED_EDGE && nth >= 2 * FUSED_EDGE) {
                        bnd = edge_loss<M, EXACT>(cur, s_edge + 2 * s, j0, nth);
                    } else if (!MEDIA && A.ft.n_wide > 0) {
                        // From the block's copy: a load from global memory here
                        // would be the only one of the bin loop, and the loop
                        // would wait on it. Interior directions hold 0
                        // (fma(x, 0, b) == b).
                        const float *bf = s_bfw + s_bfrow[s] * NMAX + j0;
                        float b = 0.0f;
#pragma unroll
                        for (int m = 0; m < M; m++)
                            if (dir_ok(m))
                                b = __fmaf_rn(cur[m], bf[m], b);
                        bnd = b;
                    } else {
                        const double *bf = at.boundary_frac + (int64_t)kid * nth + j0;
#pragma unroll
                        for (int m = 0; m < M; m++)
                            if (dir_ok(m) && (j0 + m < K || j0 + m >= nth - K)) // elsewhere bf = 0
                                bnd += (double)cur[m] * bf[m];
                    }
                }
                if (own_s) {
                    tb += bnd;
                    eb += bnd * fb.E;
                    if constexpr (MEDIA) {
                        // The lane's kernel's truncation, in double: two float
                        // sums held across the loop made the instance spill.
                        const double cut = (double)kept_w * mrec->cut + (double)dropped_w;
                        tc += cut;
                        ec += cut * fb.E;
                    } else {
                        const float cut = __fadd_rn(__fmul_rn(kept_w, fb.cut_frac), dropped_w);
                        tcf = __fadd_rn(tcf, cut);
                        ecf = __fadd_rn(ecf, __fmul_rn(cut, fb.E_f));
                    }
                }
            };
            float total = 0.0f, dropped = 0.0f;
            if (has) {
                const float lowest = pair_min(cur, n_dirs);
                if (!(lowest >= A.threshold)) // some weight below the threshold: drop it
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m) && cur[m] < A.threshold) {
                            dropped += cur[m];
                            cur[m] = 0.0f;
                            row[m * FUSED_COLS] = 0.0f;
                        }
                total = pair_sum(cur, n_dirs);
                if constexpr (!MEDIA)
                    theta_tallies(total, dropped);
            }
            // Wrapped copies into the padding rows (media: conv_rows wraps).
            if (!MEDIA && at.circular)
#pragma unroll
                for (int m = 0; m < M; m++) {
                    if (!dir_ok(m))
                        continue;
                    for (int q = j0 + m - nth; q >= -L.lo; q -= nth)
                        stage[q * FUSED_COLS] = cur[m];
                    for (int q = j0 + m + nth; q < NMAX + A.kp; q += nth)
                        stage[q * FUSED_COLS] = cur[m];
                }
            // No column of the tile holding weight in bin s means everything
            // below adds +0. Every warp holds the tile's 32 columns, so its
            // own vote is the tile's (a vote carried by the barrier, bar.red.or,
            // was slightly slower).
            const bool any_has = __any_sync(0xffffffffu, has);
            // Stage `slot` complete; every thread has finished bin s - 1, so
            // its stage takes bin s + R - 1.
            tile_sync();
            if (CL > 1 && (s - p_lo) % FUSED_PACE == 0) {
                if (s > p_lo)
                    cluster_wait();
                cluster_arrive();
            }
            issue(s + R - 1, slot == ring0 ? ring0 + R - 1 : slot - 1);
            const float *w_slot = s_w + slot * L.wn;
            slot = slot == ring0 + R - 1 ? ring0 : slot + 1;
            const int rs = MEDIA ? s % RR_m : 0; // media: bin s's place in the ring
            if constexpr (MEDIA) {
                kid = mrec->kid, K = mrec->K;
                // The table the lane's medium takes at source s, for the gathers.
                ring_low =
                    (ring_low & ~(1u << rs)) | ((mrec->flags & MEDIA_BIN_LOWER) ? 1u << rs : 0u);
                if (has)
                    theta_tallies(total, dropped);
            }
            if (nq > 0)
                spectral_bin(s, any_has, reinterpret_cast<const double *>(mrec + 1));
            if (split_sums && own_s && g == 0 && has) {
                // The cell's direction sum of an owned bin, the chunks added
                // in order, for the plane kernel (its reads stay inside the
                // bin's box, as `has` does).
                const double *cs = s_spec + (s & 1) * G * FUSED_COLS + col;
                double W = cs[0];
                for (int k = 1; k < G; k++)
                    W += cs[k * FUSED_COLS];
                A.spec_wsum[(int64_t)s * slice + c] = W;
            }
            // Media: this thread's ring slot of bin s (its own: no barrier).
            float *const mring = s_mring + ((size_t)rs * NMAX + j0) * FUSED_COLS + col;
            if (!any_has) {
                if (SPLIT && own_s)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        *ws_at(s, m) = 0.0f;
                if (MEDIA)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m))
                            mring[m * FUSED_COLS] = 0.0f;
                continue;
            }
            float conv[M];
            if (MEDIA && any_dir) { // the lane's medium's kernel, bounds-checked
                conv_rows<M, false>(
                    j0, nth, K,
                    reinterpret_cast<const float *>(reinterpret_cast<const unsigned char *>(mrec) +
                                                    A.em.bins.w_off) +
                        K,
                    at.circular != 0, [&](int src) { return stage[src * FUSED_COLS]; }, conv);
            } else if (!MEDIA && any_dir && K <= A.kp) {
                conv_padded<M, FUSED_COLS>(stage + j0 * FUSED_COLS, K, w_slot, cur, conv);
            } else if (any_dir) { // a kernel wider than the padding
                const conv_out<M> o = conv_wide<M>(
                    stage, j0, nth, K, at.weights + at.offset[kid] + K, at.circular != 0);
#pragma unroll
                for (int m = 0; m < M; m++)
                    conv[m] = o.v[m];
            } else {
#pragma unroll
                for (int m = 0; m < M; m++)
                    conv[m] = 0.0f;
            }
            // The thread's weight in the bin (for the tallies), and each
            // direction's deposit: a chain over the bins in ascending order.
            const double ws = (double)pair_sum(conv, n_dirs);
            if constexpr (MEDIA) // read here: earlier it made the instance spill
                fb.deposit = live ? mrec->deposit_mean : 0.0;
            if constexpr (!SPLIT) {
#pragma unroll
                for (int m = 0; m < M; m++)
                    if (dir_ok(m))
                        D[m] = __fma_rn(fb.deposit, (double)conv[m], D[m]);
            } else if (own_s) { // the tile's last block forms the chains; the tally is this block's
#pragma unroll
                for (int m = 0; m < M; m++)
                    *ws_at(s, m) = conv[m];
                dep_sum += fb.deposit * ws;
            }
            if constexpr (MEDIA) {
                // Into the ring, for the targets T <= s it reaches; A_E's
                // tallies by the table this step chose for the lane's medium.
#pragma unroll
                for (int m = 0; m < M; m++)
                    if (dir_ok(m))
                        mring[m * FUSED_COLS] = conv[m];
                if (own_s && ws != 0.0)
                    etl.add(*mrec, ws, fb.E);
            } else if (tg < 0) {
                if (own_s) {
                    w_stop += ws;
                    e_stop += ws * fb.E;
                }
            } else {
                if (own_s) {
                    const float wf = (float)ws;
                    wnf = __fmaf_rn(wf, fb.nuc_w, wnf);
                    enf = __fmaf_rn(wf, fb.nuc_e, enf);
                }
                // T0 == tg - 1 here: bank b holds target T0 + k with k = b - b0
                // (mod 3). A zero coefficient adds fma(0, conv, acc) == acc
                // bitwise (acc >= +0, conv finite): the CPU skips that term.
                const float *cs = s_bin[s].c;
                float cb[3];
#pragma unroll
                for (int b = 0; b < 3; b++) {
                    const int k = b - b0;
                    cb[b] = cs[k < 0 ? k + 3 : k];
                }
#pragma unroll
                for (int b = 0; b < 3; b++)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        acc[b][m] = __fmaf_rn(cb[b], conv[m], acc[b][m]);
            }
        }
        // Media: the targets left (sources up to p_hi are convolved).
        if constexpr (MEDIA)
            for (; next_out <= ot_hi; next_out++)
                media_target(next_out);
        // Flush the open targets and zero every other target bin in range.
        for (int zt = max(next_out, ot_lo); !MEDIA && zt <= ot_hi; zt++) {
            const bool open = zt >= T0 && zt <= T0 + 2; // never while T0 is UNSET
            float v[M];
            const int k = open ? zt - T0 : 0;
            bank_copy(b0 + k > 2 ? b0 + k - 3 : b0 + k, v);
            emit(zt, v, !open);
        }
        if (STREAM) { // the marked bins' extents (see emit)
            __syncwarp();
            const int4 wbox = s_wbox[warp];
            for (int q = 0; q < nfull; q++) {
                const unsigned bits = s_full[q];
                __syncwarp();
                if (col == 0)
                    s_full[q] = 0u;
                const int T = 32 * q + col;
                if (wbox.y >= 0 && (bits >> col & 1u)) {
                    atomicMin(&sbox[4 * T + 0], wbox.x);
                    atomicMax(&sbox[4 * T + 1], wbox.y);
                    atomicMin(&sbox[4 * T + 2], wbox.z);
                    atomicMax(&sbox[4 * T + 3], wbox.w);
                }
            }
            if (per_slot) {
                // The slot's measured box takes the in-domain targets of each
                // warp that wrote a non-zero value (a bound of them, tile by
                // tile): the group's warps joined, then one thread's atomics.
                tile_sync();
                if (g == 0) {
                    // The bins of the group's warps' values join each group
                    // of columns their moves reach (group_bins.cuh).
                    int t_lo = INT_MAX, t_hi = -1;
                    for (int w = sub * G; w < (sub + 1) * G; w++)
                        t_lo = min(t_lo, s_wt[w].x), t_hi = max(t_hi, s_wt[w].y);
                    if (t_hi >= 0)
                        join_group_bins(A.gbins, n, nz, live, cz, cx,
                                        warp_move_span(s_move[0], s_move[1], nth), t_lo, t_hi);
                    __syncwarp();
                }
                if (utid == 0) {
                    int4 e{ INT_MAX, -1, INT_MAX, -1 };
                    for (int w = sub * G; w < (sub + 1) * G; w++) {
                        const int4 o = s_wbox[w];
                        if (s_wt[w].y >= 0 && o.y >= 0)
                            e = int4{ min(e.x, o.x), max(e.y, o.y), min(e.z, o.z), max(e.w, o.w) };
                        s_wt[w] = group_bins_none();
                    }
                    if (e.y >= 0) {
                        box4 *nb = &A.slot_boxes[SB_NEXT * FUSED_SLOTS + s_tslot[sub]];
                        atomicMin(&nb->z0, e.x);
                        atomicMax(&nb->z1, e.y);
                        atomicMin(&nb->x0, e.z);
                        atomicMax(&nb->x1, e.w);
                    }
                }
            }
        }
        if (live) // each warp its planes' sums (its own, complete)
            for (int q = g; q < nq; q += G)
                A.spec_dose[(int64_t)(1 + q) * slice + c] += s_R[q * FUSED_COLS + col];
        tc += tcf;
        ec += ecf;
        if constexpr (SPLIT) {
            // The tile's last group to finish forms each direction's deposit
            // over the whole bin range, in bin order: the chain of the unsplit
            // kernel (bins without weight in the tile add an exact +0).
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0)
                s_last = atomicAdd(&A.split.count[tile], 1) == ng - 1;
            __syncthreads();
            if (!s_last)
                continue;
            __threadfence();
            // The chain waits on each bin's loads: they are issued SPLIT_LOADS
            // bins at a time, before their terms are added in the same order.
            int sb = src_lo;
            for (; sb + SPLIT_LOADS - 1 <= src_hi; sb += SPLIT_LOADS) {
                float v[SPLIT_LOADS][M];
#pragma unroll
                for (int u = 0; u < SPLIT_LOADS; u++)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        v[u][m] = dir_ok(m) ? __ldcg(ws_at(sb + u, m)) : 0.0f;
#pragma unroll
                for (int u = 0; u < SPLIT_LOADS; u++) {
                    const double dep = deposit_of(sb + u);
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m))
                            D[m] = __fma_rn(dep, (double)v[u][m], D[m]);
                }
            }
            for (; sb <= src_hi; sb++) {
                const double dep = deposit_of(sb);
#pragma unroll
                for (int m = 0; m < M; m++)
                    if (dir_ok(m))
                        D[m] = __fma_rn(dep, (double)__ldcg(ws_at(sb, m)), D[m]);
            }
            if (threadIdx.x == 0)
                A.split.count[tile] = 0; // ready for the next step
        } else {
#pragma unroll
            for (int m = 0; m < M; m++)
                dep_sum += D[m]; // the DEPOSITED tally: per thread, then per block
        }
        if (live)
#pragma unroll
            for (int m = 0; m < M; m++)
                if (dir_ok(m))
                    A.dmap[(int64_t)(j0 + m) * slice + c] = (float)D[m];
        tile_sync(); // the ring is reused by the next tile
        if (CL > 1 && p_lo <= p_hi)
            cluster_wait(); // the last bin's arrivals
    }
    if (STREAM) {
        // A_E's tallies: the media's (in double), or the one medium's (its
        // non-elastic removal summed in float, see wnf; no rounding channel).
        const double v[14] = { tb,
                               eb,
                               tc,
                               ec,
                               dep_sum,
                               MEDIA ? etl.w_stop : w_stop,
                               MEDIA ? etl.e_stop : e_stop,
                               lw,
                               le,
                               wout,
                               eout,
                               MEDIA ? etl.w_nuc : (double)wnf,
                               MEDIA ? etl.e_nuc : (double)enf,
                               MEDIA ? etl.e_round : 0.0 };
        const int f[14] = { TF_W_THETA_BOUNDARY,
                            TF_E_THETA_BOUNDARY,
                            TF_W_THETA_CUTOFF,
                            TF_E_THETA_CUTOFF,
                            TF_DEPOSITED,
                            TF_W_ENERGY_STOPPED,
                            TF_E_ENERGY_STOPPED,
                            TF_W_SPATIAL_LEAK,
                            TF_E_SPATIAL_LEAK,
                            TF_W_OUT,
                            TF_E_OUT,
                            TF_W_NUCLEAR,
                            TF_E_NUCLEAR,
                            TF_E_MEDIUM_ROUNDING };
        block_partials_at<sizeof v / sizeof v[0], G, SUB>(v, f, A.partials, A.blocks);
    } else {
        const double v[9] = { tb, eb, tc, ec, dep_sum, w_stop, e_stop, wnf, enf };
        const int f[9] = { TF_W_THETA_BOUNDARY, TF_E_THETA_BOUNDARY, TF_W_THETA_CUTOFF,
                           TF_E_THETA_CUTOFF,   TF_DEPOSITED,        TF_W_ENERGY_STOPPED,
                           TF_E_ENERGY_STOPPED, TF_W_NUCLEAR,        TF_E_NUCLEAR };
        block_partials_at<sizeof v / sizeof v[0], G, SUB>(v, f, A.partials, A.blocks);
    }
    if (STREAM) {
        __syncthreads(); // every warp's extents are in sbox
        for (int q = threadIdx.x; q < ne; q += blockDim.x) {
            if (sbox[4 * q + 1] < 0)
                continue;
            atomicMin(&A.box_next[q].z0, sbox[4 * q + 0]);
            atomicMax(&A.box_next[q].z1, sbox[4 * q + 1]);
            atomicMin(&A.box_next[q].x0, sbox[4 * q + 2]);
            atomicMax(&A.box_next[q].x1, sbox[4 * q + 3]);
        }
    }
}

// The unsplit and the split instance of one step (MEDIA: of a run with
// media, one tile a block, no exact instance and no padded stage: each lane
// convolves with its medium's kernel through conv_rows).
template <int NMAX, bool STREAM, bool SLOTS, bool MEDIA>
void step_kernels(bool multi, bool exact, void (*(&k)[2])(fused_args))
{
    if constexpr (MEDIA) {
        k[0] = fused_kernel<NMAX, true, false, false, 1, SLOTS, true>;
        k[1] = fused_kernel<NMAX, true, false, true, 1, SLOTS, true>;
    } else {
        k[0] = multi ? (exact ? fused_kernel<NMAX, STREAM, true, false, FUSED_SUB, SLOTS>
                              : fused_kernel<NMAX, STREAM, false, false, FUSED_SUB, SLOTS>)
                     : (exact ? fused_kernel<NMAX, STREAM, true, false, 1, SLOTS>
                              : fused_kernel<NMAX, STREAM, false, false, 1, SLOTS>);
        k[1] = exact ? fused_kernel<NMAX, STREAM, true, true, 1, SLOTS>
                     : fused_kernel<NMAX, STREAM, false, true, 1, SLOTS>;
    }
}

template <int NMAX, bool STREAM, bool SLOTS, bool MEDIA = false>
cudaError_t launch_n(fused_args A, cudaStream_t s)
{
    static_assert(!MEDIA || STREAM, "media: the single pass");
    A.kp = MEDIA ? 0 : padded_kp(A.at.max_half_width, A.kp); // A.kp: the cap
    const bool exact = !MEDIA && A.d.nth == NMAX;
    const bool multi = !MEDIA && A.tiles == FUSED_SUB;
    const int ring = MEDIA ? A.reach + 1 : 0;
    if (!MEDIA &&
        ((!multi && A.tiles != 1) ||
         (multi && fused_layout_of(NMAX, A.kp, A.d.ne, STREAM, FUSED_SUB,
                                   fused_extras{ A.ft.n_wide, A.spec.nplanes, false, false, 0, 0 })
                           .bytes > FUSED_MAX_DYN_SMEM)))
        return cudaErrorInvalidValue; // not what fused_tiles_per_block decides
    const int subs[2] = { multi ? FUSED_SUB : 1, 1 };
    void (*kernels[2])(fused_args);
    step_kernels<NMAX, STREAM, SLOTS, MEDIA>(multi, exact, kernels);
    // Opt in to the block's dynamic shared memory (up to 227 KB on sm_90 with
    // the static), once per size and kernel, not at every launch of the step
    // loop. From zero, not from the default 48 KB: that bound holds static and
    // dynamic together (a media split instance with 48.5 KB of dynamic
    // memory failed to launch).
    static size_t opted_in[2][3] = {}; // [exact][split, or unsplit 1 / FUSED_SUB], per
        // instantiation of this template
    for (int sp = 0; sp < (A.split.max_tiles > 0 ? 2 : 1);
         sp++) { // the unsplit and the split instance
        size_t &limit = opted_in[exact][sp == 1 ? 0 : multi ? 2 : 1];
        const fused_layout L = fused_layout_of(NMAX, A.kp, A.d.ne, STREAM, subs[sp],
                                               fused_extras{ A.ft.n_wide, A.spec.nplanes, sp == 1,
                                                             A.spec_wsum != nullptr, ring,
                                                             MEDIA ? media_stage_bytes(A.em) : 0 });
        if (L.bytes > limit) {
            const cudaError_t e = cudaFuncSetAttribute(
                kernels[sp], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.bytes);
            if (e != cudaSuccess)
                return e;
            limit = L.bytes;
        }
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(A.blocks / subs[sp]); // A.blocks tiles in flight either way
        cfg.blockDim = dim3(FUSED_THREADS(NMAX) * subs[sp]);
        cfg.dynamicSmemBytes = L.bytes;
        cfg.stream = s;
        cudaLaunchAttribute cluster;
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim.x = FUSED_CLUSTER;
        cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
        cfg.attrs = &cluster;
        cfg.numAttrs = sp == 0 && A.cluster_launch && !SLOTS ? 1 : 0; // unsplit, without slots
        const cudaError_t e = cudaLaunchKernelEx(&cfg, kernels[sp], A);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

} // namespace

namespace {

// Blocks of the instance fn (static shared memory from its attributes) with
// dyn bytes of dynamic shared memory that one SM's shared memory holds, at
// most want; -1 if the runtime cannot say.
int blocks_by_smem(const void *fn, size_t dyn, int want)
{
    cudaFuncAttributes fa;
    int dev = 0, per_sm = 0, reserved = 0;
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) !=
            cudaSuccess)
        return -1;
    return min(want, (int)(per_sm / (fa.sharedSizeBytes + dyn + (size_t)reserved)));
}

// Whether fn's shared memory `with` bytes instead of `without` fits and
// costs it no resident block (of the `want` it aims for).
inline bool no_block_lost(const void *fn, size_t without, size_t with, int want)
{
    const int n_with = blocks_by_smem(fn, with, want),
              n_without = blocks_by_smem(fn, without, want);
    return with <= FUSED_MAX_DYN_SMEM && n_with >= 0 && n_with >= n_without;
}

// Whether the media split instance can write its owned bins' direction sums
// (split_sums): its chunk sums fit and cost it no resident block.
template <int NMAX>
int media_sums_fit_n(int64_t ne, int reach_bins, int spec, int bin_bytes)
{
    const void *fn = (const void *)fused_kernel<NMAX, true, false, true, 1, false, true>;
    const fused_extras x{ 0, spec, true, false, reach_bins + 1, bin_bytes };
    fused_extras xs = x;
    xs.split_sums = true;
    const size_t without = fused_layout_of(NMAX, 0, ne, true, 1, x).bytes;
    const size_t with = fused_layout_of(NMAX, 0, ne, true, 1, xs).bytes;
    return blocks_by_smem(fn, with, 1) > 0 &&
           no_block_lost(fn, without, with, FUSED_MIN_BLOCKS(NMAX, true));
}

template <int NMAX, bool STREAM>
int boundary_rows_fit_n(int kp, int64_t ne, int tiles, int n_wide, int spec, bool split_sums)
{
    // The unsplit instance (tiles per block) and the split one (one tile).
    const int subs[2] = { tiles, 1 };
    const void *fns[2] = { tiles == FUSED_SUB
                               ? (const void *)fused_kernel<NMAX, STREAM, true, false, FUSED_SUB>
                               : (const void *)fused_kernel<NMAX, STREAM, true, false, 1>,
                           (const void *)fused_kernel<NMAX, STREAM, true, true, 1> };
    for (int i = 0; i < 2; i++) {
        // Against the bare layout: neither the rows nor the tallies' sums may
        // cost a resident block.
        const bool split = i == 1;
        const size_t without =
            fused_layout_of(NMAX, kp, ne, STREAM, subs[i], fused_extras{ 0, 0, split, false, 0, 0 })
                .bytes;
        const size_t with = fused_layout_of(NMAX, kp, ne, STREAM, subs[i],
                                            fused_extras{ n_wide, spec, split, split_sums, 0, 0 })
                                .bytes;
        if (!no_block_lost(fns[i], without, with, max(1, FUSED_MIN_BLOCKS(NMAX, split) / subs[i])))
            return 0;
    }
    return 1;
}

} // namespace

#endif
