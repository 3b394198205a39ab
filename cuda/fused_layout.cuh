// The fused step kernel's geometry, shared by the kernel (fused.cu) and the
// host's decisions on which grids it serves (fused_fit.cu): threads and
// directions per column, the register budget, the stage ring, and the layout
// of a block's dynamic shared memory.
#ifndef SMX_CUDA_FUSED_LAYOUT_CUH
#define SMX_CUDA_FUSED_LAYOUT_CUH

#include "conv_rows.cuh"
#include "fused.cuh"
#include "tiling.cuh"

// A tile is 32 columns (consecutive x: coalesced loads and stores) times G
// threads per column. Thread g of a column owns the M = NMAX / G consecutive
// directions j0 = g * M .. j0 + M - 1 (M = 4 up to 16 directions, else 8; G =
// 4, 4, 6, 8 for 16, 32, 48, 64), so it convolves them from a register
// window (conv_padded: one shared load per kernel tap for M outputs) and
// keeps their deposits (one double per direction, src/numerics/deposit_path.h),
// written to the deposit map once per tile. The bin being
// processed is staged in shared memory with padding rows around it and its
// kernel's weights beside it (fused_layout), in a ring of FUSED_RING stages
// that cp.async fills ahead of the convolution, so each bin costs one barrier
// (and a warp vote on whether the tile holds weight in the bin). The per-bin
// tables and boxes are copied to shared memory once per block, so no load in
// the bin loop waits on another. A group's work item is a tile of 32 columns
// with all its energy bins or, when a step has few tiles, one group of them
// (the energy split, see fused_kernel). Unsplit, a block holds FUSED_SUB
// groups of G warps, each walking its own tile with its own named barrier,
// and blocks run in clusters of FUSED_CLUSTER on consecutive tiles, kept
// within FUSED_PACE bins of each other, because adjacent tiles that load and
// store together cost the memory system what one wide tile does (a direction
// that moves sideways stores each 32-byte sector at a tile's edge half from
// one tile and half from the next; access-probe, docs/tuning.md). The tiles
// and their order: tiling.cuh.
// Directions per thread: M = 8 keeps every thread's arrays within 128
// registers (four blocks of 128 threads per SM for 32 directions). For 64
// directions, 16 per thread needed 231 registers and two blocks of four warps
// per SM, too few warps to hide the latency; eight threads of 8 directions
// keep the 128-register body, as four threads of 8 do for 32 directions.
__host__ __device__ constexpr int fused_m(int nmax)
{
    return nmax <= 16 ? 4 : 8;
}
__host__ __device__ constexpr int fused_g(int nmax)
{
    return nmax / fused_m(nmax);
}
// The compiled direction count that serves nth directions (nth <= 64).
__host__ __device__ constexpr int fused_nmax(int64_t nth)
{
    return nth <= 16 ? 16 : nth <= 32 ? 32 : nth <= 48 ? 48 : 64;
}
#define FUSED_THREADS(nmax) (FUSED_COLS * fused_g(nmax))
// Tiles per SM the register budget must allow (the kernel is bound by
// instruction latency, so it needs warps). The unsplit instance: 4 up to 32
// directions, where the dense step gains more from the warps than it loses
// to the spills (with the spectral tallies in the pass it spills about 140
// bytes; at 2 tiles per SM it does not, and the dense Production step took
// 1.66 ms instead of 1.31); wider tiles need the registers (three for 64
// directions spill). The split instance: 2 at every width. Its steps have
// few tiles, so warps are not what it lacks, and at 4 it spilled 260-350
// bytes: at 2 the Production pencil step took 0.044 ms instead of 0.052
// (docs/bench/tallies-in-pass.md).
#define FUSED_MIN_BLOCKS(nmax, split) ((split) || (nmax) > 32 ? 2 : 4)
// Widest kernel convolved from the padded stage: one thread stages one weight
// (2 kp + CONV_TAPS_PER_BLOCK <= FUSED_THREADS(16)). Wider kernels (the lowest
// energies of very coarse angle grids) take conv_rows with bounds checks.
#define FUSED_MAX_KP 62
// Stages in the ring (fused_layout): the bin being convolved and
// FUSED_RING - 1 bins in flight by cp.async, which holds no registers. Three
// stages, not four, and not one bin ahead in registers: more loads in flight
// do not shorten their wait, and a fourth stage takes shared memory.
#define FUSED_RING 3

// Dynamic shared memory of one block:
// - a ring of FUSED_RING stages, each one bin of NMAX directions of FUSED_COLS
//   columns with kp + U - 1 rows below and kp rows above (zeros in window
//   mode, wrapped copies in circular mode, so that conv_padded needs no bounds
//   logic). The bin being convolved occupies one stage; the next FUSED_RING - 1
//   bins are arriving in the others by cp.async;
// - a ring of the same bins' kernel weights (2 kp + U each: the kernel, then zeros);
// - the per-bin tables (bin_step, fused_bin, edge) and the source boxes, copied once
//   per block, so that no per-bin value is a global load in the bin loop;
// - single pass: the per-bin extents measured (ne x 4 ints), and per warp
//   a bit per target bin (emit);
// - n_wide > 0: the boundary fractions of the kernels wider than FUSED_EDGE
//   (fused_tables_dev::bf_wide, rows of nmax floats) and each bin's row;
// - single pass with spec planes of spectral tallies: per group, each
//   thread's chunk sum of a bin (two bins' worth, by parity: [2][G][cols]
//   doubles), the tile's running sums per plane ([spec][cols] doubles) and
//   the planes' coefficients of the one medium ([spec][ne] doubles). The
//   split instance keeps the chunk sums alone, and only where they cost it
//   no resident block (split_sums): it writes its bins' direction sums to
//   global memory, and the plane kernel forms the planes (the running sums
//   and coefficients halved its blocks per SM).
// - media (media_ring = R + 1 > 0): no per-bin tables of one medium and no
//   coefficients (each lane reads its medium's), and per group a ring of the
//   last R + 1 source bins' convolved values, [R + 1][nmax][cols] floats,
//   each thread's own (the gather of a target reads sources T .. T + R);
//   beside the stage ring, a ring of the same bins' records of the tile's
//   media (media_bin bytes each, energy_media.cuh), and the bins' centres [ne].
struct fused_layout {
    int lo, rows, wn; // rows below direction 0, rows per stage, weights per stage
    size_t w_off, step_off, bin_off, edge_off, boxa_off, box_off, full_off, bfrow_off, bfw_off,
        spec_off, sr_off, coef_off, ring_off, mbin_off, mE_off, bytes;
};

__host__ __device__ constexpr size_t align16(size_t b)
{
    return (b + 15) & ~(size_t)15;
}

// What a block keeps beside its stage rings and per-bin tables: n_wide rows
// of boundary fractions, spec planes of in-pass spectral tallies (in the
// split instance, split, only the chunk sums, and only where split_sums: it
// writes its bins' direction sums for the plane kernel), and with media the
// ring's R + 1 bins (0: one medium).
struct fused_extras {
    int n_wide, spec;
    bool split;
    bool split_sums;
    int media_ring;
    int media_bin; // media: bytes of one bin's staged records (media_stage_bytes)
};

__host__ __device__ inline fused_layout fused_layout_of(int nmax, int kp, int64_t ne, bool stream,
                                                        int sub, fused_extras x)
{
    const int n_wide = x.n_wide;
    const bool split = x.split;
    // The chunk sums in the unsplit instance with the tallies and in the
    // split one with split_sums; the running sums and the coefficients in
    // the unsplit one alone.
    const int spec = stream && !split ? x.spec : 0;
    const bool chunks = spec > 0 || (stream && split && x.spec > 0 && x.split_sums);
    const bool media = x.media_ring > 0;
    const size_t tab = media ? 0 : (size_t)ne; // the one medium's per-bin tables
    fused_layout L;
    L.lo = kp + CONV_TAPS_PER_BLOCK - 1;
    L.rows = L.lo + nmax + kp;
    L.wn = 2 * kp + CONV_TAPS_PER_BLOCK;
    L.w_off = (size_t)sub * FUSED_RING * L.rows * FUSED_COLS * sizeof(float);
    L.step_off = align16(L.w_off + (size_t)sub * FUSED_RING * L.wn * sizeof(float));
    L.bin_off = L.step_off + tab * sizeof(int4);
    L.edge_off = L.bin_off + tab * sizeof(fused_bin);
    L.boxa_off = L.edge_off + tab * 2 * sizeof(float4);
    L.box_off = L.boxa_off + (size_t)ne * sizeof(box4);
    L.full_off = L.box_off + (stream ? (size_t)ne * 4 * sizeof(int) : 0);
    L.bfrow_off = L.full_off +
                  (stream ? (size_t)sub * fused_g(nmax) * ((ne + 31) / 32) * sizeof(unsigned) : 0);
    L.bfw_off = L.bfrow_off + (n_wide > 0 ? (size_t)ne * sizeof(int) : 0);
    L.spec_off = align16(L.bfw_off + (size_t)n_wide * nmax * sizeof(float));
    L.sr_off =
        L.spec_off + (chunks ? (size_t)sub * 2 * fused_g(nmax) * FUSED_COLS * sizeof(double) : 0);
    L.coef_off = L.sr_off + (size_t)sub * spec * FUSED_COLS * sizeof(double);
    L.ring_off = align16(L.coef_off + (media ? 0 : (size_t)spec * ne * sizeof(double)));
    L.mbin_off = L.ring_off + (size_t)sub * x.media_ring * nmax * FUSED_COLS * sizeof(float);
    L.mE_off = L.mbin_off + (media ? (size_t)sub * FUSED_RING * x.media_bin : 0);
    L.bytes = L.mE_off + (media ? (size_t)ne * sizeof(double) : 0);
    return L;
}

// The widest kernel convolved from the padded stage: the grid's widest, capped
// at FUSED_MAX_KP and (tests) at kp_cap > 0.
inline int padded_kp(int max_half_width, int kp_cap)
{
    return min(max_half_width, kp_cap > 0 ? min(kp_cap, FUSED_MAX_KP) : FUSED_MAX_KP);
}

#endif
