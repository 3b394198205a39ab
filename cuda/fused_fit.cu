// Which grids the fused step serves, decided on the host from the kernel's
// geometry (fused_layout.cuh): direction count, index ranges, and whether a
// block's shared memory holds one tile's stage ring or FUSED_SUB of them.
#include <climits>

#include "fused_layout.cuh"
#include "numerics/direction_chunks.h"
static_assert(fused_g(16) * fused_m(16) == 16 && fused_g(48) * fused_m(48) == 48 &&
                  fused_g(64) * fused_m(64) == 64 && FUSED_THREADS(64) / 32 <= 32,
              "whole direction chunks per column, at most 32 warps per block");
// The spectral tallies' chunks (numerics/direction_chunks.h) are a thread's directions.
static_assert(fused_m(16) == 4 && fused_m(32) == 8 && fused_m(48) == 8 && fused_m(64) == 8 &&
                  SMX_DIRECTION_CHUNK_MAX == 8,
              "smx_direction_chunk(nth) == fused_m(fused_nmax(nth))");

// kp: the padded stage's widest kernel; x: its spectral planes, and with media
// the R + 1 bins each tile keeps convolved.
static int fused_fits(int64_t nth, int64_t slice, int64_t ne, int kp, bool stream, fused_extras x)
{
    if (nth < 1 || nth > 64 || nth * slice > INT_MAX || ne < 1 || ne > INT_MAX / 64)
        return 0; // offsets within a bin are int
    // one tile per block at least (fused_tiles_per_block)
    return fused_layout_of(fused_nmax(nth), kp, ne, stream, 1, x).bytes <= FUSED_MAX_DYN_SMEM;
}

size_t fused_split_ws_floats(int64_t nth, int64_t ne, int max_tiles)
{
    return (size_t)max_tiles * (size_t)ne * fused_nmax(nth) * FUSED_COLS;
}

int fused_theta_energy_supported(int64_t nth, int64_t slice, int64_t ne, int max_half_width)
{
    return fused_fits(nth, slice, ne, padded_kp(max_half_width, 0), false,
                      fused_extras{ 0, 0, false, false, 0, 0 });
}

int fused_step_supported(int64_t nth, int64_t slice, int64_t ne, int max_half_width,
                         int spec_planes)
{
    return fused_fits(nth, slice, ne, padded_kp(max_half_width, 0), true,
                      fused_extras{ 0, spec_planes, false, false, 0, 0 });
}

int fused_media_step_supported(int64_t nth, int64_t slice, int64_t ne, int reach_bins,
                               int spec_planes, int bin_bytes)
{
    // One tile a block, no padded stage, the ring of R + 1 convolved bins
    // (at most 32: a lane keeps its sources' choices of table as bits) and
    // the bins' staged records (bin_bytes, 0 where not staged).
    return reach_bins >= 0 && reach_bins < ne && reach_bins + 1 <= 32 && bin_bytes >= 0 &&
           bin_bytes % 16 == 0 &&
           fused_fits(nth, slice, ne, 0, true,
                      fused_extras{ 0, spec_planes, false, false, reach_bins + 1, bin_bytes });
}

// FUSED_SUB tiles per block where their stage rings fit beside the per-bin
// tables, one otherwise (fused_fits).
int fused_tiles_per_block(const fused_sizes &z, int one_tile)
{
    const fused_layout L = fused_layout_of(fused_nmax(z.nth), padded_kp(z.max_half_width, z.kp_cap),
                                           z.ne, z.stream != 0, FUSED_SUB,
                                           fused_extras{ 0, z.spec_planes, false, false, 0, 0 });
    return !one_tile && L.bytes <= FUSED_MAX_DYN_SMEM ? FUSED_SUB : 1;
}
