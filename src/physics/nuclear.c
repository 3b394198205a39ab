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

double nonelastic_between_mb(const nonelastic_eval *lo, const nonelastic_eval *hi, double A,
                             double E_MeV)
{
    double u = (A - lo->A) / (hi->A - lo->A);
    double r = (1.0 - u) * nonelastic_eval_mb(lo, E_MeV) / cbrt(lo->A * lo->A) +
               u * nonelastic_eval_mb(hi, E_MeV) / cbrt(hi->A * hi->A);
    return r * cbrt(A * A);
}

double nonelastic_element_eval_mb(int Z, double A, double E_MeV)
{
    if (Z <= 1 || !(A > 0.0))
        return 0.0;
    const nonelastic_eval *e = nonelastic_icru63_find(Z);
    if (e)
        return nonelastic_eval_mb(e, E_MeV);
    /* The evaluated elements on either side in A (the table ascends in A). */
    const nonelastic_eval *lo = NULL, *hi = NULL;
    for (int i = 0; i < nonelastic_icru63_count && !hi; i++) {
        if (nonelastic_icru63[i].A <= A)
            lo = &nonelastic_icru63[i];
        else
            hi = &nonelastic_icru63[i];
    }
    if (lo && hi)
        return nonelastic_between_mb(lo, hi, A, E_MeV);
    const nonelastic_eval *near = lo ? lo : hi;
    return nonelastic_eval_mb(near, E_MeV) * cbrt((A * A) / (near->A * near->A));
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
