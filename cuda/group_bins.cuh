// The slots' one-pass step's per-tile bins (common.cuh, group_bins_dev): what
// a tile reads of the bins each group of a row's columns holds, and how it
// joins in what it wrote. Warp-level: every warp of a tile holds the tile's
// 32 columns, so each forms the same values without a barrier.
#ifndef SMX_CUDA_GROUP_BINS_CUH
#define SMX_CUDA_GROUP_BINS_CUH

#include "common.cuh"

// This step's whole-cell moves over its directions, with the zero move (a
// column clears its own cell's values); the same on every lane.
struct move_span {
    int zlo, zhi, xlo, xhi;
};
__device__ inline move_span warp_move_span(const int *mz, const int *mx, int nth)
{
    int zlo = 0, zhi = 0, xlo = 0, xhi = 0;
    for (int j = (int)(threadIdx.x % 32); j < nth; j += 32) {
        zlo = min(zlo, mz[j]), zhi = max(zhi, mz[j]);
        xlo = min(xlo, mx[j]), xhi = max(xhi, mx[j]);
    }
    return move_span{ warp_min(zlo), warp_max(zhi), warp_min(xlo), warp_max(xhi) };
}

// The groups that the moves of cell (cz, cx) reach: rows z0..z1, groups g0..g1.
struct group_reach {
    int z0, z1, g0, g1;
};
__device__ inline group_reach reach_of(const group_bins_dev &gb, int nz, int cz, int cx,
                                       const move_span &mv)
{
    // (cx + mv.xlo) may be -1: division truncates it to group 0, the clamp's.
    return group_reach{ max(0, cz + mv.zlo), min(nz - 1, cz + mv.zhi),
                        max(0, (cx + mv.xlo) / GROUP_BINS_COLS),
                        min(gb.ncg - 1, (cx + mv.xhi) / GROUP_BINS_COLS) };
}

// The bins the warp's live cells hold in step n's input (x, y) and those its
// output buffer holds where the cells' moves land (z, w): lowest and highest,
// or INT_MAX and -1.
__device__ inline int4 tile_group_bins(const group_bins_dev &gb, int64_t n, int nz, bool live,
                                       int cz, int cx, const move_span &mv)
{
    int2 in = group_bins_none(), out = group_bins_none();
    if (live) {
        const int2 *gi = group_bins_at(gb, nz, n, GB_INPUT);
        const int2 *go = group_bins_at(gb, nz, n, GB_OUTPUT);
        in = gi[(int64_t)cz * gb.ncg + cx / GROUP_BINS_COLS];
        const group_reach r = reach_of(gb, nz, cz, cx, mv);
        for (int z = r.z0; z <= r.z1; z++)
            for (int k = r.g0; k <= r.g1; k++) {
                const int2 b = go[(int64_t)z * gb.ncg + k];
                out.x = min(out.x, b.x), out.y = max(out.y, b.y);
            }
    }
    return int4{ warp_min(in.x), warp_max(in.y), warp_min(out.x), warp_max(out.y) };
}

// Joins bins lo..hi, which the tile wrote values into, at every group the
// moves of the warp's live cells reach (a bound: each of the tile's cells
// takes the tile's range). Every lane calls it; one atomic pair per group.
__device__ inline void join_group_bins(const group_bins_dev &gb, int64_t n, int nz, bool live,
                                       int cz, int cx, const move_span &mv, int lo, int hi)
{
    int2 *gn = group_bins_at(gb, nz, n, GB_NEXT);
    const group_reach r = reach_of(gb, nz, cz, cx, mv);
    const int spans =
        (mv.xhi - mv.xlo) / GROUP_BINS_COLS + 2; // groups a cell's moves reach, at most
    for (int dz = mv.zlo; dz <= mv.zhi; dz++)
        for (int k = 0; k < spans; k++) {
            const int z = cz + dz, gx = r.g0 + k;
            const int key = live && z >= r.z0 && z <= r.z1 && gx <= r.g1 ? z * gb.ncg + gx : -1;
            const unsigned peers = __match_any_sync(0xffffffffu, key);
            if (key >= 0 && (int)(threadIdx.x % 32) == __ffs(peers) - 1) {
                atomicMin(&gn[key].x, lo);
                atomicMax(&gn[key].y, hi);
            }
        }
}

#endif
