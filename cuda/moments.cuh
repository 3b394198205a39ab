// The moments scheme on the GPU (src/numerics/moments.h): psi's first and
// second moments move with it, so the transport does not depend on the cells.
// Semantics are the CPU's (src/transport/backend_cpu_operators.c, the oracle),
// bit for bit: the same shared functions in double, float sums in the same
// order, no atomics. The state is ncomp = 4 blocks of d.cells floats: the
// weight, then w (u_z + 4), w (u_x + 1) and w <u_x^2> (stored shifted, so
// non-negative: moments.h). A_theta and A_E run on each component as on the
// weight (backend_cuda.cu: the region path's fused or region kernels once per
// component, or the whole-grid kernels); these are the kernels that differ:
//   moments_source:  a source starts on the entrance plane (u_z = -1/2) at
//                    its cells' centres (u_x = 0, no spread);
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
// The deposit's moment maps are no kernel of their own: the deposit kernels'
// maps of the moment components (the chains of fma(deposit[e], (double)m, .)).
#ifndef SMX_CUDA_MOMENTS_CUH
#define SMX_CUDA_MOMENTS_CUH

#include "common.cuh"
#include "deposit_path.cuh"
#include "streaming.cuh"

// The deposit maps beside dmap, [nth] planes of d.slice floats each.
struct moment_maps_dev {
    float *mz, *mx, *qx;
};

cudaError_t moments_source(float *psi, dev_dims d, int blocks, cudaStream_t s);

cudaError_t moments_stream(const float *in, float *out, dev_dims d, stream_tables_dev t,
                           const int *stop, double *partials, int blocks, cudaStream_t s);

// reg: where the maps were written this step (its occupied and written
// boxes joined; NULL: the whole grid, written by the whole-grid kernels).
cudaError_t moments_spread(double *dose, const float *dmap, moment_maps_dev m, dev_dims d,
                           stream_tables_dev st, mass_share_dev mass, const active_regions *reg,
                           const int *stop, int blocks, cudaStream_t s);

// moments_stream over the active region only (stream_gather_and_measure's
// region and bins: reach = the rows k0 .. k1 and columns floor(s) - 1 ..
// floor(s) + 2 over every direction), measuring its output: TF_W_OUT,
// TF_E_OUT and each bin's non-zero extent joined into box_next (which must
// start empty). Needs ne * 16 bytes of shared memory.
cudaError_t moments_stream_measure(const float *in, float *out, dev_dims d, stream_tables_dev t,
                                   const active_regions *reg, int4 reach, box4 *box_next,
                                   const int *stop, double *partials, int blocks, cudaStream_t s);

#endif
