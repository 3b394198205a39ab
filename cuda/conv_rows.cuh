// The direct angular convolution of a few consecutive directions of one
// column, shared by the angular kernels and the fused step kernel.
#ifndef SMX_CUDA_CONV_ROWS_CUH
#define SMX_CUDA_CONV_ROWS_CUH

// ROWS consecutive outputs of one column,
//   acc[r] = sum_{d=-K..K} w[d] * v(j0 + r - d)   (index wrapped, or skipped outside [0, nth)),
// each summed for d ascending from 0.0f with rounded multiply and add, exactly
// the CPU's order. `v(src)` returns the (thresholded) input of theta bin src.
// Register window: win[r] holds v(j0 + r - d) at step d, so one step costs one
// weight load and one value load for ROWS outputs; going from d to d+1 shifts
// the window up by one and loads its bottom, v(j0 - d - 1).
// Window mode: terms whose source lies outside [0, nth) enter as 0 * w[d] = +-0,
// and acc + (+-0) == acc bitwise (acc starts at +0.0f and is never -0.0f), so
// this equals the CPU's skipping them, for finite weights.
template <int ROWS, typename Load>
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
        const float wd = __ldg(w + dd);
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            acc[r] = __fadd_rn(acc[r], __fmul_rn(wd, win[r]));
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

#endif
