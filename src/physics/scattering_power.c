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
    double lr = log10(1.0 - r * r), lp = log10(pv);
    double f = 0.5244 + 0.1975 * lr + 0.2320 * lp - 0.0098 * lp * lr;
    double es = 15.0 / pv;
    return f * es * es / XS_g_cm2;
}
