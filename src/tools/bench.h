/* smx2d-sim --bench: the roadmap's benchmark protocol on the roadmap grids. */
#ifndef SMX_BENCH_H
#define SMX_BENCH_H

#include "transport/backend.h"

typedef struct bench_options {
    int grids;               /* bit 0 small, 1 production, 2 stress */
    int steps;               /* timed steps per case (>= 100 for reported numbers) */
    int variants;            /* also every kernel variant on the Production grid */
    const char *json;        /* write the results here too */
    const char *const *sets; /* --set overrides applied to every case */
    int n_sets;
} bench_options;

int bench_main(const bench_options *o, const backend_ops *be, const char *device_name,
               smx_error *err);

#endif
