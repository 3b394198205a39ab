#include "physics/beam_reach.h"

#include <math.h>

void beam_reach_of(const grid *g, const medium_map *m, const tables *const *mt, const plan_spot *s,
                   double sigmas, beam_reach *out)
{
    const double th = s->direction_deg * M_PI / 180.0, ux = cos(th), uz = sin(th);
    const double x_min = g->x.edges[0], x_max = g->x.edges[g->nx], z_max = g->z.edges[g->nz];
    /* A quarter cell: the path samples every cell it crosses, and the range
     * is then known to a fraction of a cell. */
    const double h = 0.25 * fmin(g->dx, g->dz);
    const double s0 = s->sigma_x_mm, t0 = s->divergence_mrad * 1e-3, rho0 = s->correlation;
    double E = s->energy_MeV, x = s->x_mm, z = g->z.edges[0], path = 0.0;
    /* Fermi-Eyges: sigma_x^2(s) = s^2 A0 - 2 s A1 + A2, A_n the moments of T rho du (cm, rad^2). */
    double a0 = 0.0, a1 = 0.0, a2 = 0.0;
    *out = (beam_reach){
        .stop_mm = NAN, .stop_depth_mm = NAN, .x_lo_mm = s->x_mm, .x_hi_mm = s->x_mm
    };
    const tables *t = mt[0];
    for (;;) {
        double zm = z + 0.5 * h * uz, xm = x + 0.5 * h * ux;
        if (zm >= z_max || xm < x_min || xm >= x_max) {
            out->exit_MeV = E;
            out->exit_side = !(zm >= z_max);
            out->exit_residual_g_cm2 = tables_path_range(t, E);
            break;
        }
        int64_t iz = (int64_t)floor((zm - g->z.edges[0]) / g->dz),
                ix = (int64_t)floor((xm - x_min) / g->dx);
        iz = iz < 0 ? 0 : iz >= g->nz ? g->nz - 1 : iz;
        ix = ix < 0 ? 0 : ix >= g->nx ? g->nx - 1 : ix;
        const medium one = { 0, g->density }; /* no map: the plan's material everywhere */
        const medium *md = m ? &m->media[medium_of(m, (int)iz, (int)ix)] : &one;
        t = mt[md->material];
        double rho = md->density_g_cm3;
        double R = tables_path_range(t, E), dR = rho * h * 0.1; /* g/cm2 */
        double T = tables_scattering_power(t, E) * rho, u = (path + 0.5 * h) * 0.1, du = h * 0.1;
        if (isfinite(T)) {
            a0 += T * du;
            a1 += T * u * du;
            a2 += T * u * u * du;
        }
        double E1 = R > dR ? tables_energy_at_path_range(t, R - dR) : NAN;
        if (!(R > dR) || !isfinite(E1) || !grid_keeps(g, E1)) {
            /* The whole range left, also below the transport's stopping
             * energy: that energy is deposited there, but the CSDA range is
             * the beam's (and a mm at most, in this cell's medium). */
            double left = isfinite(R) ? R / rho * 10.0 : 0.0;
            out->stop_mm = path + left;
            out->stop_depth_mm = z + left * uz;
            break;
        }
        E = E1;
        path += h;
        x += h * ux;
        z += h * uz;
        double sc = path * 0.1; /* cm */
        double mcs = (sc * sc * a0 - 2.0 * sc * a1 + a2) * 100.0; /* mm^2 */
        double sig2 =
            s0 * s0 + 2.0 * rho0 * s0 * t0 * path + t0 * t0 * path * path + fmax(mcs, 0.0);
        double w = sigmas * sqrt(sig2);
        out->x_lo_mm = fmin(out->x_lo_mm, x - w);
        out->x_hi_mm = fmax(out->x_hi_mm, x + w);
    }
    /* Water's fit applied to the path length: a margin, not a model. */
    if (isfinite(out->stop_mm))
        out->straggling_mm = 3.0 * 0.012 * pow(out->stop_mm * 0.1, 0.935) * 10.0;
}
