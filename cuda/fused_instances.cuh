// The fused step kernel's instance groups, one per NMAX (the directions a
// thread block's columns hold, fused_nmax): each cuda/fused_nmaxNN.cu
// instantiates the kernel for its NMAX only (fused_instance.inc), under the
// shift scheme's single pass (stream, with or without slots) and the two-pass
// theta + energy (no stream, no slots: the two-pass step has no slots).
#ifndef SMX_CUDA_FUSED_INSTANCES_CUH
#define SMX_CUDA_FUSED_INSTANCES_CUH

#include "fused_layout.cuh"

// The launch of one step (fused_step, fused_theta_energy) by this group.
cudaError_t fused_launch_nmax16(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax32(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax48(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax64(const fused_args &A, bool stream, bool slots, cudaStream_t s);

// fused_boundary_rows_fit for this group.
int fused_rows_fit_nmax16(int kp, int64_t ne, int tiles, int n_wide, bool stream);
int fused_rows_fit_nmax32(int kp, int64_t ne, int tiles, int n_wide, bool stream);
int fused_rows_fit_nmax48(int kp, int64_t ne, int tiles, int n_wide, bool stream);
int fused_rows_fit_nmax64(int kp, int64_t ne, int tiles, int n_wide, bool stream);

#endif
