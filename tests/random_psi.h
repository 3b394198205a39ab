/* Fresh non-trivial inputs for the kernel tests: a fixed-seed xorshift
 * generator (reproducible failures) and a psi with every cell occupied. */
#ifndef SMX_TEST_RANDOM_PSI_H
#define SMX_TEST_RANDOM_PSI_H

#include <stdint.h>
#include <stdlib.h>

#include "physics/grid.h"

static inline double test_uniform(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (*state >> 11) * (1.0 / 9007199254740992.0);
}

/* Every cell in [0.05, 1.05): none zero, so no operator can pass by doing nothing. */
static inline float *random_psi(const grid *g, uint64_t *state)
{
    float *psi = malloc(g->cells * sizeof *psi);
    if (psi)
        for (int64_t i = 0; i < g->cells; i++)
            psi[i] = (float)(0.05 + test_uniform(state));
    return psi;
}

#endif
