// Conventions shared by every kernel family of the CUDA backend.
//
// - Indexing is 64-bit throughout (the Stress grid has 4.1e9 cells).
// - Every kernel runs on a FIXED grid (`blocks` x SMX_THREADS) chosen once at setup
//   and walks its work items with a grid-stride loop. The work each block sees
//   is therefore fixed, which makes per-block tally partials deterministic, and
//   launch parameters never change, which CUDA Graph replay needs.
// - Tallies: no atomics. Each block reduces its threads' contributions in a fixed
//   order (warp shuffle tree, then warps in order) and writes them to
//   partials[field * blocks + blockIdx.x]; the finish kernel (bookkeeping.cu)
//   sums the blocks in order at the end of the step.
// - *stop != 0 means the run has ended on the device (steps: auto); kernels
//   then return at once, so steps enqueued beyond the end change nothing.
#ifndef SMX_CUDA_COMMON_CUH
#define SMX_CUDA_COMMON_CUH

#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#define SMX_THREADS 256

// Warp-wide min / max of an int, called by all 32 lanes (full mask): the
// reduction instruction of sm_80 and newer, a butterfly of shuffles on
// older GPUs (the same result: min and max do not depend on the order).
#ifdef __CUDACC__
__device__ __forceinline__ int warp_min(int v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(0xffffffffu, v);
#else
    for (int off = 16; off > 0; off >>= 1)
        v = min(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
#endif
}
__device__ __forceinline__ int warp_max(int v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xffffffffu, v);
#else
    for (int off = 16; off > 0; off >>= 1)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
#endif
}
#endif
#define SMX_WARPS (SMX_THREADS / 32)

// The device layout of psi[E][theta][z][x] and dose[z][x]: rows of nx cells
// (the domain) px floats apart (px >= nx, row_pitch_for); the cells past nx
// of a row belong to no cell of the grid and hold zeros.
struct dev_dims {
    int64_t ne, nth, nz, nx;
    int64_t px; // row pitch: cell (z, x) of a plane is at z * px + x
    int64_t slice; // nz * px
    int64_t cells; // ne * nth * slice
    int64_t sw; // columns of a slot (grid.slot_nx): nx, or 0 for nx, where the grid has no slots
};

// The columns of one slot, and the first column of the slot holding x (0 <= x
// < nx): a slot is a domain of its own (physics/grid.h, slot_nx), so a move
// from column x stays inside [slot_lo, slot_lo + slot_w) or leaves the grid.
__host__ __device__ inline int64_t slot_w(const dev_dims &d)
{
    return d.sw > 0 && d.sw < d.nx ? d.sw : d.nx;
}
__host__ __device__ inline int slot_lo(const dev_dims &d, int x)
{
    return d.sw > 0 && d.sw < d.nx ? x - x % (int)d.sw : 0;
}

// Rows of psi (one per energy, direction and z): what a 2D copy between the
// host's rows of nx floats and the device's rows of px counts.
__host__ __device__ inline int64_t dev_rows(const dev_dims &d)
{
    return d.ne * d.nth * d.nz;
}

// The row pitch the CUDA backend gives a grid nx cells wide: nx rounded up to
// whole 128-byte lines where that costs at most an eighth more memory (or
// always, `force`: a test hook). The single-pass step moves most directions
// by whole rows each step; with a pitch of whole lines its tiles of 32 columns
// (aligned in x, fused.cu) stay line-aligned where they are read and where
// they are stored, so no tile's load or store splits a 128-byte line; the
// price is psi buffers px / nx larger.
__host__ __device__ constexpr int64_t row_pitch_for(int64_t nx, bool force)
{
    const int64_t p = (nx + 31) / 32 * 32;
    return force || (p - nx) * 8 <= nx ? p : nx;
}

__host__ __device__ inline int64_t dev_index(const dev_dims &d, int64_t ie, int64_t ith, int64_t iz,
                                             int64_t ix)
{
    return ((ie * d.nth + ith) * d.nz + iz) * d.px + ix;
}

// Sum of one double over the block, in a fixed order; the result is valid in
// thread 0. `scratch` must hold SMX_WARPS doubles and is reused after a barrier.
__device__ inline double block_sum(double v, double *scratch)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); // scratch may still be read from a previous call
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    double s = 0.0;
    if (threadIdx.x == 0)
        for (int w = 0; w < SMX_WARPS; w++)
            s += scratch[w];
    return s;
}

// Writes N per-thread values as this block's partials of fields f[0..N-1]:
// per value a shuffle tree, then the warps in order (fixed order, so
// deterministic). WARPS = warps per block. Every thread of the block must call it.
// SUB > 1: the block is SUB groups of WARPS warps (consecutive), each with its
// own slot (blockIdx.x * SUB + group), as if each were a block of its own;
// blocks counts the slots.
template <int N, int WARPS = SMX_WARPS, int SUB = 1>
__device__ inline void block_partials_at(const double (&v)[N], const int (&f)[N], double *partials,
                                         int blocks)
{
    __shared__ double scratch[N][WARPS * SUB];
    const int t = threadIdx.x;
    __syncthreads(); // scratch may still be read by an earlier call
    for (int q = 0; q < N; q++) {
        double sv = v[q];
        for (int off = 16; off > 0; off >>= 1)
            sv += __shfl_down_sync(0xffffffffu, sv, off);
        if ((t & 31) == 0)
            scratch[q][t >> 5] = sv;
    }
    __syncthreads();
    if (t < N * SUB) {
        const int q = t % N, sub = t / N;
        double s = 0.0;
        for (int w = 0; w < WARPS; w++)
            s += scratch[q][sub * WARPS + w];
        partials[(int64_t)f[q] * blocks + (int64_t)blockIdx.x * SUB + sub] = s;
    }
}

// The same for consecutive fields f0 .. f0+N-1 (SMX_THREADS blocks).
template <int N>
__device__ inline void block_partials(const double (&v)[N], double *partials, int f0, int blocks)
{
    int f[N];
    for (int k = 0; k < N; k++)
        f[k] = f0 + k;
    block_partials_at<N>(v, f, partials, blocks);
}

// A rectangle of cells (inclusive); empty when z0 > z1. Boxes bound where psi
// is non-zero, so that kernels touch only the occupied region.
struct box4 {
    int z0, z1, x0, x1;
};

__host__ __device__ inline bool box_is_empty(box4 b)
{
    return b.z0 > b.z1 || b.x0 > b.x1;
}
__host__ __device__ inline box4 box_empty4()
{
    return box4{ 1 << 30, -1, 1 << 30, -1 };
}
__host__ __device__ inline box4 box_join(box4 a, box4 b)
{
    if (box_is_empty(a))
        return b;
    if (box_is_empty(b))
        return a;
    return box4{ a.z0 < b.z0 ? a.z0 : b.z0, a.z1 > b.z1 ? a.z1 : b.z1, a.x0 < b.x0 ? a.x0 : b.x0,
                 a.x1 > b.x1 ? a.x1 : b.x1 };
}

// Highest energy bin that source bins moving to `target` reach: target + 1
// when the upper coefficient is non-zero (and that bin exists).

// Regions of the fused step, kept on the device between steps.
struct active_regions {
    box4 occupied; // union over energy bins of where psi_a is non-zero
    box4 written; // where psi_b may still hold values from the last step
    int src_lo, src_hi; // energy bins of psi_a that hold weight (lo > hi: none)
    int tgt_lo, tgt_hi; // bins they move to this step
    int wtgt_lo, wtgt_hi; // bins of psi_b that may hold last step's values
};

// Where a step's deposit map was written: the region's occupied and written
// boxes joined (the region kernels write only there), or the grid (reg null).
__device__ __forceinline__ box4 map_region(const dev_dims &d, const active_regions *reg)
{
    return reg ? box_join(reg->occupied, reg->written) : box4{ 0, (int)d.nz - 1, 0, (int)d.nx - 1 };
}

// What a streaming step over the active region writes: the occupied box
// joined with its image under the moves (reach = min/max move in z (x, y)
// and x (z, w) over the directions), clipped to the grid.
__device__ __forceinline__ box4 stream_region(const dev_dims &d, const active_regions *reg,
                                              int4 reach)
{
    const box4 occ = reg->occupied;
    if (box_is_empty(occ))
        return box_empty4();
    const box4 img{ occ.z0 + reach.x, occ.z1 + reach.y, occ.x0 + reach.z, occ.x1 + reach.w };
    box4 R = box_join(occ, img);
    R.z0 = max(R.z0, 0);
    R.x0 = max(R.x0, 0);
    R.z1 = min(R.z1, (int)d.nz - 1);
    R.x1 = min(R.x1, (int)d.nx - 1);
    return R;
}

// Each energy bin's non-zero extent, collected by a block in shared memory
// (sbox[ne][4]: z0, z1, x0, x1) and joined into box_next with one global
// atomic per bin and side. Clear before (then a barrier), flush after one.
__device__ __forceinline__ void extents_clear(int *sbox, int ne)
{
    for (int k = threadIdx.x; k < ne; k += blockDim.x) {
        sbox[4 * k + 0] = 1 << 30;
        sbox[4 * k + 1] = -1;
        sbox[4 * k + 2] = 1 << 30;
        sbox[4 * k + 3] = -1;
    }
}
__device__ __forceinline__ void extents_flush(const int *sbox, int ne, box4 *box_next)
{
    for (int k = threadIdx.x; k < ne; k += blockDim.x) {
        if (sbox[4 * k + 1] < 0)
            continue;
        atomicMin(&box_next[k].z0, sbox[4 * k + 0]);
        atomicMax(&box_next[k].z1, sbox[4 * k + 1]);
        atomicMin(&box_next[k].x0, sbox[4 * k + 2]);
        atomicMax(&box_next[k].x1, sbox[4 * k + 3]);
    }
}

// The (ie, z, x) columns an operator restricted to the active region visits:
// the source bins (src_lo .. src_hi) of the cells where the input holds weight
// or the output buffer last step's values (occupied joined with written).
// Without a region (reg null), every column: ie = c / slice. Column c of a
// region is bin bin0 + c / per, cell (z0 + r / nxr, x0 + r % nxr), r = c % per.
struct region_cols {
    int64_t ncols, per;
    int bin0, nxr, z0, x0;
    __device__ void at(int64_t c, dev_dims d, int64_t &ie, int64_t &zx) const
    {
        if (per == 0) {
            ie = c / d.slice;
            zx = c - ie * d.slice;
            return;
        }
        const int64_t b = c / per, r = c - b * per, z = r / nxr;
        ie = bin0 + b;
        zx = (z0 + z) * d.px + x0 + (r - z * nxr);
    }
};

__device__ inline region_cols region_cols_of(dev_dims d, const active_regions *reg)
{
    if (!reg)
        return region_cols{ d.ne * d.slice, 0, 0, 0, 0, 0 };
    const box4 F = box_join(reg->occupied, reg->written);
    const int lo = reg->src_lo, hi = reg->src_hi;
    if (box_is_empty(F) || hi < lo)
        return region_cols{ 0, 1, 0, 1, 0, 0 };
    const int nxr = F.x1 - F.x0 + 1;
    const int64_t per = (int64_t)(F.z1 - F.z0 + 1) * nxr;
    return region_cols{ (int64_t)(hi - lo + 1) * per, per, lo, nxr, F.z0, F.x0 };
}

// Spots side by side (slots, physics/grid.h): the one-pass step visits each
// slot's own box instead of the union over the state, so that a spot's step
// costs the cells its own box holds, not the columns between its neighbours'.
// slot_boxes holds FUSED_SLOTS boxes of each kind: where psi_a holds weight in
// the slot, where psi_b holds the last step's values, and what this step
// measures (joined by the one-pass kernel, moved to `occupied` by the
// bookkeeping). More slots than FUSED_SLOTS: the union, as without slots.
#define FUSED_SLOTS 64
enum slot_box_kind { SB_OCCUPIED = 0, SB_WRITTEN = 1, SB_NEXT = 2, SB_KINDS = 3 };
__host__ __device__ inline int slot_count(const dev_dims &d)
{
    return d.sw > 0 && d.sw < d.nx ? (int)(d.nx / d.sw) : 1;
}

// The energy bins each group of 32 columns of a row holds (slots' steps):
// per (row z, group x / 32) the lowest and highest bin with a value there,
// a bound ({INT_MAX, -1}: none). A tile of the slots' one-pass step walks
// only the bins its cells hold and writes only the targets of those and the
// bins its output holds where it writes, instead of every bin of the step's
// range: a spot's deep rows and its edges hold a few of them. Three arrays
// of nz * ncg, taken in turn with the step count n (the state alternates
// between two buffers; the third is the one being measured):
//   r[n % 3]       where step n's input holds values,
//   r[(n + 1) % 3] what step n writes (joined by its kernel; starts empty),
//   r[(n + 2) % 3] where its output buffer holds the state of step n - 1.
// Bins absent from a cell's group are zero there, so a tile that skips them
// adds the +0 the kernel would have added: the same bits.
#define GROUP_BINS_COLS 32
struct group_bins_dev {
    int2 *r; // [3][nz][ncg]
    int ncg; // group_bins_groups(px)
};
// The groups of a row of px columns (the last may be partial).
__host__ __device__ inline int64_t group_bins_groups(int64_t px)
{
    return (px + GROUP_BINS_COLS - 1) / GROUP_BINS_COLS;
}
enum group_bins_kind { GB_INPUT = 0, GB_NEXT = 1, GB_OUTPUT = 2 };
__host__ __device__ inline int2 *group_bins_at(const group_bins_dev &gb, int64_t nz, int64_t n,
                                               int kind)
{
    return gb.r + ((n + kind) % 3) * nz * gb.ncg;
}
__host__ __device__ inline int2 group_bins_none()
{
    return int2{ INT_MAX, -1 };
}

// Tally fields of one step, in the partials buffer and in the per-step record.
enum tally_field {
    // weight, then energy, of each channel in src/transport/tally.h's order
    TF_W_THETA_BOUNDARY = 0,
    TF_W_THETA_CUTOFF,
    TF_W_ENERGY_STOPPED,
    TF_W_SPATIAL_LEAK,
    TF_W_NUCLEAR,
    TF_W_MEDIUM_ROUNDING,
    TF_E_THETA_BOUNDARY,
    TF_E_THETA_CUTOFF,
    TF_E_ENERGY_STOPPED,
    TF_E_SPATIAL_LEAK,
    TF_E_NUCLEAR,
    TF_E_MEDIUM_ROUNDING,
    TF_DEPOSITED,
    TF_W_OUT,
    TF_E_OUT, // sums of psi and psi*E after the step
    TF_COUNT
};

#endif
