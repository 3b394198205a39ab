#include "report/analysis.h"

#include <math.h>
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

int dose_figures_of(const grid *g, const double *dose, dose_figures *f)
{
    double *dd = malloc(g->nz * sizeof *dd);
    if (!dd)
        return -1;
    depth_dose(g, dose, dd);
    double pk = 0.0;
    for (int64_t z = 0; z < g->nz; z++)
        pk = dd[z] > pk ? dd[z] : pk;
    f->peak_depth_mm = peak_depth_mm(g, dd);
    f->r80_mm = distal_depth_mm(g, dd, 0.8);
    f->r20_mm = distal_depth_mm(g, dd, 0.2);
    f->peak_to_entrance = dd[0] > 0.0 ? pk / dd[0] : NAN;
    f->lateral_rms_half_r80_mm = isfinite(f->r80_mm) ? lateral_rms_at(g, dose, 0.5 * f->r80_mm) : NAN;
    free(dd);
    return 0;
}
