#include "physics/angle_grid.h"

#include <math.h>

#include "input/plan_access.h"
#include "physics/out_of_plane.h"

/* theta_0 (rad) of the beam after `path_mm` of the plan's material. */
static double theta0_after(const tables *t, const out_of_plane_model *m, double R0_g_cm2,
                           double rho, double path_mm)
{
    const double E = tables_energy_at_path_range(t, R0_g_cm2 - path_mm * 0.1 * rho);
    const double th2 = out_of_plane_theta2(t, m, E);
    return isfinite(th2) && th2 > 0.0 ? sqrt(th2) : 0.0;
}

int angle_grid_from_beam(const plan *p, const tables *t, angle_choice *c)
{
    *c = (angle_choice){ .n_bins = p->angle_bins, .half_width_deg = p->angle_half_width_deg };
    /* theta_0 as the transport gathers it, whether or not the detour is on. */
    out_of_plane_model m = out_of_plane_of_plan(p, t);
    m.on = p->scattering && (m.XS_g_cm2 > 0.0 || !m.highland);
    if (!m.on)
        return -1;
    const double deg = 180.0 / M_PI, rho = p->density_g_cm3;
    const double R0 = tables_path_range(t, m.E_ref_MeV);
    /* The path inside the grid: to one step before the end of the range, or
     * to the grid's far edge (a forward beam). */
    const double range_mm = R0 * 10.0 / rho;
    c->stops = range_mm - p->step_mm <= p->nz * p->dz_mm;
    c->path_mm = fmin(range_mm - p->step_mm, p->nz * p->dz_mm);
    if (!(c->path_mm > 0.0))
        return -1;
    double off = 0.0, div = 0.0;
    for (int i = 0; i < plan_spot_count(p); i++) {
        const plan_spot s = plan_spot_at(p, i);
        double d = fmod(s.direction_deg - p->angle_centre_deg, 360.0);
        d = d > 180.0 ? d - 360.0 : d < -180.0 ? d + 360.0 : d;
        off = fmax(off, fabs(d));
        div = fmax(div, s.divergence_mrad * 1e-3);
    }
    const double th_end = theta0_after(t, &m, R0, rho, c->path_mm);
    c->theta_end_deg = sqrt(th_end * th_end + div * div) * deg;
    c->theta_half_deg = theta0_after(t, &m, R0, rho, 0.5 * c->path_mm) * deg;
    if (!(c->theta_half_deg > 0.0))
        return -1;
    const double bin = c->theta_half_deg / ANGLE_BIN_FRACTION;
    const int beam = p->angle_spacing == ANGLE_BEAM && p->angle_mode == ANGLE_WINDOW;
    if (p->angle_auto & PLAN_ANGLE_WIDTH) {
        double edge = ANGLE_EDGE_SIGMAS * c->theta_end_deg;
        if (beam && c->stops)
            edge = fmax(edge, ANGLE_BEAM_MIN_HALF_WIDTH_DEG);
        c->half_width_deg = fmin(180.0, off + edge);
    }
    if (beam)
        c->theta_c_deg = ANGLE_BEAM_THETA_C * c->theta_half_deg;
    if (p->angle_auto & PLAN_ANGLE_BINS) {
        int n;
        if (beam) { /* the u span of the window in bins of d0 */
            const double tc = c->theta_c_deg, d0 = c->theta_half_deg / ANGLE_BEAM_BIN_FRACTION;
            n = (int)ceil(2.0 * tc * asinh(c->half_width_deg / tc) / d0 - 1e-9);
        } else {
            const double span = p->angle_mode == ANGLE_FULL ? 360.0 : 2.0 * c->half_width_deg;
            n = (int)ceil(span / bin - 1e-9);
        }
        c->n_bins = n % 2 ? n : n + 1; /* odd: the window's centre on a bin centre */
    }
    return 0;
}
