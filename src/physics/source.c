#include "physics/source.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a point value v between the two bracketing centres (mean kept). A value
 * below the first or above the last centre goes whole to that end bin. */
static void split_point(double *w, const double *c, int n, double v)
{
    if (v <= c[0]) {
        w[0] = 1.0;
        return;
    }
    if (v >= c[n - 1]) {
        w[n - 1] = 1.0;
        return;
    }
    int i = 0;
    while (c[i + 1] <= v)
        i++;
    double f = (v - c[i]) / (c[i + 1] - c[i]);
    w[i] += 1.0 - f;
    w[i + 1] += f;
}

/* Gaussian integrated over each bin between its edges, renormalised to the grid. */
static int gaussian_bins(double *w, const double *edges, int n, double mean, double sigma)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        double a = (edges[i] - mean) / (sigma * M_SQRT2),
               b = (edges[i + 1] - mean) / (sigma * M_SQRT2);
        w[i] = 0.5 * (erf(b) - erf(a));
        sum += w[i];
    }
    if (!(sum > 0.0))
        return -1;
    for (int i = 0; i < n; i++)
        w[i] /= sum;
    return 0;
}

/* Direction weights (summing to 1) of a beam along `mean` (rad) with Gaussian
 * spread `sigma` (rad, 0 = a point split between the two nearest centres). Full
 * mode wraps around the circle; window mode keeps the part inside the window,
 * renormalised, and fails when nothing is inside. */
static int direction_profile(double *w, const grid *g, double mean, double sigma)
{
    const int nth = (int)g->nth;
    for (int i = 0; i < nth; i++)
        w[i] = 0.0;
    if (g->angle_mode == ANGLE_FULL) {
        double lo = g->theta.edges[0];
        double u = fmod(mean - lo, 2.0 * M_PI);
        if (u < 0)
            u += 2.0 * M_PI;
        if (sigma > 0.0) {
            /* Images one turn either side carry what a spread below a turn wraps. */
            double sum = 0.0;
            for (int i = 0; i < nth; i++) {
                for (int k = -1; k <= 1; k++) {
                    double a = (i * g->dtheta - u + 2.0 * M_PI * k) / (sigma * M_SQRT2);
                    double b = ((i + 1) * g->dtheta - u + 2.0 * M_PI * k) / (sigma * M_SQRT2);
                    w[i] += 0.5 * (erf(b) - erf(a));
                }
                sum += w[i];
            }
            for (int i = 0; i < nth; i++)
                w[i] /= sum;
            return 0;
        }
        double pos = u / g->dtheta - 0.5; /* in units of bins from centre 0 */
        double fl = floor(pos);
        double f = pos - fl;
        int i = ((int)fl % nth + nth) % nth;
        w[i] += 1.0 - f;
        w[(i + 1) % nth] += f;
        return 0;
    }
    if (sigma > 0.0)
        return gaussian_bins(w, g->theta.edges, nth, mean, sigma);
    split_point(w, g->theta.centres, nth, mean);
    return 0;
}

int source_spot_fail(smx_error *err, int spot, const char *column, const char *fmt, ...)
{
    char key[sizeof err->key], msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(key, sizeof key, "beam.spots[%d].%s", spot, column);
    return smx_fail_key(err, SMX_EXIT_INPUT, key, "%s", msg);
}

int beam_profile_build(beam_profile *b, const plan *p, const grid *g, smx_error *err)
{
    plan_spot s0 = plan_spot_at(p, 0);
    return beam_profile_build_spot(b, &s0, 0, g, err);
}

int beam_profile_build_spot(beam_profile *b, const plan_spot *s, int spot, const grid *g,
                            smx_error *err)
{
    *b = (beam_profile){ 0 };
    b->wE = calloc(g->ne, sizeof *b->wE);
    b->wth = calloc(g->nth, sizeof *b->wth);
    b->wx = calloc(g->nx, sizeof *b->wx);
    b->wthx = calloc((size_t)g->nth * g->nx, sizeof *b->wthx);
    if (!b->wE || !b->wth || !b->wx || !b->wthx) {
        beam_profile_free(b);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the beam source");
    }
    int ne = (int)g->ne, nth = (int)g->nth, nx = (int)g->nx;

    if (s->energy_sigma_MeV > 0.0) {
        if (gaussian_bins(b->wE, g->E.edges, ne, s->energy_MeV, s->energy_sigma_MeV)) {
            beam_profile_free(b);
            return source_spot_fail(err, spot, "energy_sigma_MeV",
                                    "the beam's energy spectrum lies outside the energy grid "
                                    "(%g to %g MeV)",
                                    g->E.edges[0], g->E.edges[ne]);
        }
    } else {
        split_point(b->wE, g->E.centres, ne, s->energy_MeV);
    }

    if (s->sigma_x_mm > 0.0) {
        if (gaussian_bins(b->wx, g->x.edges, nx, s->x_mm, s->sigma_x_mm)) {
            beam_profile_free(b);
            return source_spot_fail(err, spot, "sigma_x_mm",
                                    "the beam's lateral profile lies outside the domain");
        }
    } else {
        split_point(b->wx, g->x.centres, nx, s->x_mm);
    }

    /* Direction given position: mean phi0 - rho s_th (x - x0) / s_x (a diverging
     * beam's particles on the +x side move towards +x, i.e. at smaller angles from
     * +x), spread s_th sqrt(1 - rho^2); the x marginal stays wx. */
    const double rho = s->correlation, s_th = s->divergence_mrad * 1e-3;
    const double th0 = s->direction_deg * M_PI / 180.0, s_cond = s_th * sqrt(1.0 - rho * rho);
    double *col = malloc(nth * sizeof *col);
    if (!col) {
        beam_profile_free(b);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the beam source");
    }
    for (int ix = 0; ix < nx; ix++) {
        if (b->wx[ix] == 0.0)
            continue;
        double mean = th0;
        if (rho != 0.0)
            mean -= rho * s_th * (g->x.centres[ix] - s->x_mm) / s->sigma_x_mm;
        if (direction_profile(col, g, mean, s_cond)) {
            free(col);
            beam_profile_free(b);
            return source_spot_fail(err, spot, "divergence_mrad",
                                    "the beam's angular spread lies outside the angular window "
                                    "(%g to %g deg)",
                                    g->theta.edges[0] * 180.0 / M_PI,
                                    g->theta.edges[nth] * 180.0 / M_PI);
        }
        for (int ith = 0; ith < nth; ith++) {
            b->wthx[(size_t)ith * nx + ix] = col[ith] * b->wx[ix];
            b->wth[ith] += col[ith] * b->wx[ix];
        }
    }
    free(col);
    return 0;
}

void beam_profile_free(beam_profile *b)
{
    free(b->wE);
    free(b->wth);
    free(b->wx);
    free(b->wthx);
    *b = (beam_profile){ 0 };
}

int source_fill(source_buf *s, const plan *p, const grid *g, smx_error *err)
{
    return source_fill_spot(s, p, g, -1, err);
}

void source_clear(float *psi, const grid *g, const grid_box *occupied)
{
    for (int64_t ie = 0; ie < g->ne; ie++) {
        const grid_box b = occupied[ie];
        if (b.z0 > b.z1 || b.x0 > b.x1)
            continue;
        for (int64_t ith = 0; ith < g->nth; ith++)
            for (int64_t z = b.z0; z <= b.z1; z++)
                memset(psi + psi_index(g, ie, ith, z, b.x0), 0,
                       (size_t)(b.x1 - b.x0 + 1) * sizeof *psi);
    }
}

int source_fill_spot(source_buf *sb, const plan *p, const grid *g, int spot, smx_error *err)
{
    float *psi = sb->psi;
    grid_box *occupied = sb->occupied;
    /* Each spot's rows added in spot order (the same floats for any backend);
     * one spot writes exactly the floats it always wrote (0 + v = v). */
    grid_box none = { 1, 0, (int)g->nx, -1 };
    grid_box *box = occupied ? occupied : malloc(g->ne * sizeof *box);
    if (!box)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the beam source");
    for (int64_t ie = 0; ie < g->ne; ie++)
        box[ie] = none;
    int rc = 0;
    const int k0 = spot >= 0 ? spot : 0, k1 = spot >= 0 ? spot + 1 : plan_spot_count(p);
    for (int k = k0; k < k1 && !rc; k++) {
        plan_spot s = plan_spot_at(p, k);
        beam_profile b;
        if ((rc = beam_profile_build_spot(&b, &s, k, g, err)))
            break;
        for (int64_t ie = 0; ie < g->ne; ie++) {
            if (b.wE[ie] == 0.0)
                continue;
            for (int64_t ith = 0; ith < g->nth; ith++) {
                if (b.wth[ith] == 0.0)
                    continue;
                float *row = psi + psi_index(g, ie, ith, 0, 0);
                const double *wx = b.wthx + ith * g->nx;
                for (int64_t ix = 0; ix < g->nx; ix++) {
                    const float v = (float)(s.weight * b.wE[ie] * wx[ix]);
                    if (v == 0.0f)
                        continue;
                    row[ix] = row[ix] + v;
                    box[ie].z0 = box[ie].z1 = 0;
                    box[ie].x0 = (int)ix < box[ie].x0 ? (int)ix : box[ie].x0;
                    box[ie].x1 = (int)ix > box[ie].x1 ? (int)ix : box[ie].x1;
                }
            }
        }
        beam_profile_free(&b);
    }
    /* The weight and energy actually stored, summed in double. */
    double W = 0.0, En = 0.0;
    for (int64_t ie = 0; ie < g->ne && !rc; ie++) {
        if (box[ie].z0 > box[ie].z1)
            continue;
        double wb = 0.0;
        for (int64_t ith = 0; ith < g->nth; ith++) {
            const float *row = psi + psi_index(g, ie, ith, 0, 0);
            double ws = 0.0;
            for (int64_t ix = box[ie].x0; ix <= box[ie].x1; ix++)
                ws += row[ix];
            wb += ws;
        }
        W += wb;
        En += wb * g->E.centres[ie];
    }
    if (!occupied)
        free(box);
    sb->weight = W;
    sb->energy_MeV = En;
    return rc;
}
