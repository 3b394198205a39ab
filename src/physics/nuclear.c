#include "physics/nuclear.h"

#include <math.h>

double nonelastic_water_cm2_g(double E_MeV)
{
    if (!(E_MeV > 7.0))
        return 0.0;
    double E = E_MeV < 250.0 ? E_MeV : 250.0;
    return 1e-3 * (1.64 * (E - 7.9) * exp(-0.064 * E + 7.85 / E) + 9.86);
}

double nonelastic_oxygen_fit_mb(double E_MeV)
{
    return nonelastic_water_cm2_g(E_MeV) * SMX_OXYGEN_A /
           (SMX_AVOGADRO * SMX_WATER_OXYGEN_MASS_FRACTION * SMX_MB_CM2);
}

/* The A-rule from the two neighbours' values at one energy, at the fraction u
 * of the way from lo's A to hi's, scaled by A23 = A^(2/3). */
static double between_at(const nonelastic_eval *lo, double s_lo, const nonelastic_eval *hi,
                         double s_hi, double u, double A23)
{
    return ((1.0 - u) * s_lo / lo->A23 + u * s_hi / hi->A23) * A23;
}

static double between(const nonelastic_eval *lo, double s_lo, const nonelastic_eval *hi,
                      double s_hi, double A)
{
    return between_at(lo, s_lo, hi, s_hi, (A - lo->A) / (hi->A - lo->A), cbrt(A * A));
}

double nonelastic_between_mb(const nonelastic_eval *lo, const nonelastic_eval *hi, double A,
                             double E_MeV)
{
    return between(lo, nonelastic_eval_mb(lo, E_MeV), hi, nonelastic_eval_mb(hi, E_MeV), A);
}

/* The evaluated element i at E, looked up once per sum (cache: NAN until then). */
static double evaluated(int i, double E_MeV, double *cache)
{
    if (isnan(cache[i]))
        cache[i] = nonelastic_eval_mb(&nonelastic_icru63[i], E_MeV);
    return cache[i];
}

/* How element (Z, A) is evaluated, which depends on no energy. */
static nonelastic_term term_of(int Z, double A, double w_over_A)
{
    nonelastic_term t = { w_over_A, NONELASTIC_NONE, -1, -1, 0.0, 0.0 };
    if (Z <= 1 || !(A > 0.0))
        return t;
    for (int i = 0; i < NONELASTIC_ICRU63_N; i++)
        if (nonelastic_icru63[i].Z == Z) {
            t.kind = NONELASTIC_EVALUATED, t.lo = i;
            return t;
        }
    /* The evaluated elements on either side in A (the table ascends in A). */
    int lo = -1, hi = -1;
    for (int i = 0; i < NONELASTIC_ICRU63_N && hi < 0; i++) {
        if (nonelastic_icru63[i].A <= A)
            lo = i;
        else
            hi = i;
    }
    t.A23 = cbrt(A * A);
    if (lo >= 0 && hi >= 0) {
        t.kind = NONELASTIC_BETWEEN, t.lo = lo, t.hi = hi;
        t.u = (A - nonelastic_icru63[lo].A) / (nonelastic_icru63[hi].A - nonelastic_icru63[lo].A);
    } else {
        t.kind = NONELASTIC_NEAREST, t.lo = lo >= 0 ? lo : hi;
    }
    return t;
}

/* The element's value at E (mb per nucleus, before the scale to the water fit). */
static double term_value(const nonelastic_term *t, double E_MeV, double *cache)
{
    switch (t->kind) {
    case NONELASTIC_EVALUATED:
        return evaluated(t->lo, E_MeV, cache);
    case NONELASTIC_BETWEEN:
        return between_at(&nonelastic_icru63[t->lo], evaluated(t->lo, E_MeV, cache),
                          &nonelastic_icru63[t->hi], evaluated(t->hi, E_MeV, cache), t->u, t->A23);
    case NONELASTIC_NEAREST:
        return evaluated(t->lo, E_MeV, cache) * t->A23 / nonelastic_icru63[t->lo].A23;
    default:
        return 0.0;
    }
}

static double element_eval(int Z, double A, double E_MeV, double *cache)
{
    const nonelastic_term t = term_of(Z, A, 0.0);
    return term_value(&t, E_MeV, cache);
}

static void cache_clear(double *cache)
{
    for (int i = 0; i < NONELASTIC_ICRU63_N; i++)
        cache[i] = NAN;
}

double nonelastic_element_eval_mb(int Z, double A, double E_MeV)
{
    double cache[NONELASTIC_ICRU63_N];
    cache_clear(cache);
    return element_eval(Z, A, E_MeV, cache);
}

/* The sum over a composition's elements, over the same for water: each term
 * as planned (terms), or planned as it is summed (el). */
static double ratio_of(const material_element *el, const nonelastic_term *terms, int n,
                       double E_MeV)
{
    double cache[NONELASTIC_ICRU63_N];
    cache_clear(cache);
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        const nonelastic_term t = terms ? terms[i] : term_of(el[i].Z, el[i].A, el[i].w / el[i].A);
        s += t.w_over_A * term_value(&t, E_MeV, cache);
    }
    double water =
        SMX_WATER_OXYGEN_MASS_FRACTION / SMX_OXYGEN_A * element_eval(8, SMX_OXYGEN_A, E_MeV, cache);
    return water > 0.0 ? s / water : 0.0;
}

double nonelastic_ratio_to_water(const material_element *el, int n, double E_MeV)
{
    return ratio_of(el, NULL, n, E_MeV);
}

int nonelastic_mix_init(nonelastic_mix *m, const material_element *el, int n)
{
    if (n < 0 || n > NONELASTIC_MIX_MAX)
        return 0;
    m->n = n;
    for (int i = 0; i < n; i++)
        m->terms[i] = term_of(el[i].Z, el[i].A, el[i].w / el[i].A);
    return 1;
}

double nonelastic_mix_ratio(const nonelastic_mix *m, double E_MeV)
{
    return ratio_of(NULL, m->terms, m->n, E_MeV);
}

double nonelastic_element_mb(int Z, double A, double E_MeV)
{
    double fit = nonelastic_oxygen_fit_mb(E_MeV);
    if (!(fit > 0.0))
        return 0.0;
    double o = nonelastic_eval_mb(nonelastic_icru63_find(8), E_MeV);
    return nonelastic_element_eval_mb(Z, A, E_MeV) * fit / o;
}

static double sigma_of(double E, const void *ctx)
{
    double (*const *sigma)(double) = ctx;
    return (*sigma)(E);
}

double nuclear_survival(const tables *t, double (*sigma_cm2_g)(double), double E_MeV,
                        double E_stop_MeV, double ds_g)
{
    tables_step_points q;
    tables_step_points_of(t, E_MeV, E_stop_MeV, ds_g, &q);
    return nuclear_survival_over(&q, sigma_cm2_g);
}

double nuclear_survival_over(const tables_step_points *q, double (*sigma_cm2_g)(double))
{
    return exp(-tables_step_sum(q, sigma_of, &sigma_cm2_g));
}
