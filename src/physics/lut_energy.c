#include "physics/lut_energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/dither_phase.h"
#include "physics/nuclear.h"
#include "physics/nuclear_halo.h"
#include "physics/pp_elastic.h"
#include "physics/straggling.h"

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
                     "bin %d (%.6g MeV after %.6g MeV)",
                     i, lut->E_after[i], prev);
            return 0;
        }
        prev = lut->E_after[i];
    }
    for (int i = 0; i < ne; i++) {
        int t = lut->target[i];
        if (t < 0)
            continue;
        for (int k = 0; k < ENERGY_TARGETS; k++) {
            if (lut->coeff[i][k] == 0.0f)
                continue;
            energy_gather_entry *e = &lut->gather[t - 1 + k];
            if (e->count == ENERGY_TARGETS) {
                snprintf(lut->gather_reason, sizeof lut->gather_reason,
                         "target bin %d receives from more than %d source bins", t - 1 + k,
                         ENERGY_TARGETS);
                return 0;
            }
            e->src[e->count] = i;
            e->coeff[e->count] = lut->coeff[i][k];
            e->count++;
        }
    }
    return 1;
}

/* Weights w[0..2] on the centres a < b < c (bins k-1, k, k+1), with mu
 * between a and c, whose mean is mu and whose variance about mu is that of
 * the two-point split between the centres bracketing mu, plus v: the solution
 * of the three moment equations. v = 0 gives back the split. Returns -1 when v
 * is too large for the bins (a negative weight). */
static int three_point(double *w, double a, double b, double c, double mu, double v)
{
    double da = a - mu, db = b - mu, dc = c - mu;
    double S = (mu >= b ? -db * dc : -da * db) + v;
    w[0] = (S + db * dc) / ((da - db) * (da - dc));
    w[1] = (S + da * dc) / ((db - da) * (db - dc));
    w[2] = (S + da * db) / ((dc - da) * (dc - db));
    return w[0] < 0.0 || w[1] < 0.0 || w[2] < 0.0 ? -1 : 0;
}

/* The table's arrays for ne bins (release_*: with the halo's planes). */
static int lut_alloc(energy_lut *lut, const grid *g, smx_error *err)
{
    int ne = (int)g->ne;
    *lut = (energy_lut){ .ne = ne };
    lut->E_after = malloc(ne * sizeof *lut->E_after);
    lut->target = malloc(ne * sizeof *lut->target);
    lut->coeff = calloc(ne, sizeof *lut->coeff);
    lut->deposit_MeV = malloc(ne * sizeof *lut->deposit_MeV);
    lut->nuclear_weight = calloc(ne, sizeof *lut->nuclear_weight);
    lut->nuclear_energy = calloc(ne, sizeof *lut->nuclear_energy);
    if (g->dose_planes > 1) {
        lut->release_MeV = calloc(ne, sizeof *lut->release_MeV);
        lut->release_band = malloc(ne * sizeof *lut->release_band);
    }
    lut->gather = calloc(ne, sizeof *lut->gather);
    if (!lut->E_after || !lut->target || !lut->coeff || !lut->deposit_MeV || !lut->nuclear_weight ||
        !lut->nuclear_energy || !lut->gather ||
        (g->dose_planes > 1 && (!lut->release_MeV || !lut->release_band))) {
        energy_lut_free(lut);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy-loss table");
    }
    for (int i = 0; lut->release_band && i < ne; i++)
        lut->release_band[i] = -1;
    return 0;
}

/* The lower bracketing centre t of E' (*Ep, moved up to the lowest centre
 * when it is within half a bin below it) and the share *f_hi of t + 1 in the
 * split; a centre within SNAP_REL takes it whole. */
static int bracket(const double *Ec, int ne, double *Ep, double *f_hi)
{
    /* Bracketing centres t <= E' < t+1 by bisection over the centres. */
    int lo = 0, hi = ne - 1;
    if (*Ep < Ec[0]) {
        hi = 0; /* within half a bin below the lowest centre: that centre (grid_keeps_from) */
        *Ep = Ec[0];
    } else if (*Ep >= Ec[hi]) {
        lo = hi;
    } else {
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (Ec[mid] <= *Ep)
                lo = mid;
            else
                hi = mid;
        }
    }
    int t = lo;
    if (fabs(*Ep - Ec[t]) <= SNAP_REL * Ec[t] || t == ne - 1) {
        *f_hi = 0.0;
    } else if (fabs(Ec[t + 1] - *Ep) <= SNAP_REL * Ec[t + 1]) {
        t = t + 1;
        *f_hi = 0.0;
    } else {
        /* Mean energy kept: (1 - f) E_t + f E_t+1 = E'. */
        *f_hi = (*Ep - Ec[t]) / (Ec[t + 1] - Ec[t]);
    }
    return t;
}

/* The energy the removed weight of bin i takes (nuclear_energy) and, with
 * the halo's planes, what its kernel spreads (release_*). */
static void nuclear_share(energy_lut *lut, int i, double E, double removed, const double *pp_share)
{
    if (lut->release_MeV) {
        /* The partition of the event's energy (nuclear_halo.h); a p-p
         * elastic event's (share f of the removal) goes to the kernel
         * whole (pp_elastic.h). */
        nuclear_partition pt = nuclear_partition_water(E);
        const double f = pp_share ? pp_share[i] : 0.0;
        lut->nuclear_energy[i] = ((1.0 - pt.local) * (1.0 - f) + f) * removed * E;
        lut->release_MeV[i] = (pt.protons * (1.0 - f) + f) * removed * E;
        lut->release_band[i] = removed > 0.0 ? nuclear_halo_band(E) : -1;
        if (lut->release_band[i] < 0) { /* below the bands: nothing is removed there */
            lut->nuclear_energy[i] -= lut->release_MeV[i];
            lut->release_MeV[i] = 0.0;
        }
    } else {
        lut->nuclear_energy[i] = (1.0 - SMX_NUCLEAR_LOCAL_FRACTION) * removed * E;
    }
}

int energy_lut_from_map(energy_lut *lut, const grid *g, const energy_step_map *m, smx_error *err)
{
    const double *E_after = m->E_after, *var_MeV2 = m->var_MeV2, *survival = m->survival,
                 *pp_share = m->pp_share;
    int ne = (int)g->ne;
    int rc = lut_alloc(lut, g, err);
    if (rc)
        return rc;
    const double *Ec = g->E.centres;
    for (int i = 0; i < ne; i++) {
        double Ep = E_after[i];
        if (!grid_keeps_from(g, i, Ep)) { /* also catches NAN: below the table */
            lut->E_after[i] = NAN;
            lut->target[i] = -1;
            lut->deposit_MeV[i] = Ec[i];
            continue;
        }
        double f_hi; /* share of t+1 in the split */
        int t = bracket(Ec, ne, &Ep, &f_hi);
        /* w[k] goes to bin t - 1 + k: the split (t the lower bracketing bin),
         * or with straggling three points about the centre nearest to E' (so
         * that any E' leaves room for the added variance), kept at or below
         * the source and inside the grid. */
        double w[ENERGY_TARGETS] = { 0 };
        double v = var_MeV2 ? var_MeV2[i] : 0.0;
        float c_hi = (float)f_hi, c_lo = 1.0f - c_hi; /* the float split of the plain step */
        int k = f_hi > 0.5 ? t + 1 : t;
        if (k + 1 > i)
            k = i - 1;
        if (v > 0.0 && k >= 1 && k + 1 < ne) {
            t = k;
            if (three_point(w, Ec[t - 1], Ec[t], Ec[t + 1], Ep, v)) {
                double h = fmin(Ec[t] - Ec[t - 1], Ec[t + 1] - Ec[t]);
                energy_lut_free(lut);
                return smx_fail(
                    err, SMX_EXIT_INPUT,
                    "one step's energy straggling (%.3g MeV rms at %.4g "
                    "MeV) is wider than the energy bins there (%.3g MeV); use fewer "
                    "grid.energy.n_bins (uniform grid) or a longer transport.step_mm (range "
                    "grid), or set transport.straggling: false",
                    sqrt(v), Ep, h);
            }
        } else {
            w[1] = c_lo;
            w[2] = c_hi;
        }
        double q = survival ? survival[i] : 1.0;
        double kept_w = 0.0, kept_E = 0.0;
        for (int k = 0; k < ENERGY_TARGETS; k++) {
            int b = t - 1 + k;
            float c = (b >= 0 && b < ne) ? (float)(q * w[k]) : 0.0f;
            lut->coeff[i][k] = c;
            if (c != 0.0f) {
                kept_w += c;
                kept_E += c * Ec[b];
            }
        }
        lut->E_after[i] = Ep;
        lut->target[i] = t;
        /* Deposit what the stored (float) coefficients take away, so that energy
         * bookkeeping closes with the numbers actually applied. The weight they
         * do not keep is the non-elastic removal when that is on (otherwise only
         * float rounding, within the 1e-6 balance). */
        double removed = survival ? 1.0 - kept_w : 0.0;
        lut->nuclear_weight[i] = removed;
        nuclear_share(lut, i, Ec[i], removed, pp_share);
        lut->deposit_MeV[i] = Ec[i] * (kept_w + removed) - kept_E - lut->nuclear_energy[i];
    }
    lut->gather_ok = gather_build(lut);
    return 0;
}

/* The p-p elastic cross section per unit mass (cm2/g) at E; ctx: H per gram. */
static double pp_cm2_g(double E_MeV, const void *ctx)
{
    return *(const double *)ctx * pp_elastic_mb(E_MeV) * SMX_MB_CM2;
}

void energy_step_model(const grid *g, const tables *t, const energy_physics *ph,
                       double density_g_cm3, const energy_step_map *m)
{
    double *E_after = m->E_after, *var = m->var_MeV2, *surv = m->survival, *pp_share = m->pp_share;
    double ds_g = g->ds * 0.1 * density_g_cm3;
    int strag = ph && ph->straggling, nuc = ph && ph->nuclear;
    for (int64_t i = 0; i < g->ne; i++) {
        double E = g->E.centres[i];
        double R = tables_path_range(t, E);
        E_after[i] = tables_energy_at_path_range(t, R - ds_g); /* NAN below the table: stops */
        var[i] = 0.0;
        /* The step's quadrature points, once for its three integrals (each a
         * lookup in the range table; the same bits as one integral each). */
        const int strag_i = strag && grid_keeps(g, E_after[i]);
        tables_step_points q;
        if (strag_i || nuc)
            tables_step_points_of(t, E, g->E_stop, ds_g, &q);
        if (strag_i) {
            /* Range variance of the step, in energy at the bins it lands on. */
            double S = tables_stopping_power(t, E_after[i]);
            var[i] = straggling_range_variance_over(t, ph->Z_over_A, &q) * S * S;
        }
        surv[i] = nuc ? nuclear_survival_over(&q, ph->nonelastic_cm2_g) : 1.0;
        if (pp_share)
            pp_share[i] = 0.0;
        if (nuc && ph->h_per_g > 0.0) {
            const double ne = -log(surv[i]), pp = tables_step_sum(&q, pp_cm2_g, &ph->h_per_g);
            surv[i] = exp(-(ne + pp));
            if (pp_share)
                pp_share[i] = ne + pp > 0.0 ? pp / (ne + pp) : 0.0;
        }
    }
}

int energy_lut_build(energy_lut *lut, const grid *g, const tables *t, const energy_physics *ph,
                     smx_error *err)
{
    double *E_after = malloc(g->ne * sizeof *E_after);
    double *var = calloc(g->ne, sizeof *var);
    double *surv = malloc(g->ne * sizeof *surv);
    double *pp = malloc(g->ne * sizeof *pp);
    if (!E_after || !var || !surv || !pp) {
        free(E_after);
        free(var);
        free(surv);
        free(pp);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy-loss table");
    }
    energy_step_model(g, t, ph, g->density, &(energy_step_map){ E_after, var, surv, pp });
    int strag = ph && ph->straggling, nuc = ph && ph->nuclear;
    const energy_step_map used = { E_after, strag ? var : NULL, nuc ? surv : NULL,
                                   nuc ? pp : NULL };
    int rc = energy_lut_from_map(lut, g, &used, err);
    free(E_after);
    free(var);
    free(surv);
    free(pp);
    return rc;
}

int energy_dither_low(const energy_dither_lut *d, int i, int64_t step)
{
    return smx_dither_lower(d->steps, d->n_steps, d->p_low[i], i, (long long)step);
}

/* The lower of the two centres bracketing E (Ec[t] <= E < Ec[t + 1]); -1 below
 * the lowest. (The plain table's target is the nearest centre when
 * straggling is on, not the lower one.) */
static int lower_centre(const grid *g, double E)
{
    const double *Ec = g->E.centres;
    if (!(E >= Ec[0]))
        return -1;
    int lo = 0, hi = (int)g->ne - 1;
    if (E >= Ec[hi])
        return hi;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (Ec[mid] <= E)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The two centres bracketing source i's E' that a step outside the
 * reference chooses between: the lower one's index, or -1 where there is no
 * choice (the particle stops, E' is as good as a centre, or the top bin). */
static int dither_bracket(const grid *g, const energy_lut *mean, int i)
{
    const double *Ec = g->E.centres;
    double Ep = mean->E_after[i];
    int t = mean->target[i] < 0 ? -1 : lower_centre(g, Ep);
    if (t < 0 || t + 1 >= g->ne || Ep <= Ec[t] * (1.0 + SNAP_REL) ||
        Ep >= Ec[t + 1] * (1.0 - SNAP_REL))
        return -1;
    return t;
}

/* Where E' lies between centres t and t + 1, measured from the upper one in
 * the reference table's residual range (in energy where the range is not
 * finite): the share of the lower centre, and the fractional part of a move. */
static double ref_share(const grid *g, const tables *ref, int t, double Ep)
{
    const double *Ec = g->E.centres;
    double R1 = tables_path_range(ref, Ec[t + 1]), R0 = tables_path_range(ref, Ec[t]);
    double f = (R1 - tables_path_range(ref, Ep)) / (R1 - R0);
    return isfinite(f) ? f : (Ec[t + 1] - Ep) / (Ec[t + 1] - Ec[t]);
}

/* Bins of the reference's residual range that one step in the medium moves
 * source i down (at least DITHER_MOVE_MIN; a particle that stops is counted as
 * reaching the grid's bottom). */
#define DITHER_MOVE_MIN 1e-9
static double dither_move_bins(const grid *g, const energy_lut *mean, const tables *ref, int i)
{
    double Ep = mean->E_after[i];
    int t = mean->target[i] < 0 ? -1 : lower_centre(g, Ep);
    double mv = i + 1.0;
    if (t >= 0 && t + 1 < g->ne)
        mv = (double)(i - t - 1) + ref_share(g, ref, t, Ep);
    else if (t + 1 >= g->ne)
        mv = 0.0;
    return fmax(mv, DITHER_MOVE_MIN);
}

/* The most variance three points about the centre nearest E can carry with
 * non-negative weights (infinite where a step adds none: no centre on one side,
 * or the particle stops), less a margin for the weights' rounding. */
static double held_variance(const grid *g, double E)
{
    const double *Ec = g->E.centres;
    int k = lower_centre(g, E);
    if (k < 0 || !isfinite(E))
        return INFINITY;
    if (k + 1 < g->ne && Ec[k + 1] - E < E - Ec[k])
        k++;
    if (k < 1 || k + 1 >= g->ne)
        return INFINITY;
    return (Ec[k] - Ec[k - 1]) * (Ec[k + 1] - Ec[k]) * (1.0 - 1e-6);
}

/* Every (source, table) pair of the two whole-bin tables with a weight on a
 * target, sources ascending and the lower table's first: counted into
 * cand_start[target + 1] (next NULL), or stored at next[target]++. */
static void list_pairs(energy_dither_lut *d, int ne, int32_t *next)
{
    for (int i = 0; i < ne; i++)
        for (int u = 0; u < 2; u++) {
            const energy_lut *l = u ? &d->upper : &d->lower;
            const int t = l->target[i];
            if (t < 0)
                continue;
            for (int k = 0; k < ENERGY_TARGETS; k++) {
                const int tb = t - 1 + k;
                if (l->coeff[i][k] == 0.0f)
                    continue;
                if (next)
                    d->cand[next[tb]++] = (energy_candidate){ .src = i,
                                                              .upper = (uint8_t)u,
                                                              .coeff = l->coeff[i][k] };
                else
                    d->cand_start[tb + 1]++;
            }
        }
}

int energy_dither_lut_build(energy_dither_lut *d, const grid *g, const energy_lut *mean,
                            const tables *ref, const energy_step_map *m, smx_error *err)
{
    const double *var = m->var_MeV2;
    const double *Ec = g->E.centres;
    const int ne = (int)g->ne;
    *d = (energy_dither_lut){ .straggling_limit_E_MeV = NAN };
    d->p_low = malloc(ne * sizeof *d->p_low);
    d->steps = malloc(ne * sizeof *d->steps);
    d->n_steps = ne;
    double *E_lo = malloc(ne * sizeof *E_lo), *E_hi = malloc(ne * sizeof *E_hi);
    double *v_lo = malloc(ne * sizeof *v_lo), *v_hi = malloc(ne * sizeof *v_hi);
    int rc = 0;
    if (!d->p_low || !d->steps || !E_lo || !E_hi || !v_lo || !v_hi) {
        rc =
            smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building a medium's energy-loss tables");
        goto done;
    }
    for (int i = 0; i < ne; i++) {
        double Ep = mean->E_after[i];
        int t = dither_bracket(g, mean, i);
        v_lo[i] = v_hi[i] = var ? var[i] : 0.0;
        d->steps[i] = dither_move_bins(g, mean, ref, i);
        if (t < 0) {
            E_lo[i] = E_hi[i] =
                mean->target[i] < 0 ? NAN : Ep; /* stops, or (as good as) a centre */
            d->p_low[i] = 1.0;
            continue;
        }
        E_lo[i] = Ec[t];
        E_hi[i] = Ec[t + 1];
        /* The share of the lower centre, in the reference's residual range
         * (uniform on a range grid; see lut_energy.h). */
        d->p_low[i] = fmin(fmax(ref_share(g, ref, t, Ep), 0.0), 1.0);
        /* A step that leaves the particle in its own bin has no room above it
         * for a symmetric spread (targets stay at or below the source): its
         * straggling is left out (docs/physics.md). */
        if (t + 1 == i)
            v_hi[i] = 0.0;
    }
    /* Three bins about a centre hold a variance up to the product of its two
     * spacings (beyond it the middle weight turns negative). A dense medium
     * on a fine grid can straggle more than that in one step at high energy
     * (titanium at twice its density with 0.25 mm steps, above 146 MeV): the
     * step then adds what its bins hold, and the shortfall is recorded for
     * the run's warning. */
    if (var)
        for (int i = 0; i < ne; i++)
            for (int u = 0; u < 2; u++) {
                double *v = u ? &v_hi[i] : &v_lo[i];
                const double hold = held_variance(g, u ? E_hi[i] : E_lo[i]);
                if (*v <= hold)
                    continue;
                d->straggling_limited++;
                d->straggling_limit_ratio = fmax(d->straggling_limit_ratio, *v / hold);
                if (!(d->straggling_limit_E_MeV <= Ec[i]))
                    d->straggling_limit_E_MeV = Ec[i];
                *v = hold;
            }
    /* The medium's range in steps at each centre: the trapezoid rule over
     * 1 / (bins per step), from the lowest bin (dither_phase.h). */
    {
        double prev = d->steps[0];
        d->steps[0] = 0.0;
        for (int i = 1; i < ne; i++) {
            double mv = d->steps[i];
            d->steps[i] = d->steps[i - 1] + 0.5 * (1.0 / prev + 1.0 / mv);
            prev = mv;
        }
    }
    if ((rc = energy_lut_from_map(&d->lower, g,
                                  &(energy_step_map){ E_lo, var ? v_lo : NULL, m->survival, NULL },
                                  err)) ||
        (rc = energy_lut_from_map(
             &d->upper, g, &(energy_step_map){ E_hi, var ? v_hi : NULL, m->survival, NULL }, err)))
        goto done;
    /* Per target, every (source, table) that can reach it, sources ascending:
     * counted, then filled in the same order. */
    int32_t *next = NULL;
    if (!(d->cand_start = calloc((size_t)ne + 1, sizeof *d->cand_start))) {
        rc =
            smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building a medium's energy-loss tables");
        goto done;
    }
    list_pairs(d, ne, NULL);
    for (int tb = 0; tb < ne; tb++)
        d->cand_start[tb + 1] += d->cand_start[tb];
    d->cand = malloc(((size_t)d->cand_start[ne] + 1) * sizeof *d->cand);
    next = malloc((size_t)ne * sizeof *next);
    if (!d->cand || !next) {
        free(next);
        rc =
            smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building a medium's energy-loss tables");
        goto done;
    }
    memcpy(next, d->cand_start, (size_t)ne * sizeof *next);
    list_pairs(d, ne, next);
    free(next);
done:
    free(E_lo);
    free(E_hi);
    free(v_lo);
    free(v_hi);
    if (rc)
        energy_dither_lut_free(d);
    return rc;
}

void energy_dither_lut_free(energy_dither_lut *d)
{
    energy_lut_free(&d->lower);
    energy_lut_free(&d->upper);
    free(d->p_low);
    free(d->steps);
    free(d->cand_start);
    free(d->cand);
    *d = (energy_dither_lut){ 0 };
}

int energy_lut_low_target(const energy_lut *lut, int i)
{
    int t = lut->target[i];
    if (t < 0)
        return -1;
    for (int k = 0; k < ENERGY_TARGETS; k++)
        if (lut->coeff[i][k] != 0.0f)
            return t - 1 + k;
    return -1;
}

int energy_lut_top_target(const energy_lut *lut, int i)
{
    int t = lut->target[i];
    if (t < 0)
        return -1;
    for (int k = ENERGY_TARGETS - 1; k >= 0; k--)
        if (lut->coeff[i][k] != 0.0f)
            return t - 1 + k;
    return -1;
}

void energy_lut_free(energy_lut *lut)
{
    free(lut->E_after);
    free(lut->target);
    free(lut->coeff);
    free(lut->deposit_MeV);
    free(lut->nuclear_weight);
    free(lut->nuclear_energy);
    free(lut->release_MeV);
    free(lut->release_band);
    free(lut->gather);
    *lut = (energy_lut){ 0 };
}
