#include "transport/simulate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/progress.h"
#include "physics/source.h"
#include "transport/halo_dose.h"
#include "transport/per_spot.h"
#include "transport/spectral_maps.h"
#include "transport/stepper.h"

int simulate_expected_steps(const plan *p, const grid *g, const tables *t)
{
    if (p->steps > 0)
        return p->steps;
    double R = tables_csda_range(t, g->E.edges[g->ne]);
    if (!isfinite(R))
        R = tables_csda_range(t, p->E_max_MeV);
    int n = (int)ceil(R * 10.0 / g->density / g->ds) + 2;
    return n < p->max_steps ? n : p->max_steps;
}

int simulate_spot_steps(const plan *p, const grid *g, const tables *t, double energy_MeV)
{
    if (p->steps > 0)
        return p->steps;
    double R = tables_csda_range(t, energy_MeV);
    if (!isfinite(R))
        return simulate_expected_steps(p, g, t);
    int n = (int)ceil(R * 10.0 / g->density / g->ds) + 2;
    return n < p->max_steps ? n : p->max_steps;
}

/* The layout of the host buffer a source of sp is filled into: the run's
 * grid where the window is the grid (the source goes to the backend as it
 * is, and a snapshot of step 0 is that buffer), its row 0 alone otherwise
 * (window_source copies it into the window). */
static grid source_layout(const stepper *sp)
{
    return stepper_holds_grid(sp) ? *sp->g : grid_row0(sp->g);
}

/* Uploads one source (the whole field: spot < 0) from the all-zero host
 * buffer (source_layout's), which the caller zeroes again (source_clear with
 * occupied); the window is placed over `span` first. The weight and energy
 * are the source's on the grid (the dose is per unit of it, as on the whole
 * grid); what a narrower window leaves out of its columns is not
 * transported. */
static int upload_source(stepper *sp, float *host, grid_box *occupied, int spot, window_span span,
                         double *w0, double *e0, smx_error *err)
{
    const grid gs = source_layout(sp);
    int rc = source_fill_spot(host, sp->p, &gs, spot, occupied, w0, e0, err);
    if (rc)
        return rc;
    window_place(&sp->win, span);
    if (stepper_holds_grid(sp))
        return sp->be->upload(sp->ctx, host, occupied, *w0, *e0, err);
    window_source(&sp->win, 0, 1, host, occupied, sp->wpsi, sp->wocc);
    rc = sp->be->upload(sp->ctx, sp->wpsi, sp->wocc, *w0, *e0, err);
    source_clear(sp->wpsi, &sp->win.wg, sp->wocc);
    return rc;
}

/* The source's dose on the run's grid (MeV): the window's, placed, and the
 * rows that have left it. wdose: [win.wg.slice] scratch. */
static int download_dose(stepper *sp, double *wdose, double *dose, smx_error *err)
{
    int rc = sp->be->download_dose(sp->ctx, wdose, err);
    if (!rc)
        window_dose(&sp->win, 0, wdose, dose);
    return rc;
}

int simulate(const plan *p, const grid *g, const tables *t, const backend_ops *be,
             const snapshot_sink *out, run_result *r, smx_error *err)
{
    return simulate_media(p, g, t, NULL, be, out, r, err);
}

int simulate_media(const plan *p, const grid *g, const tables *t, const sim_media *media,
                   const backend_ops *be, const snapshot_sink *out, run_result *r, smx_error *err)
{
    return simulate_part(p, g, t, media, be, out, NULL, r, err);
}

int simulate_check(const plan *p, const grid *g, const tables *t, const sim_media *media,
                   smx_error *err)
{
    sim_tables st;
    int rc = simulate_tables_build(&st, p, g, t, media, err);
    if (rc)
        return rc;
    sim_tables_free(&st);
    for (int k = 0; k < plan_spot_count(p) && !rc; k++) {
        plan_spot s = plan_spot_at(p, k);
        beam_profile b;
        if (!(rc = beam_profile_build_spot(&b, &s, k, g, err)))
            beam_profile_free(&b);
    }
    return rc;
}

/* The plan asks for psi snapshots: those are of the whole grid, so the window is. */
static int wants_any_snapshot(const plan *p)
{
    return p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final;
}

/* sp's window of shape bound for the total and its backend state. Where the
 * bound's rows do not fit the backend's memory (err->no_room) but a moving
 * window's band does, the window takes the rows that fit: the bound holds any
 * beam's band (window_shape_of), a field's band is measured in tens of rows
 * (docs/model.md, "Windows"), and a beam that outgrows the rows stops the run
 * with window_follow's error. The probe is the per-spot band's state, and
 * backend_ops.lanes says how many of it fit. */
static int total_state(stepper *sp, const sim_tables *st, const window_shape *bound, smx_error *err)
{
    int rc = stepper_window(sp, st, bound, 0, err);
    if (!rc)
        rc = sp->be->setup(&sp->ctx, &sp->st, err);
    window_shape ws = *bound;
    ws.nz = window_rows_for_band(bound, WINDOW_SPOT_BAND);
    if (!rc || !err->no_room || bound->nz == sp->g->nz || ws.nz >= bound->nz || !sp->be->lanes)
        return rc;
    stepper_free(sp);
    *err = (smx_error){ 0 };
    if ((rc = stepper_window(sp, st, &ws, 0, err)) || (rc = sp->be->setup(&sp->ctx, &sp->st, err)))
        return rc; /* not even the band's rows: that state's need is the error */
    const int64_t fit = (int64_t)ws.nz * sp->be->lanes(sp->ctx) / 8 * 8;
    const int rows = fit < bound->nz ? (int)fit : bound->nz - 8;
    if (rows > ws.nz) {
        stepper_free(sp);
        ws.nz = rows;
        if ((rc = stepper_window(sp, st, &ws, 0, err)) ||
            (rc = sp->be->setup(&sp->ctx, &sp->st, err)))
            return rc;
    }
    smx_info("the total's window: %d rows that follow the beam (the %d rows that hold any "
             "beam's band do not fit the device's memory)\n",
             ws.nz, bound->nz);
    return 0;
}

/* sp's window for the total (the whole field as one source) and its backend
 * state: every column (the total is the grid's dose bit for bit; the spots'
 * own windows are narrower) and a band of rows that moves, unless snapshots
 * are asked for or the backend cannot move it (then again with every row). */
static int total_setup(stepper *sp, const sim_tables *st, const tables *const *mt,
                       int want_snapshots, window_span *span, smx_error *err)
{
    const plan *p = sp->p;
    const grid *g = sp->g;
    for (int moving = !want_snapshots;; moving = 0) {
        window_shape ws;
        int rc = window_shape_of(&ws, span, p, g, st->mm, mt, 0, 1, 1, window_sigmas(0.0),
                                 sp->every_collect, moving, err);
        if (!rc)
            rc = total_state(sp, st, &ws, err);
        if (rc)
            return rc;
        if (stepper_moves_ok(sp))
            return 0;
        stepper_free(sp);
    }
}

/* output.let and output.dose_to_water: the maps of the total from its
 * dose's planes (plane 0 already per unit weight; the others are ratios). */
static int spectral_results(const spectral_maps *sm, const double *planes, run_result *r,
                            smx_error *err)
{
    const grid *g = sm->g;
    const size_t n = (size_t)g->slice;
    if (g->plane_let_edep) {
        free(r->let_d);
        free(r->let_t);
        r->let_d = malloc(n * sizeof *r->let_d);
        r->let_t = malloc(n * sizeof *r->let_t);
        if (!r->let_d || !r->let_t)
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (the LET maps)");
        spectral_let(sm, planes, r->let_d, r->let_t);
    }
    if (g->plane_water) {
        free(r->dose_water_MeV);
        if (!(r->dose_water_MeV = malloc(n * sizeof *r->dose_water_MeV)))
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (the dose to water)");
        spectral_dose_to_water(sm, planes, r->dose_water_MeV);
    }
    return 0;
}

int simulate_part(const plan *p, const grid *g, const tables *t, const sim_media *media,
                  const backend_ops *be, const snapshot_sink *out, const sim_part *part,
                  run_result *r, smx_error *err)
{
    const sim_part whole = { 1, 0, p->per_spot_dose ? plan_spot_count(p) : 0 };
    if (!part)
        part = &whole;
    double t0 = stepper_now_s();
    sim_tables st;
    int rc = simulate_tables_build(&st, p, g, t, media, err);
    if (rc)
        return rc;
    /* The nuclear halo's kernels, once for the total and the spots. */
    halo_dose halo;
    if ((rc = halo_dose_init(&halo, p, g, t, media ? media->mm : NULL, err))) {
        sim_tables_free(&st);
        return rc;
    }
    const tables *one[1] = { t };
    const tables *const *mt = media ? media->mt : one;
    spectral_maps smaps;
    if ((rc = spectral_maps_init(&smaps, g, media ? media->mm : NULL, mt, st.tally_water, err))) {
        halo_dose_free(&halo);
        sim_tables_free(&st);
        return rc;
    }
    run_result_phase(r, "tables", stepper_now_s() - t0);

    t0 = stepper_now_s();
    stepper sp = { .p = p,
                   .g = g,
                   .be = be,
                   .every_collect = be->collect_every > 0 ? be->collect_every : 1,
                   .expected = simulate_expected_steps(p, g, t) };
    float *host = NULL;
    grid_box *occupied = NULL;
    double *dose = NULL, *wdose = NULL;
    pending_snapshot ps = { 0 };
    window_span span = { 0, (int)g->nx - 1 };
    /* The sources' host buffer: source_layout's (the per-spot runs' is the
     * row's; a buffer of the grid's layout, all zero, holds that too). calloc:
     * a source writes one row, the rest is never touched. */
    const grid g0 = grid_row0(g);
    occupied = malloc((size_t)g->ne * sizeof *occupied);
    dose = malloc((size_t)g->slice * g->dose_planes * sizeof *dose);
    if (!occupied || !dose) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        goto done;
    }
    if (part->total && (rc = total_setup(&sp, &st, mt, out && wants_any_snapshot(p), &span, err)))
        goto done;
    const int64_t host_cells = part->total ? source_layout(&sp).cells : g0.cells;
    if (!(host = calloc((size_t)host_cells, sizeof *host))) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for a source's psi)",
                      (double)host_cells * 4e-9);
        goto done;
    }
    if (!part->total) { /* an MPI rank's per-spot rows alone */
        run_result_phase(r, "setup", stepper_now_s() - t0);
        goto per_spot;
    }
    if (!(wdose = malloc((size_t)sp.win.wg.slice * g->dose_planes * sizeof *wdose))) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        goto done;
    }
    if ((rc = upload_source(&sp, host, occupied, -1, span, &r->initial_weight,
                            &r->initial_energy_MeV, err)))
        goto done;
    be->describe(sp.ctx, r);
    run_result_phase(r, "setup", stepper_now_s() - t0);
    double write_s = 0.0; /* every snapshot write: the "snapshots" phase */
    if (out && stepper_wants_snapshot(p, 0)) {
        double tw = stepper_now_s();
        rc = stepper_snapshot_write(out, g, 0, host, 1, err);
        write_s += stepper_now_s() - tw;
        if (rc)
            goto done;
    }
    const grid gs = source_layout(&sp);
    source_clear(host, &gs, occupied);

    double loop0 = stepper_now_s(), loop_write_s = 0.0;
    rc = stepper_run(&sp, r, out, 1, &ps, &loop_write_s, err);
    r->window_nz = sp.win.shape.nz;
    r->window_nx = sp.win.shape.nx;
    r->window_moves = sp.win.shifts;
    r->window_band = sp.win.band;
    run_result_phase(r, "steps", stepper_now_s() - loop0 - loop_write_s);
    write_s += loop_write_s;
    /* An interrupted run still hands back its dose so far: the caller may keep
     * it as a partial result, marked incomplete. */
    int interrupted = rc == SMX_EXIT_INTERRUPTED;
    if (rc && !interrupted)
        goto done;

    if (!interrupted && out) { /* rc is 0 here */
        /* A snapshot taken at the step that ended the run is the final state:
         * written once, not again as the final snapshot. */
        int final_taken = ps.active && ps.step == r->n_steps;
        rc = stepper_snapshot_flush(be, sp.ctx, out, g, &ps, r->n_steps, 1, &write_s, err);
        if (!rc && p->snapshot_final && !final_taken && !(rc = be->snapshot_begin(sp.ctx, err))) {
            ps = (pending_snapshot){ 1, r->n_steps };
            rc = stepper_snapshot_flush(be, sp.ctx, out, g, &ps, r->n_steps, 1, &write_s, err);
        }
    }
    if (write_s > 0.0)
        run_result_phase(r, "snapshots", write_s);
    if (rc && !interrupted)
        goto done;
    t0 = stepper_now_s();
    int rc_dose = download_dose(&sp, wdose, dose, err);
    if (rc_dose) {
        rc = rc_dose;
        goto done;
    }
    run_result_phase(r, "download", stepper_now_s() - t0);
    if (halo.on) { /* the secondary protons' dose (transport/halo_dose.h) */
        t0 = stepper_now_s();
        halo_dose_apply(&halo, g, dose, &r->halo_released_MeV, &r->halo_deposited_MeV);
        r->halo_released_MeV /= r->initial_weight;
        r->halo_deposited_MeV /= r->initial_weight;
        run_result_phase(r, "halo", stepper_now_s() - t0);
    }
    for (int64_t i = 0; i < g->slice; i++)
        dose[i] /= r->initial_weight;
    if ((rc = spectral_results(&smaps, dose, r, err)))
        goto done;
    free(r->dose_MeV);
    r->dose_MeV = dose; /* its spectral planes stay behind it, read above */
    dose = NULL;

per_spot:
    /* rc is 0 here unless the total was interrupted. The total's state goes
     * first: the spots' windows take its memory. */
    if (sp.ctx && !rc && p->per_spot_dose && part->spot_count > 0)
        stepper_free(&sp);
    if (!rc && p->per_spot_dose && part->spot_count > 0) {
        t0 = stepper_now_s();
        if (!dose && !(dose = malloc((size_t)g->slice * g->dose_planes *
                                     sizeof *dose))) /* the total kept its own */
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        else
            rc = per_spot_runs(&sp, &st, t, media, mt, &halo, &smaps, host, occupied, dose,
                               part->spot_first, part->spot_count, r, err);
        run_result_phase(r, "per-spot", stepper_now_s() - t0);
    }
done:
    stepper_free(&sp);
    free(host);
    free(occupied);
    free(dose);
    free(wdose);
    halo_dose_free(&halo);
    spectral_maps_free(&smaps);
    sim_tables_free(&st);
    return rc;
}
