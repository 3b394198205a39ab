// A_stream on the GPU: move weight along its direction, out of place.
//
// Semantics are those of cpu_op_stream() in src/transport/backend_cpu_operators.c (the oracle), for
// the two schemes of src/physics/lut_stream.h:
//   bilinear: source (z, x) of direction j sends w[j][2a+b] to (z+oz[j]+a, x+ox[j]+b);
//   shift:    source (z, x) moves whole to (z + shift(sz[j], n), x + shift(sx[j], n))
//             with shift(s, n) = llround((n+1) s) - llround(n s), n = *step (device memory,
//             so that a captured CUDA graph replays correctly).
// Targets outside the domain are SPATIAL_LEAK: each source adds in * sum of its
// out-of-domain weights to TF_W_SPATIAL_LEAK (x E[ie] to TF_E_SPATIAL_LEAK).
// Variants (all must agree to 1e-6 relative; gather is bitwise the CPU gather):
//   gather   one thread per OUTPUT cell, sums its <= 4 sources in the CPU's order
//            (a, b) = (0,0) (0,1) (1,0) (1,1); atomic-free and deterministic
//   atomic   one thread per source, atomicAdd into out (out zeroed by the launcher)
//   warp     atomic with warp aggregation: lanes with the same target found by
//            __match_any_sync add their values within the group first (only
//            partners of the same group!) and the group leader issues one atomic
//            (CC >= 7.0)
//   fallback a simpler aggregation that needs no __match_any_sync: if all 32
//            lanes share a target, shuffle-reduce and one atomic, else one
//            atomic each
#ifndef SMX_CUDA_STREAMING_CUH
#define SMX_CUDA_STREAMING_CUH

#include "common.cuh"

struct stream_tables_dev {
    const int *ox, *oz; // [nth] bilinear integer offsets
    const float *w; // [nth][4] bilinear weights
    const double *sx, *sz; // [nth] move per step in cells (shift scheme)
    const double *E; // [ne] bin centres
    int scheme; // 0 bilinear, 1 shift (enum streaming_scheme)
};

// Whole-cell move of step n under the shift scheme, exactly stream_shift() of
// src/physics/lut_stream.h (host too: access-probe replays the benchmark's moves).
__host__ __device__ __forceinline__ int64_t stream_shift_of(double s, int64_t n)
{
    return llround((double)(n + 1) * s) - llround((double)n * s);
}

enum stream_variant_dev { SV_GATHER = 0, SV_ATOMIC = 1, SV_WARP = 2, SV_FALLBACK = 3 };

// What A_stream's launches are handed: psi in and out (in != out), the
// device's step count (the shift scheme's moves), the grid and the tables;
// for the launches that measure their output over the active region, reg,
// reach (min/max whole-cell move in z (x, y) and x (z, w), the bilinear
// second cell included) and box_next; the stop flag, the per-block partials
// and the number of blocks.
struct stream_args {
    const float *in;
    float *out;
    const int64_t *step;
    dev_dims d;
    stream_tables_dev t;
    const active_regions *reg;
    int4 reach;
    box4 *box_next;
    const int *stop;
    double *partials;
    int blocks;
};

// The whole grid with the add of `variant` (reg, reach and box_next unused).
cudaError_t stream_launch(int variant, const stream_args &a, cudaStream_t s);

// Gather that also measures its output, for a step whose last operator is
// streaming, over the active region only (occupied rows and their image under
// the moves): TF_W_OUT, TF_E_OUT, and each energy bin's non-zero extent
// merged into box_next (must start empty). Needs ne * 16 bytes of shared
// memory.
cudaError_t stream_gather_and_measure(const stream_args &a, cudaStream_t s);

// The adds of the scatter self-test: out[targets[i]] += values[i], i < n.
struct scatter_adds {
    const long long *targets;
    const float *values;
    int64_t n;
};
// Test hook: runs the scatter variants' per-warp add on arbitrary (target, value)
// pairs (target -1 = none), adding into out (not cleared). Real streaming never
// puts two live lanes of a warp on one target, so this is how the warp
// aggregation is tested where many lanes share a target and many do not.
cudaError_t stream_scatter_selftest(int variant, const scatter_adds &adds, float *out, int blocks,
                                    cudaStream_t s);

#endif
