/* An axis of n cells of one width from lo, as physics/grid.c lays them out,
 * for tests that build a grid by hand. */
#ifndef SMX_TEST_AXIS_FIXTURE_H
#define SMX_TEST_AXIS_FIXTURE_H

#include <stdlib.h>

#include "physics/grid.h"

static inline void make_axis(axis *a, int n, double lo, double width)
{
    a->n = n;
    a->centres = malloc((size_t)n * sizeof(double));
    a->edges = malloc((size_t)(n + 1) * sizeof(double));
    for (int i = 0; i <= n; i++)
        a->edges[i] = lo + i * width;
    for (int i = 0; i < n; i++)
        a->centres[i] = 0.5 * (a->edges[i] + a->edges[i + 1]);
}

#endif
