#include "physics/pp_elastic.h"

#include <math.h>

#include "physics/nuclear.h"

#define PROTON_MASS_MEV 938.272 /* CODATA 2018 */

double pp_elastic_mb(double E_MeV)
{
    if (!(E_MeV >= SMX_PP_ELASTIC_MIN_MEV))
        return 0.0;
    const double T = E_MeV * 1e-3; /* GeV */
    const double p = sqrt(T * T + 2.0 * T * PROTON_MASS_MEV * 1e-3); /* GeV/c */
    /* Buss et al. (2012): the 1/T rise of the s-wave below 0.435 GeV/c, the
     * flat minimum of about 23.5 mb above it. */
    if (p < 0.435)
        return 2.56 / T + 1.67;
    const double d = p - 0.7;
    return 23.5 + 1000.0 * d * d * d * d;
}

double pp_elastic_hydrogen_per_g(const material_element *el, int n)
{
    double h = 0.0;
    for (int i = 0; i < n; i++)
        if (el[i].Z == 1)
            h += el[i].w / el[i].A * SMX_AVOGADRO;
    return h;
}
