#include "physics/sim_tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_access.h"
#include "physics/material.h"
#include "physics/pp_elastic.h"
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
    return m->highland ? scattering_power_dhighland(E, m->E1, m->XS)
                       : tables_scattering_power(m->t, E);
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

/* sig[i] = the step's rms angle / dtheta for energy bin i in a medium of table t
 * and density rho (g/cm3); under spacing: beam dtheta is the central bin's
 * width d0, the map's unit. */
static int angular_sigmas(double *sig, const plan *p, const grid *g, const tables *t,
                          const material_props *mat, double rho)
{
    double ds_g = g->ds * 0.1 * rho;
    scatter_model m = { t, p->scattering_power == SCAT_HIGHLAND, plan_reference_energy_MeV(p),
                        mat ? mat->XS_g_cm2 : 0.0 };
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
    const char *key = p->scattering && p->scattering_power == SCAT_HIGHLAND
                          ? "transport.scattering_power"
                      : p->straggling ? "transport.straggling"
                      : p->nuclear    ? "transport.nuclear"
                                      : NULL;
    if (!key)
        return 0;
    return smx_fail_key(err, SMX_EXIT_INPUT, key,
                        "the material '%s' of %s has no scattering length, Z/A or non-elastic "
                        "cross section here yet; switch the model off, "
                        "or use transport.scattering_power: fermi_rossi",
                        t->material, t->path);
}

/* The energy-loss physics of the plan's models with a material's constants. */
static energy_physics medium_physics(const plan *p, const material_props *mat)
{
    const double h = p->nuclear == NUCLEAR_HALO && mat
                         ? pp_elastic_hydrogen_per_g(mat->elements, mat->n_elements)
                         : 0.0;
    return (energy_physics){ p->straggling, p->nuclear, mat ? mat->Z_over_A : 0.0,
                             mat ? mat->nonelastic_cm2_g : NULL, h };
}

/* err (the kernels' own error) replaced by msg at the plan key `key`. */
static int blame_at(const char *key, const char *msg, smx_error *err)
{
    *err = (smx_error){ 0 }; /* smx_fail keeps the first error set: start afresh */
    return smx_fail_key(err, SMX_EXIT_INPUT, key, "%s", msg);
}

/* v rounded up to 3 significant digits: a value to suggest that passes. */
static double round_up3(double v)
{
    double unit = pow(10.0, floor(log10(v)) - 2.0);
    return ceil(v / unit * (1.0 - 1e-12)) * unit;
}

/* The angular kernels refused a sigma: say which plan keys to change, and to
 * what. sig: sigma/dtheta of every medium's energy bins. Other errors of the
 * kernels are left as they are. */
static int blame_scattering(const sim_tables *s, const double *sig, int n_media, int rc,
                            smx_error *err)
{
    const plan *p = s->p;
    const grid *g = s->g;
    const int n = (int)g->nth, full = g->angle_mode == ANGLE_FULL;
    const double limit = angle_kernel_sigma_limit(n, full), deg = 180.0 / M_PI;
    int64_t at = 0;
    for (int64_t k = 1; k < g->ne * n_media; k++)
        if (sig[k] > sig[at])
            at = k;
    if (rc != SMX_EXIT_INPUT || !(sig[at] > limit))
        return rc;
    char msg[sizeof err->msg];
    if (limit <= 0.0) { /* no room beside the centre bin: no kernel scatters */
        snprintf(msg, sizeof msg,
                 "%d bin%s cannot hold any scattering; expected at least %d bins, or "
                 "transport.scattering: false",
                 n, n == 1 ? "" : "s", full ? 3 : 2);
        return blame_at("grid.angle.n_bins", msg, err);
    }
    const int m = (int)(at / g->ne);
    const double E = g->E.centres[at % g->ne], sigma = sig[at] * g->dtheta;
    char where[200];
    if (s->mm)
        snprintf(where, sizeof where, "%s at %.4g g/cm3",
                 s->mm->materials[s->mm->media[m].material].name, s->mm->media[m].density_g_cm3);
    else
        snprintf(where, sizeof where, "%s",
                 p->material_name[0] ? p->material_name : "the plan's material");
    /* The variance of a step grows about as the step: a guide, not a bound. */
    const double step = p->step_mm * (limit / sig[at]) * (limit / sig[at]);
    if (full) {
        snprintf(
            msg, sizeof msg,
            "%g mm is too long for the angular grid: one step's rms scattering angle reaches %.3g deg (at "
            "%.4g MeV in %s), more than the full circle of grid.angle.n_bins = %d bins can hold (%.3g deg, "
            "whatever the bins); expected a shorter step, about %.3g mm or less",
            p->step_mm, sigma * deg, E, where, n, limit * g->dtheta * deg, step);
        return blame_at("transport.step_mm", msg, err);
    }
    /* With the widest support (n - 1 bins) the limit is L(n) bins of 2 hw / n rad. */
    const double hw = round_up3(sigma * n / (2.0 * limit) * deg);
    const double hw_now = p->angle_half_width_deg;
    if (hw < 180.0)
        snprintf(
            msg, sizeof msg,
            "%g deg is too narrow for the scattering: one step's rms angle reaches %.3g deg (at %.4g MeV in "
            "%s), and a window of grid.angle.n_bins = %d bins that wide holds at most %.3g deg; expected "
            "half_width_deg >= %.3g (more bins do not help), or a shorter transport.step_mm (about %.3g mm "
            "or less)",
            hw_now, sigma * deg, E, where, n, limit * g->dtheta * deg, hw, step);
    else
        snprintf(
            msg, sizeof msg,
            "%g deg is too narrow for the scattering: one step's rms angle reaches %.3g deg (at %.4g MeV in "
            "%s), more than any window can hold; expected grid.angle.mode: full and a shorter "
            "transport.step_mm (about %.3g mm or less)",
            hw_now, sigma * deg, E, where, step);
    return blame_at("grid.angle.half_width_deg", msg, err);
}

/* Angular kernels for n_media media (sigmas of medium m at [m * ne ...]) and
 * every kernel's share scattered outside a window. */
static int build_kernels(sim_tables *s, const double *sig, int n_media, smx_error *err)
{
    const grid *g = s->g;
    const int beam = g->angle_spacing == ANGLE_BEAM;
    int rc = beam ? angle_kernels_build_mapped(&s->ak, sig, (int)g->ne * n_media, (int)g->nth,
                                               g->theta_c / g->dtheta, err)
                  : angle_kernels_build(&s->ak, sig, (int)g->ne * n_media, (int)g->nth,
                                        g->angle_mode == ANGLE_FULL, err);
    if (rc)
        return beam ? rc : blame_scattering(s, sig, n_media, rc, err);
    int nth = (int)g->nth, nk = s->ak.n_kernels;
    s->boundary_frac = calloc((size_t)nk * nth, sizeof *s->boundary_frac);
    if (!s->boundary_frac)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    if (beam) /* each source bin's own kernel: what it sends past the edges */
        memcpy(s->boundary_frac, s->ak.src_lost, (size_t)nk * nth * sizeof *s->boundary_frac);
    else if (g->angle_mode == ANGLE_WINDOW) {
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
    return 0;
}

/* Gather where the reference table allows it (the media other than the
 * reference move psi through their candidate lists, which are always valid). */
static void choose_energy_form(sim_tables *s)
{
    const plan *p = s->p;
    s->energy_gather = p->variant_energy != VAR_E_SCATTER && s->el.gather_ok;
    if (p->variant_energy == VAR_E_GATHER && !s->el.gather_ok)
        smx_warn("energy-loss gather table refused (%s); using the scatter form\n",
                 s->el.gather_reason);
}

/* The spectral tallies of the media of s (one: t) and their tables mt. */
static int build_tallies(sim_tables *s, const tables *const *mt, const tables *water,
                         smx_error *err)
{
    const grid *g = s->g;
    spectral_tallies_free(&s->tally);
    s->tally_ready = 0;
    if (water) /* else the one sim_tables_build found (the plan's material, water) */
        s->tally_water = water;
    water = s->tally_water;
    if (g->dose_planes < 2)
        return (s->tally_ready = 1), 0;
    if (g->plane_water && !water)
        return 0; /* sim_tables_set_media brings it */
    spectral_medium *md = malloc((size_t)s->n_media * sizeof *md);
    if (!md)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the spectral tallies");
    for (int m = 0; m < s->n_media; m++)
        md[m] =
            (spectral_medium){ sim_energy_lut(s, m), s->mm ? mt[s->mm->media[m].material] : mt[0],
                               s->mm ? s->mm->media[m].density_g_cm3 : g->density };
    int rc = spectral_tallies_build(&s->tally, g, s->n_media, md, water, err);
    free(md);
    s->tally_ready = !rc;
    return rc;
}

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err)
{
    *s = (sim_tables){ .p = p,
                       .g = g,
                       .auto_stop_weight = p->auto_stop_weight,
                       .early_exit_threshold = p->early_exit_threshold,
                       .n_media = 1 };
    const material_props *mat;
    int rc = need_material(p, t, &mat, err);
    if (rc)
        return rc;
    energy_physics ph = medium_physics(p, mat);
    /* Its one input error: straggling wider than the bins. */
    if ((rc = energy_lut_build(&s->el, g, t, &ph, err)))
        return smx_blame_key(err, "transport.straggling", rc);
    double *sig = malloc(g->ne * sizeof *sig);
    if (!sig) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
        goto fail;
    }
    if (angular_sigmas(sig, p, g, t, mat, g->density)) {
        free(sig);
        rc = smx_fail_key(err, SMX_EXIT_INPUT, "material.table_file",
                          "%s: scattering power undefined on the energy grid (%.4g "
                          "to %.4g MeV); expected a table that covers it",
                          t->path, g->E.edges[0], g->E.edges[g->ne]);
        goto fail;
    }
    rc = build_kernels(s, sig, 1, err);
    free(sig);
    if (rc || (rc = build_tallies(s, &t, strcmp(p->material_name, "water") ? NULL : t, err)))
        goto fail;
    if ((rc = stream_table_build(&s->st, g, p->streaming_scheme, err)))
        goto fail;
    choose_energy_form(s);
    s->stream_gather = p->variant_stream != VAR_S_ATOMIC && p->variant_stream != VAR_S_WARP &&
                       p->variant_stream != VAR_S_FALLBACK;
    return 0;
fail:
    sim_tables_free(s);
    return rc;
}

int sim_tables_set_media(sim_tables *s, const medium_map *mm, const tables *const *mt,
                         const tables *water, smx_error *err)
{
    const plan *p = s->p;
    const grid *g = s->g;
    if (mm->n_media < 1 || mm->media[0].material != 0 || mm->media[0].density_g_cm3 != g->density)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: medium 0 must be the plan's material at its density");
    int nm = mm->n_media;
    s->mm = mm;
    if (nm == 1)
        return build_tallies(s, mt, water, err);
    s->el_media = calloc((size_t)nm - 1, sizeof *s->el_media);
    double *sig = malloc((size_t)g->ne * nm * sizeof *sig);
    s->dither = calloc((size_t)nm - 1, sizeof *s->dither);
    int *rcs = calloc((size_t)nm, sizeof *rcs);
    smx_error *errs = calloc((size_t)nm, sizeof *errs);
    if (!s->el_media || !sig || !s->dither || !rcs || !errs) {
        free(sig);
        free(rcs);
        free(errs);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (tables of %d media)", nm);
    }
    s->n_media = nm;
    /* The media's tables are independent: built in parallel (a CT map has up
     * to 255 media); the first error in medium order is the one reported. */
#pragma omp parallel
    {
        double *E_after = malloc((size_t)g->ne * sizeof *E_after);
        double *var = malloc((size_t)g->ne * sizeof *var);
        double *surv = malloc((size_t)g->ne * sizeof *surv);
        double *pp = malloc((size_t)g->ne * sizeof *pp);
#pragma omp for schedule(dynamic, 1)
        for (int m = 0; m < nm; m++) {
            const tables *t = mt[mm->media[m].material];
            double rho = mm->media[m].density_g_cm3;
            const material_props *mat;
            int rc = 0;
            if (!E_after || !var || !surv || !pp)
                rc = smx_fail(&errs[m], SMX_EXIT_RUNTIME, "out of memory (tables of %d media)", nm);
            else
                rc = need_material(p, t, &mat, &errs[m]);
            if (!rc &&
                m > 0) { /* the step's model once: the plain table, then the whole-bin ones */
                energy_physics ph = medium_physics(p, mat);
                energy_step_model(g, t, &ph, rho, &(energy_step_map){ E_after, var, surv, pp });
                /* The plain table gives only the step's deposit here (the
                 * whole-bin tables move psi and carry the straggling), and a
                 * spread that keeps the mean leaves the deposit as it is: it
                 * holds none, so a dense medium whose straggling per step is
                 * wider than its bins' three points can hold (titanium at
                 * twice its density) builds like any other. */
                const energy_step_map plain = { E_after, NULL, p->nuclear ? surv : NULL,
                                                p->nuclear ? pp : NULL },
                                      whole = { E_after, p->straggling ? var : NULL,
                                                p->nuclear ? surv : NULL, NULL };
                if (!(rc = energy_lut_from_map(&s->el_media[m - 1], g, &plain, &errs[m])))
                    rc = energy_dither_lut_build(&s->dither[m - 1], g, &s->el_media[m - 1], mt[0],
                                                 &whole, &errs[m]);
            }
            if (!rc && angular_sigmas(sig + (size_t)m * g->ne, p, g, t, mat, rho))
                rc = smx_fail(
                    &errs[m], SMX_EXIT_INPUT,
                    "%s (the table of material '%s' of the geometry): "
                    "scattering power undefined on the energy grid (%.4g to %.4g MeV); expected a "
                    "table that covers it",
                    t->path, mm->materials[mm->media[m].material].name, g->E.edges[0],
                    g->E.edges[g->ne]);
            rcs[m] = rc;
        }
        free(E_after);
        free(var);
        free(surv);
        free(pp);
    }
    int rc = 0;
    for (int m = 0; m < nm && !rc; m++)
        if ((rc = rcs[m]))
            *err = errs[m];
    free(rcs);
    free(errs);
    for (int m = 1; !rc && m < nm; m++) {
        const energy_dither_lut *d = &s->dither[m - 1];
        if (d->straggling_limited)
            smx_warn(
                "transport.straggling: in %s at %.4g g/cm3 one step's energy straggling is wider than "
                "the energy bins can carry from %.4g MeV up (up to %.2fx the variance they hold); there "
                "each step adds what they hold. A longer transport.step_mm carries it all\n",
                mm->materials[mm->media[m].material].name, mm->media[m].density_g_cm3,
                d->straggling_limit_E_MeV, d->straggling_limit_ratio);
    }
    if (!rc) {
        angle_kernels_free(&s->ak);
        free(s->boundary_frac);
        s->boundary_frac = NULL;
        rc = build_kernels(s, sig, nm, err);
    }
    free(sig);
    if (!rc)
        choose_energy_form(s);
    return rc ? rc : build_tallies(s, mt, water, err);
}

int sim_tables_share_steps(sim_tables *s, const sim_tables *run, smx_error *err)
{
    for (int m = 1; m < s->n_media; m++) {
        energy_dither_lut *d = &s->dither[m - 1];
        const energy_dither_lut *r = sim_dither(run, m);
        double *c = malloc((size_t)r->n_steps * sizeof *c);
        if (!c)
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        memcpy(c, r->steps, (size_t)r->n_steps * sizeof *c);
        free(d->steps);
        d->steps = c;
        d->n_steps = r->n_steps;
    }
    return 0;
}

void sim_tables_free(sim_tables *s)
{
    for (int m = 1; s->el_media && m < s->n_media; m++)
        energy_lut_free(&s->el_media[m - 1]);
    free(s->el_media);
    s->el_media = NULL;
    for (int m = 1; s->dither && m < s->n_media; m++)
        energy_dither_lut_free(&s->dither[m - 1]);
    free(s->dither);
    s->dither = NULL;
    energy_lut_free(&s->el);
    spectral_tallies_free(&s->tally);
    angle_kernels_free(&s->ak);
    stream_table_free(&s->st);
    free(s->boundary_frac);
    s->boundary_frac = NULL;
}
