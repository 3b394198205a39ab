/* The per-source angular kernels as a gather (lut_angle.h, angle_gather). */
#include "physics/lut_angle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The terms that land on target i = lo + t inside the window, of source bin
 * kj's support: t in [first, end). */
static void window_terms(const angle_kernels *ak, size_t kj, int *first, int *end)
{
    const int lo = ak->src_lo[kj], len = ak->src_len[kj], n = ak->n_theta;
    *first = lo < 0 ? -lo : 0;
    *end = lo + len > n ? n - lo : len;
}

void angle_gather_free(angle_gather *ag)
{
    if (!ag)
        return;
    free(ag->off);
    free(ag->src);
    free(ag->w);
    free(ag->cut);
    memset(ag, 0, sizeof *ag);
}

size_t angle_gather_terms(const angle_kernels *ak)
{
    size_t n = 0;
    if (!ak || !ak->per_source)
        return 0;
    for (size_t kj = 0; kj < (size_t)ak->n_kernels * ak->n_theta; kj++) {
        int first, end;
        window_terms(ak, kj, &first, &end);
        n += end > first ? (size_t)(end - first) : 0;
    }
    return n;
}

int angle_gather_build(const angle_kernels *ak, angle_gather *ag, smx_error *err)
{
    memset(ag, 0, sizeof *ag);
    if (!ak->per_source)
        return smx_fail(err, SMX_EXIT_RUNTIME, "angular gather: the kernels are not per source");
    const int n = ak->n_theta;
    const size_t nkj = (size_t)ak->n_kernels * n, terms = angle_gather_terms(ak);
    if (terms > INT_MAX)
        return smx_fail(err, SMX_EXIT_RUNTIME, "angular gather: %zu terms exceed int offsets",
                        terms);
    ag->n_terms = (int)terms;
    ag->off = calloc(nkj + 1, sizeof *ag->off);
    ag->src = malloc((terms ? terms : 1) * sizeof *ag->src);
    ag->w = malloc((terms ? terms : 1) * sizeof *ag->w);
    ag->cut = malloc(nkj * sizeof *ag->cut);
    if (!ag->off || !ag->src || !ag->w || !ag->cut) {
        angle_gather_free(ag);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory for the angular gather");
    }
    /* Count each target's terms (off[ki + 1]), then their starts. */
    for (size_t kj = 0; kj < nkj; kj++) {
        const size_t k0 = kj - kj % (size_t)n;
        int first, end;
        window_terms(ak, kj, &first, &end);
        for (int t = first; t < end; t++)
            ag->off[k0 + (size_t)(ak->src_lo[kj] + t) + 1]++;
        ag->cut[kj] = 1.0 - ak->src_sum[kj];
    }
    for (size_t ki = 0; ki < nkj; ki++)
        ag->off[ki + 1] += ag->off[ki];
    /* Sources in ascending order, as the scatter adds them into a target. */
    int *fill = malloc((nkj ? nkj : 1) * sizeof *fill);
    if (!fill) {
        angle_gather_free(ag);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory for the angular gather");
    }
    memcpy(fill, ag->off, nkj * sizeof *fill);
    for (size_t kj = 0; kj < nkj; kj++) {
        const size_t k0 = kj - kj % (size_t)n;
        const float *w = ak->src_weights + ak->src_off[kj];
        int first, end;
        window_terms(ak, kj, &first, &end);
        for (int t = first; t < end; t++) {
            const int e = fill[k0 + (size_t)(ak->src_lo[kj] + t)]++;
            ag->src[e] = (int)(kj - k0);
            ag->w[e] = w[t];
        }
    }
    free(fill);
    return 0;
}
