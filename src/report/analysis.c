#include "report/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void depth_dose(const grid *g, const double *dose, double *dd)
{
    for (int64_t z = 0; z < g->nz; z++) {
        double s = 0.0;
        for (int64_t x = 0; x < g->nx; x++)
            s += dose[z * g->nx + x];
        dd[z] = s;
    }
}

static int64_t peak_row(const grid *g, const double *dd)
{
    int64_t k = 0;
    for (int64_t z = 1; z < g->nz; z++)
        if (dd[z] > dd[k])
            k = z;
    return k;
}

double peak_depth_mm(const grid *g, const double *dd)
{
    return g->z.centres[peak_row(g, dd)];
}

double distal_depth_mm(const grid *g, const double *dd, double level)
{
    int64_t k = peak_row(g, dd);
    double thr = level * dd[k];
    for (int64_t z = k; z + 1 < g->nz; z++) {
        if (dd[z] >= thr && dd[z + 1] < thr) {
            double f = (dd[z] - thr) / (dd[z] - dd[z + 1]);
            return g->z.centres[z] + f * (g->z.centres[z + 1] - g->z.centres[z]);
        }
    }
    return NAN;
}

void lateral_moments(const grid *g, const double *dose, int iz, double *mean, double *rms)
{
    const double *row = dose + (int64_t)iz * g->nx;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int64_t x = 0; x < g->nx; x++) {
        s0 += row[x];
        s1 += row[x] * g->x.centres[x];
    }
    double m = s0 > 0.0 ? s1 / s0 : NAN;
    for (int64_t x = 0; x < g->nx; x++) {
        double d = g->x.centres[x] - m;
        s2 += row[x] * d * d;
    }
    *mean = m;
    *rms = s0 > 0.0 ? sqrt(s2 / s0) : NAN;
}

double lateral_rms_at(const grid *g, const double *dose, double z_mm)
{
    double pos = z_mm / g->dz - 0.5; /* in rows from centre 0 */
    if (pos <= 0.0)
        pos = 0.0;
    int64_t z = (int64_t)floor(pos);
    if (z >= g->nz - 1)
        z = g->nz - 2;
    double f = pos - z, m, r0, r1;
    lateral_moments(g, dose, (int)z, &m, &r0);
    lateral_moments(g, dose, (int)z + 1, &m, &r1);
    return (1.0 - f) * r0 + f * r1;
}

const double *dose_on_energy_scale(const grid *g, const double *energy_MeV, const medium_map *m,
                                   double **owned)
{
    *owned = NULL;
    if (!m || !m->cell || m->n_media <= 1)
        return energy_MeV;
    int64_t n = g->nz * g->nx;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d)
        return NULL;
    /* The factor the result writer applies to Gy (out_gy_per_MeV_at), so the
     * curve is the written dose_Gy's, scaled. */
    for (int64_t c = 0; c < n; c++)
        d[c] = energy_MeV[c] * (g->density / m->media[m->cell[c]].density_g_cm3);
    *owned = d;
    return d;
}

/* The deepest row z with dd[z] >= thr, all rows beyond it below: the last
 * fall through thr is between z and z + 1. -1 when the last row is not below
 * thr (the curve has not fallen through it inside the grid). */
static int64_t last_fall_row(const grid *g, const double *dd, double thr)
{
    if (!(dd[g->nz - 1] < thr))
        return -1;
    for (int64_t z = g->nz - 2; z >= 0; z--)
        if (dd[z] >= thr)
            return z;
    return -1;
}

static double fall_depth_mm(const grid *g, const double *dd, double thr)
{
    int64_t z = last_fall_row(g, dd, thr);
    if (z < 0)
        return NAN;
    double f = (dd[z] - thr) / (dd[z] - dd[z + 1]);
    return g->z.centres[z] + f * (g->z.centres[z + 1] - g->z.centres[z]);
}

static void figures_of_curve(const grid *g, const double *dose, const double *dd, dose_figures *f)
{
    int64_t k = peak_row(g, dd);
    double top = dd[k];
    f->max_depth_mm = g->z.centres[k];
    f->far_edge_rel = top > 0.0 ? dd[g->nz - 1] / top : NAN;
    f->r80_mm = f->r20_mm = f->peak_depth_mm = f->peak_to_entrance = f->max_to_peak = NAN;
    f->lateral_rms_half_r80_mm = NAN;
    int64_t z50 = top > 0.0 ? last_fall_row(g, dd, 0.5 * top) : -1;
    if (z50 >= 0) {
        /* Up the distal fall-off to the first maximum: the distal peak. A
         * flat top stops the climb at its deepest row (a plateau's distal
         * end); at the maximum's value it is the maximum's row (the first). */
        int64_t d = z50;
        while (d > 0 && dd[d - 1] > dd[d])
            d--;
        if (dd[d] == top)
            d = k;
        double peak = dd[d];
        f->peak_depth_mm = g->z.centres[d];
        f->max_to_peak = top / peak;
        f->peak_to_entrance = dd[0] > 0.0 ? peak / dd[0] : NAN;
        f->r80_mm = fall_depth_mm(g, dd, 0.8 * peak);
        f->r20_mm = fall_depth_mm(g, dd, 0.2 * peak);
    }
    if (isfinite(f->r80_mm))
        f->lateral_rms_half_r80_mm = lateral_rms_at(g, dose, 0.5 * f->r80_mm);
    double big = 0.0, side = 0.0;
    for (int64_t c = 0; c < g->nz * g->nx; c++)
        big = dose[c] > big ? dose[c] : big;
    for (int64_t z = 0; z < g->nz; z++) {
        const double *row = dose + z * g->nx;
        side = fmax(side, fmax(row[0], row[g->nx - 1]));
    }
    f->side_rel = big > 0.0 ? side / big : NAN;
}

int dose_figures_of(const grid *g, const double *energy_MeV, const medium_map *m, dose_figures *f)
{
    double *owned;
    const double *dose = dose_on_energy_scale(g, energy_MeV, m, &owned);
    double *dd =
        calloc((size_t)g->nz, sizeof *dd); /* zeroed: depth_dose fills it, gcc cannot tell */
    if (!dose || !dd) {
        free(dd);
        return -1;
    }
    depth_dose(g, dose, dd);
    figures_of_curve(g, dose, dd, f);
    free(dd);
    free(owned);
    return 0;
}

void dose_figures_why_undefined(const dose_figures *f, double level, char *out, size_t cap)
{
    double v = level < 0.5 ? f->r20_mm : f->r80_mm;
    if (isfinite(v))
        snprintf(out, cap, "%s", "");
    else if (!isfinite(f->far_edge_rel))
        snprintf(out, cap, "no dose in the grid");
    else if (!isfinite(f->peak_depth_mm))
        snprintf(
            out, cap,
            "the depth dose does not fall below half its maximum inside the grid (at the far edge "
            "it is %.3g %% of it): the distal fall-off is beyond the grid",
            100.0 * f->far_edge_rel);
    else
        snprintf(
            out, cap,
            "the depth dose at the far edge is still %.3g %% of the distal peak's, above the %g %% "
            "level",
            100.0 * f->far_edge_rel * f->max_to_peak, 100.0 * level);
}

int summary_warnings(const dose_figures *f, double leak_fraction, char *out, size_t cap)
{
    int n = 0;
    size_t len = 0;
    out[0] = '\0';
#define ADD(...)                                                        \
    do {                                                                \
        if (len < cap)                                                  \
            len += (size_t)snprintf(out + len, cap - len, __VA_ARGS__); \
        n++;                                                            \
    } while (0)
    double leak = 100.0 * leak_fraction;
    int far = f->far_edge_rel >= SUMMARY_EDGE_REL, sides = f->side_rel >= SUMMARY_EDGE_REL;
    if (far)
        ADD("the beam reaches the grid's far edge: the depth dose there is %.3g %% of its maximum and %.3g %% of "
            "the protons left the grid through its edges (escape tally spatial_leak); %s, and the dose beyond "
            "the grid is missing\n",
            100.0 * f->far_edge_rel, leak,
            isfinite(f->r80_mm) ? "R80 is not the beam's range" : "R80 is undefined");
    if (sides)
        ADD("the beam reaches the grid's sides: the first or last column holds up to %.3g %% of the largest dose "
            "and %.3g %% of the protons left the grid through its edges (escape tally spatial_leak); the dose "
            "beyond the sides is missing and the lateral width is cut\n",
            100.0 * f->side_rel, leak);
    if (!far && !sides && leak_fraction >= SUMMARY_LEAK_REL)
        ADD("%.3g %% of the protons left the grid through its edges (escape tally spatial_leak): the dose they "
            "would have deposited beyond the grid is missing\n",
            leak);
#undef ADD
    return n;
}

double run_leak_fraction(const run_result *r)
{
    return r->initial_weight > 0.0 ? r->cumulative.weight[CH_SPATIAL_LEAK] / r->initial_weight
                                   : 0.0;
}
