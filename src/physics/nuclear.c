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

/* The A-rule from the two neighbours' values at one energy. */
static double between(const nonelastic_eval *lo, double s_lo, const nonelastic_eval *hi,
                      double s_hi, double A)
{
    double u = (A - lo->A) / (hi->A - lo->A);
    return ((1.0 - u) * s_lo / lo->A23 + u * s_hi / hi->A23) * cbrt(A * A);
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

static double element_eval(int Z, double A, double E_MeV, double *cache)
{
    if (Z <= 1 || !(A > 0.0))
        return 0.0;
    for (int i = 0; i < NONELASTIC_ICRU63_N; i++)
        if (nonelastic_icru63[i].Z == Z)
            return evaluated(i, E_MeV, cache);
    /* The evaluated elements on either side in A (the table ascends in A). */
    int lo = -1, hi = -1;
    for (int i = 0; i < NONELASTIC_ICRU63_N && hi < 0; i++) {
        if (nonelastic_icru63[i].A <= A)
            lo = i;
        else
            hi = i;
    }
    if (lo >= 0 && hi >= 0)
        return between(&nonelastic_icru63[lo], evaluated(lo, E_MeV, cache), &nonelastic_icru63[hi],
                       evaluated(hi, E_MeV, cache), A);
    int near = lo >= 0 ? lo : hi;
    return evaluated(near, E_MeV, cache) * cbrt(A * A) / nonelastic_icru63[near].A23;
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

double nonelastic_ratio_to_water(const material_element *el, int n, double E_MeV)
{
    double cache[NONELASTIC_ICRU63_N];
    cache_clear(cache);
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += el[i].w / el[i].A * element_eval(el[i].Z, el[i].A, E_MeV, cache);
    double water =
        SMX_WATER_OXYGEN_MASS_FRACTION / SMX_OXYGEN_A * element_eval(8, SMX_OXYGEN_A, E_MeV, cache);
    return water > 0.0 ? s / water : 0.0;
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
    return exp(-tables_step_integral(t, E_MeV, E_stop_MeV, ds_g, sigma_of, &sigma_cm2_g));
}
