/* Streaming (A_stream): direction theta moves a particle by ds (cos theta, sin theta)
 * in (x, z). The move depends on theta only, so it is a per-theta table built once.
 *
 * bilinear: area weighting over the four cells at integer offsets (oz + a, ox + b),
 *           a, b in {0, 1}, weights w[a][b] from the fractional move. Diffuses a
 *           beam laterally by f(1-f) dx^2 per step.
 * shift:    each direction moves by whole cells; the shift of step n is
 *           round((n+1) s) - round(n s), s = move in cells, so the sub-cell
 *           remainder is carried from step to step and the mean move is exact
 *           with no diffusion within a direction bin (docs/physics.md, Operators). */
#ifndef SMX_LUT_STREAM_H
#define SMX_LUT_STREAM_H

#include <math.h>
#include <stdint.h>

#include "base/error.h"
#include "physics/grid.h"

typedef struct stream_table {
    int nth;
    int scheme; /* enum streaming_scheme */
    double *sx, *sz; /* [nth] move per step in cells (x, z) */
    int32_t *ox, *oz; /* [nth] bilinear: floor of the move */
    float *w; /* [nth][4] bilinear weights: (oz,ox) (oz,ox+1) (oz+1,ox) (oz+1,ox+1) */
} stream_table;

int stream_table_build(stream_table *st, const grid *g, int scheme, smx_error *err);
void stream_table_free(stream_table *st);

/* The whole-cell move of direction ith at step n (0-based) under the shift scheme. */
static inline int32_t stream_shift(double s, int64_t n)
{
    return (int32_t)(llround((double)(n + 1) * s) - llround((double)n * s));
}

#endif
