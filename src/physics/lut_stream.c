#include "physics/lut_stream.h"

#include <math.h>
#include <stdlib.h>

#include "input/plan.h"

int stream_table_build(stream_table *st, const grid *g, int scheme, smx_error *err)
{
    int n = (int)g->nth;
    *st = (stream_table){ .nth = n, .scheme = scheme };
    st->sx = malloc(n * sizeof *st->sx);
    st->sz = malloc(n * sizeof *st->sz);
    st->ox = malloc(n * sizeof *st->ox);
    st->oz = malloc(n * sizeof *st->oz);
    st->w = malloc(4 * (size_t)n * sizeof *st->w);
    if (!st->sx || !st->sz || !st->ox || !st->oz || !st->w) {
        stream_table_free(st);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the streaming table");
    }
    for (int i = 0; i < n; i++) {
        double th = g->theta.centres[i];
        double sx = g->ds * cos(th) / g->dx, sz = g->ds * sin(th) / g->dz;
        /* cos(90 deg) is 6e-17, not 0: a forward beam must not creep sideways. */
        if (fabs(sx) < 1e-12)
            sx = 0.0;
        if (fabs(sz) < 1e-12)
            sz = 0.0;
        st->sx[i] = sx;
        st->sz[i] = sz;
        double fx0 = floor(sx), fz0 = floor(sz);
        double fx = sx - fx0, fz = sz - fz0;
        st->ox[i] = (int32_t)fx0;
        st->oz[i] = (int32_t)fz0;
        st->w[4 * i + 0] = (float)((1.0 - fz) * (1.0 - fx));
        st->w[4 * i + 1] = (float)((1.0 - fz) * fx);
        st->w[4 * i + 2] = (float)(fz * (1.0 - fx));
        st->w[4 * i + 3] = (float)(fz * fx);
    }
    return 0;
}

void stream_table_free(stream_table *st)
{
    free(st->sx);
    free(st->sz);
    free(st->ox);
    free(st->oz);
    free(st->w);
    *st = (stream_table){ 0 };
}
