#include "physics/nuclear.h"

#include <math.h>

double nonelastic_water_cm2_g(double E_MeV)
{
    if (!(E_MeV > 7.0))
        return 0.0;
    double E = E_MeV < 250.0 ? E_MeV : 250.0;
    return 1e-3 * (1.64 * (E - 7.9) * exp(-0.064 * E + 7.85 / E) + 9.86);
}

double nuclear_survival(const tables *t, double (*sigma_cm2_g)(double), double E_MeV,
                        double E_stop_MeV, double ds_g)
{
    double R = tables_csda_range(t, E_MeV), R_stop = tables_csda_range(t, E_stop_MeV);
    double R_end = R - ds_g > R_stop ? R - ds_g : R_stop;
    if (!(R > R_end))
        return 1.0;
    /* Midpoint rule along residual range; the cross section varies by a few
     * per cent over one step. */
    const int n = 16;
    double h = (R - R_end) / n, mu = 0.0;
    for (int k = 0; k < n; k++)
        mu += sigma_cm2_g(tables_energy_at_range(t, R_end + (k + 0.5) * h));
    return exp(-mu * h);
}
