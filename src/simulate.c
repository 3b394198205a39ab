#include "simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source.h"

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

static int snapshot(const backend_ops *be, void *ctx, output *out, const grid *g, float *host,
                    int step, smx_error *err)
{
    int rc = be->download_psi(ctx, host, err);
    if (!rc)
        rc = output_write_snapshot(out, g, step, host, err);
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

int simulate(const plan *p, const grid *g, const tables *t, const backend_ops *be, output *out,
             run_result *r, smx_error *err)
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
    double *dose = NULL;
    if ((rc = be->setup(&ctx, &st, err)))
        goto done;
    host = calloc((size_t)g->cells, sizeof *host);
    dose = malloc((size_t)g->slice * sizeof *dose);
    if (!host || !dose) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory (%.3g GB for one psi copy)",
                      (double)g->cells * 4e-9);
        goto done;
    }
    if ((rc = source_fill(host, p, g, &r->initial_weight, &r->initial_energy_MeV, err)) ||
        (rc = be->upload(ctx, host, err)))
        goto done;
    be->describe(ctx, r);
    if (out && wants_snapshot(p, 0) &&
        (rc = output_write_snapshot(out, g, 0, host, err)))
        goto done;
    run_result_phase(r, "setup", now_s() - t0);

    int expected = simulate_expected_steps(p, g, t);
    int every = p->log_every > 0 ? p->log_every : (expected >= 20 ? expected / 20 : 1);
    int tty = isatty(STDOUT_FILENO);
    log_legend();
    double loop0 = now_s(), last_progress = loop0;
    r->stop_reason = STOP_STEPS_DONE;
    for (int n = 0;; n++) {
        if (smx_interrupted) {
            r->stop_reason = STOP_INTERRUPTED;
            rc = smx_fail(err, SMX_EXIT_INTERRUPTED, "interrupted after %d steps", n);
            break;
        }
        double s0 = now_s();
        step_balance b;
        if ((rc = be->step(ctx, n, &b, err)))
            break;
        double ms = 1e3 * (now_s() - s0);
        int front = be->front_row(ctx);
        double front_mm = front >= 0 ? g->z.centres[front] : 0.0;
        if ((rc = run_result_push(r, &b, ms, front_mm))) {
            smx_fail(err, rc, "out of memory recording step %d", n + 1);
            break;
        }
        if (b.weight_rel_err > r->max_weight_rel_err)
            r->max_weight_rel_err = b.weight_rel_err;
        if (b.energy_rel_err > r->max_energy_rel_err)
            r->max_energy_rel_err = b.energy_rel_err;
        if (b.weight_rel_err > SMX_CONSERVATION_TOL || b.energy_rel_err > SMX_CONSERVATION_TOL) {
            r->conservation_violations++;
            smx_warn("step %d: conservation violated: weight %.3e, energy %.3e relative "
                     "(tolerance %.0e)\n", n + 1, b.weight_rel_err, b.energy_rel_err,
                     SMX_CONSERVATION_TOL);
        }
        int done_steps = n + 1;
        int finished = 0;
        if (p->steps > 0 && done_steps >= p->steps) {
            finished = 1;
        } else if (p->steps == 0 && b.weight_out < p->auto_stop_weight * r->initial_weight) {
            r->stop_reason = STOP_WEIGHT_BELOW;
            finished = 1;
        } else if (p->steps == 0 && done_steps >= p->max_steps) {
            r->stop_reason = STOP_MAX_STEPS;
            finished = 1;
        }
        if (out && wants_snapshot(p, done_steps) && !(finished && p->snapshot_final) &&
            (rc = snapshot(be, ctx, out, g, host, done_steps, err)))
            break;
        double now = now_s(), elapsed = now - loop0;
        double eta = expected > done_steps ? elapsed / done_steps * (expected - done_steps) : 0.0;
        if (done_steps % every == 0 || finished || done_steps == 1)
            log_line(done_steps, front_mm, b.weight_out / r->initial_weight, elapsed * 1e3 / done_steps,
                     elapsed, eta, 0);
        else if (tty && now - last_progress > 0.2) {
            log_line(done_steps, front_mm, b.weight_out / r->initial_weight,
                     elapsed * 1e3 / done_steps, elapsed, eta, 1);
            last_progress = now;
        }
        if (finished)
            break;
    }
    run_result_phase(r, "steps", now_s() - loop0);
    /* An interrupted run still hands back its dose so far: the caller may keep
     * it as a partial result, marked incomplete. */
    int interrupted = rc == SMX_EXIT_INTERRUPTED;
    if (rc && !interrupted)
        goto done;

    t0 = now_s();
    if (!interrupted && out && p->snapshot_final &&
        (rc = snapshot(be, ctx, out, g, host, r->n_steps, err)))
        goto done;
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
    free(dose);
    sim_tables_free(&st);
    return rc;
}
