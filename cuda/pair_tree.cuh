// Pairwise trees over a thread's register array: the fused kernel's tallies
// and minima.
#ifndef SMX_CUDA_PAIR_TREE_CUH
#define SMX_CUDA_PAIR_TREE_CUH

#include <math.h>

// Pairwise reduction of the first n of M values (`pad` past them): a tree of
// depth log2 M instead of a chain of M dependent instructions.
template <int M, typename Op>
__device__ __forceinline__ float pair_reduce(const float (&v)[M], int n, float pad, Op op)
{
    float t[M];
    if (n >= M) { // every value: no selects (n is uniform over a warp of the fused kernel)
#pragma unroll
        for (int m = 0; m < M; m++)
            t[m] = v[m];
    } else {
#pragma unroll
        for (int m = 0; m < M; m++)
            t[m] = m < n ? v[m] : pad;
    }
#pragma unroll
    for (int w = 1; w < M; w *= 2)
#pragma unroll
        for (int m = 0; m + w < M; m += 2 * w)
            t[m] = op(t[m], t[m + w]);
    return t[0];
}
// A tally's sum (rounding ~2e-7 relative at most for M = 16, far below the
// 1e-6 balance) and a minimum.
template <int M>
__device__ __forceinline__ float pair_sum(const float (&v)[M], int n)
{
    return pair_reduce(v, n, 0.0f, [](float a, float b) { return __fadd_rn(a, b); });
}
template <int M>
__device__ __forceinline__ float pair_min(const float (&v)[M], int n)
{
    return pair_reduce(v, n, INFINITY, [](float a, float b) { return fminf(a, b); });
}

#endif
