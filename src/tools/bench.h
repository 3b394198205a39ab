/* smx2d-sim --bench: the benchmark protocol of BENCHMARKS.md on its three fixed
 * grids. */
#ifndef SMX_BENCH_H
#define SMX_BENCH_H

#include "base/error.h"

typedef struct bench_options {
    int grids; /* bit 0 small, 1 production, 2 stress */
    int steps; /* timed steps per case (>= 100 for reported numbers) */
    int variants; /* also every kernel variant on the Production grid */
    const char *json; /* write the results here too */
    const char *const *sets; /* --set overrides applied to every case */
    int n_sets;
} bench_options;

/* Chooses the backend as a run does (backend.device via --device / --set), runs
 * the cases, prints the table and writes the JSON. */
int bench_main(const bench_options *o, smx_error *err);

#endif
