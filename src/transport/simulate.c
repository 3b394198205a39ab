#include "transport/simulate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/test_pause.h"
#include "physics/source.h"
#include "transport/step_log.h"
#include "transport/window.h"

volatile sig_atomic_t smx_interrupted = 0;

/* Spots stepped at once at most (backend.per_spot_lanes); with auto, the
 * backend's memory decides how many slots fit. */
#define SLOTS_MAX 64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

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

static int wants_snapshot(const plan *p, int step)
{
    if (p->snapshot_every > 0 && step % p->snapshot_every == 0 && step > 0)
        return 1;
    for (int i = 0; i < p->n_snapshot_steps; i++)
        if (p->snapshot_steps[i] == step)
            return 1;
    return 0;
}

/* A snapshot copied out by the backend but not yet written: writing it waits
 * for the copy, so it is done as late as possible (next snapshot, or the end)
 * while the device keeps stepping. */
typedef struct pending_snapshot {
    int active;
    int step;
} pending_snapshot;

/* Hands one snapshot to the sink, with a progress line on a terminal while
 * the writer goes through psi (it reports its planes to base/progress.h).
 * announce: say so on a line of its own, for the writes before and after the
 * steps, where no step log line shows that the run is busy. */
static int snapshot_write(const snapshot_sink *out, const grid *g, int step, const float *psi,
                          int announce, smx_error *err)
{
    if (announce)
        smx_info("writing psi of step %d (%.3g GB uncompressed)\n", step,
                 (double)g->cells * sizeof(float) * 1e-9);
    char what[64];
    snprintf(what, sizeof what, "writing psi of step %d", step);
    progress_begin(what);
    int rc = out->write(out->ctx, g, step, psi, err);
    progress_end();
    return rc;
}

/* Waits for the pending snapshot's copy and writes it; the time both take is
 * added to *write_s (the "snapshots" phase, kept out of the step time). */
static int snapshot_flush(const backend_ops *be, void *ctx, const snapshot_sink *out, const grid *g,
                          pending_snapshot *ps, int last_step, int announce, double *write_s,
                          smx_error *err)
{
    if (!ps->active)
        return 0;
    double t0 = now_s();
    ps->active = 0;
    const float *psi;
    int rc = be->snapshot_wait(ctx, &psi, err);
    /* Asked for beyond the step that ended an auto run: that state never existed. */
    if (!rc && ps->step <= last_step)
        rc = snapshot_write(out, g, ps->step, psi, announce, err);
    *write_s += now_s() - t0;
    return rc;
}

/* A backend set up for a plan, and what every run of a source on it shares. */
typedef struct stepper {
    const plan *p;
    const grid *g; /* the run's grid */
    const backend_ops *be;
    sim_tables st; /* the run's tables on the window's grid and medium map */
    void *ctx;
    step_record *recs;
    int every_collect;
    int expected; /* steps the slowest particle needs (ETA, log rate) */
    window win; /* the part of g the state holds (transport/window.h) */
    float *wpsi; /* [win.wg.cells] all zero: a source on the window; NULL when it is g */
    grid_box *wocc; /* [ne] its boxes */
} stepper;

/* The window is the whole grid: sources go to the backend as source_fill writes them. */
static int window_is_grid(const stepper *sp)
{
    return sp->win.wg.nx == sp->g->nx && sp->win.wg.nz == sp->g->nz;
}

/* sp's window of shape ws and the tables pointing to it (a shallow copy of
 * st: the tables do not depend on the window's size); sp->ctx is not set up. */
static int stepper_window(stepper *sp, const sim_tables *st, const window_shape *ws, smx_error *err)
{
    int rc = window_init(&sp->win, sp->g, st->mm, ws, err);
    if (rc)
        return rc;
    sp->st = *st;
    sp->st.g = &sp->win.wg;
    if (st->mm)
        sp->st.mm = &sp->win.mm;
    sp->recs = malloc((size_t)sp->every_collect * sizeof *sp->recs);
    if (!window_is_grid(sp)) {
        sp->wpsi = calloc((size_t)sp->win.wg.cells, sizeof *sp->wpsi);
        sp->wocc = malloc((size_t)sp->g->ne * sizeof *sp->wocc);
    }
    if (!sp->recs || (!window_is_grid(sp) && (!sp->wpsi || !sp->wocc))) {
        free(sp->recs);
        free(sp->wpsi);
        free(sp->wocc);
        window_free(&sp->win);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for a window's psi)",
                        (double)sp->win.wg.cells * 4e-9);
    }
    return 0;
}

static void stepper_free(stepper *sp)
{
    if (sp->ctx)
        sp->be->release(sp->ctx);
    sp->ctx = NULL;
    free(sp->recs);
    free(sp->wpsi);
    free(sp->wocc);
    sp->recs = NULL;
    sp->wpsi = NULL;
    sp->wocc = NULL;
    window_free(&sp->win);
}

/* Records the n steps collected into sp->recs in r (balances, conservation);
 * *finished when one of them ended the run. sl: the step log, or NULL. */
static int take_records(const stepper *sp, run_result *r, int n, double ms, step_log *sl,
                        double now, int *finished, smx_error *err)
{
    const plan *p = sp->p;
    const grid *g = sp->g;
    int limit = p->steps > 0 ? p->steps : p->max_steps;
    for (int k = 0; k < n && !*finished; k++) {
        step_record *sr = &sp->recs[k];
        double front_mm = sr->front_row >= 0 ? g->z.centres[sp->win.z0 + sr->front_row] : 0.0;
        int rc = run_result_push(r, &sr->b, ms, front_mm);
        if (rc)
            return smx_fail(err, rc, "out of memory recording step %d", r->n_steps + 1);
        const step_balance *b = &sr->b; /* run_result_push keeps the maxima */
        if (!run_result_in_tail(r, b) && (b->weight_rel_err > SMX_CONSERVATION_TOL ||
                                          b->energy_rel_err > SMX_CONSERVATION_TOL)) {
            r->conservation_violations++;
            smx_warn("step %d: conservation violated: weight %.3e, energy %.3e relative "
                     "(tolerance %.0e)\n",
                     r->n_steps, b->weight_rel_err, b->energy_rel_err, SMX_CONSERVATION_TOL);
        }
        if (sr->stopped) {
            r->stop_reason = STOP_WEIGHT_BELOW;
            *finished = 1;
        } else if (r->n_steps >= limit) {
            *finished = 1;
        }
        if (sl)
            step_log_step(sl, r->n_steps, front_mm, b->weight_out / r->initial_weight, *finished,
                          now);
    }
    return 0;
}

/* Steps the uploaded source to the end of the run: records every step in r
 * (balances, conservation), hands the snapshots the plan asks for to out
 * (NULL: none), and prints the step log when log is set. The time spent
 * writing snapshots is added to *write_s (may be NULL without out) and kept
 * out of the step times and the log's rate. */
static int run_steps(const stepper *sp, run_result *r, const snapshot_sink *out, int log,
                     pending_snapshot *ps, double *write_s, smx_error *err)
{
    const plan *p = sp->p;
    const grid *g = sp->g;
    const backend_ops *be = sp->be;
    void *ctx = sp->ctx;
    int rc = 0;
    int every_log = p->log_every > 0 ? p->log_every : (sp->expected >= 20 ? sp->expected / 20 : 1);
    double no_writes = 0.0;
    if (!write_s)
        write_s = &no_writes;
    double loop0 = now_s(), last_collect = loop0, write_at_collect = *write_s;
    step_log sl;
    if (log)
        step_log_begin(&sl, sp->expected, every_log, loop0);
    int limit = p->steps > 0 ? p->steps : p->max_steps;
    int enqueued = 0, finished = 0;
    r->stop_reason = p->steps > 0 ? STOP_STEPS_DONE : STOP_MAX_STEPS;
    while (!finished) {
        if (smx_interrupted) {
            r->stop_reason = STOP_INTERRUPTED;
            return smx_fail(err, SMX_EXIT_INTERRUPTED, "interrupted after %d step%s", r->n_steps,
                            r->n_steps == 1 ? "" : "s");
        }
        if ((rc = be->step(ctx, enqueued, err)))
            return rc;
        enqueued++;
        if (enqueued == 1)
            smx_test_pause("steps", &smx_interrupted);
        if (out && wants_snapshot(p, enqueued) && !(enqueued == limit && p->snapshot_final)) {
            double before = *write_s;
            rc = snapshot_flush(be, ctx, out, g, ps, INT32_MAX, 0, write_s, err);
            if (log)
                step_log_wrote(&sl, *write_s - before);
            if (rc || (rc = be->snapshot_begin(ctx, err)))
                return rc;
            *ps = (pending_snapshot){ 1, enqueued };
        }
        if (enqueued % sp->every_collect != 0 && enqueued < limit)
            continue;
        /* A snapshot of a step the log has already shown is written now, while
         * the backend runs the steps just enqueued, so that its write shows in
         * the log where it happens; only one taken among the last steps
         * collected is left for after the loop. */
        if (out && ps->active && ps->step <= r->n_steps) {
            double before = *write_s;
            rc = snapshot_flush(be, ctx, out, g, ps, INT32_MAX, 0, write_s, err);
            if (log)
                step_log_wrote(&sl, *write_s - before);
            if (rc)
                return rc;
        }

        int n = 0;
        if ((rc = be->collect(ctx, sp->recs, sp->every_collect, &n, err)))
            return rc;
        double now = now_s();
        /* Per-step time without the snapshots written since the last collect. */
        double ms = n > 0 ? 1e3 * (now - last_collect - (*write_s - write_at_collect)) / n : 0.0;
        last_collect = now;
        write_at_collect = *write_s;
        if ((rc = take_records(sp, r, n, ms, log ? &sl : NULL, now, &finished, err)))
            return rc;
        if (!finished && n > 0 &&
            (rc = window_follow((window *)&sp->win, be, ctx, sp->recs[n - 1].front_row,
                                sp->recs[n - 1].back_row, err)))
            return rc;
    }
    return 0;
}

/* Uploads one source (the whole field: spot < 0) from the all-zero host
 * buffer (the run's grid), which the caller zeroes again (source_clear with
 * occupied); the window is placed over `span` first. The weight and energy
 * are the source's on the grid (the dose is per unit of it, as on the whole
 * grid); what a narrower window leaves out of its columns is not
 * transported. */
static int upload_source(stepper *sp, float *host, grid_box *occupied, int spot, window_span span,
                         double *w0, double *e0, smx_error *err)
{
    int rc = source_fill_spot(host, sp->p, sp->g, spot, occupied, w0, e0, err);
    if (rc)
        return rc;
    window_place(&sp->win, span);
    if (window_is_grid(sp))
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

/* sp's window moves as the beam goes, or need not: its backend can move it
 * (the CUDA paths without regions cannot), or it holds every row. */
static int window_moves_ok(const stepper *sp)
{
    return sp->win.shape.nz == sp->g->nz || (sp->be->can_shift && sp->be->can_shift(sp->ctx));
}

/* Several spots may share a state (slots side by side) where a spot's run
 * does not depend on what it shares it with: under the shift scheme, whose
 * moves the slots bound (the bilinear one's are not), and without the
 * adaptive early exit, whose threshold scales with the largest value of the
 * whole state. */
static int slots_allowed(const plan *p)
{
    return p->streaming_scheme == STREAM_SHIFT && p->early_exit != EARLY_EXIT_ADAPTIVE;
}

/* The plan a spot's run steps under: with steps: auto, it ends when its
 * state holds no weight at all (auto_stop_weight 0, backend_auto_stop; every
 * particle stops at the energy cut-off or leaves), not below a fraction of
 * it, so that a spot that has ended and still shares its state with others
 * changes no more, and its row is the same in any batch, alone or not: the
 * run of that spot alone with transport.auto_stop_weight: 0. */
static plan per_spot_plan(const plan *p)
{
    plan q = *p;
    q.auto_stop_weight = 0.0;
    return q;
}

/* The per-spot state of `slots` slots of shape ws (a copy with ws.slots set):
 * its window, tables and backend context. */
static int batch_setup(stepper *sp, const stepper *proto, const sim_tables *st,
                       const window_shape *ws, int slots, smx_error *err)
{
    *sp = *proto;
    sp->ctx = NULL;
    window_shape w = *ws;
    w.slots = slots;
    int rc = stepper_window(sp, st, &w, err);
    /* The batch's sources are gathered on the host even where the window
     * is the whole grid (calloc: only the sources' rows are ever written). */
    if (!rc && !sp->wpsi &&
        (!(sp->wpsi = calloc((size_t)sp->win.wg.cells, sizeof *sp->wpsi)) ||
         !(sp->wocc = malloc((size_t)sp->g->ne * sizeof *sp->wocc)))) {
        stepper_free(sp);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for a window's psi)",
                        (double)sp->win.wg.cells * 4e-9);
    }
    if (!rc && (rc = proto->be->setup(&sp->ctx, &sp->st, err)))
        stepper_free(sp);
    return rc;
}

/* The per-spot state of shape ws with `want` slots, or fewer where the
 * backend's memory does not hold them (halved, with a warning); *slots: how
 * many it has. */
static int batch_state(stepper *sp, const stepper *proto, const sim_tables *st,
                       const window_shape *ws, int want, int *slots, smx_error *err)
{
    for (*slots = want;; *slots /= 2) {
        int rc = batch_setup(sp, proto, st, ws, *slots, err);
        if (!rc || *slots == 1)
            return rc;
        smx_warn("a per-spot state of %d slots could not be set up (%s); trying %d\n", *slots,
                 err->msg, *slots / 2);
        *err = (smx_error){ 0 };
    }
}

/* The spots of a block in the order their batches take them: highest
 * occupied energy bin first (a batch's spots then need about as many steps,
 * and each batch's bins are those of its first spot), then spot order. */
typedef struct spot_key {
    int spot, top;
} spot_key;
static int by_top_desc(const void *a, const void *b)
{
    const spot_key *x = a, *y = b;
    return x->top != y->top ? y->top - x->top : x->spot - y->spot;
}

/* The bins a batch's state holds: the run's lowest `ne` energy bins (its
 * first spot's highest occupied bin and below: no weight ever rises in
 * energy, physics/lut_energy.h), its grid and the tables built on it (the
 * same entries for those bins as the run's, every one of them a function of
 * its bin's energy and the bins below). A new class is built where the next
 * batch needs at most SPOT_CLASS_SHRINK of the bins the state holds: fewer
 * bins, more spots at once. */
#define SPOT_CLASS_SHRINK 0.6
typedef struct spot_class {
    grid g;
    sim_tables st;
    int ne, built;
} spot_class;

static void spot_class_free(spot_class *k)
{
    if (k->built) {
        sim_tables_free(&k->st);
        grid_free(&k->g);
    }
    memset(k, 0, sizeof *k);
}

static int spot_class_build(spot_class *k, const plan *p, const grid *g, int ne, const tables *t,
                            const sim_media *media, smx_error *err)
{
    spot_class_free(k);
    if (grid_energy_prefix(&k->g, g, ne))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    int rc = simulate_tables_build(&k->st, p, &k->g, t, media, err);
    if (rc) {
        grid_free(&k->g);
        return rc;
    }
    k->ne = (int)k->g.ne;
    k->built = 1;
    return 0;
}

/* output.per_spot_dose: every spot transported on its own window (its
 * lateral reach to where its dose falls below output.per_spot_threshold, and
 * a band of rows that follows it), up to backend.per_spot_lanes of them at
 * once in the slots of one state (auto: as many as the backend's memory
 * holds; physics/grid.h, slot_nx), so that one launch sequence steps them
 * all, on the energy bins the batch needs (spot_class); each spot's dose per
 * unit weight becomes its row of r->per_spot, in spot order. A row does not
 * depend on the spots stepped beside it (slots_allowed, per_spot_plan). The
 * steps' balances count in r's conservation figures. Spots first .. first +
 * n - 1 of the plan (all of them, or an MPI rank's block); n > 0. st: the
 * run's tables; t, media: what they were built from (a class's tables); mt:
 * its materials' tables (window sizes). */
static int per_spot_runs(const stepper *proto_in, const sim_tables *st, const tables *t,
                         const sim_media *media, const tables *const *mt, float *host,
                         grid_box *occupied, double *dose, int first, int n, run_result *r,
                         smx_error *err)
{
    const plan q = per_spot_plan(proto_in->p);
    const plan *p = &q;
    stepper proto = *proto_in;
    proto.p = p;
    const grid *g = proto_in->g;
    const int n_plan = plan_spot_count(p);
    spot_dose_free(&r->per_spot);
    r->per_spot.threshold = p->per_spot_threshold;
    /* Dropped values are summed at the reference density (spot_dose). */
    const medium_map *mm = st->mm;
    double *to_ref = NULL;
    if (mm && mm->cell) {
        if (!(to_ref = malloc((size_t)g->slice * sizeof *to_ref)))
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        for (int64_t c = 0; c < g->slice; c++)
            to_ref[c] = g->density / mm->media[mm->cell[c]].density_g_cm3;
    }
    window_span *spans = malloc((size_t)n_plan * sizeof *spans);
    spot_key *order = malloc((size_t)n * sizeof *order);
    double *w0s = malloc((size_t)n * sizeof *w0s);
    if (!spans || !order || !w0s) {
        free(to_ref);
        free(spans);
        free(order);
        free(w0s);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for %d spots", n);
    }
    /* Each spot's highest occupied energy bin, from its source. */
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        double wk = 0.0, ek = 0.0;
        order[i] = (spot_key){ first + i, 0 };
        if ((rc = source_fill_spot(host, p, g, first + i, occupied, &wk, &ek, err)))
            break;
        for (int64_t ie = 0; ie < g->ne; ie++)
            if (occupied[ie].z0 <= occupied[ie].z1 && occupied[ie].x0 <= occupied[ie].x1)
                order[i].top = (int)ie;
        source_clear(host, g, occupied);
        if (!(wk > 0.0)) {
            plan_spot s = plan_spot_at(p, first + i);
            rc = plan_spot_fail(p, &s, "weight", err, "this spot puts no weight on the grid");
        }
    }
    qsort(order, (size_t)n, sizeof *order, by_top_desc);
    /* Fewer bins where every state computes a spot the same: in window mode,
     * whose angular method is not chosen by timing (backend_ops.lanes), and
     * in one medium. With several, a medium's choice between its two energy
     * tables (numerics/dither_phase.h) follows its range table over the
     * state's bins, extrapolated above the top one: a state of fewer bins
     * would choose otherwise for a particle that has crossed a lighter
     * medium. */
    const int classes = slots_allowed(p) && g->angle_mode == ANGLE_WINDOW && st->n_media <= 1;

    /* The windows' shape, from every spot of the plan, not one block's, so
     * that a row does not depend on the spots it ran beside (an MPI rank's
     * block, the batches); moving where the backend can move it, else again
     * with every row. A moving window starts with a band of
     * WINDOW_SPOT_BAND rows (bound: what window_shape_of allows). */
    if (proto.every_collect > WINDOW_SPOT_COLLECT)
        proto.every_collect = WINDOW_SPOT_COLLECT;
    window_shape bound = { 0 }, ws = { 0 };
    int band = smx_test_spot_band(WINDOW_SPOT_BAND), regrown = 0, n_classes = 0;
    stepper sp = { 0 };
    spot_class cls = { 0 };
    int slots = 1, want = 1, ne_first = 0;
    double *wdose = NULL;
    spot_dose *rows = rc ? NULL : calloc((size_t)n, sizeof *rows);
    if (!rc && !rows)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    double t0 = now_s(), last = t0, t_upload = 0.0, t_steps = 0.0, t_dose = 0.0;
    int appended = 0;
    run_result one;
    run_result_init(&one);
    int b0 = 0;
    while (!rc && b0 < n) {
        if (smx_interrupted) {
            rc = smx_fail(err, SMX_EXIT_INTERRUPTED,
                          "interrupted during the per-spot runs (%d of %d spots done)", b0, n);
            break;
        }
        /* The state for this batch: a class of fewer bins where it needs
         * few enough, and how many spots it holds at once (a state of one
         * slot asks the backend's memory). */
        const int need = classes ? order[b0].top + 1 : (int)g->ne;
        if (!cls.built || need > cls.ne || need <= SPOT_CLASS_SHRINK * cls.ne) {
            stepper_free(&sp);
            free(wdose);
            wdose = NULL;
            if ((rc = spot_class_build(&cls, p, g, need, t, media, err)))
                break;
            n_classes++;
            proto.g = &cls.g;
            sim_tables stq = cls.st;
            stq.p = p;
            for (int moving = !bound.nz ? 1 : bound.nz < g->nz;; moving = 0) {
                if (!bound.nz || !moving) {
                    rc = window_shape_of(&bound, spans, p, g, st->mm, mt, 0, n_plan, 0,
                                         window_sigmas(p->per_spot_threshold), proto.every_collect,
                                         moving, err);
                    ws = bound;
                    if (!rc && bound.nz < g->nz)
                        ws.nz = window_rows_for_band(&bound, band);
                }
                if (!rc)
                    rc = batch_setup(&sp, &proto, &stq, &ws, 1, err);
                if (rc || window_moves_ok(&sp))
                    break;
                stepper_free(&sp);
            }
            if (rc)
                break;
            if (!r->backend_name[0]) /* an MPI rank without the total */
                proto.be->describe(sp.ctx, r);
            int fit = proto.be->lanes ? proto.be->lanes(sp.ctx) : 1;
            want = p->per_spot_lanes > 0 ? p->per_spot_lanes : fit;
            want = want > n - b0 ? n - b0 : want > SLOTS_MAX ? SLOTS_MAX : want;
            if (!slots_allowed(p))
                want = 1;
            slots = 1;
            if (want == 1 && n_classes == 1 && ws.nz < bound.nz) {
                /* One spot at a time: the band's rows would only cost moves
                 * (a CPU move copies every row its bins have touched). */
                stepper_free(&sp);
                ws.nz = bound.nz;
                if ((rc = batch_setup(&sp, &proto, &stq, &ws, 1, err)))
                    break;
            }
            if (want > 1) {
                stepper_free(&sp);
                if ((rc = batch_state(&sp, &proto, &stq, &ws, want, &slots, err)))
                    break;
            }
            if (!(wdose = malloc((size_t)sp.win.wg.slice * sizeof *wdose))) {
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
                break;
            }
            if (n_classes == 1) {
                ne_first = cls.ne;
                r->spot_slots = slots;
                char which[96];
                if (n == n_plan)
                    snprintf(which, sizeof which, "%d spot%s", n, n == 1 ? "" : "s");
                else
                    snprintf(which, sizeof which,
                             "spots %d-%d of %d here (other processes run the rest)", first + 1,
                             first + n, n_plan);
                smx_info("per-spot dose: %s, %d at once (windows of %d x %d cells side by side, "
                         "%d energy bins), values below %.1e of each spot's peak dropped\n",
                         which, slots, ws.nz, ws.nx, cls.ne, p->per_spot_threshold);
            }
            r->spot_slots = slots > r->spot_slots ? slots : r->spot_slots;
        }
        const int nb = n - b0 < slots ? n - b0 : slots;
        /* The batch's sources, each from the all-zero host buffer into its slot. */
        double ta = now_s(), w0 = 0.0, e0 = 0.0;
        window_reset(&sp.win);
        for (int k = 0; k < nb && !rc; k++) {
            const int spot = order[b0 + k].spot;
            double wk = 0.0, ek = 0.0;
            window_place_slot(&sp.win, k, spans[spot]);
            if ((rc = source_fill_spot(host, p, g, spot, occupied, &wk, &ek, err)))
                break;
            window_source(&sp.win, k, k == 0, host, occupied, sp.wpsi, sp.wocc);
            source_clear(host, g, occupied);
            w0s[b0 + k] = wk;
            w0 += wk;
            e0 += ek;
        }
        if (!rc)
            rc = sp.be->upload(sp.ctx, sp.wpsi, sp.wocc, w0, e0, err);
        source_clear(sp.wpsi, &sp.win.wg, sp.wocc);
        if (rc)
            break;
        one.n_steps = 0;
        one.conservation_violations = 0;
        one.max_weight_rel_err = one.max_energy_rel_err = 0.0;
        one.tail_steps = 0;
        one.tail_max_weight_rel_err = one.tail_max_energy_rel_err = 0.0;
        one.initial_weight = w0;
        one.initial_energy_MeV = e0;
        double tb = now_s();
        t_upload += tb - ta;
        rc = run_steps(&sp, &one, NULL, 0, NULL, NULL, err);
        double tc = now_s();
        t_steps += tc - tb;
        if (rc && sp.win.overflow && ws.nz < bound.nz) {
            /* The batch's rows outgrew its band: the batch again, on twice
             * the band (fewer slots where memory then holds fewer). */
            *err = (smx_error){ 0 };
            band *= 2;
            ws.nz = window_rows_for_band(&bound, band);
            regrown++;
            stepper_free(&sp);
            free(wdose);
            wdose = NULL;
            sim_tables stq = cls.st;
            stq.p = p;
            if (!(rc = batch_state(&sp, &proto, &stq, &ws, want, &slots, err)) &&
                !(wdose = malloc((size_t)sp.win.wg.slice * sizeof *wdose)))
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
            continue;
        }
        if (rc)
            break;
        if ((rc = sp.be->download_dose(sp.ctx, wdose, err)))
            break;
        const window *w = &sp.win;
        const int z1 = (w->z0 + w->shape.nz < g->nz ? w->z0 + w->shape.nz : (int)g->nz) - 1;
        for (int k = 0; k < nb && !rc; k++) {
            const int spot = order[b0 + k].spot;
            window_dose(w, k, wdose, dose);
            /* Only the rows and columns the slot has covered hold dose. */
            const int x0 = w->x0[k], x1 = w->x0[k] + w->shape.nx - 1;
            for (int64_t z = 0; z <= z1; z++)
                for (int64_t c = z * g->nx + x0; c <= z * g->nx + x1; c++)
                    dose[c] /= w0s[b0 + k];
            rows[spot - first].threshold = p->per_spot_threshold;
            rows[spot - first].to_reference = to_ref;
            if (spot_dose_append_box(&rows[spot - first], 1, dose, g->nx, 0, z1, x0, x1,
                                     w0s[b0 + k]))
                rc = smx_fail(err, SMX_EXIT_RUNTIME,
                              "out of host memory storing the dose of spot %d", spot + 1);
        }
        r->spot_window_moves += w->shifts;
        if (w->band > r->spot_window_band)
            r->spot_window_band = w->band;
        r->conservation_violations += one.conservation_violations;
        r->max_weight_rel_err = fmax(r->max_weight_rel_err, one.max_weight_rel_err);
        r->max_energy_rel_err = fmax(r->max_energy_rel_err, one.max_energy_rel_err);
        r->tail_steps += one.tail_steps;
        r->tail_max_weight_rel_err = fmax(r->tail_max_weight_rel_err, one.tail_max_weight_rel_err);
        r->tail_max_energy_rel_err = fmax(r->tail_max_energy_rel_err, one.tail_max_energy_rel_err);
        t_dose += now_s() - tc;
        while (!rc && appended < n && rows[appended].n_spots == 1) {
            if (spot_dose_take_row(&r->per_spot, n, &rows[appended]))
                rc = smx_fail(err, SMX_EXIT_RUNTIME,
                              "out of host memory storing the dose of spot %d",
                              first + appended + 1);
            spot_dose_free(&rows[appended]);
            appended++;
            if (!rc && appended == 1)
                rc = smx_test_fail("per-spot", err);
        }
        double now = now_s();
        if (!rc && (now - last > 1.0 || b0 + nb == n)) {
            double el = now - t0;
            smx_info("  spot %d/%d  %.1f s  %.1f spots/s  eta %.1f s\n", b0 + nb, n, el,
                     (b0 + nb) / el, el / (b0 + nb) * (n - b0 - nb));
            last = now;
        }
        b0 += nb;
    }
    r->spot_window_nz = ws.nz;
    r->spot_window_nx = ws.nx;
    r->spot_window_grew = regrown;
    r->spot_classes = n_classes;
    r->spot_bins_first = ne_first;
    r->spot_bins_last = cls.ne;
    if (!rc && regrown)
        smx_info("  per-spot windows grew %d time%s to %d rows (a batch's rows outgrew the "
                 "band)\n",
                 regrown, regrown == 1 ? "" : "s", ws.nz);
    if (!rc)
        smx_info(
            "  per-spot time: uploads %.3f s, steps %.3f s, doses and their sparse rows %.3f s "
            "(up to %d spots at once; %d state%s, %d to %d energy bins)\n",
            t_upload, t_steps, t_dose, r->spot_slots, n_classes, n_classes == 1 ? "" : "s",
            ne_first, cls.ne);
    run_result_free(&one);
    stepper_free(&sp);
    spot_class_free(&cls);
    if (rows)
        for (int k = 0; k < n; k++)
            spot_dose_free(&rows[k]);
    free(rows);
    free(to_ref);
    free(spans);
    free(order);
    free(w0s);
    free(wdose);
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

int simulate_tables_build(sim_tables *st, const plan *p, const grid *g, const tables *t,
                          const sim_media *media, smx_error *err)
{
    int rc = sim_tables_build(st, p, g, t, err);
    if (rc)
        return rc;
    if (media && (rc = sim_tables_set_media(st, media->mm, media->mt, err)))
        sim_tables_free(st);
    return rc;
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
        if (!(rc = beam_profile_build_spot(&b, p, &s, g, err)))
            beam_profile_free(&b);
    }
    return rc;
}

/* The plan asks for psi snapshots: those are of the whole grid, so the window is. */
static int wants_any_snapshot(const plan *p)
{
    return p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final;
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
            rc = stepper_window(sp, st, &ws, err);
        if (!rc)
            rc = sp->be->setup(&sp->ctx, &sp->st, err);
        if (rc)
            return rc;
        if (window_moves_ok(sp))
            return 0;
        stepper_free(sp);
    }
}

int simulate_part(const plan *p, const grid *g, const tables *t, const sim_media *media,
                  const backend_ops *be, const snapshot_sink *out, const sim_part *part,
                  run_result *r, smx_error *err)
{
    const sim_part whole = { 1, 0, p->per_spot_dose ? plan_spot_count(p) : 0 };
    if (!part)
        part = &whole;
    double t0 = now_s();
    sim_tables st;
    int rc = simulate_tables_build(&st, p, g, t, media, err);
    if (rc)
        return rc;
    run_result_phase(r, "tables", now_s() - t0);
    const tables *one[1] = { t };
    const tables *const *mt = media ? media->mt : one;

    t0 = now_s();
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
    /* calloc: the source writes one row, the rest is never touched. */
    host = calloc((size_t)g->cells, sizeof *host);
    occupied = malloc((size_t)g->ne * sizeof *occupied);
    dose = malloc((size_t)g->slice * sizeof *dose);
    if (!host || !occupied || !dose) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for one psi copy)",
                      (double)g->cells * 4e-9);
        goto done;
    }
    if (!part->total) { /* an MPI rank's per-spot rows alone */
        run_result_phase(r, "setup", now_s() - t0);
        goto per_spot;
    }
    if ((rc = total_setup(&sp, &st, mt, out && wants_any_snapshot(p), &span, err)))
        goto done;
    if (!(wdose = malloc((size_t)sp.win.wg.slice * sizeof *wdose))) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        goto done;
    }
    if ((rc = upload_source(&sp, host, occupied, -1, span, &r->initial_weight,
                            &r->initial_energy_MeV, err)))
        goto done;
    be->describe(sp.ctx, r);
    run_result_phase(r, "setup", now_s() - t0);
    double write_s = 0.0; /* every snapshot write: the "snapshots" phase */
    if (out && wants_snapshot(p, 0)) {
        double tw = now_s();
        rc = snapshot_write(out, g, 0, host, 1, err);
        write_s += now_s() - tw;
        if (rc)
            goto done;
    }
    source_clear(host, g, occupied);

    double loop0 = now_s(), loop_write_s = 0.0;
    rc = run_steps(&sp, r, out, 1, &ps, &loop_write_s, err);
    r->window_nz = sp.win.shape.nz;
    r->window_nx = sp.win.shape.nx;
    r->window_moves = sp.win.shifts;
    r->window_band = sp.win.band;
    run_result_phase(r, "steps", now_s() - loop0 - loop_write_s);
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
        rc = snapshot_flush(be, sp.ctx, out, g, &ps, r->n_steps, 1, &write_s, err);
        if (!rc && p->snapshot_final && !final_taken && !(rc = be->snapshot_begin(sp.ctx, err))) {
            ps = (pending_snapshot){ 1, r->n_steps };
            rc = snapshot_flush(be, sp.ctx, out, g, &ps, r->n_steps, 1, &write_s, err);
        }
    }
    if (write_s > 0.0)
        run_result_phase(r, "snapshots", write_s);
    if (rc && !interrupted)
        goto done;
    t0 = now_s();
    int rc_dose = download_dose(&sp, wdose, dose, err);
    if (rc_dose) {
        rc = rc_dose;
        goto done;
    }
    for (int64_t i = 0; i < g->slice; i++)
        dose[i] /= r->initial_weight;
    free(r->dose_MeV);
    r->dose_MeV = dose;
    dose = NULL;
    run_result_phase(r, "download", now_s() - t0);

per_spot:
    /* rc is 0 here unless the total was interrupted. The total's state goes
     * first: the spots' windows take its memory. */
    if (sp.ctx && !rc && p->per_spot_dose && part->spot_count > 0)
        stepper_free(&sp);
    if (!rc && p->per_spot_dose && part->spot_count > 0) {
        t0 = now_s();
        if (!dose && !(dose = malloc((size_t)g->slice * sizeof *dose))) /* the total kept its own */
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        else
            rc = per_spot_runs(&sp, &st, t, media, mt, host, occupied, dose, part->spot_first,
                               part->spot_count, r, err);
        run_result_phase(r, "per-spot", now_s() - t0);
    }
done:
    stepper_free(&sp);
    free(host);
    free(occupied);
    free(dose);
    free(wdose);
    sim_tables_free(&st);
    return rc;
}
