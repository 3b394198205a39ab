#include "run/scenario_runs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_access.h"

int scenario_runs_init(scenario_runs *sr, const plan *p, int divided, smx_error *err)
{
    const int n = plan_scenario_count(p);
    *sr = (scenario_runs){ 0 };
    sr->fig = calloc((size_t)n, sizeof *sr->fig);
    if (divided && (sr->rs = malloc((size_t)n * sizeof *sr->rs)))
        for (int k = 0; k < n; k++)
            run_result_init(&sr->rs[k]);
    if (!sr->fig || (divided && !sr->rs))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory for %d scenarios", n);
    return 0;
}

void scenario_runs_free(scenario_runs *sr, const plan *p)
{
    for (int k = 0; sr->rs && k < plan_scenario_count(p); k++)
        run_result_free(&sr->rs[k]);
    free(sr->rs);
    free(sr->fig);
    *sr = (scenario_runs){ 0 };
}

/* ---- the check ---- */

typedef struct check_ctx {
    par_field *f;
    int dry;
} check_ctx;

static int check_one(void *ctx, const run_scenario *sc, smx_error *err)
{
    check_ctx *c = ctx;
    const sim_media sm = run_scenario_media(sc);
    const sim_input in = { &sc->p, &sc->g, &sc->nominal->t, &sm };
    int rc = c->dry ? simulate_check(&in, err) : 0;
    if (rc)
        return plan_word_error(&sc->p, err);
    par_field_cost(c->f, sc->index, &sc->p, &sc->g, &sc->nominal->t);
    return 0;
}

int scenarios_check(const run_setup *s, par_field *f, int dry, smx_error *err)
{
    check_ctx c = { f, dry };
    return run_each_scenario(s, &(scenario_pass){ NULL, check_one, &c }, err);
}

/* ---- the transport ---- */

spot_progress *scenarios_progress_begin(spot_progress *sp, const par_job *job, const par_field *f,
                                        double now)
{
    if (f->n_scenarios <= 1 || f->n_spots <= 0)
        return NULL;
    const int a = f->bound[job->rank], b = f->bound[job->rank + 1];
    double work = 0.0;
    for (int k = a; k < b; k++)
        work += (double)f->cost[k];
    int here = b > a ? (b - 1) / f->n_spots - a / f->n_spots + 1 : 0;
    if (job->rank == 0)
        here = f->n_scenarios;
    const spot_progress_size size = { b - a, work, f->n_scenarios, here, job->size > 1 };
    spot_progress_begin(sp, &size, now);
    return sp;
}

static void log_scenario(const plan *p, int k)
{
    const plan_scenario sc = plan_scenario_at(p, k);
    smx_info("\nscenario %d of %d: range error %+g %%, shift %+g mm\n", k,
             plan_scenario_count(p) - 1, sc.range_error_percent, sc.shift_mm);
}

/* Scenario k's result, its total and rows complete: its figures, its dose
 * and rows written into the open result, its conservation counted. */
static int finish(output *out, const run_scenario *sc, const run_result *r, scenario_runs *sr,
                  smx_error *err)
{
    dose_figures *fig = &sr->fig[sc->index];
    if (dose_figures_of(&sc->g, r->dose_MeV, &sc->media, fig))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory working out the dose's figures");
    int rc =
        output_write_scenario(out, sc->index, &(output_run){ &sc->p, &sc->g, r }, &sc->media, err);
    if (!rc && r->conservation_violations) {
        sr->violations += r->conservation_violations;
        sr->max_weight_rel_err = fmax(sr->max_weight_rel_err, r->max_weight_rel_err);
        sr->max_energy_rel_err = fmax(sr->max_energy_rel_err, r->max_energy_rel_err);
    }
    return rc;
}

/* The scenario's set-up beyond its transport: its build and its run's
 * lookup tables and backend set-up. */
static double setup_time(const run_scenario *sc, const run_result *r)
{
    double s = sc->build_s;
    for (int i = 0; i < r->n_phases; i++)
        if (!strcmp(r->phase_name[i], "tables") || !strcmp(r->phase_name[i], "setup"))
            s += r->phase_s[i];
    return s;
}

static void log_setup(double seconds)
{
    smx_info("scenario set-up (build from the loaded plan, tables, backend): %.3f s\n", seconds);
}

/* A rank builds only the scenarios it has a share of (one process: all). */
static int has_share(void *ctx, int k)
{
    const scenario_job *c = ctx;
    const sim_part part = par_field_share(c->f, c->job->rank, k);
    return !c->sr->rs || part.total || part.spot_count > 0;
}

static int run_one(void *ctx, const run_scenario *sc, smx_error *err)
{
    const scenario_job *c = ctx;
    const int k = sc->index;
    const sim_media sm = run_scenario_media(sc);
    const sim_input in = { &sc->p, &sc->g, &sc->nominal->t, &sm };
    log_scenario(&sc->p, k);
    if (c->progress)
        spot_progress_scenario(c->progress, k);
    if (!c->sr->rs) { /* one process: the whole scenario, written at once */
        const sim_part whole = { 1, 0, sc->p.per_spot_dose ? plan_spot_count(&sc->p) : 0,
                                 c->progress };
        run_result r;
        run_result_init(&r);
        int rc = simulate_part(&in, sc->nominal->be, NULL, &whole, &r, err);
        if (!rc) {
            const double setup_s = setup_time(sc, &r);
            c->sr->setup_s += setup_s;
            log_setup(setup_s);
            rc = finish(c->out, sc, &r, c->sr, err);
        }
        run_result_free(&r);
        return rc ? plan_word_error(&sc->p, err) : 0;
    }
    /* This rank's share: rank 0 runs every scenario's total (as it runs the
     * nominal's), each rank its pairs' rows, kept until the gather, which
     * every rank reaches only after the agreement, so that a failure
     * anywhere never leaves a rank waiting in a gather. */
    sim_part part = par_field_share(c->f, c->job->rank, k);
    part.progress = c->progress;
    run_result *r = &c->sr->rs[k];
    int rc = simulate_part(&in, sc->nominal->be, NULL, &part, r, err);
    if (!rc) {
        par_field_ran(c->f, r);
        const double setup_s = setup_time(sc, r);
        c->sr->setup_s += setup_s;
        log_setup(setup_s);
    }
    /* The file's /let is the nominal's alone (docs/planning.md): a
     * scenario's LET rows are not written, so they do not wait or travel. */
    spot_dose_free(&r->per_spot_let);
    return rc ? plan_word_error(&sc->p, err) : 0;
}

int scenarios_run(const run_setup *s, const scenario_job *j, smx_error *err)
{
    return run_each_scenario(s, &(scenario_pass){ has_share, run_one, (void *)j }, err);
}

/* ---- the gather and writing (MPI) ---- */

int scenarios_write(const run_setup *s, const scenario_job *j, smx_error *err, int *agreed)
{
    const par_job *job = j->job;
    par_field *f = j->f;
    output *out = j->out;
    scenario_runs *sr = j->sr;
    const int n = plan_scenario_count(&s->p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        run_result *r = &sr->rs[k];
        if ((rc = par_gather_scenario(job, f, k, r, err)))
            break; /* every rank failed alike: rank 0 could not take the rows */
        if (job->rank == 0) {
            /* The scenario's grid and cells, built again from the set-up
             * (no disk), rather than every scenario's held at once. */
            run_scenario sc;
            rc = run_scenario_build(&sc, s, k, err);
            if (!rc && (rc = finish(out, &sc, r, sr, err)))
                run_scenario_error(&s->p, k, err);
            run_scenario_free(&sc);
        }
        run_result_free(r);
        run_result_init(r);
        rc = par_agree(job, rc, err);
        *agreed = rc != 0;
    }
    return rc;
}
