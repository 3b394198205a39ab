#include "transport/simulate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "physics/source.h"

volatile sig_atomic_t smx_interrupted = 0;

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

static int snapshot_flush(const backend_ops *be, void *ctx, const snapshot_sink *out, const grid *g,
                          pending_snapshot *ps, int last_step, smx_error *err)
{
    if (!ps->active)
        return 0;
    ps->active = 0;
    const float *psi;
    int rc = be->snapshot_wait(ctx, &psi, err);
    /* Asked for beyond the step that ended an auto run: that state never existed. */
    if (!rc && ps->step <= last_step)
        rc = out->write(out->ctx, g, ps->step, psi, err);
    return rc;
}

/* Step log: a legend once, then fixed-width lines; on a terminal a progress
 * line is redrawn in between. */
static void log_legend(void)
{
    smx_info("%8s %10s %14s %10s %10s %10s\n", "step", "front_mm", "weight_left", "ms/step",
             "elapsed_s", "eta_s");
}

static void log_line(int step, double front_mm, double w_left, double ms, double elapsed,
                     double eta, int progress_only)
{
    if (smx_quiet)
        return;
    if (progress_only) {
        fprintf(stdout, "\r%8d %10.2f %14.6e %10.3f %10.1f %10.1f", step, front_mm, w_left, ms,
                elapsed, eta);
    } else {
        fprintf(stdout, "\r%8d %10.2f %14.6e %10.3f %10.1f %10.1f\n", step, front_mm, w_left, ms,
                elapsed, eta);
    }
    fflush(stdout);
}

int simulate(const plan *p, const grid *g, const tables *t, const backend_ops *be,
             const snapshot_sink *out, run_result *r, smx_error *err)
{
    double t0 = now_s();
    sim_tables st;
    int rc = sim_tables_build(&st, p, g, t, err);
    if (rc)
        return rc;
    run_result_phase(r, "tables", now_s() - t0);

    t0 = now_s();
    void *ctx = NULL;
    float *host = NULL;
    grid_box *occupied = NULL;
    double *dose = NULL;
    step_record *recs = NULL;
    pending_snapshot ps = {0};
    int every_collect = be->collect_every > 0 ? be->collect_every : 1;
    if ((rc = be->setup(&ctx, &st, err)))
        goto done;
    /* calloc: the source writes one row, the rest is never touched. */
    host = calloc((size_t)g->cells, sizeof *host);
    occupied = malloc((size_t)g->ne * sizeof *occupied);
    dose = malloc((size_t)g->slice * sizeof *dose);
    recs = malloc((size_t)every_collect * sizeof *recs);
    if (!host || !occupied || !dose || !recs) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for one psi copy)",
                      (double)g->cells * 4e-9);
        goto done;
    }
    if ((rc = source_fill(host, p, g, occupied, &r->initial_weight, &r->initial_energy_MeV, err)) ||
        (rc = be->upload(ctx, host, occupied, r->initial_weight, r->initial_energy_MeV, err)))
        goto done;
    be->describe(ctx, r);
    if (out && wants_snapshot(p, 0) && (rc = out->write(out->ctx, g, 0, host, err)))
        goto done;
    free(host);
    host = NULL;
    run_result_phase(r, "setup", now_s() - t0);

    int expected = simulate_expected_steps(p, g, t);
    int every_log = p->log_every > 0 ? p->log_every : (expected >= 20 ? expected / 20 : 1);
    int tty = isatty(STDOUT_FILENO);
    log_legend();
    double loop0 = now_s(), last_progress = loop0, last_collect = loop0;
    int limit = p->steps > 0 ? p->steps : p->max_steps;
    int enqueued = 0, finished = 0;
    r->stop_reason = p->steps > 0 ? STOP_STEPS_DONE : STOP_MAX_STEPS;
    while (!finished) {
        if (smx_interrupted) {
            r->stop_reason = STOP_INTERRUPTED;
            rc = smx_fail(err, SMX_EXIT_INTERRUPTED, "interrupted after %d steps", r->n_steps);
            break;
        }
        if ((rc = be->step(ctx, enqueued, err)))
            break;
        enqueued++;
        if (out && wants_snapshot(p, enqueued) && !(enqueued == limit && p->snapshot_final)) {
            if ((rc = snapshot_flush(be, ctx, out, g, &ps, INT32_MAX, err)) ||
                (rc = be->snapshot_begin(ctx, err)))
                break;
            ps = (pending_snapshot){1, enqueued};
        }
        if (enqueued % every_collect != 0 && enqueued < limit)
            continue;

        int n = 0;
        if ((rc = be->collect(ctx, recs, every_collect, &n, err)))
            break;
        double now = now_s();
        double ms = n > 0 ? 1e3 * (now - last_collect) / n : 0.0;
        last_collect = now;
        for (int k = 0; k < n && !finished; k++) {
            step_record *sr = &recs[k];
            double front_mm = sr->front_row >= 0 ? g->z.centres[sr->front_row] : 0.0;
            if ((rc = run_result_push(r, &sr->b, ms, front_mm))) {
                smx_fail(err, rc, "out of memory recording step %d", r->n_steps + 1);
                goto loop_end;
            }
            const step_balance *b = &sr->b; /* run_result_push keeps the maxima */
            if (b->weight_rel_err > SMX_CONSERVATION_TOL ||
                b->energy_rel_err > SMX_CONSERVATION_TOL) {
                r->conservation_violations++;
                smx_warn("step %d: conservation violated: weight %.3e, energy %.3e relative "
                         "(tolerance %.0e)\n", r->n_steps, b->weight_rel_err, b->energy_rel_err,
                         SMX_CONSERVATION_TOL);
            }
            if (sr->stopped) {
                r->stop_reason = STOP_WEIGHT_BELOW;
                finished = 1;
            } else if (r->n_steps >= limit) {
                finished = 1;
            }
            double elapsed = now - loop0;
            double eta = expected > r->n_steps ? elapsed / r->n_steps * (expected - r->n_steps) : 0.0;
            double w_left = b->weight_out / r->initial_weight;
            if (r->n_steps % every_log == 0 || finished || r->n_steps == 1)
                log_line(r->n_steps, front_mm, w_left, elapsed * 1e3 / r->n_steps, elapsed, eta, 0);
            else if (tty && now - last_progress > 0.2) {
                log_line(r->n_steps, front_mm, w_left, elapsed * 1e3 / r->n_steps, elapsed, eta, 1);
                last_progress = now;
            }
        }
    }
loop_end:
    run_result_phase(r, "steps", now_s() - loop0);
    /* An interrupted run still hands back its dose so far: the caller may keep
     * it as a partial result, marked incomplete. */
    int interrupted = rc == SMX_EXIT_INTERRUPTED;
    if (rc && !interrupted)
        goto done;

    t0 = now_s();
    if (!interrupted && out) {
        if ((rc = snapshot_flush(be, ctx, out, g, &ps, r->n_steps, err)))
            goto done;
        if (p->snapshot_final) {
            if ((rc = be->snapshot_begin(ctx, err)))
                goto done;
            ps = (pending_snapshot){1, r->n_steps};
            if ((rc = snapshot_flush(be, ctx, out, g, &ps, r->n_steps, err)))
                goto done;
        }
    }
    int rc_dose = be->download_dose(ctx, dose, err);
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
done:
    if (ctx)
        be->release(ctx);
    free(host);
    free(occupied);
    free(dose);
    free(recs);
    sim_tables_free(&st);
    return rc;
}
