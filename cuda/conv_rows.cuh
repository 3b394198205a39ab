// The direct angular convolution of a few consecutive directions of one
// column, shared by the angular kernels and the fused step kernel.
#ifndef SMX_CUDA_CONV_ROWS_CUH
#define SMX_CUDA_CONV_ROWS_CUH

// ROWS consecutive outputs of one column,
//   acc[r] = sum_{d=-K..K} w[d] * v(j0 + r - d)   (index wrapped, or skipped outside [0, nth)),
// each summed for d ascending from 0.0f by fused multiply-adds (one rounding
// per term), exactly the CPU's fmaf order (src/numerics/fma_rows.h). `v(src)` returns
// the (thresholded) input of theta bin src. This form checks bounds and wraps
// indices itself; the fused step's hot path uses conv_padded below.
// Register window: win[r] holds v(j0 + r - d) at step d, so one step costs one
// weight load and one value load for ROWS outputs; going from d to d+1 shifts
// the window up by one and loads its bottom, v(j0 - d - 1).
// Window mode: terms whose source lies outside [0, nth) enter as
// fma(w[d], 0, acc) = acc + (+-0) == acc bitwise (acc starts at +0.0f and is
// never -0.0f), so this equals the CPU's skipping them, for finite weights.
// LDG: w is global memory (read-only path); false: w may be shared memory.
template <int ROWS, bool LDG = true, typename Load>
__device__ __forceinline__ void conv_rows(int j0, int nth, int K, const float *w, bool circular,
                                          Load v, float (&acc)[ROWS])
{
    float win[ROWS];
    int p; // index of win[0]: j0 - d (wrapped in circular mode)
    if (circular) {
        p = (j0 + K) % nth; // j0 < nth and K < nth: no overflow
        int q = p;
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            win[r] = v(q); // q = (j0 + r + K) mod nth
            acc[r] = 0.0f;
            q = q == nth - 1 ? 0 : q + 1;
        }
    } else {
        p = j0 + K;
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int src = p + r;
            win[r] = src < nth ? v(src) : 0.0f; // src >= 0 always
            acc[r] = 0.0f;
        }
    }
    for (int dd = -K; dd <= K; dd++) {
        const float wd = LDG ? __ldg(w + dd) : w[dd];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            acc[r] = __fmaf_rn(wd, win[r], acc[r]);
        if (dd == K)
            break;
#pragma unroll
        for (int r = ROWS - 1; r > 0; r--)
            win[r] = win[r - 1];
        if (circular) {
            p = p == 0 ? nth - 1 : p - 1;
            win[0] = v(p);
        } else {
            p--;
            win[0] = p >= 0 && p < nth ? v(p) : 0.0f;
        }
    }
}

// Taps per block of conv_padded_blocked: inside a block every window index is
// a compile-time constant, so one block costs U value loads, U weight loads and
// ROWS - 1 register moves for U * ROWS fused multiply-adds (a window moved one
// tap at a time costs ROWS - 1 moves per tap, more than its arithmetic once
// ROWS >= 8). Half-widths K <= 2 (88 of the 100 bins of the benchmark's
// Production grid) get a fully unrolled form that loads the halo rows once (the
// central rows come from the caller's registers).
#define CONV_TAPS_PER_BLOCK 4

// The same sums for a column staged with its neighbourhood in place: x[i * S]
// holds v(j0 + i) for every i in [-K - U + 1, ROWS + K) (zeros outside
// [0, nth) in window mode, wrapped copies in circular mode), and w[t] =
// w_d(t - K) for t in [0, 2K], followed by U - 1 zeros. No index arithmetic
// or bounds logic is left: every access is a base plus an immediate offset.
// The zero rows and the zero weights past 2K enter as fma(0, v, acc) or
// fma(w, 0, acc), both == acc bitwise (as in conv_rows), for finite inputs.
template <int ROWS, int U, int S>
__device__ __forceinline__ void conv_padded_blocked(const float *x, int K, const float *w,
                                                    float (&acc)[ROWS])
{
    constexpr int NW = ROWS + U - 1;
    const float *p = x + (K - U + 1) * S; // win[i] = p[i * S] = v(j0 + K - t0 - U + 1 + i)
    float win[NW];
#pragma unroll
    for (int i = 0; i < NW; i++)
        win[i] = p[i * S];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0.0f;
    for (int t0 = 0;; t0 += U) {
        float wt[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            wt[u] = w[t0 + u];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                acc[r] = __fmaf_rn(wt[u], win[r - u + U - 1], acc[r]);
        if (t0 + U > 2 * K)
            break;
#pragma unroll
        for (int i = NW - 1; i >= U; i--)
            win[i] = win[i - U];
        p -= U * S;
#pragma unroll
        for (int i = 0; i < U; i++)
            win[i] = p[i * S];
    }
}

// Fixed K <= 2, with the ROWS central values already in registers (own[r] ==
// x[r * S], the caller's thresholded inputs): only the 2K halo rows are loaded
// (the central rows are in registers already: loading them again would only
// add shared-memory traffic to the hot loop).
template <int ROWS, int K, int S>
__device__ __forceinline__ void conv_padded_fixed(const float *x, const float *w,
                                                  const float (&own)[ROWS], float (&acc)[ROWS])
{
    float win[ROWS + 2 * K]; // win[i] = v(j0 - K + i)
#pragma unroll
    for (int i = 0; i < ROWS + 2 * K; i++)
        win[i] = (i >= K && i < K + ROWS) ? own[i - K] : x[(i - K) * S];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0.0f;
#pragma unroll
    for (int t = 0; t <= 2 * K; t++) {
        const float wt = w[t];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            acc[r] = __fmaf_rn(wt, win[r - t + 2 * K], acc[r]);
    }
}

// conv_padded_* for any K: x and w as above with U = CONV_TAPS_PER_BLOCK.
// own: the ROWS central values (x[r * S]), as the caller holds them.
template <int ROWS, int S>
__device__ __forceinline__ void conv_padded(const float *x, int K, const float *w,
                                            const float (&own)[ROWS], float (&acc)[ROWS])
{
    switch (K) {
    case 0:
        conv_padded_fixed<ROWS, 0, S>(x, w, own, acc);
        break;
    case 1:
        conv_padded_fixed<ROWS, 1, S>(x, w, own, acc);
        break;
    case 2:
        conv_padded_fixed<ROWS, 2, S>(x, w, own, acc);
        break;
    default:
        conv_padded_blocked<ROWS, CONV_TAPS_PER_BLOCK, S>(x, K, w, acc);
    }
}

#endif
