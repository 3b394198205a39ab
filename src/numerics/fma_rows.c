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
void rows_mul(float *restrict dst, const float *restrict src, float w, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        dst[x] = w * src[x];
}

SMX_FMA_CLONES
void rows_gather2(float *restrict dst, float c0, const float *restrict s0, float c1,
                  const float *restrict s1, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        dst[x] = fmaf(c1, s1[x], c0 * s0[x]);
}

/* The lane sums of src[x0..n) (x0 a multiple of 8): lane k holds src[x] for
 * x = k mod 8, added in ascending x; the lanes then pairwise. The order is
 * fixed (any build, any thread count), and eight independent sums let the
 * adds overlap. A lane's +0 plus +0 stays +0, so leaving out leading zeros
 * (x0 > 0) or trailing ones (a smaller n) gives the same bits. */
static inline double lane_sum_from(const float *restrict src, int64_t x0, int64_t n)
{
    double s[8] = { 0.0 };
    int64_t x = x0;
    for (; x + 8 <= n; x += 8)
        for (int k = 0; k < 8; k++)
            s[k] += src[x + k];
    for (int k = 0; x + k < n; k++)
        s[k] += src[x + k];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static inline double lane_sum(const float *restrict src, int64_t n)
{
    return lane_sum_from(src, 0, n);
}

SMX_FMA_CLONES
double rows_fma_f64_sum(double *restrict D, const float *restrict src, double dep, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        D[x] = fma(dep, (double)src[x], D[x]);
    return lane_sum(src, n);
}

SMX_FMA_CLONES
void rows_fma_f64(double *restrict D, const double *restrict src, double c, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        D[x] = fma(c, src[x], D[x]);
}

SMX_FMA_CLONES
void rows_add_f64(double *restrict D, const float *restrict src, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        D[x] += (double)src[x];
}

SMX_FMA_CLONES
double rows_sum_extent(const float *restrict src, int64_t n, int64_t *first, int64_t *last)
{
    /* Eight at a time to the first block holding a non-zero value: most of
     * a box's rows are zero at most directions. */
    int64_t a = 0;
    for (; a + 8 <= n; a += 8) {
        int any = 0;
        for (int k = 0; k < 8; k++)
            any |= src[a + k] != 0.0f;
        if (any)
            break;
    }
    while (a < n && src[a] == 0.0f)
        a++;
    if (a == n) {
        *first = *last = -1;
        return 0.0;
    }
    int64_t b = n - 1;
    while (b > a && src[b] == 0.0f)
        b--;
    *first = a;
    *last = b;
    /* The zeros before a and after b add nothing (lane_sum_from). */
    return lane_sum_from(src, a & ~(int64_t)7, b + 1);
}
