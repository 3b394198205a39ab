#include "transport/simulate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/test_hooks.h"
#include "physics/beam_reach.h"
#include "physics/source.h"
#include "transport/halo_dose.h"
#include "transport/per_spot.h"
#include "transport/spectral_maps.h"
#include "transport/stepper.h"

int simulate_expected_steps(const plan *p, const grid *g, const tables *t)
{
    if (p->steps > 0)
        return p->steps;
    double R = tables_path_range(t, g->E.edges[g->ne]);
    if (!isfinite(R))
        R = tables_path_range(t, p->E_max_MeV);
    int n = (int)ceil(R * 10.0 / g->density / g->ds) + 2;
    return n < p->max_steps ? n : p->max_steps;
}

int simulate_spot_steps(const plan *p, const grid *g, const tables *t, double energy_MeV)
{
    if (p->steps > 0)
        return p->steps;
    double R = tables_path_range(t, energy_MeV);
    if (!isfinite(R))
        return simulate_expected_steps(p, g, t);
    int n = (int)ceil(R * 10.0 / g->density / g->ds) + 2;
    return n < p->max_steps ? n : p->max_steps;
}

/* The steps the step log's ETA counts on: through media, the straight path
 * of the highest-energy spot until its CSDA range runs out in the cells'
 * media (or the grid ends), which a medium lighter than the reference (lung,
 * air) makes longer than the reference's range; in one medium,
 * simulate_expected_steps. Only the log uses it. */
static int expected_steps_through(const plan *p, const grid *g, const tables *t,
                                  const sim_media *media)
{
    const int n = simulate_expected_steps(p, g, t);
    if (!media || !media->mm || p->steps > 0)
        return n;
    int top = 0;
    for (int i = 1; i < plan_spot_count(p); i++)
        if (plan_spot_at(p, i).energy_MeV > plan_spot_at(p, top).energy_MeV)
            top = i;
    const plan_spot s = plan_spot_at(p, top);
    beam_reach b;
    beam_reach_of(g, media->mm, media->mt, &s, REACH_SIGMAS, &b);
    const double path = isfinite(b.stop_mm) ? b.stop_mm + b.straggling_mm : g->z.edges[g->nz];
    const int m = (int)ceil(path / g->ds) + 2;
    return m < p->max_steps ? m : p->max_steps;
}

/* The layout of the host buffer a source of sp is filled into: the run's
 * grid where the window is the grid (the source goes to the backend as it
 * is, and a snapshot of step 0 is that buffer), its row 0 alone otherwise
 * (window_source copies it into the window). */
static grid source_layout(const stepper *sp)
{
    return stepper_holds_grid(sp) ? *sp->g : grid_row0(sp->g);
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

int simulate(const sim_input *in, const backend_ops *be, const snapshot_sink *out, run_result *r,
             smx_error *err)
{
    return simulate_part(in, be, out, NULL, r, err);
}

int simulate_check(const sim_input *in, smx_error *err)
{
    const plan *p = in->p;
    const grid *g = in->g;
    sim_tables st;
    int rc = simulate_tables_build(&st, p, g, in->t, in->media, err);
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
    ws.nz = window_rows_for_band(bound, window_spot_band(sp->g));
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
        const window_request q = {
            p, g, st->mm, mt, 0, 1, 1, window_sigmas(0.0), sp->every_collect, moving
        };
        int rc = window_shape_of(&ws, span, &q, err);
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

/* What one call of simulate_part builds and steps on: the run's tables,
 * nuclear halo and spectral maps, its stepper, and the host buffers its
 * sources and doses pass through. */
typedef struct sim_run {
    const plan *p;
    const grid *g;
    const tables *t;
    const sim_media *media;
    const tables *one[1]; /* mt without media: the plan's material */
    const tables *const *mt;
    sim_tables st;
    halo_dose halo;
    spectral_maps smaps;
    int have_st, have_halo, have_smaps;
    stepper sp;
    float *host; /* the sources' buffer: source_layout's, all zero */
    grid_box *occupied; /* [ne] its boxes */
    double *dose; /* [g->dose_planes][g->slice] */
    double *wdose; /* the total's window dose */
} sim_run;

static void sim_run_free(sim_run *R)
{
    stepper_free(&R->sp);
    free(R->host);
    free(R->occupied);
    free(R->dose);
    free(R->wdose);
    if (R->have_halo)
        halo_dose_free(&R->halo);
    if (R->have_smaps)
        spectral_maps_free(&R->smaps);
    if (R->have_st)
        sim_tables_free(&R->st);
}

/* The lookup tables and, once for the total and the spots, the nuclear
 * halo's kernels and the spectral maps. */
static int sim_run_tables(sim_run *R, run_result *r, smx_error *err)
{
    const double t0 = stepper_now_s();
    const medium_map *mm = R->media ? R->media->mm : NULL;
    int rc = simulate_tables_build(&R->st, R->p, R->g, R->t, R->media, err);
    if (rc)
        return rc;
    R->have_st = 1;
    if ((rc = halo_dose_init(&R->halo, R->p, R->g, R->t, mm, err)))
        return rc;
    R->have_halo = 1;
    if ((rc = spectral_maps_init(&R->smaps, R->g, mm, R->mt, R->st.tally_water, err)))
        return rc;
    R->have_smaps = 1;
    run_result_phase(r, "tables", stepper_now_s() - t0);
    return 0;
}

/* Uploads the whole field as one source from the all-zero host buffer
 * (source_layout's), which the caller zeroes again (source_clear with
 * occupied); the window is placed over `span` first. The weight and energy
 * are the source's on the grid (the dose is per unit of it, as on the whole
 * grid), into r; what a narrower window leaves out of its columns is not
 * transported. */
static int upload_total(sim_run *R, window_span span, run_result *r, smx_error *err)
{
    stepper *sp = &R->sp;
    const grid gs = source_layout(sp);
    double *w0 = &r->initial_weight, *e0 = &r->initial_energy_MeV;
    source_buf sb = { R->host, R->occupied, 0.0, 0.0 };
    int rc = source_fill_spot(&sb, sp->p, &gs, -1, err);
    *w0 = sb.weight;
    *e0 = sb.energy_MeV;
    if (rc)
        return rc;
    window_place(&sp->win, span);
    if (stepper_holds_grid(sp))
        return sp->be->upload(sp->ctx, R->host, R->occupied, *w0, *e0, err);
    window_source(&sp->win, 0, 1, &sb, sp->wpsi, sp->wocc);
    rc = sp->be->upload(sp->ctx, sp->wpsi, sp->wocc, *w0, *e0, err);
    source_clear(sp->wpsi, &sp->win.wg, sp->wocc);
    return rc;
}

/* The snapshots after the steps (rc 0): one taken at the step that ended
 * the run is the final state, written once, not again as the final
 * snapshot. */
static int final_snapshots(sim_run *R, snapshot_out *so, run_result *r, smx_error *err)
{
    const backend_ops *be = R->sp.be;
    const int final_taken = so->pending.active && so->pending.step == r->n_steps;
    int rc = stepper_snapshot_flush(&R->sp, so, r->n_steps, 1, err);
    if (!rc && R->p->snapshot_final && !final_taken && !(rc = be->snapshot_begin(R->sp.ctx, err))) {
        so->pending = (pending_snapshot){ 1, r->n_steps };
        rc = stepper_snapshot_flush(&R->sp, so, r->n_steps, 1, err);
    }
    return rc;
}

/* The total's dose per unit weight from the backend, with the nuclear halo
 * and the spectral maps, into r (rc: the steps' outcome, 0 or an interrupt,
 * whose dose so far is handed back as well). */
static int total_dose(sim_run *R, run_result *r, smx_error *err)
{
    const grid *g = R->g;
    double t0 = stepper_now_s();
    int rc = download_dose(&R->sp, R->wdose, R->dose, err);
    if (rc)
        return rc;
    run_result_phase(r, "download", stepper_now_s() - t0);
    if (R->halo.on) { /* the secondary protons' dose (transport/halo_dose.h) */
        t0 = stepper_now_s();
        halo_dose_apply(&R->halo, g, R->dose, &r->halo_released_MeV, &r->halo_deposited_MeV);
        r->halo_released_MeV /= r->initial_weight;
        r->halo_deposited_MeV /= r->initial_weight;
        run_result_phase(r, "halo", stepper_now_s() - t0);
    }
    for (int64_t i = 0; i < g->slice; i++)
        R->dose[i] /= r->initial_weight;
    if ((rc = spectral_results(&R->smaps, R->dose, r, err)))
        return rc;
    free(r->dose_MeV);
    r->dose_MeV = R->dose; /* its spectral planes stay behind it, read above */
    R->dose = NULL;
    return 0;
}

/* The whole field as one source: uploaded, stepped with the step log and
 * the snapshots the plan asks for, its dose into r. An interrupted run
 * still hands back its dose so far (SMX_EXIT_INTERRUPTED): the caller may
 * keep it as a partial result, marked incomplete. */
static int run_total(sim_run *R, const snapshot_sink *out, window_span span, double t_setup,
                     run_result *r, smx_error *err)
{
    const grid *g = R->g;
    stepper *sp = &R->sp;
    if (!(R->wdose = malloc((size_t)sp->win.wg.slice * g->dose_planes * sizeof *R->wdose)))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    int rc = upload_total(R, span, r, err);
    if (rc)
        return rc;
    sp->be->describe(sp->ctx, r);
    run_result_phase(r, "setup", stepper_now_s() - t_setup);
    double write_s = 0.0; /* every snapshot write: the "snapshots" phase */
    if (out && stepper_wants_snapshot(R->p, 0)) {
        double tw = stepper_now_s();
        rc = stepper_snapshot_write(out, g, 0, R->host, 1, err);
        write_s += stepper_now_s() - tw;
        if (rc)
            return rc;
    }
    const grid gs = source_layout(sp);
    source_clear(R->host, &gs, R->occupied);

    snapshot_out so = { out, { 0 }, 0.0 };
    double loop0 = stepper_now_s();
    rc = stepper_run(sp, r, &so, 1, err);
    const double loop_write_s = so.write_s;
    r->window_nz = sp->win.shape.nz;
    r->window_nx = sp->win.shape.nx;
    r->window_moves = sp->win.shifts;
    r->window_moves_s = sp->moves_s;
    r->window_band = sp->win.band;
    run_result_phase(r, "steps", stepper_now_s() - loop0 - loop_write_s);
    write_s += loop_write_s;
    const int interrupted = rc == SMX_EXIT_INTERRUPTED;
    if (rc && !interrupted)
        return rc;
    if (!interrupted && out) {
        so.write_s = 0.0;
        rc = final_snapshots(R, &so, r, err);
        write_s += so.write_s;
    }
    if (write_s > 0.0)
        run_result_phase(r, "snapshots", write_s);
    if (rc && !interrupted)
        return rc;
    /* An interrupt stays in err (smx_fail keeps the first error) and in
     * smx_interrupted, where the caller and the per-spot runs find it; what
     * is returned is the dose's outcome. */
    return total_dose(R, r, err);
}

/* The part's per-spot rows (transport/per_spot.c), after the total's state
 * has gone: the spots' windows take its memory. */
static int run_spots(sim_run *R, const sim_part *part, run_result *r, smx_error *err)
{
    const grid *g = R->g;
    stepper_free(&R->sp);
    const double t0 = stepper_now_s();
    int rc;
    /* Each spot's expected steps: its work in the progress count. */
    int *steps = malloc((size_t)part->spot_count * sizeof *steps);
    for (int i = 0; steps && i < part->spot_count; i++)
        steps[i] =
            simulate_spot_steps(R->p, g, R->t, plan_spot_at(R->p, part->spot_first + i).energy_MeV);
    if (!steps || (!R->dose && !(R->dose = malloc((size_t)g->slice * g->dose_planes *
                                                  sizeof *R->dose)))) /* the total kept its own */
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    else
        rc = per_spot_runs(&(per_spot_job){ &R->sp, &R->st, R->t, R->media, R->mt, &R->halo,
                                            &R->smaps, R->host, R->occupied, part->spot_first,
                                            part->spot_count, steps, part->progress },
                           r, err);
    free(steps);
    run_result_phase(r, "per-spot", stepper_now_s() - t0);
    return rc;
}

int simulate_part(const sim_input *in, const backend_ops *be, const snapshot_sink *out,
                  const sim_part *part, run_result *r, smx_error *err)
{
    const plan *p = in->p;
    const grid *g = in->g;
    const tables *t = in->t;
    const sim_media *media = in->media;
    const sim_part whole = { 1, 0, p->per_spot_dose ? plan_spot_count(p) : 0, NULL };
    if (!part)
        part = &whole;
    sim_run R = { .p = p, .g = g, .t = t, .media = media, .one = { t } };
    R.mt = media ? media->mt : R.one;
    int rc = sim_run_tables(&R, r, err);
    const double t0 = stepper_now_s();
    R.sp = (stepper){ .p = p,
                      .g = g,
                      .be = be,
                      .every_collect = be->collect_every > 0 ? be->collect_every : 1,
                      .expected = expected_steps_through(p, g, t, media) };
    window_span span = { 0, (int)g->nx - 1 };
    /* The sources' host buffer: source_layout's (the per-spot runs' is the
     * row's; a buffer of the grid's layout, all zero, holds that too). calloc:
     * a source writes one row, the rest is never touched. */
    if (!rc) {
        R.occupied = malloc((size_t)g->ne * sizeof *R.occupied);
        R.dose = malloc((size_t)g->slice * g->dose_planes * sizeof *R.dose);
        if (!R.occupied || !R.dose)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    }
    if (!rc && part->total)
        rc = total_setup(&R.sp, &R.st, R.mt, out && wants_any_snapshot(p), &span, err);
    const int64_t host_cells = rc            ? 0
                               : part->total ? source_layout(&R.sp).cells
                                             : grid_row0(g).cells;
    if (!rc && !(R.host = calloc((size_t)host_cells, sizeof *R.host)))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for a source's psi)",
                      (double)host_cells * 4e-9);
    if (!rc && !part->total) /* an MPI rank's per-spot rows alone */
        run_result_phase(r, "setup", stepper_now_s() - t0);
    else if (!rc)
        rc = run_total(&R, out, span, t0, r, err);
    if (!rc && p->per_spot_dose && part->spot_count > 0)
        rc = run_spots(&R, part, r, err);
    sim_run_free(&R);
    return rc;
}
