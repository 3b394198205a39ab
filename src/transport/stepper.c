#include "transport/stepper.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/progress.h"
#include "base/test_hooks.h"
#include "transport/step_log.h"

volatile sig_atomic_t smx_interrupted = 0;

double stepper_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int stepper_wants_snapshot(const plan *p, int step)
{
    if (p->snapshot_every > 0 && step % p->snapshot_every == 0 && step > 0)
        return 1;
    for (int i = 0; i < p->n_snapshot_steps; i++)
        if (p->snapshot_steps[i] == step)
            return 1;
    return 0;
}

/* Hands one snapshot to the sink, with a progress line on a terminal while
 * the writer goes through psi (it reports its planes to base/progress.h).
 * announce: say so on a line of its own, for the writes before and after the
 * steps, where no step log line shows that the run is busy. */
int stepper_snapshot_write(const snapshot_sink *out, const grid *g, int step, const float *psi,
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
 * added to so->write_s (the "snapshots" phase, kept out of the step time). */
int stepper_snapshot_flush(const stepper *sp, snapshot_out *so, int last_step, int announce,
                           smx_error *err)
{
    pending_snapshot *ps = &so->pending;
    if (!ps->active)
        return 0;
    double t0 = stepper_now_s();
    ps->active = 0;
    const float *psi;
    int rc = sp->be->snapshot_wait(sp->ctx, &psi, err);
    /* Asked for beyond the step that ended an auto run: that state never existed. */
    if (!rc && ps->step <= last_step)
        rc = stepper_snapshot_write(so->sink, sp->g, ps->step, psi, announce, err);
    so->write_s += stepper_now_s() - t0;
    return rc;
}

/* The window is the whole grid: sources go to the backend as source_fill writes them. */
int stepper_holds_grid(const stepper *sp)
{
    return sp->win.wg.nx == sp->g->nx && sp->win.wg.nz == sp->g->nz;
}

/* sp's window of shape ws and the tables pointing to it (a shallow copy of
 * st: the tables do not depend on the window's size); sp->ctx is not set up. */
int stepper_window(stepper *sp, const sim_tables *st, const window_shape *ws, int own_psi,
                   smx_error *err)
{
    int rc = window_init(&sp->win, sp->g, st->mm, ws, err);
    if (rc)
        return rc;
    sp->st = *st;
    sp->st.g = &sp->win.wg;
    if (st->mm)
        sp->st.mm = &sp->win.mm;
    sp->recs = malloc((size_t)sp->every_collect * sizeof *sp->recs);
    const int psi = own_psi || !stepper_holds_grid(sp);
    if (psi) {
        sp->wpsi = calloc((size_t)sp->win.wg.cells, sizeof *sp->wpsi);
        sp->wocc = malloc((size_t)sp->g->ne * sizeof *sp->wocc);
    }
    if (!sp->recs || (psi && (!sp->wpsi || !sp->wocc))) {
        free(sp->recs);
        free(sp->wpsi);
        free(sp->wocc);
        window_free(&sp->win);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for a window's psi)",
                        (double)sp->win.wg.cells * 4e-9);
    }
    return 0;
}

void stepper_free(stepper *sp)
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

/* One collect of the step loop: the records it brought into sp->recs, the
 * time per step they took (ms) and when they arrived (now, stepper_now_s). */
typedef struct collected {
    int n;
    double ms, now;
} collected;

/* Records the steps collected into sp->recs in r (balances, conservation);
 * *finished when one of them ended the run. sl: the step log, or NULL. */
static int take_records(const stepper *sp, run_result *r, const collected *c, step_log *sl,
                        int *finished, smx_error *err)
{
    const plan *p = sp->p;
    const grid *g = sp->g;
    const int n = c->n;
    const double ms = c->ms, now = c->now;
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
 * (balances, conservation), hands the snapshots the plan asks for to so
 * (NULL: none), and prints the step log when log is set. The time spent
 * writing snapshots is added to so->write_s and kept out of the step times
 * and the log's rate. */
int stepper_run(stepper *sp, run_result *r, snapshot_out *so, int log, smx_error *err)
{
    const plan *p = sp->p;
    const backend_ops *be = sp->be;
    void *ctx = sp->ctx;
    int rc = 0;
    int every_log = p->log_every > 0 ? p->log_every : (sp->expected >= 20 ? sp->expected / 20 : 1);
    snapshot_out none = { 0 };
    if (!so)
        so = &none;
    const snapshot_sink *out = so->sink;
    pending_snapshot *ps = &so->pending;
    double *write_s = &so->write_s;
    double loop0 = stepper_now_s(), last_collect = loop0, write_at_collect = *write_s;
    step_log sl;
    if (log)
        step_log_begin(&sl, sp->expected, every_log, loop0);
    int limit = p->steps > 0 ? p->steps : p->max_steps;
    int enqueued = 0, finished = 0;
    sp->moves_s = 0.0;
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
        if (out && stepper_wants_snapshot(p, enqueued) &&
            !(enqueued == limit && p->snapshot_final)) {
            double before = *write_s;
            rc = stepper_snapshot_flush(sp, so, INT32_MAX, 0, err);
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
            rc = stepper_snapshot_flush(sp, so, INT32_MAX, 0, err);
            if (log)
                step_log_wrote(&sl, *write_s - before);
            if (rc)
                return rc;
        }

        int n = 0;
        if ((rc = be->collect(ctx, sp->recs, sp->every_collect, &n, err)))
            return rc;
        double now = stepper_now_s();
        /* Per-step time without the snapshots written since the last collect. */
        double ms = n > 0 ? 1e3 * (now - last_collect - (*write_s - write_at_collect)) / n : 0.0;
        last_collect = now;
        write_at_collect = *write_s;
        const collected c = { n, ms, now };
        if ((rc = take_records(sp, r, &c, log ? &sl : NULL, &finished, err)))
            return rc;
        /* The moves' host time: the device waits for them (the collect
         * before has drained its queue), so the per-spot line reports it. */
        const double f0 = stepper_now_s();
        if (!finished && n > 0 &&
            (rc = window_follow(&sp->win, be, ctx, sp->recs[n - 1].front_row,
                                sp->recs[n - 1].back_row, err)))
            return rc;
        sp->moves_s += stepper_now_s() - f0;
    }
    return 0;
}

/* sp's window moves as the beam goes, or need not: its backend can move it
 * (the CUDA paths without regions cannot), or it holds every row. */
int stepper_moves_ok(const stepper *sp)
{
    return sp->win.shape.nz == sp->g->nz || (sp->be->can_shift && sp->be->can_shift(sp->ctx));
}

int simulate_tables_build(sim_tables *st, const plan *p, const grid *g, const tables *t,
                          const sim_media *media, smx_error *err)
{
    int rc = sim_tables_build(st, p, g, t, err);
    if (rc)
        return rc;
    if (media && (rc = sim_tables_set_media(st, media->mm, media->mt, media->water, err)))
        sim_tables_free(st);
    return rc;
}
