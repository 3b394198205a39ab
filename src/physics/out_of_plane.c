#include "physics/out_of_plane.h"

#include <math.h>
#include <stdlib.h>

#include "input/plan_access.h"
#include "physics/material.h"
#include "physics/scattering_power.h"

/* Points of the fine energy grid the two integrals run on, log-spaced from
 * the table's lowest energy to E_ref: 0.6 % apart over 1 keV-230 MeV, where
 * the integrands (T / S, theta_0^2 / S) change by about 1 % a point. */
#define FINE_POINTS 2048

/* T / S (rad^2 per MeV) of the reference material at E. */
static double spread_rate(const tables *ref, const out_of_plane_model *m, double E)
{
    const double T = m->highland ? scattering_power_dhighland(E, m->E_ref_MeV, m->XS_g_cm2)
                                 : tables_scattering_power(ref, E);
    return T / tables_stopping_power(ref, E);
}

/* theta_0^2 at the fine energies e[0..n-1] (ascending, e[n-1] = E_ref), by
 * the midpoint rule from the top: the midpoints keep the differential
 * Highland T off E_ref, where its log singularity lies. */
static void theta2_fine(const tables *ref, const out_of_plane_model *m, const double *e, int n,
                        double *th2)
{
    th2[n - 1] = 0.0;
    for (int j = n - 2; j >= 0; j--) {
        const double mid = sqrt(e[j] * e[j + 1]);
        th2[j] = th2[j + 1] + spread_rate(ref, m, mid) * (e[j + 1] - e[j]);
    }
}

static int fine_grid(const tables *ref, const out_of_plane_model *m, double *e, int n)
{
    const double lo = ref->E_MeV[0], hi = fmin(m->E_ref_MeV, ref->E_MeV[ref->n - 1]);
    if (!(hi > lo))
        return -1;
    for (int j = 0; j < n; j++)
        e[j] = lo * pow(hi / lo, (double)j / (n - 1));
    e[n - 1] = hi;
    return 0;
}

/* v at x by linear interpolation in log x over the ascending e[0..n-1]
 * (clamped at both ends). */
static double at_log(const double *e, const double *v, int n, double x)
{
    if (!(x > e[0]))
        return v[0];
    if (x >= e[n - 1])
        return v[n - 1];
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if (e[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    const double f = log(x / e[lo]) / log(e[hi] / e[lo]);
    return v[lo] + f * (v[hi] - v[lo]);
}

out_of_plane_model out_of_plane_of_plan(const plan *p, const tables *t)
{
    const material_props *mat = material_props_find(t->material);
    const int highland = p->scattering_power == SCAT_HIGHLAND;
    /* Without the material's scattering length there is no Highland theta_0;
     * the set-up refuses such a plan with scattering on (sim_tables.c). */
    return (out_of_plane_model){ .on =
                                     p->out_of_plane_detour && p->scattering && (!highland || mat),
                                 .highland = highland,
                                 .E_ref_MeV = plan_reference_energy_MeV(p),
                                 .XS_g_cm2 = mat ? mat->XS_g_cm2 : 0.0 };
}

double out_of_plane_theta2(const tables *ref, const out_of_plane_model *m, double E_MeV)
{
    if (!m || !m->on || !ref || !(E_MeV >= ref->E_MeV[0] && E_MeV <= ref->E_MeV[ref->n - 1]))
        return m && !m->on ? 0.0 : NAN;
    if (E_MeV >= m->E_ref_MeV)
        return 0.0;
    double e[FINE_POINTS], th2[FINE_POINTS];
    if (fine_grid(ref, m, e, FINE_POINTS))
        return 0.0;
    theta2_fine(ref, m, e, FINE_POINTS, th2);
    return at_log(e, th2, FINE_POINTS, E_MeV);
}

int tables_set_path_range(tables *t, const tables *ref, const out_of_plane_model *m, smx_error *err)
{
    free(t->path_g_cm2);
    t->path_g_cm2 = NULL;
    if (!m || !m->on)
        return 0;
    if (m->highland && !(m->XS_g_cm2 > 0.0))
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s: no scattering length for the out-of-plane detour's theta_0; "
                        "expected a material of the library (docs/materials.md)",
                        ref->path);
    double *e = malloc(FINE_POINTS * sizeof *e), *th2 = malloc(FINE_POINTS * sizeof *th2),
           *lost = malloc(FINE_POINTS * sizeof *lost);
    double *path = malloc((size_t)t->n * sizeof *path);
    int rc = 0;
    if (!e || !th2 || !lost || !path) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the in-plane path range");
        goto done;
    }
    if (fine_grid(ref, m, e, FINE_POINTS)) { /* E_ref at the table's bottom: nothing to gather */
        free(path);
        path = NULL;
        goto done;
    }
    theta2_fine(ref, m, e, FINE_POINTS, th2);
    /* The range the detour takes from the path, int theta_0^2 / 2 dE / S in
     * t's material, from the table's bottom up (trapezoid in E). Above E_ref
     * theta_0 is zero and it stays at its top value. */
    lost[0] = 0.0;
    for (int j = 1; j < FINE_POINTS; j++) {
        const double mid = sqrt(e[j - 1] * e[j]), th = 0.5 * (th2[j - 1] + th2[j]);
        lost[j] = lost[j - 1] + 0.5 * th / tables_stopping_power(t, mid) * (e[j] - e[j - 1]);
    }
    for (int k = 0; k < t->n; k++) {
        path[k] = t->csda_g_cm2[k] - at_log(e, lost, FINE_POINTS, t->E_MeV[k]);
        /* Its slope is 1 / S times (1 - theta_0^2 / 2), theta_0 a few degrees:
         * a table whose points this reorders has no range relation to keep. */
        if (!(path[k] > 0.0) || (k > 0 && !(path[k] > path[k - 1]))) {
            rc = smx_fail(err, SMX_EXIT_INPUT,
                          "%s: the in-plane path range is not increasing at %g MeV (%g g/cm2 "
                          "after %g); expected a table whose CSDA ranges grow faster than the "
                          "out-of-plane detour (docs/model.md)",
                          t->path, t->E_MeV[k], path[k], k > 0 ? path[k - 1] : 0.0);
            goto done;
        }
    }
    t->path_g_cm2 = path;
    path = NULL;
done:
    free(e);
    free(th2);
    free(lost);
    free(path);
    return rc;
}
