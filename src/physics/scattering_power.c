#include "physics/scattering_power.h"

#include <math.h>

#include "physics/tables.h"

double proton_pv_MeV(double E_MeV)
{
    /* From kinetic energy alone: p^2 c^2 = E (E + 2m) and v/c = pc / (E + m). */
    const double m = SMX_PROTON_MASS_MEV;
    return E_MeV * (E_MeV + 2.0 * m) / (E_MeV + m);
}

double scattering_power_fermi_rossi(double E_MeV, double X0_g_cm2)
{
    double r = SMX_FR_ES_MEV / proton_pv_MeV(E_MeV);
    return r * r / X0_g_cm2;
}

double scattering_power_dhighland(double E_MeV, double E1_MeV, double XS_g_cm2)
{
    double pv = proton_pv_MeV(E_MeV), r = pv / proton_pv_MeV(E1_MeV);
    /* Very near the entrance (1 - r^2 below about 1e-6 at these energies; a
     * 0.25 mm step through air at half its density lies wholly there) the log
     * term turns f negative, and at the entrance itself (r >= 1 by rounding)
     * it is undefined. Highland's formula holds only from about 1e-5
     * radiation lengths on, so such a layer scatters as nothing, not
     * negatively. */
    if (!(r < 1.0))
        return 0.0;
    double lr = log10(1.0 - r * r), lp = log10(pv);
    double f = 0.5244 + 0.1975 * lr + 0.2320 * lp - 0.0098 * lp * lr;
    double es = 15.0 / pv;
    return f > 0.0 ? f * es * es / XS_g_cm2 : 0.0;
}
