// A_theta on the GPU: convolution over direction with the per-energy kernels
// of src/physics/lut_angle.c, out of place (in != out).
//
// Semantics are those of cpu_op_theta() in src/transport/backend_cpu_operators.c (the oracle):
//   out[ie][j][z][x] = sum_{d=-K..K} w[d] * in[ie][j-d][z][x]
// with j-d wrapped (circular, full mode) or skipped (window mode), summed for
// d ascending from -K by fused multiply-adds, as the CPU, so that the result is
// bitwise the CPU's.
// Tallies (per-block partials, see common.cuh):
//   TF_W/E_THETA_BOUNDARY: window mode, sum_j in[j] * boundary_frac[kernel][j] (x E[ie])
//   TF_W/E_THETA_CUTOFF:   sum_j in[j] * (1 - weight_sum[kernel]) (x E[ie]),
//                          plus any weight dropped by the early-exit threshold.
// Early exit (backend.early_exit, docs/tuning.md), when threshold > 0: values
// below threshold are dropped (tallied as THETA_CUTOFF) before the convolution;
// a warp whose columns are all below it skips the arithmetic and writes zeros.
#ifndef SMX_CUDA_ANGULAR_CUH
#define SMX_CUDA_ANGULAR_CUH

#include "base/error.h"
#include "common.cuh"

struct angular_tables_dev {
    const float *weights; // concatenated kernels, w[d] at offset[k] + K + d
    const int *offset; // [n_kernels]
    const int *half_width; // [n_kernels]
    const int *kernel_of_energy; // [n_media][ne]: medium m, bin ie at m * media_stride + ie
    const unsigned char *medium; // [nz][px] the medium of each cell; NULL: medium 0 everywhere
    int64_t media_stride; // ne (kernel_of_energy may be offset to a run of bins)
    const double *weight_sum; // [n_kernels]
    const double *boundary_frac; // [n_kernels][nth] (zeros in full mode)
    const double *E; // [ne] bin centres, MeV
    int n_kernels;
    int max_half_width;
    int circular; // 1 = full circle
    // Bins of unequal width (grid.angle.spacing: beam): a kernel per (kernel,
    // source bin), as the gather of physics/lut_angle.h (angle_gather): the
    // terms of target i of kernel k at gat_off[k * nth + i] ..; gat_cut[k *
    // nth + j], a unit weight's cut-off. NULL: one kernel per bin (weights).
    // Direct kernels only (the fused ones and the FFT are not taken).
    const int *gat_off;
    const int *gat_src;
    const float *gat_w;
    const double *gat_cut;
};

// Kernel of bin ie in cell zx (z * px + x).
__device__ inline int kernel_at(const angular_tables_dev &t, int64_t ie, int64_t zx)
{
    return t.kernel_of_energy[(t.medium ? (int64_t)t.medium[zx] * t.media_stride : 0) + ie];
}

// Shared memory the direct kernel needs per block; the backend compares it with
// the device's limit and uses angular_direct_global when it does not fit.
size_t angular_direct_smem_bytes(int64_t nth, int max_half_width);

// What an A_theta launch reads, writes and tallies: psi in and out (in !=
// out), the device's stop flag (set: the kernels do nothing), the per-block
// partials its tallies go to and the number of blocks it runs.
struct angular_io {
    const float *in;
    float *out;
    const int *stop;
    double *partials;
    int blocks;
};

// The direct convolution on grid d with tables t and the early exit's threshold.
cudaError_t angular_direct(const angular_io &io, dev_dims d, const angular_tables_dev &t,
                           float threshold, cudaStream_t s);
// A region's A_theta on ncomp components of a state (the moments scheme's,
// d.cells apart): grid, tables, the early exit's threshold, the region.
struct angular_components {
    dev_dims d;
    const angular_tables_dev *t;
    float threshold;
    const active_regions *reg;
    int ncomp;
};
// Every component in one launch: the weight (component 0) with the threshold
// and the tallies, the others with neither, each bitwise as its own launch.
cudaError_t angular_direct_components(const angular_io &io, const angular_components &a,
                                      cudaStream_t s);
// Same semantics without shared memory (large Ntheta).
cudaError_t angular_direct_global(const angular_io &io, dev_dims d, const angular_tables_dev &t,
                                  float threshold, cudaStream_t s);

// cuFFT path: circular convolution along theta by R2C / pointwise product with
// each energy bin's kernel spectrum / C2R. Full mode only (window mode returns
// SMX_EXIT_INPUT from angular_fft_create: the backend then uses direct).
// Its results equal direct to float rounding (~1e-6 relative), not bitwise.
struct angular_fft;
// Device bytes the FFT path needs (spectra + work buffers), for the arena.
size_t angular_fft_bytes(dev_dims d, int n_kernels);
// What the FFT path is built from: the grid and the device tables; the host
// copies of the kernel tables (host_*: to build the spectra); `mem`,
// angular_fft_bytes of device memory from the backend's arena.
struct angular_fft_setup {
    dev_dims d;
    angular_tables_dev t;
    const float *host_weights;
    const int *host_offset, *host_half_width;
    void *mem;
};
int angular_fft_create(angular_fft **f, const angular_fft_setup &u, cudaStream_t s, smx_error *err);
// On the grid and tables f was built for.
cudaError_t angular_fft_apply(angular_fft *f, const angular_io &io, cudaStream_t s);
// The same on energy bins lo..hi only (the per-sigma-bucket hybrid).
cudaError_t angular_fft_apply_range(angular_fft *f, const angular_io &io, int64_t lo, int64_t hi,
                                    cudaStream_t s);
void angular_fft_destroy(angular_fft *f);

#endif
