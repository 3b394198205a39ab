#include "physics/sim_tables.h"

#include <math.h>
#include <stdlib.h>

#include "physics/material.h"
#include "physics/scattering_power.h"

/* The scattering power of the plan's model at E (rad2 cm2/g). */
typedef struct scatter_model {
    const tables *t;
    int highland;
    double E1, XS; /* differential Highland: incident energy, scattering length */
} scatter_model;

static double scatter_T(double E, const void *ctx)
{
    const scatter_model *m = ctx;
    return m->highland ? scattering_power_dhighland(E, m->E1, m->XS) : tables_scattering_power(m->t, E);
}

/* Angular variance added over one step, in rad^2: the integral of the mass
 * scattering power along the path actually travelled (tables_step_integral).
 * Integrating instead of taking T(E) ds keeps the result independent of ds,
 * follows T as it grows along the step, and gives a particle that stops
 * within the step only the scattering of the path it has left. Differential
 * Highland is defined below the incident energy only: a bin at or above it
 * (the beam's own bin, the upper side of an energy spread) scatters as in the
 * first step; the quadrature never touches the step's ends, where T_dH has its
 * integrable log singularity at the entrance. */
static double step_variance(const scatter_model *m, double E, double E_stop, double ds_g)
{
    if (m->highland && E >= m->E1)
        E = m->E1;
    return tables_step_integral(m->t, E, E_stop, ds_g, scatter_T, m);
}

static int angular_sigmas(double *sig, const plan *p, const grid *g, const tables *t,
                          const material_props *mat)
{
    double ds_g = g->ds * 0.1 * g->density;
    scatter_model m = {t, p->scattering_power == SCAT_HIGHLAND, plan_reference_energy_MeV(p),
                       mat ? mat->XS_g_cm2 : 0.0};
    for (int64_t i = 0; i < g->ne; i++) {
        double v = p->scattering ? step_variance(&m, g->E.centres[i], g->E_stop, ds_g) : 0.0;
        if (!(v >= 0.0))
            return -1;
        sig[i] = sqrt(v) / g->dtheta;
    }
    return 0;
}

/* The material's constants, when a model of the plan needs them. */
static int need_material(const plan *p, const tables *t, const material_props **mat, smx_error *err)
{
    *mat = material_props_find(t->material);
    if (*mat)
        return 0;
    const char *key = p->scattering && p->scattering_power == SCAT_HIGHLAND ? "transport.scattering_power"
                      : p->straggling                                   ? "transport.straggling"
                      : p->nuclear                                      ? "transport.nuclear"
                                                                        : NULL;
    if (!key)
        return 0;
    return plan_fail_at(p, err, key,
                        "the material '%s' of %s has no scattering length, Z/A or non-elastic "
                        "cross section here yet (known: water (liquid)); switch the model off, "
                        "or use transport.scattering_power: fermi_rossi", t->material, t->path);
}

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err)
{
    *s = (sim_tables){.p = p, .g = g, .only_op = -1};
    const material_props *mat;
    int rc = need_material(p, t, &mat, err);
    if (rc)
        return rc;
    energy_physics ph = {p->straggling, p->nuclear, mat ? mat->Z_over_A : 0.0,
                         mat ? mat->nonelastic_cm2_g : NULL};
    rc = energy_lut_build(&s->el, g, t, &ph, err);
    if (rc)
        return rc;
    double *sig = malloc(g->ne * sizeof *sig);
    if (!sig) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    if (angular_sigmas(sig, p, g, t, mat)) {
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
