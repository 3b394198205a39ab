// The whole step of a run with media (cells of several materials and
// densities, energy_media.cuh) under the shift scheme in one kernel, psi[n & 1]
// -> the other buffer, as fused_step does for one medium: one read and one
// write of psi.
//
// A tile of 32 columns (z, x), consecutive in x, and FM_GROUPS warps, each
// warp M of the column's directions. The tile walks q = wlo .. max(whi + R,
// src_hi) (spots side by side: each slot's box, and each tile only the bins
// its cells hold, as fused_step's slots): source bin q (if it holds weight)
// is copied into shared memory a bin ahead,
// convolved over theta with the kernel of the lane's medium (the direct
// kernel's operations: thresholded inputs, conv_rows), its deposit joins each
// direction's chain (deposit_path.h) and its convolved values go to a ring of
// R + 1 bins; then target bin T = q - R is complete (no source above T + R
// reaches it, R the widest source-target distance of every medium's tables)
// and is formed by the gather of the lane's medium (candidates ascending, the
// table this step chose: energy_media_region's operations) and written at the
// cell it moves to this step. T is the same for every lane, so the writes of
// a bin go out together; columns of different media differ only in their
// kernels and candidates. psi, the deposit map and the dose are bitwise the
// CPU's. The kernel also tallies every channel and measures its output
// (TF_W_OUT, TF_E_OUT, each bin's extent into box_next), as fused_step, and
// takes the spectral tallies of the step's psi from the staged source bins
// (each thread's quads of directions summed before the threshold, the cell's
// chunks added after the stage's barrier; bitwise cpu_spectral_tallies).
#ifndef SMX_CUDA_FUSED_MEDIA_CUH
#define SMX_CUDA_FUSED_MEDIA_CUH

#include "angular.cuh"
#include "common.cuh"
#include "energy_media.cuh"
#include "spectral_tally.cuh"
#include "streaming.cuh"

#define FM_GROUPS 4 // warps per tile, each a share of the directions
#define FM_MAX_NTH 64 // directions the kernel is built for (M = 4 .. 16 per warp)
#define FM_MAX_RING 8 // source bins kept convolved (R + 1)
#define FM_SLOTS 4 // blocks launched per block of the partials buffer (each slot its own partials)

// The widest distance from a target bin up to a source of its candidates, over
// every medium (host side, from the candidate tables); -1 when none.
// 1 when the kernel serves the grid: nth <= FM_MAX_NTH, R + 1 <= FM_MAX_RING
// and its shared memory (the tallies' sums of nplanes planes, the ring, the
// stage, a box per bin) fits.
int fused_media_supported(int64_t nth, int64_t ne, int reach_bins, int nplanes, size_t smem_optin);

// What the kernel is handed (by value): psi[*step & 1] -> the other buffer,
// the deposit map, the grid, the angular, energy and streaming tables, the
// early exit's threshold, box_next and reg as fused_step's, reach (R: a
// target's sources lie in T .. T + R), the stop flag, the partials and the
// blocks per slot of them, and the slots' boxes.
struct fused_media_args {
    float *psi0, *psi1;
    const int64_t *step;
    float *dmap;
    dev_dims d;
    angular_tables_dev at;
    energy_media_dev em;
    stream_tables_dev st;
    float threshold;
    box4 *box_next;
    const active_regions *reg;
    int reach;
    const int *stop;
    double *partials;
    int blocks;
    // Spots side by side (nslots > 1): each slot's own box is visited, as in
    // fused_step (common.cuh, slot_boxes), and each tile's measured extent
    // joins its slot's SB_NEXT box; slot_pref: the tiles before each slot's;
    // each tile walks the bins its cells hold (gbins, as fused_step's).
    box4 *slot_boxes;
    const int *slot_pref;
    int nslots;
    group_bins_dev gbins; // with slots: the bins each row's column groups hold
    // The spectral tallies of the step's psi (the halo's released energy, LET,
    // dose to water), taken in the pass: spec_dose's planes 1 .. nplanes
    // gain each cell's sum, the order of cpu_spectral_tallies; nplanes 0 where
    // the tally kernels take them.
    spectral_tables_dev spec;
    double *spec_dose;
};

// blocks * FM_SLOTS blocks of FM_GROUPS * 32 threads, writing FM_SLOTS slots of
// partials (the caller sums them: finish_launch's slots).
cudaError_t fused_media_step(const fused_media_args &a, cudaStream_t s);

#endif
