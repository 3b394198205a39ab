// The moments scheme on the GPU (src/numerics/moments.h): psi's first and
// second moments move with it, so the transport does not depend on the cells.
// Semantics are the CPU's (src/transport/backend_cpu_operators.c, the oracle),
// bit for bit: the same shared functions in double, float sums in the same
// order, no atomics. The state is ncomp = SMX_MOM_COMPONENTS (6) blocks of
// d.cells floats: the weight, then w (u_z + 4), w (u_x + 1), w <u_x^2>,
// w (e + 1) and w <e^2> (stored shifted, so non-negative: moments.h; e is
// the energy's offset from its bin's centre). A_theta runs on each component
// as on the weight (backend_cuda.cu: the region kernel once per component, or
// the whole-grid kernels); these are the kernels that differ:
//   moments_source:  a source starts on the entrance plane (u_z = -1/2) at
//                    its cells' centres (u_x = 0, no spread) and its bins'
//                    centres (e = 0, no spread);
//   moments_energy:  A_E, one thread per (direction, z, x) cell: the deposit
//                    chains over the bins ascending (the dose's, to first
//                    order in e through the mean table's slope, and the z/x
//                    moments' maps), then the move in place, targets
//                    ascending: in the reference medium every component with
//                    the plain table's coefficients, in another each source
//                    cell's energy strip cut between the lower and upper
//                    whole-bin tables (smx_emom_split), all components of a
//                    target summed before any is written;
//   moments_stream:  A_stream, one thread per target cell gathering, from the
//                    two candidate rows and four candidate columns ascending,
//                    the part of each source that lands in it (the CPU's
//                    scatter visits sources in that order, so each target's
//                    float sums agree); each cell also tallies, as a source,
//                    the weight it sends out of the grid or its slot, and a
//                    subnormal weight (SPATIAL_LEAK);
//   moments_spread:  the deposit's spread along each cell's own path
//                    (smx_mpath_held, then smx_mpath_cell, per dose cell);
//   moments_stream_measure: moments_stream over the active region, measuring
//                    the new state as the shift scheme's stream does.
#ifndef SMX_CUDA_MOMENTS_CUH
#define SMX_CUDA_MOMENTS_CUH

#include "common.cuh"
#include "deposit_path.cuh"
#include "energy.cuh"
#include "energy_media.cuh"
#include "streaming.cuh"

// The deposit maps beside dmap, [nth] planes of d.slice floats each.
struct moment_maps_dev {
    float *mz, *mx, *qx;
};

// A_E's tables (moments_energy). Per medium m at m * ne + ie: the mean
// table's deposit and its slope over the bins (smx_emom_slope, computed on
// the host by the same function). Per (medium, table) at (m * 2 + table) * ne
// + ie the whole-bin tables' fates for the tallies (energy_media_dev's; with
// one medium the plain table's [ne] arrays, medium 0 taking table 0 only).
struct moments_energy_dev {
    const unsigned char *medium; // [nz][px]; NULL: every cell holds medium 0
    const double *deposit_mean, *slope; // [n_media][ne]
    const int *target;
    const double *deposit, *nuc_w, *nuc_e;
    const energy_gather_dev *gather; // [ne] the reference medium's, per target
    // The other media (energy_media_dev's): the lower table's share per
    // source bin and the (source, table) candidates of each target.
    const double *p_low; // [n_media][ne]
    const int *cand_start; // [n_media * ne + 1]
    const media_candidate *cand;
    const double *E; // [ne] centres
};

cudaError_t moments_source(float *psi, dev_dims d, int blocks, cudaStream_t s);

// The whole grid (a's step, reg, reach and box_next unused).
cudaError_t moments_stream(const stream_args &a, cudaStream_t s);

// The deposit's spread along each cell's own path, from dmap and the maps m:
// a's dose, dmap, d, st, mass, stop and blocks (its paths' scratch, step and
// moved unused); a.reg: where the maps were written this step (its occupied
// and written boxes joined; NULL: the whole grid, written by the whole-grid
// kernels).
cudaError_t moments_spread(const spread_args &a, moment_maps_dev m, cudaStream_t s);

// What the in-place launches below are handed: psi on grid d, the deposit
// map dmap and the maps m beside it, A_E's tables, the active region (NULL:
// the whole grid), the stop flag, the per-block partials and the blocks.
struct moments_args {
    float *psi;
    float *dmap;
    moment_maps_dev m;
    dev_dims d;
    moments_energy_dev t;
    const active_regions *reg;
    const int *stop;
    double *partials;
    int blocks;
};

// A_E in place on psi (the output of A_theta): the deposit maps dmap and m,
// then the move. reg: only the cells of its occupied and written boxes, the
// deposit over its source bins and the move of every bin a target or a
// stale value may hold; NULL: the whole grid.
// The early exit (threshold > 0): A_theta drops every weight below the
// threshold from its input, and runs the moment components with none; their
// moments of the dropped weight would then join the kept weight of other
// directions and give it a false offset (the energy's: per-spot rows 12 %
// off in titanium). This zeroes them first, over the region (reg) or the
// whole state (a's psi, d, reg, stop and blocks).
cudaError_t moments_drop(const moments_args &a, float threshold, cudaStream_t s);
cudaError_t moments_energy(const moments_args &a, cudaStream_t s);

// moments_stream over the active region only (stream_gather_and_measure's
// region and bins: a.reach = the rows k0 .. k1 and columns floor(s) - 1 ..
// floor(s) + 2 over every direction), measuring its output: TF_W_OUT,
// TF_E_OUT and each bin's non-zero extent joined into box_next (which must
// start empty); a.step unused. Needs ne * 16 bytes of shared memory.
cudaError_t moments_stream_measure(const stream_args &a, cudaStream_t s);

#endif
