#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "input/plan_access.h"
#include "buildinfo.h"
#include "report/analysis.h"
#include "physics/angle_grid.h"
#include "physics/beam_reach.h"
#include "transport/backend_select.h"
#include "transport/device_query.h"
#include "transport/window.h"

void report_version(void)
{
    gpu_info gi;
    gpu_query(&gi);
    printf("smx2d-sim %s (%s)\n  compiler: %s\n  nvcc: %s\n  GPU code: %s\n  GPU: %s\n",
           SMX_VERSION, SMX_GIT_DESCRIBE, SMX_COMPILER, SMX_NVCC, SMX_CUDA_ARCHS,
           gi.count ? gi.name : gi.why_none);
    /* Loaded here only to say whether the CUDA backend's FFT variant is available. */
    char why[512];
    int fv = cufft_query(1, why, sizeof why);
    if (fv > 0)
        printf("  cuFFT: %d\n", fv);
    else
        printf("  cuFFT: none (%s)%s\n", why,
               gi.count ? "; the CUDA backend uses the direct angular kernel" : "");
}

void report_backend(const plan *p, const gpu_info *gi, const backend_ops *be, int dry_run)
{
    char what[600];
    backend_describe(p, gi, be, what, sizeof what);
    if (dry_run)
        printf("backend:   %s\n", what);
    else
        smx_info("backend: %s\n", what);
}

static int snapshot_count(const plan *p, int expected_steps)
{
    int n = 0, last = 0;
    for (int s = 0; s <= expected_steps; s++) {
        int want = (p->snapshot_every > 0 && s > 0 && s % p->snapshot_every == 0);
        for (int i = 0; i < p->n_snapshot_steps && !want; i++)
            want = p->snapshot_steps[i] == s;
        n += want;
        last = want;
    }
    /* The final state is written once, also when a listed step is the last. */
    return n + (p->snapshot_final && !last ? 1 : 0);
}

void report_media(FILE *f, const medium_map *m)
{
    /* Media beyond this many are summed in one line: a CT image has up to 255. */
    enum { SHOWN = 24 };
    fprintf(f, "media:     %d medi%s of %d material%s (%s)\n", m->n_media,
            m->n_media == 1 ? "um" : "a", m->n_materials, m->n_materials == 1 ? "" : "s", m->rule);
    for (int i = 0; i < m->n_materials; i++)
        fprintf(f, "           material %d: %s, table %s\n", i, m->materials[i].name,
                m->materials[i].table_path);
    int64_t n = (int64_t)m->nz * m->nx;
    int64_t *count = calloc((size_t)m->n_media, sizeof *count);
    if (!count)
        return;
    for (int64_t c = 0; c < n; c++)
        count[m->cell ? m->cell[c] : 0]++;
    int64_t rest = 0;
    for (int i = 0; i < m->n_media; i++) {
        if (i < SHOWN)
            fprintf(f, "           medium %d: %s at %.6g g/cm3, %lld cell%s\n", i,
                    m->materials[m->media[i].material].name, m->media[i].density_g_cm3,
                    (long long)count[i], count[i] == 1 ? "" : "s");
        else
            rest += count[i];
    }
    if (m->n_media > SHOWN)
        fprintf(f, "           ... %d more media, %lld cells\n", m->n_media - SHOWN,
                (long long)rest);
    free(count);
}

/* The dry run's prediction of where the beam goes (physics/beam_reach.h): one line,
 * and a warning for each spot (or summed over a field's spots) that the grid
 * cuts off. */
static int report_reach(const plan *p, const grid *g, const medium_map *media,
                        const tables *const *mt, int line)
{
    const double depth = g->z.edges[g->nz], x_lo = g->x.edges[0], x_hi = g->x.edges[g->nx];
    const int n = plan_spot_count(p);
    int n_far = 0, n_side = 0, n_fall = 0, deep = -1, far1 = -1, side1 = -1, fall1 = -1;
    beam_reach deepest = { 0 }, far = { 0 }, side = { 0 }, fall = { 0 };
    double lo = 0.0, hi = 0.0, deep_mm = -1.0;
    /* Each spot's reach on the host's threads (a field's 820 took 0.2 s on
     * one), then the figures in spot order; one at a time without the room. */
    beam_reach *all = n > 1 ? malloc((size_t)n * sizeof *all) : NULL;
    if (all) {
#pragma omp parallel for schedule(dynamic, 4)
        for (int k = 0; k < n; k++) {
            const plan_spot s = plan_spot_at(p, k);
            beam_reach_of(g, media, mt, &s, REACH_SIGMAS, &all[k]);
        }
    }
    for (int k = 0; k < n; k++) {
        beam_reach b;
        if (all) {
            b = all[k];
        } else {
            const plan_spot s = plan_spot_at(p, k);
            beam_reach_of(g, media, mt, &s, REACH_SIGMAS, &b);
        }
        lo = k ? fmin(lo, b.x_lo_mm) : b.x_lo_mm;
        hi = k ? fmax(hi, b.x_hi_mm) : b.x_hi_mm;
        double d = isfinite(b.stop_depth_mm) ? b.stop_depth_mm : INFINITY;
        if (d > deep_mm)
            deep_mm = d, deep = k, deepest = b;
        if (!isfinite(b.stop_mm) && !b.exit_side && n_far++ == 0)
            far1 = k, far = b;
        else if (isfinite(b.stop_mm) && b.stop_depth_mm + b.straggling_mm > depth && n_fall++ == 0)
            fall1 = k, fall = b;
        double out = fmax(x_lo - b.x_lo_mm, b.x_hi_mm - x_hi);
        if ((b.exit_side || out > 0.0) && n_side++ == 0)
            side1 = k, side = b;
    }
    free(all);
    char who[160] = "";
    if (n > 1 && deep >= 0)
        snprintf(who, sizeof who, " (spot %d of %d: %.4g MeV at x = %.4g mm)", deep + 1, n,
                 plan_spot_at(p, deep).energy_MeV, plan_spot_at(p, deep).x_mm);
    if (!line)
        ;
    else if (isfinite(deepest.stop_mm))
        printf(
            "reach:     CSDA range %.4g mm along the %s%s, the grid %.4g mm deep; x +- %g sigma from %.4g to "
            "%.4g mm, the grid from %.4g to %.4g mm\n",
            deepest.stop_mm, n > 1 ? "deepest spot's path" : "beam's path", who, depth,
            REACH_SIGMAS, lo, hi, x_lo, x_hi);
    else
        printf(
            "reach:     the %s%s leaves the grid at %.4g MeV (a CSDA range of %.4g g/cm2 left), the grid %.4g mm "
            "deep; x +- %g sigma from %.4g to %.4g mm, the grid from %.4g to %.4g mm\n",
            n > 1 ? "deepest spot" : "beam", who, deepest.exit_MeV, deepest.exit_residual_g_cm2,
            depth, REACH_SIGMAS, lo, hi, x_lo, x_hi);
    char spot[160];
#define WHICH(k, count)                                                                           \
    (n > 1 ? (snprintf(spot, sizeof spot,                                                         \
                       "%d of the %d spots (the first: spot %d, %.4g MeV at x = %.4g mm)", count, \
                       n, (k) + 1, plan_spot_at(p, k).energy_MeV, plan_spot_at(p, k).x_mm),       \
              spot)                                                                               \
           : "the beam")
    if (n_far)
        smx_warn(
            "%s: %s will not stop inside the grid: %s leaves the far edge (%.4g mm) at %.4g MeV, with a CSDA "
            "range of %.4g g/cm2 left; R80 will not be the beam's range and the dose beyond the grid will be "
            "missing (a deeper grid: grid.space.nz)\n",
            p->path, WHICH(far1, n_far), n_far > 1 ? "the first" : "it", depth, far.exit_MeV,
            far.exit_residual_g_cm2);
    /* The verb agrees with its subject: "2 of the 3 spots reach", "the beam reaches". */
    if (n_fall)
        smx_warn(
            "%s: %s stop%s within %.3g mm of the far edge (CSDA range %.4g mm, the grid %.4g mm deep): the "
            "distal fall-off (R20) may not fit inside the grid\n",
            p->path, WHICH(fall1, n_fall), n_fall > 1 ? "" : "s", fall.straggling_mm,
            fall.stop_depth_mm, depth);
    if (n_side)
        smx_warn(
            "%s: %s reach%s beyond the grid's sides: x +- %g sigma runs from %.4g to %.4g mm%s, the grid from "
            "%.4g to %.4g mm; the dose beyond the sides will be missing (a wider grid: grid.space.nx)\n",
            p->path, WHICH(side1, n_side), n_side > 1 ? "" : "es", REACH_SIGMAS, side.x_lo_mm,
            side.x_hi_mm, side.exit_side ? " and its path leaves through a side" : "", x_lo, x_hi);
#undef WHICH
    return n_far + n_side;
}

int report_reach_warnings(const plan *p, const grid *g, const medium_map *media,
                          const tables *const *mt)
{
    return report_reach(p, g, media, mt, 0);
}

/* The plan, its tables and the grid's three axes. */
static void print_axes(const dry_run *d)
{
    const plan *p = d->p;
    const grid *g = d->g;
    const double deg = 180.0 / M_PI;
    printf("plan:      %s (valid)\n", p->path);
    printf("tables:    %s (%s, sha256 %.16s...)\n", d->t->path, d->t->material, d->t->sha256);
    int emax = plan_key_index("grid.energy.E_max_MeV");
    printf("energy:    %lld bins, %s grid, %.4g to %.4g MeV, stop below %.4g MeV%s\n",
           (long long)g->ne, g->energy_kind == EGRID_RANGE ? "range" : "uniform", g->E.edges[0],
           g->E.edges[g->ne], g->E_stop,
           p->loc && p->loc[emax].derived
               ? " (grid.energy.E_max_MeV left out: from the beam's energy)"
               : "");
    if (g->angle_spacing == ANGLE_BEAM)
        printf("angle:     %lld bins, window, %.4g to %.4g deg, spacing beam: %.3g deg a bin at "
               "the centre to %.3g at the edges (width %.3g sqrt(1 + (theta / %.3g deg)^2))\n",
               (long long)g->nth, g->theta.edges[0] * deg, g->theta.edges[g->nth] * deg,
               (g->theta.edges[g->nth / 2 + 1] - g->theta.edges[g->nth / 2]) * deg,
               (g->theta.edges[g->nth] - g->theta.edges[g->nth - 1]) * deg, g->dtheta * deg,
               g->theta_c * deg);
    else
        printf("angle:     %lld bins, %s, %.4g to %.4g deg, %.4g deg per bin\n", (long long)g->nth,
               g->angle_mode == ANGLE_FULL ? "full circle" : "window", g->theta.edges[0] * deg,
               g->theta.edges[g->nth] * deg, g->dtheta * deg);
    angle_choice c;
    if (g->angle_spacing == ANGLE_BEAM && angle_grid_from_beam(p, d->t, &c) == 0)
        printf("           (grid.angle.spacing: beam: theta_c = %.3g x theta_0 %.3g deg at half "
               "the beam's %.4g mm path in the grid%s%s)\n",
               ANGLE_BEAM_THETA_C, c.theta_half_deg, c.path_mm,
               p->angle_auto & PLAN_ANGLE_BINS ? "; n_bins left out: a central bin of about "
                                                 "theta_0 / 5"
                                               : "",
               !(p->angle_auto & PLAN_ANGLE_WIDTH) ? ""
               : c.stops ? "; half_width_deg left out: the spots' directions +- max(30 deg, 4.6 "
                           "theta_0 at the last step), for a beam that stops in the grid"
                         : "; half_width_deg left out: the spots' directions +- 4.6 theta_0 at "
                           "the beam's last step in the grid");
    else if (p->angle_auto && angle_grid_from_beam(p, d->t, &c) == 0)
        printf("           (grid.angle %s left out: from the beam, theta_0 %.3g deg at half its "
               "%.4g mm path in the grid%s, %.3g deg at its last step%s)\n",
               p->angle_auto == (PLAN_ANGLE_BINS | PLAN_ANGLE_WIDTH) ? "n_bins and half_width_deg"
               : p->angle_auto & PLAN_ANGLE_BINS                     ? "n_bins"
                                                                     : "half_width_deg",
               c.theta_half_deg, c.path_mm,
               p->angle_auto & PLAN_ANGLE_BINS ? ": bins of theta_0 / 1.5" : "", c.theta_end_deg,
               p->angle_auto & PLAN_ANGLE_WIDTH
                   ? ": the window the spots' directions +- 4.6 times that"
                   : "");
    else if (p->angle_auto)
        printf("           (grid.angle left out, and no scattering to size it from: 41 bins over "
               "+-20 deg)\n");
    printf(
        "space:     nz %lld x nx %lld cells of %.4g x %.4g mm (depth 0 to %.4g mm, x %.4g to %.4g mm)\n",
        (long long)g->nz, (long long)g->nx, g->dz, g->dx, g->z.edges[g->nz], g->x.edges[0],
        g->x.edges[g->nx]);
}

/* The field's spots, or the one beam. */
static void print_beam(const plan *p)
{
    if (p->spots_file[0]) {
        double lo = 1e300, hi = 0.0, w = 0.0;
        for (int i = 0; i < p->n_spots; i++) {
            lo = fmin(lo, p->spots[i].energy_MeV), hi = fmax(hi, p->spots[i].energy_MeV);
            w += p->spots[i].weight;
        }
        printf(
            "beam:      %d spot%s from %s, %.4g to %.4g MeV, total weight %.6g; the scattering power's "
            "reference energy %.4g MeV\n",
            p->n_spots, p->n_spots == 1 ? "" : "s", p->spots_path, lo, hi, w, hi);
    } else {
        printf("beam:      one spot, %.4g MeV at x = %.4g mm, weight %.6g\n", p->beam_energy_MeV,
               p->beam_x_mm, p->beam_weight);
    }
}

/* The windows the run's states hold (transport/window.h): the total's (tw),
 * and each spot's with output.per_spot_dose (sw), and *sg, the grid of a
 * spot's window: the grid's bins and directions on its rows and columns. */
static void window_shapes(const dry_run *d, window_shape *tw, window_shape *sw, grid *sg)
{
    const plan *p = d->p;
    const grid *g = d->g;
    const int every = d->be->collect_every > 0 ? d->be->collect_every : 1;
    const int snaps_wanted = p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final;
    *tw = (window_shape){ (int)g->nx, (int)g->nz, 0, 0, 1 };
    *sw = *tw;
    smx_error werr = { 0 };
    window_shape_of(tw, NULL,
                    &(window_request){ p, g, d->media, d->mt, 0, 1, 1, window_sigmas(0.0), every,
                                       !snaps_wanted },
                    &werr);
    if (p->per_spot_dose) { /* as the run starts them (simulate.c, per_spot_runs) */
        window_shape_of(
            sw, NULL,
            &(window_request){ p, g, d->media, d->mt, 0, plan_spot_count(p), 0,
                               window_sigmas(p->per_spot_threshold),
                               every < WINDOW_SPOT_COLLECT ? every : WINDOW_SPOT_COLLECT, 1 },
            &werr);
        /* The band of WINDOW_SPOT_BAND_MM where spots go side by side (the
         * CPU takes one at a time unless the plan says otherwise). */
        const int many = p->per_spot_lanes > 1 || (p->per_spot_lanes <= 0 && d->be != &backend_cpu);
        if (sw->nz < g->nz && many)
            sw->nz = window_rows_for_band(sw, window_spot_band(g));
    }
    *sg = *g;
    sg->nx = sw->nx;
    sg->nz = sw->nz;
    sg->slice = sg->nz * sg->nx;
    sg->cells = sg->ne * sg->nth * sg->slice;
}

/* output.per_spot_dose: the spots' runs and how many go at once. */
static void print_per_spot(const dry_run *d, const grid *sg)
{
    const plan *p = d->p;
    printf("per-spot:  each of the %d spot%s on a window of its own after the field; values below "
           "%.1e of a "
           "spot's peak not stored\n",
           plan_spot_count(p), plan_spot_count(p) == 1 ? "" : "s", p->per_spot_threshold);
#ifdef SMX_HAVE_CUDA
    if (d->be == &backend_cuda) {
        /* The lanes a GPU of this size holds (the run counts the memory free then). */
        double each = backend_cuda_device_bytes(sg), total = d->gi->total_bytes;
        double cap = p->gpu_memory_fraction * total;
        if (p->gpu_memory_bytes > 0 && p->gpu_memory_bytes < cap)
            cap = p->gpu_memory_bytes;
        int fit = each > 0 ? (int)(cap / each) : 1,
            want = p->per_spot_lanes > 0 ? p->per_spot_lanes : 64;
        int lanes = fit < want ? fit : want;
        printf("           spots at once (side by side in one state, each window %.4g GB): up to "
               "%d on this GPU (backend.per_spot_lanes %s)\n",
               each * 1e-9, lanes < 1 ? 1 : lanes, p->per_spot_lanes > 0 ? "set" : "auto");
        return;
    }
#endif
    /* The CPU: the other backend. */
    printf("           spots at once (side by side in one state): up to %d on the CPU "
           "(backend.per_spot_lanes %s)\n",
           p->per_spot_lanes > 0 ? p->per_spot_lanes
                                 : backend_cpu_auto_lanes(sg, backend_host_limit_bytes(p)),
           p->per_spot_lanes > 0 ? "set" : "auto");
}

/* psi, the windows and the memory the run needs. */
static void print_memory(const dry_run *d, const window_shape *tw, const window_shape *sw,
                         const grid *sg)
{
    const plan *p = d->p;
    const grid *g = d->g;
    const backend_ops *be = d->be;
    printf("psi:       %lld cells, %.4g GB per copy\n", (long long)g->cells,
           (double)g->cells * 4e-9);
    printf("window:    the total's %d rows x %d columns (%s; transport.window)", tw->nz, tw->nx,
           tw->nz < g->nz ? "a band of rows that follows the beam" : "every row");
    if (p->per_spot_dose)
        printf(", each spot's %d x %d, %.4g GB of psi per copy", sw->nz, sw->nx,
               (double)sg->cells * 4e-9);
    printf("\n");
    printf(
        "memory:    host %.4g GB if the beam filled the grid, at least %.4g GB (this run may use %.4g GB), "
        "backend %s\n",
        backend_host_bytes(g, be) * 1e-9, backend_host_min_bytes(p, g, be) * 1e-9,
        backend_host_limit_bytes(p) * 1e-9, be->name);
#ifdef SMX_HAVE_CUDA
    if (be == &backend_cuda)
        printf(
            "device:    %.4g GB arena (2 psi buffers, dose, tables; the FFT path adds its spectra); GPU "
            "code: %s\n",
            backend_cuda_device_bytes(g) * 1e-9, SMX_CUDA_ARCHS);
#endif
}

/* The steps and what the result file will hold. */
static void print_output(const dry_run *d)
{
    const plan *p = d->p;
    const grid *g = d->g;
    printf("steps:     %s, step %.4g mm (expected %d)\n", p->steps ? "fixed" : "auto", g->ds,
           d->expected);
    int ns = snapshot_count(p, d->expected);
    char snaps[96] = "no psi snapshots";
    if (ns > 0)
        snprintf(snaps, sizeof snaps, "%d psi snapshot%s of %.4g GB uncompressed", ns,
                 ns == 1 ? "" : "s", (double)g->cells * 4e-9);
    printf("output:    %s (%s), %s, XDMF sidecar\n", p->output_file,
           p->overwrite ? "overwrite allowed" : "must not exist", snaps);
    if (p->let || p->dose_to_water) /* docs/planning.md */
        printf("           also %s%s%s (%d more planes of the grid beside the dose)\n",
               p->let ? (p->per_spot_let ? "LETd and LETt (/let), each spot's LETd x dose rows"
                                         : "LETd and LETt (/let)")
                      : "",
               p->let && p->dose_to_water ? ", " : "",
               p->dose_to_water ? "the dose to water (/dose_to_water)" : "",
               g->dose_planes - 1 - g->halo_bands);
}

int report_dry_run(const dry_run *d)
{
    print_axes(d);
    report_media(stdout, d->media);
    const int beyond = report_reach(d->p, d->g, d->media, d->mt, 1);
    print_beam(d->p);
    window_shape tw, sw;
    grid sg;
    window_shapes(d, &tw, &sw, &sg);
    if (d->p->per_spot_dose)
        print_per_spot(d, &sg);
    print_memory(d, &tw, &sw, &sg);
    print_output(d);
    return beyond;
}

/* The run's wall time is the sum of its phases: input (plan, tables, grid, the
 * result file opened), the step loop's (tables, setup, steps, snapshots, download,
 * per-spot) and output (the result written and renamed into place). */
void report_summary(const run_result *r, const dose_figures *fig)
{
    double wall_s = 0.0;
    for (int i = 0; i < r->n_phases; i++)
        wall_s += r->phase_s[i];
    const dose_figures f = *fig;
    double r80 = f.r80_mm, r20 = f.r20_mm;
    double sig_mid = f.lateral_rms_half_r80_mm;
    double escaped = 0.0;
    for (int c = 0; c < CH_COUNT; c++)
        escaped += r->cumulative.weight[c];
    smx_info("\nsummary (of the laterally integrated dose)\n");
    smx_info("  steps                     %d (%s)\n", r->n_steps,
             r->stop_reason == STOP_WEIGHT_BELOW ? "remaining weight below threshold"
             : r->stop_reason == STOP_MAX_STEPS  ? "max_steps reached"
                                                 : "fixed count");
    char why[256];
    if (isfinite(r80) && isfinite(r20))
        smx_info("  R80 / R20                 %.3f / %.3f mm (R80-R20 %.3f mm)\n", r80, r20,
                 r20 - r80);
    else if (isfinite(r80)) {
        dose_figures_why_undefined(&f, 0.2, why, sizeof why);
        smx_info("  R80 / R20                 %.3f mm / undefined: %s\n", r80, why);
    } else {
        dose_figures_why_undefined(&f, 0.8, why, sizeof why);
        smx_info("  R80 / R20                 undefined: %s\n", why);
    }
    /* A spread-out peak's maximum may be a proximal overshoot: the figures
     * above are of the distal peak, named apart from the maximum. */
    if (isfinite(f.peak_depth_mm) && f.max_depth_mm == f.peak_depth_mm)
        smx_info("  distal peak (the maximum) %.3f mm, %.3f x the entrance dose\n", f.peak_depth_mm,
                 f.peak_to_entrance);
    else {
        if (isfinite(f.peak_depth_mm))
            smx_info("  distal peak               %.3f mm, %.3f x the entrance dose\n",
                     f.peak_depth_mm, f.peak_to_entrance);
        else
            smx_info("  distal peak               none inside the grid\n");
        if (isfinite(f.max_to_peak))
            smx_info(
                "  maximum                   %.3f mm, %.3f x the distal peak (a proximal maximum, not a Bragg "
                "peak)\n",
                f.max_depth_mm, f.max_to_peak);
        else
            smx_info("  maximum                   %.3f mm (no distal fall-off inside the grid)\n",
                     f.max_depth_mm);
    }
    if (isfinite(sig_mid))
        smx_info("  lateral rms at R80/2      %.3f mm\n", sig_mid);
    else
        smx_info("  lateral rms at R80/2      undefined (no R80)\n");
    smx_info("  weight left / escaped     %.3e / %.6f of initial\n",
             r->n_steps ? r->steps[r->n_steps - 1].weight_out / r->initial_weight : 1.0,
             escaped / r->initial_weight);
    if (r->halo_released_MeV > 0.0)
        smx_info("  nuclear halo              %.3f MeV per proton to secondary protons, %.3f of it "
                 "deposited on the grid\n",
                 r->halo_released_MeV, r->halo_deposited_MeV);
    smx_info("  conservation (max/step)   weight %.2e, energy %.2e relative, %d violation%s\n",
             r->max_weight_rel_err, r->max_energy_rel_err, r->conservation_violations,
             r->conservation_violations == 1 ? "" : "s");
    if (r->tail_steps > 0)
        smx_info("  conservation, deep tail   weight %.2e, energy %.2e relative in %d step%s with "
                 "less than %.0e of the initial weight in flight (not counted above)\n",
                 r->tail_max_weight_rel_err, r->tail_max_energy_rel_err, r->tail_steps,
                 r->tail_steps == 1 ? "" : "s", SMX_BALANCE_FLOOR);
    if (r->window_nz > 0)
        smx_info(
            "  window (rows x columns)   %d x %d, moved %d times (%.1f ms), beam's rows at most "
            "%d\n",
            r->window_nz, r->window_nx, r->window_moves, 1e3 * r->window_moves_s, r->window_band);
    if (r->per_spot.n_spots > 0)
        smx_info("  per-spot dose             %d spots, %lld values stored (threshold %.1e), "
                 "windows %d x %d (grew %d times), %d at once, moved %d times, a beam's rows at "
                 "most %d\n",
                 r->per_spot.n_spots, (long long)r->per_spot.nnz, r->per_spot.threshold,
                 r->spot_window_nz, r->spot_window_nx, r->spot_window_grew, r->spot_slots,
                 r->spot_window_moves, r->spot_window_band);
    /* Which kernels stepped (the backend's choice from the plan and the
     * device, as /provenance's kernel_variants records it). */
    if (r->kernel_variants[0])
        smx_info("  kernels                   %s\n", r->kernel_variants);
    if (r->spot_kernel_variants[0])
        smx_info("  per-spot kernels          %s\n", r->spot_kernel_variants);
    /* The command's phases as they ran: the time to dose from the plan. */
    smx_info("  wall time                 %.3f s (", wall_s);
    for (int i = 0; i < r->n_phases; i++)
        smx_info("%s%s %.3f", i ? ", " : "", r->phase_name[i], r->phase_s[i]);
    smx_info(")\n");
    char warn[2048];
    if (summary_warnings(&f, run_leak_fraction(r), warn, sizeof warn))
        for (char *line = strtok(warn, "\n"); line; line = strtok(NULL, "\n"))
            smx_warn("%s\n", line);
}

void report_scenarios(const plan *p, const dose_figures *fig)
{
    const int n = plan_scenario_count(p);
    if (n < 2)
        return;
    smx_info("\nscenarios (%d, combine %s; R80 of the laterally integrated dose)\n", n,
             plan_choice_name("scenarios.combine", p->scenario_combine));
    for (int i = 0; i < n; i++) {
        const plan_scenario s = plan_scenario_at(p, i);
        const double r80 = fig[i].r80_mm, r0 = fig[0].r80_mm;
        char r80_text[64];
        if (!isfinite(r80))
            snprintf(r80_text, sizeof r80_text, "undefined");
        else if (i == 0 || !isfinite(r0))
            snprintf(r80_text, sizeof r80_text, "%.3f mm%s", r80, i == 0 ? " (nominal)" : "");
        else
            /* no "-0.000" for a scenario that does not move the range */
            snprintf(r80_text, sizeof r80_text, "%.3f mm (%+.3f mm)", r80,
                     fabs(r80 - r0) < 5e-4 ? 0.0 : r80 - r0);
        smx_info("  %03d  range %+6.2f %%  shift %+7.2f mm  R80 %s\n", i, s.range_error_percent,
                 s.shift_mm, r80_text);
    }
}

void report_scenarios_planned(const plan *p)
{
    const int n = plan_scenario_count(p);
    if (n < 2)
        return;
    printf("scenarios: %d (combine %s; the nominal, then %d more, each a run of its own on its own "
           "densities and beam positions; /scenarios in the result)\n",
           n, plan_choice_name("scenarios.combine", p->scenario_combine), n - 1);
}
