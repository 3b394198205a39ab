#include "physics/lut_energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* E' this close to a bin centre (relative) is that centre: on a range grid the
 * round trip through R and R^-1 leaves ~1e-13, which must not become a split. */
#define SNAP_REL 1e-9

static int gather_build(energy_lut *lut)
{
    int ne = lut->ne;
    double prev = -INFINITY;
    for (int i = 0; i < ne; i++) {
        if (lut->target[i] < 0)
            continue;
        /* Ascending grid: a higher source energy must land higher after the step. */
        if (!(lut->E_after[i] > prev)) {
            snprintf(lut->gather_reason, sizeof lut->gather_reason,
                     "energy after the step is not strictly increasing with energy at source "
                     "bin %d (%.6g MeV after %.6g MeV)", i, lut->E_after[i], prev);
            return 0;
        }
        prev = lut->E_after[i];
    }
    for (int i = 0; i < ne; i++) {
        int t = lut->target[i];
        if (t < 0)
            continue;
        float c[2] = {lut->c_lo[i], lut->c_hi[i]};
        for (int k = 0; k < 2; k++) {
            if (c[k] == 0.0f)
                continue;
            energy_gather_entry *e = &lut->gather[t + k];
            if (e->count == 2) {
                snprintf(lut->gather_reason, sizeof lut->gather_reason,
                         "target bin %d receives from more than two source bins", t + k);
                return 0;
            }
            e->src[e->count] = i;
            e->coeff[e->count] = c[k];
            e->count++;
        }
    }
    return 1;
}

int energy_lut_from_map(energy_lut *lut, const grid *g, const double *E_after, smx_error *err)
{
    int ne = (int)g->ne;
    *lut = (energy_lut){.ne = ne};
    lut->E_after = malloc(ne * sizeof *lut->E_after);
    lut->target = malloc(ne * sizeof *lut->target);
    lut->c_lo = malloc(ne * sizeof *lut->c_lo);
    lut->c_hi = malloc(ne * sizeof *lut->c_hi);
    lut->deposit_MeV = malloc(ne * sizeof *lut->deposit_MeV);
    lut->gather = calloc(ne, sizeof *lut->gather);
    if (!lut->E_after || !lut->target || !lut->c_lo || !lut->c_hi || !lut->deposit_MeV ||
        !lut->gather) {
        energy_lut_free(lut);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy-loss table");
    }
    const double *Ec = g->E.centres;
    for (int i = 0; i < ne; i++) {
        double Ep = E_after[i];
        if (!(Ep >= g->E_stop)) { /* also catches NAN: below the table */
            lut->E_after[i] = NAN;
            lut->target[i] = -1;
            lut->c_lo[i] = lut->c_hi[i] = 0.0f;
            lut->deposit_MeV[i] = Ec[i];
            continue;
        }
        /* Bracketing centres t <= E' < t+1 by bisection over the centres. */
        int lo = 0, hi = ne - 1;
        if (Ep >= Ec[hi]) {
            lo = hi;
        } else {
            while (hi - lo > 1) {
                int mid = (lo + hi) / 2;
                if (Ec[mid] <= Ep)
                    lo = mid;
                else
                    hi = mid;
            }
        }
        int t = lo;
        float c_lo, c_hi;
        if (fabs(Ep - Ec[t]) <= SNAP_REL * Ec[t] || t == ne - 1) {
            c_lo = 1.0f;
            c_hi = 0.0f;
        } else if (fabs(Ec[t + 1] - Ep) <= SNAP_REL * Ec[t + 1]) {
            t = t + 1;
            c_lo = 1.0f;
            c_hi = 0.0f;
        } else {
            /* Mean energy kept: c_lo E_t + c_hi E_t+1 = E', c_lo + c_hi = 1. */
            c_hi = (float)((Ep - Ec[t]) / (Ec[t + 1] - Ec[t]));
            c_lo = 1.0f - c_hi;
        }
        lut->E_after[i] = Ep;
        lut->target[i] = t;
        lut->c_lo[i] = c_lo;
        lut->c_hi[i] = c_hi;
        /* Deposit what the stored (float) coefficients take away, so that energy
         * bookkeeping closes with the numbers actually applied. */
        double E_kept = c_lo * Ec[t] + (c_hi != 0.0f ? c_hi * Ec[t + 1] : 0.0);
        lut->deposit_MeV[i] = Ec[i] * ((double)c_lo + (double)c_hi) - E_kept;
    }
    lut->gather_ok = gather_build(lut);
    return 0;
}

int energy_lut_build(energy_lut *lut, const grid *g, const tables *t, smx_error *err)
{
    double *E_after = malloc(g->ne * sizeof *E_after);
    if (!E_after)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy-loss table");
    double ds_g = g->ds * 0.1 * g->density;
    for (int64_t i = 0; i < g->ne; i++) {
        double R = tables_csda_range(t, g->E.centres[i]);
        E_after[i] = tables_energy_at_range(t, R - ds_g); /* NAN below the table: stops */
    }
    int rc = energy_lut_from_map(lut, g, E_after, err);
    free(E_after);
    return rc;
}

void energy_lut_free(energy_lut *lut)
{
    free(lut->E_after);
    free(lut->target);
    free(lut->c_lo);
    free(lut->c_hi);
    free(lut->deposit_MeV);
    free(lut->gather);
    *lut = (energy_lut){0};
}
