/* Built twice (GCC function multi-versioning): with FMA instructions, 8 floats
 * at a time, where the CPU has them (every x86-64 since 2013), else through
 * libm's fmaf, which is correctly rounded too, only slower. The loader picks
 * one at start-up; both give the same bits. */
#include "numerics/fma_rows.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SMX_FMA_CLONES __attribute__((target_clones("fma", "default"), optimize("tree-vectorize")))
#else
#define SMX_FMA_CLONES
#endif

SMX_FMA_CLONES
void rows_fma(float *restrict dst, const float *restrict src, float w, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        dst[x] = fmaf(w, src[x], dst[x]);
}

SMX_FMA_CLONES
void rows_gather2(float *restrict dst, float c0, const float *restrict s0, float c1,
                  const float *restrict s1, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        dst[x] = fmaf(c1, s1[x], c0 * s0[x]);
}
