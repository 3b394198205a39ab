// The direct angular convolution of a few consecutive directions of one
// column, shared by the angular kernels and the fused step kernel.
#ifndef SMX_CUDA_CONV_ROWS_CUH
#define SMX_CUDA_CONV_ROWS_CUH

// ROWS consecutive outputs of one column,
//   acc[r] = sum_{d=-K..K} w[d] * v(j0 + r - d)   (index wrapped, or skipped outside [0, nth)),
// each summed for d ascending from 0.0f by fused multiply-adds (one rounding
// per term), exactly the CPU's fmaf order (src/fma_rows.h). `v(src)` returns
// the (thresholded) input of theta bin src.
//
// The taps are taken U at a time from a register window of ROWS + U - 1
// inputs, so that inside a block every index is a compile-time constant: one
// block costs U value loads, U weight loads and ROWS - 1 register moves for
// U * ROWS products (a window moved by one tap at a time costs ROWS - 1 moves
// per tap, more than its multiply-adds once ROWS >= 8). Taps past 2K carry
// weight 0, and so do sources outside [0, nth) in window mode: each is
// fma(0, v, acc) = acc + (+-0) == acc bitwise (acc starts at +0.0f and is
// never -0.0f), so this equals the CPU's loop, for finite inputs.
//
// Half-widths K <= 2 (most energy bins of a fine grid: K = 1 for
// 88 of the 100 bins of the benchmark's Production grid) get a fully unrolled
// form, which loads the window once.

namespace conv_detail {

// Index i of [0, nth), wrapped (circular) or -1 when outside (window).
__device__ __forceinline__ int src_index(int i, int nth, bool circular)
{
    if (!circular)
        return (unsigned)i < (unsigned)nth ? i : -1;
    i %= nth;
    return i < 0 ? i + nth : i;
}

template <typename Load>
__device__ __forceinline__ float load_or_zero(Load v, int src)
{
    return src >= 0 ? v(src) : 0.0f;
}

template <int ROWS, int K, typename Load>
__device__ __forceinline__ void conv_rows_fixed(int j0, int nth, const float *w, bool circular, Load v,
                                                float (&acc)[ROWS])
{
    constexpr int NW = ROWS + 2 * K; // win[i] = v(j0 - K + i)
    float win[NW], wt[2 * K + 1];
#pragma unroll
    for (int t = 0; t <= 2 * K; t++)
        wt[t] = __ldg(w + t - K);
    int src = src_index(j0 - K, nth, circular);
#pragma unroll
    for (int i = 0; i < NW; i++) {
        win[i] = load_or_zero(v, src);
        if (circular)
            src = src == nth - 1 ? 0 : src + 1;
        else
            src = (unsigned)(j0 - K + i + 1) < (unsigned)nth ? j0 - K + i + 1 : -1;
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0.0f;
#pragma unroll
    for (int t = 0; t <= 2 * K; t++) // d = t - K ascending; v(j0 + r - d) = win[r - t + 2K]
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            acc[r] = __fmaf_rn(wt[t], win[r - t + 2 * K], acc[r]);
}

template <int ROWS, int U, typename Load>
__device__ __forceinline__ void conv_rows_blocked(int j0, int nth, int K, const float *w, bool circular,
                                                  Load v, float (&acc)[ROWS])
{
    constexpr int NW = ROWS + U - 1;
    // Block of taps t0 .. t0 + U - 1 (d = t - K): win[i] = v(j0 + K - t0 - U + 1 + i).
    float win[NW];
    int lo = j0 + K - U + 1; // unwrapped index of win[0]
    int src = src_index(lo, nth, circular);
#pragma unroll
    for (int i = 0; i < NW; i++) {
        win[i] = load_or_zero(v, src);
        if (circular)
            src = src == nth - 1 ? 0 : src + 1;
        else
            src = (unsigned)(lo + i + 1) < (unsigned)nth ? lo + i + 1 : -1;
    }
    int low = src_index(lo, nth, circular); // wrapped index of win[0] (-1 outside, window mode)
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        acc[r] = 0.0f;
    const float *w0 = w - K; // w0[t] = w[t - K]
    for (int t0 = 0;; t0 += U) {
        float wt[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            wt[u] = t0 + u <= 2 * K ? __ldg(w0 + t0 + u) : 0.0f;
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                acc[r] = __fmaf_rn(wt[u], win[r - u + U - 1], acc[r]);
        if (t0 + U > 2 * K)
            break;
        // Next block: the window moves down by U.
#pragma unroll
        for (int i = NW - 1; i >= U; i--)
            win[i] = win[i - U];
#pragma unroll
        for (int i = U - 1; i >= 0; i--) {
            lo--;
            low = circular ? (low == 0 ? nth - 1 : low - 1) : ((unsigned)lo < (unsigned)nth ? lo : -1);
            win[i] = load_or_zero(v, low);
        }
    }
}

} // namespace conv_detail

#define CONV_TAPS_PER_BLOCK 4

template <int ROWS, typename Load>
__device__ __forceinline__ void conv_rows(int j0, int nth, int K, const float *w, bool circular, Load v,
                                          float (&acc)[ROWS])
{
    using namespace conv_detail;
    switch (K) {
    case 0:
        conv_rows_fixed<ROWS, 0>(j0, nth, w, circular, v, acc);
        break;
    case 1:
        conv_rows_fixed<ROWS, 1>(j0, nth, w, circular, v, acc);
        break;
    case 2:
        conv_rows_fixed<ROWS, 2>(j0, nth, w, circular, v, acc);
        break;
    default:
        conv_rows_blocked<ROWS, CONV_TAPS_PER_BLOCK>(j0, nth, K, w, circular, v, acc);
    }
}

// The same sums for a column staged with its neighbourhood in place: x[i * S]
// holds v(j0 + i) for every i in [-K - U + 1, ROWS + K) (zeros outside
// [0, nth) in window mode, wrapped copies in circular mode), and w[t] =
// w_d(t - K) for t in [0, 2K], followed by U - 1 zeros. No index arithmetic
// or bounds logic is left: every access is a base plus an immediate offset.
template <int ROWS, int K, int S>
__device__ __forceinline__ void conv_padded_fixed(const float *x, const float *w, float (&acc)[ROWS])
{
    float win[ROWS + 2 * K]; // win[i] = v(j0 - K + i)
#pragma unroll
    for (int i = 0; i < ROWS + 2 * K; i++)
        win[i] = x[(i - K) * S];
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

template <int ROWS, int U, int S>
__device__ __forceinline__ void conv_padded_blocked(const float *x, int K, const float *w, float (&acc)[ROWS])
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

// conv_padded_* for any K: x and w as above with U = CONV_TAPS_PER_BLOCK.
template <int ROWS, int S>
__device__ __forceinline__ void conv_padded(const float *x, int K, const float *w, float (&acc)[ROWS])
{
    switch (K) {
    case 0:
        conv_padded_fixed<ROWS, 0, S>(x, w, acc);
        break;
    case 1:
        conv_padded_fixed<ROWS, 1, S>(x, w, acc);
        break;
    case 2:
        conv_padded_fixed<ROWS, 2, S>(x, w, acc);
        break;
    default:
        conv_padded_blocked<ROWS, CONV_TAPS_PER_BLOCK, S>(x, K, w, acc);
    }
}

#endif
