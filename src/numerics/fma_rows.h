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

/* dst[x] = fmaf(c1, s1[x], c0 * s0[x]): the two-source energy gather. */
void rows_gather2(float *restrict dst, float c0, const float *restrict s0, float c1,
                  const float *restrict s1, int64_t n);

#endif
