// Device pieces of A_theta shared by the direct kernels (angular_direct.cu)
// and the FFT path (angular_fft.cu): the stop flag, the blocked loads and the
// register-blocked convolution rows; a column's inputs and tallies are
// angular_tally.cuh's.
#ifndef SMX_CUDA_ANGULAR_INTERNAL_CUH
#define SMX_CUDA_ANGULAR_INTERNAL_CUH

#include "angular.cuh"
#include "angular_tally.cuh"
#include "common.cuh"
#include "conv_rows.cuh"

namespace {

// Block-uniform read of the stop flag (thread 0 reads, the block agrees).
__device__ inline bool block_stopped(const int *stop)
{
    __shared__ int s_stop;
    if (threadIdx.x == 0)
        s_stop = stop ? *(volatile const int *)stop : 0;
    __syncthreads();
    return s_stop != 0;
}

// Rows per register block: each thread computes ROWS consecutive outputs
// j0 .. j0+ROWS-1 of its column together (see conv_rows).
constexpr int ROWS = 16;
// Loads of one column issued back to back before any is used (memory-level
// parallelism: the theta rows of a column lie nz*nx floats apart).
constexpr int LOAD_BATCH = 8;

// Calls f(th, in[th]) for th = first, first + step, ... < nth, in that order,
// fetching LOAD_BATCH values at a time.
template <typename F>
__device__ inline void for_column(const float *col, int64_t slice, int first, int step, int nth,
                                  F f)
{
    for (int th0 = first; th0 < nth; th0 += LOAD_BATCH * step) {
        float v[LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; u++) {
            const int th = th0 + u * step;
            v[u] = th < nth ? __ldg(col + (int64_t)th * slice) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; u++) {
            const int th = th0 + u * step;
            if (th < nth)
                f(th, v[u]);
        }
    }
}

// conv_rows for rows j0 .. j0+ROWS-1 of a column, stored to o[j * slice].
template <typename Load>
__device__ inline void conv_rows_store(float *o, int64_t slice, int j0, int nth, int K,
                                       const float *w, bool circular, Load load)
{
    float acc[ROWS];
    conv_rows(j0, nth, K, w, circular, load, acc);
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        if (j0 + r < nth)
            o[(int64_t)(j0 + r) * slice] = acc[r];
}

} // namespace

#endif
