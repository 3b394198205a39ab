/* Energy loss (A_E, continuous slowing down), built once per run.
 *
 * Source bin i (centre E_i) has after one step E' = R^-1(R(E_i) - rho ds), from
 * the CSDA range table (exact for any step length). E' is split between the two
 * bracketing bin centres t, t+1 with coefficients that keep both weight and mean
 * energy; E_i - E' is deposited in the cell. Below grid.E_stop the particle stops:
 * its whole energy E_i is deposited and its weight tallied as ENERGY_STOPPED.
 *
 * Two equivalent forms of the same coefficients:
 *  - scatter, per source: always valid; the fallback and the oracle;
 *  - gather, per target: at most two (source, coefficient) pairs per target,
 *    no atomics.
 *    Valid only when E' increases strictly with E (for an ascending grid) and no
 *    target has more than two sources; otherwise gather_ok = 0 and the backends
 *    fall back to scatter. */
#ifndef SMX_LUT_ENERGY_H
#define SMX_LUT_ENERGY_H

#include <stdint.h>

#include "base/error.h"
#include "physics/grid.h"
#include "physics/tables.h"

typedef struct energy_gather_entry {
    int32_t src[2];  /* source bins, ascending */
    float coeff[2];
    int32_t count;   /* 0, 1 or 2 */
} energy_gather_entry;

typedef struct energy_lut {
    int ne;
    /* scatter form, per source bin */
    double *E_after;      /* E' (MeV); NAN when stopped */
    int32_t *target;      /* lower target bin t, or -1 when stopped */
    float *c_lo, *c_hi;   /* weight to t and to t+1 (c_hi = 0 when t is the top bin) */
    double *deposit_MeV;  /* per unit weight: E_i - (c_lo E_t + c_hi E_t+1), or E_i when stopped */
    /* gather form, per target bin */
    energy_gather_entry *gather;
    int gather_ok;
    char gather_reason[256]; /* why gather was refused */
} energy_lut;

/* From the CSDA table: E' per source, then energy_lut_from_map. */
int energy_lut_build(energy_lut *lut, const grid *g, const tables *t, smx_error *err);
/* From explicit E' values (NAN or < E_stop = stopped); the tests use it to force
 * a non-monotone map. */
int energy_lut_from_map(energy_lut *lut, const grid *g, const double *E_after, smx_error *err);
void energy_lut_free(energy_lut *lut);

#endif
