// A_theta and A_E (with the deposit) fused into one pass over psi, out of place.
//
// One thread owns one (z, x) column and walks the SOURCE energy bins upwards:
// it convolves bin s over theta once (input staged in shared memory), adds the
// deposit of s to the dose in the CPU's order (ie ascending, theta ascending),
// and adds c_lo * conv to target t = target[s] and c_hi * conv to t + 1, which
// it keeps as two open accumulators in registers. Because target[s] never
// decreases with s (the gather LUT's precondition), a target is complete once
// a source maps above it, and is written then, in ascending order; targets no
// source reaches are written as zeros. psi is therefore read once and written
// once, and every float operation happens in the same order as in the CPU's
// op_theta + op_energy (gather), so the result is bitwise the CPU's.
//
// Work is proportional to the occupied region (boxes, see common.cuh).
// Tallies: THETA_BOUNDARY / THETA_CUTOFF as the angular kernels, DEPOSITED and
// ENERGY_STOPPED as energy_deposit. Early exit: values below threshold are
// dropped (THETA_CUTOFF) before the convolution; a warp whose 32 columns of a
// bin are all zero skips that bin's arithmetic.
#ifndef SMX_CUDA_FUSED_CUH
#define SMX_CUDA_FUSED_CUH

#include "angular.cuh"
#include "common.cuh"
#include "energy.cuh"

// 1 when the fused kernel can serve this grid (n_theta it is built for).
int fused_theta_energy_supported(int64_t nth);

// Only the columns of reg->occupied (where psi_a holds weight) and reg->written
// (where psi_b holds last step's values) are visited; a source bin is read only
// inside its box_a (outside it psi_a is zero). Elsewhere psi_b must be zero.
cudaError_t fused_theta_energy(const float *in, float *out, double *dose, dev_dims d,
                               angular_tables_dev at, energy_tables_dev et, float threshold,
                               const box4 *box_a, const active_regions *reg, const int *stop,
                               double *partials, int blocks, cudaStream_t s);

#endif
