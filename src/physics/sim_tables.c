#include "physics/sim_tables.h"

#include <math.h>
#include <stdlib.h>

/* Angular variance added over one step, in bins^2: the integral of the mass
 * scattering power along the path actually travelled, from R(E) down to
 * max(R(E) - rho ds, R(E_stop)) in residual range (g/cm2). Integrating instead
 * of taking T(E) ds keeps the result independent of ds, follows T as it grows
 * along the step, and gives a particle that stops within the step only the
 * scattering of the path it has left. */
static double step_variance(const tables *t, double E, double E_stop, double ds_g)
{
    double R = tables_csda_range(t, E), R_stop = tables_csda_range(t, E_stop);
    double R_end = R - ds_g > R_stop ? R - ds_g : R_stop;
    if (!(R > R_end))
        return 0.0;
    const int n = 32; /* Simpson panels; T varies smoothly along one step */
    double h = (R - R_end) / n, sum = 0.0;
    for (int k = 0; k <= n; k++) {
        double Tk = tables_scattering_power(t, tables_energy_at_range(t, R_end + k * h));
        sum += Tk * (k == 0 || k == n ? 1.0 : (k % 2 ? 4.0 : 2.0));
    }
    return sum * h / 3.0;
}

static int angular_sigmas(double *sig, const plan *p, const grid *g, const tables *t)
{
    double ds_g = g->ds * 0.1 * g->density;
    for (int64_t i = 0; i < g->ne; i++) {
        double v = p->scattering ? step_variance(t, g->E.centres[i], g->E_stop, ds_g) : 0.0;
        if (!(v >= 0.0))
            return -1;
        sig[i] = sqrt(v) / g->dtheta;
    }
    return 0;
}

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err)
{
    *s = (sim_tables){.p = p, .g = g, .only_op = -1};
    int rc = energy_lut_build(&s->el, g, t, err);
    if (rc)
        return rc;
    double *sig = malloc(g->ne * sizeof *sig);
    if (!sig) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    if (angular_sigmas(sig, p, g, t)) {
        free(sig);
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: scattering power undefined on the energy grid",
                      t->path);
        goto fail;
    }
    rc = angle_kernels_build(&s->ak, sig, (int)g->ne, (int)g->nth, g->angle_mode == ANGLE_FULL,
                             err);
    free(sig);
    if (rc)
        goto fail;
    if ((rc = stream_table_build(&s->st, g, p->streaming_scheme, err)))
        goto fail;

    int nth = (int)g->nth, nk = s->ak.n_kernels;
    s->boundary_frac = calloc((size_t)nk * nth, sizeof *s->boundary_frac);
    if (!s->boundary_frac) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    if (g->angle_mode == ANGLE_WINDOW) {
        for (int k = 0; k < nk; k++) {
            int K = s->ak.half_width[k];
            const float *w = s->ak.weights + s->ak.offset[k] + K;
            for (int i = 0; i < nth; i++) {
                double out = 0.0;
                for (int d = -K; d <= K; d++)
                    if (i + d < 0 || i + d >= nth)
                        out += w[d];
                s->boundary_frac[(size_t)k * nth + i] = out;
            }
        }
    }
    s->energy_gather = p->variant_energy != VAR_E_SCATTER && s->el.gather_ok;
    if (p->variant_energy == VAR_E_GATHER && !s->el.gather_ok)
        smx_warn("energy-loss gather table refused (%s); using the scatter form\n",
                 s->el.gather_reason);
    s->stream_gather = p->variant_stream != VAR_S_ATOMIC && p->variant_stream != VAR_S_WARP &&
                       p->variant_stream != VAR_S_FALLBACK;
    return 0;
fail:
    sim_tables_free(s);
    return rc;
}

void sim_tables_free(sim_tables *s)
{
    energy_lut_free(&s->el);
    angle_kernels_free(&s->ak);
    stream_table_free(&s->st);
    free(s->boundary_frac);
    s->boundary_frac = NULL;
}
