#include "physics/straggling.h"

#include <math.h>

double straggling_bohr_rate(double E_MeV, double Z_over_A)
{
    double gam = 1.0 + E_MeV / SMX_PROTON_MASS_MEV, b2 = 1.0 - 1.0 / (gam * gam);
    return SMX_BOHR_K_MEV2_CM2_G * Z_over_A * (1.0 - 0.5 * b2) / (1.0 - b2);
}

double straggling_range_variance(const tables *t, double Z_over_A, double E_MeV, double E_stop_MeV,
                                 double ds_g)
{
    double R = tables_csda_range(t, E_MeV), R_stop = tables_csda_range(t, E_stop_MeV);
    double R_end = R - ds_g > R_stop ? R - ds_g : R_stop;
    if (!(R > R_end))
        return 0.0;
    const int n = 16; /* midpoint rule: 1/S^2 changes by a few per cent over a step */
    double h = (R - R_end) / n, v = 0.0;
    for (int k = 0; k < n; k++) {
        double E = tables_energy_at_range(t, R_end + (k + 0.5) * h);
        double S = tables_stopping_power(t, E);
        v += straggling_bohr_rate(E, Z_over_A) / (S * S);
    }
    return v * h;
}
