/* Rows of fused multiply-adds: the CPU side of the GPU's FFMA.
 *
 * The angular convolution and the energy gather accumulate w * v into a sum.
 * Both backends do it as one fused multiply-add, rounded once (C's fmaf, the
 * GPU's __fmaf_rn), so the CPU reference and the CUDA kernels stay bitwise
 * equal while the GPU issues one instruction per term instead of two. */
#ifndef SMX_FMA_ROWS_H
#define SMX_FMA_ROWS_H

#include <stdint.h>

/* dst[x] = fmaf(w, src[x], dst[x]) for x in [0, n); dst and src must not overlap. */
void rows_fma(float *restrict dst, const float *restrict src, float w, int64_t n);

/* dst[x] = w * src[x]: the first term of a sum that rows_fma continues. It
 * is fmaf(w, src[x], +0) for non-negative w and src[x] (no -0 to add +0 to),
 * so a sum started here has the bits of one started from zeros. */
void rows_mul(float *restrict dst, const float *restrict src, float w, int64_t n);

/* dst[x] = fmaf(c1, s1[x], c0 * s0[x]): the two-source energy gather. */
void rows_gather2(float *restrict dst, float c0, const float *restrict s0, float c1,
                  const float *restrict s1, int64_t n);

/* D[x] = fma(dep, (double)src[x], D[x]) for x in [0, n) (a direction's
 * deposit chain, deposit_path.h: each element rounded once, as the GPU's
 * __fma_rn), and returns the sum of src[0..n) in double, added in a fixed
 * order of eight lanes (lane k: the x = k mod 8, ascending; then the lanes
 * pairwise). D and src must not overlap. */
double rows_fma_f64_sum(double *restrict D, const float *restrict src, double dep, int64_t n);

/* D[x] = fma(c, src[x], D[x]) in double, each rounded once (the GPU's __fma_rn). */
void rows_fma_f64(double *restrict D, const double *restrict src, double c, int64_t n);
/* D[x] += (double)src[x]. */
void rows_add_f64(double *restrict D, const float *restrict src, int64_t n);

/* The sum of src[0..n) in double in rows_fma_f64_sum's order, and the first
 * and last x with src[x] != 0 (both -1 when there is none). */
double rows_sum_extent(const float *restrict src, int64_t n, int64_t *first, int64_t *last);

#endif
