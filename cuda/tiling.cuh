// The fused step's work items: tiles of FUSED_COLS columns of the columns it
// visits, and their order (fused.cu walks them; selftest.cu checks on the host
// that they cover each column once).
#ifndef SMX_CUDA_TILING_CUH
#define SMX_CUDA_TILING_CUH

#include "common.cuh"
#include "fused_shape.cuh"

// Columns per tile: one warp's lanes, consecutive in x.
#define FUSED_COLS 32

// The tiles of a step's columns F, in memory order: row by row, the row's
// whole blocks of 32 columns aligned in x (x = 32 i .. 32 i + 31: with the
// backend's row pitch of whole 128-byte lines, each direction of such a tile
// is one aligned line), then the columns left over at the row ends, every
// row's in turn, 32 to a tile, in runs of FUSED_LEFT_RUN tiles, each run
// placed after the row in which it ends, so that it runs beside its
// neighbours. Tiles of 32 consecutive columns of the flattened box would
// cross rows, and every load and store of theirs touch two lines; all the
// leftover tiles last would leave the slow ones to run alone at the step's end.
// Counts are int: nz * nx < 2^31 (fused_step_supported).
struct tiling {
    int rows, xa, nb, wl,
        wrem; // rows; first aligned column, aligned blocks per row; left, all leftover columns per row
};

__host__ __device__ inline tiling tiling_of(const box4 &F)
{
    tiling t{ 0, 0, 0, 0, 0 };
    if (box_is_empty(F))
        return t;
    const int fw = F.x1 - F.x0 + 1;
    const int xa = (F.x0 + FUSED_COLS - 1) / FUSED_COLS * FUSED_COLS,
              xb = (F.x1 + 1) / FUSED_COLS * FUSED_COLS;
    t.rows = F.z1 - F.z0 + 1;
    t.nb = xb > xa ? (xb - xa) / FUSED_COLS : 0;
    t.xa = t.nb ? xa : F.x1 + 1; // no whole block: every column is left over, from F.x0 on
    t.wl = t.xa - F.x0;
    t.wrem = fw - t.nb * FUSED_COLS;
    return t;
}

// Leftover tiles per run: a leftover tile's 32 columns lie on several rows,
// so each of its loads and stores touches several lines and it walks its
// bins more slowly than an aligned tile; a run of FUSED_SUB * FUSED_CLUSTER
// of them fills one cluster's work item on the benchmark grids (16 rows of 8
// leftover columns after 96 aligned tiles on Production, 8 rows of 16 after
// 96 on Stress), instead of slowing the aligned tiles of four clusters, which
// single leftover tiles, or runs of 2, beside them would.
#define FUSED_LEFT_RUN (FUSED_SUB * FUSED_CLUSTER)

// Tiles before row z (z <= rows): its whole blocks and the runs of leftover
// tiles that end before it (all of them, the last one partial, at z = rows).
__host__ __device__ inline int tiles_before(const tiling &t, int z)
{
    constexpr int run_cells = FUSED_LEFT_RUN * FUSED_COLS;
    const int left = z < t.rows ? z * t.wrem / run_cells * FUSED_LEFT_RUN
                                : (t.rows * t.wrem + FUSED_COLS - 1) / FUSED_COLS;
    return z * t.nb + left;
}

__host__ __device__ inline int64_t tiles_of(const tiling &t)
{
    return tiles_before(t, t.rows);
}

// The cell of column `col` of tile `tile` < tiles_of (false: none, a leftover
// tile's columns past the last leftover cell).
__host__ __device__ inline bool tile_cell(const box4 &F, const tiling &t, int tile, int col,
                                          int &cz, int &cx)
{
    // The row the tile belongs to: the last z with tiles_before(z) <= tile.
    int z = (int)((int64_t)tile * FUSED_COLS / (t.nb * FUSED_COLS + t.wrem));
    z = z < t.rows - 1 ? z : t.rows - 1;
    while (z + 1 < t.rows && tiles_before(t, z + 1) <= tile)
        z++;
    while (z > 0 && tiles_before(t, z) > tile)
        z--;
    const int o = tile - tiles_before(t, z);
    if (o < t.nb) {
        cz = F.z0 + z;
        cx = t.xa + o * FUSED_COLS + col;
        return true;
    }
    // leftover cell, row-major: leftover tiles come after the (z + 1) rows'
    // whole blocks before them (tiles_before(z) + o == tile)
    const int r = (tile - (z + 1) * t.nb) * FUSED_COLS + col;
    if (r >= t.rows * t.wrem)
        return false;
    const int q = r % t.wrem;
    cz = F.z0 + r / t.wrem;
    cx = q < t.wl ? F.x0 + q : t.xa + t.nb * FUSED_COLS + (q - t.wl);
    return true;
}

// Work items of a step's energy split (see fused_kernel): ng groups per
// tile, or 1 (no split) when the tiles alone give every block work, when
// the split is off (max_tiles = 0), or when too few source bins hold weight.
__host__ __device__ inline int split_groups(int64_t ntiles, int nsrc, int max_tiles, int blocks)
{
    if (ntiles == 0 || ntiles > max_tiles || nsrc < 2 * FUSED_SPLIT_MIN_BINS)
        return 1;
    const int64_t per = blocks / ntiles;
    const int by_bins = nsrc / FUSED_SPLIT_MIN_BINS;
    return per < 1 ? 1 : per < by_bins ? (int)per : by_bins;
}

// Slot k's columns that the one-pass step visits (common.cuh, slot_boxes):
// where psi_a holds weight and where psi_b holds values to clear; and their
// tiles.
__host__ __device__ inline box4 slot_visit(const box4 *slot_boxes, int k)
{
    return box_join(slot_boxes[SB_OCCUPIED * FUSED_SLOTS + k],
                    slot_boxes[SB_WRITTEN * FUSED_SLOTS + k]);
}
__host__ __device__ inline int slot_tiles(const box4 *slot_boxes, int k)
{
    return (int)tiles_of(tiling_of(slot_visit(slot_boxes, k)));
}
// pref[k]: the tiles of slots 0 .. k - 1 (k <= nslots), fused_step's slot_pref.
__host__ __device__ inline void slot_prefix(const box4 *slot_boxes, int nslots, int *pref)
{
    int n = 0;
    for (int k = 0; k < nslots; k++) {
        pref[k] = n;
        n += slot_tiles(slot_boxes, k);
    }
    pref[nslots] = n;
}

// The slot whose tiles hold tile (pref: slot_prefix's, nslots >= 1): the last
// k with pref[k] <= tile.
__host__ __device__ inline int slot_of_tile(const int *pref, int nslots, int64_t tile)
{
    int lo = 0, hi = nslots - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (pref[mid] <= tile)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// The energy split's groups of the one-pass step about to run, from what it
// finds (reg; with nslots > 1 each slot's tiles, slot_pref), as the step's
// kernel decides them (fused_kernel; blocks: its tiles in flight).
__device__ inline int step_split_groups(const active_regions *reg, const int *slot_pref, int nslots,
                                        int max_tiles, int blocks)
{
    const int64_t ntiles =
        nslots > 1 ? slot_pref[nslots] : tiles_of(tiling_of(box_join(reg->occupied, reg->written)));
    return split_groups(ntiles, reg->src_hi - reg->src_lo + 1, max_tiles, blocks);
}

#endif
