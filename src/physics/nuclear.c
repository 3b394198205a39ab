#include "physics/nuclear.h"

#include <math.h>

double nonelastic_water_cm2_g(double E_MeV)
{
    if (!(E_MeV > 7.0))
        return 0.0;
    double E = E_MeV < 250.0 ? E_MeV : 250.0;
    return 1e-3 * (1.64 * (E - 7.9) * exp(-0.064 * E + 7.85 / E) + 9.86);
}

double nonelastic_element_share(int Z, double A)
{
    if (Z <= 1 || !(A > 0.0))
        return 0.0;
    return cbrt(SMX_OXYGEN_A / A) / SMX_WATER_OXYGEN_MASS_FRACTION;
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
