#include "physics/straggling.h"

#include <math.h>

double straggling_bohr_rate(double E_MeV, double Z_over_A)
{
    double gam = 1.0 + E_MeV / SMX_PROTON_MASS_MEV, b2 = 1.0 - 1.0 / (gam * gam);
    return SMX_BOHR_K_MEV2_CM2_G * Z_over_A * (1.0 - 0.5 * b2) / (1.0 - b2);
}

typedef struct rate_ctx {
    const tables *t;
    double Z_over_A;
} rate_ctx;

/* Bohr's energy variance per g/cm2 turned into residual range: / S^2. */
static double range_rate(double E, const void *ctx)
{
    const rate_ctx *c = ctx;
    double S = tables_stopping_power(c->t, E);
    return straggling_bohr_rate(E, c->Z_over_A) / (S * S);
}

double straggling_range_variance(const tables *t, double Z_over_A, double E_MeV, double E_stop_MeV,
                                 double ds_g)
{
    tables_step_points q;
    tables_step_points_of(t, E_MeV, E_stop_MeV, ds_g, &q);
    return straggling_range_variance_over(t, Z_over_A, &q);
}

double straggling_range_variance_over(const tables *t, double Z_over_A, const tables_step_points *q)
{
    rate_ctx c = { t, Z_over_A };
    return tables_step_sum(q, range_rate, &c);
}
