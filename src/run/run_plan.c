#include "run/run_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "base/test_hooks.h"
#include "buildinfo.h"
#include "io/output.h"
#include "io/provenance.h"
#include "report/report.h"
#include "run/run_setup.h"
#include "run/scenario_runs.h"
#include "transport/stepper.h"

int run_print_error(const smx_error *err)
{
    fprintf(stderr, "smx2d-sim: error: %s\n", err->msg);
    return err->code ? err->code : SMX_EXIT_RUNTIME;
}

/* Between phases: an interrupt that came during the last one ends the run. */
static int check_interrupt(const char *when, smx_error *err)
{
    return smx_interrupted ? smx_fail(err, SMX_EXIT_INTERRUPTED, "interrupted %s", when) : 0;
}

static int write_snapshot(void *out, const grid *g, int step, const float *psi, smx_error *err)
{
    return output_write_snapshot(out, g, step, psi, err);
}

/* MPI's last resort (an MPI call failed, src/parallel/): remove rank 0's temporary file. */
static void abort_output(void *out)
{
    output **o = out;
    if (*o)
        output_abort(*o, 0);
    *o = NULL;
}

/* par_agree: every rank's rc to every rank; *agreed: err names the failed rank. */
static int agree(const par_job *job, int rc, smx_error *err, int *agreed)
{
    rc = par_agree(job, rc, err);
    *agreed = rc != 0;
    return rc;
}

/* output.beyond_grid: fail, for a beam predicted to reach beyond the grid. */
static int refuse_beyond_grid(const plan *p, smx_error *err)
{
    if (p->beyond_grid != BEYOND_GRID_FAIL)
        return 0;
    return plan_fail_at(p, err, "output.beyond_grid",
                        "fail: the beam reaches beyond the grid (the warnings above); expected a "
                        "grid that holds it (grid.space.nz, grid.space.nx) or warn");
}

/* Input: the plan, the material it names, the grid it asks for, the media of
 * its cells, a backend (run/run_setup.h), loaded once; each scenario is built
 * from it and checked, as its run will build it. The output path is checked
 * before any work, and by the dry run too, which also builds what the run
 * builds before its first step, so that a plan it calls valid does not fail
 * at once. */
static int read_input(const cli *c, const par_job *job, run_setup *s, par_field *f, smx_error *err)
{
    const run_setup_options o = { .plan_path = c->plan_path,
                                  .sets = c->sets,
                                  .n_sets = c->n_sets,
                                  .media = 1,
                                  .backend = 1,
                                  .check_memory = 1,
                                  .local_rank = job->local_rank };
    int rc = run_setup_init(s, &o, err);
    if (!rc && !(rc = par_field_init(job, &s->p, f, err)))
        par_field_cost(f, 0, &s->p, &s->g, &s->t);
    if (!rc)
        rc = scenarios_check(s, f, c->dry_run, err);
    /* A dry run writes nothing: an existing result is what the run would
     * refuse, which report_dry says; a path the run cannot write is an error. */
    const int overwrite = s->p.overwrite || c->dry_run;
    if (!rc && job->rank == 0 && (rc = output_check_target(s->p.output_file, overwrite, err)))
        rc = plan_blame_key(&s->p, "output.file", rc, err);
    const sim_media sm = run_setup_media(s);
    const sim_input in = { &s->p, &s->g, &s->t, &sm };
    if (!rc && c->dry_run && (rc = simulate_check(&in, err)))
        plan_word_error(&s->p, err);
    /* Said first, before any work (the dry run says it in its report). */
    if (!rc && !c->dry_run && job->rank == 0 &&
        report_reach_warnings(&s->p, &s->g, &s->media, s->mtab.mt))
        rc = refuse_beyond_grid(&s->p, err);
    return rc ? rc : check_interrupt("while reading the input", err);
}

/* Rank 0 opens the result file under a temporary name and writes what the
 * run starts from: plan, grid, tables, medium map. */
static int open_result(const par_job *job, const run_setup *s, output **out, provenance *pv,
                       smx_error *err)
{
    int rc;
    provenance_set_driver(pv, &s->gi);
    if (job->rank == 0) {
        sha256_hex(s->p.yaml_text, s->p.yaml_len, pv->plan_sha256);
        memcpy(pv->table_sha256, s->t.sha256, sizeof pv->table_sha256);
        if ((rc = output_open(out, s->p.output_file, s->p.overwrite, err)) ||
            (rc = output_write_setup(*out, &s->p, &s->g, &s->t, err)) ||
            (rc = output_write_geometry(*out, &s->media, err)))
            return rc;
    }
    smx_test_pause("setup", &smx_interrupted);
    return check_interrupt("during setup", err);
}

/* The dose's figures (R80, peak, width), worked out once for the file and the summary. */
static int figures_of(const run_setup *s, const run_result *r, dose_figures *f, smx_error *err)
{
    if (dose_figures_of(&s->g, r->dose_MeV, &s->media, f))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory working out the dose's figures");
    return 0;
}

/* output.beyond_grid: fail, for a dose that reached the grid's edges (the
 * summary's warnings): the result is written, the exit status says so. */
static int beyond_grid_after(const run_setup *s, const run_result *r, const dose_figures *f,
                             smx_error *err)
{
    char warn[1024];
    if (s->p.beyond_grid != BEYOND_GRID_FAIL ||
        !summary_warnings(f, run_leak_fraction(r), warn, sizeof warn))
        return 0;
    return smx_fail(err, SMX_EXIT_RUNTIME,
                    "the beam reached beyond the grid (output.beyond_grid: fail; the summary's "
                    "warning above); the result was written");
}

/* Result: dose, tallies and provenance written, then renamed into place (*out
 * is NULL then); an interrupt until the rename leaves nothing under the final
 * name. Then the summary, and a failure for a step that broke conservation. */
static int write_result(output **out, const run_setup *s, run_result *r, const provenance *pv,
                        scenario_runs *sr, smx_error *err)
{
    smx_test_pause("writing", &smx_interrupted);
    const double t_out = stepper_now_s();
    dose_figures *f = &sr->fig[0];
    int rc;
    if ((rc = figures_of(s, r, f, err)) ||
        (rc = output_write_result(*out, &(output_run){ &s->p, &s->g, r }, f, pv, err)) ||
        (rc = output_write_scenario_index(*out, &s->p, err)) ||
        (rc = check_interrupt("while writing the result", err)) || (rc = output_commit(*out, err)))
        return rc;
    *out = NULL;
    run_result_phase(r, "output", stepper_now_s() - t_out);
    report_summary(r, f);
    report_scenarios(&s->p, sr->fig);
    const int bad = r->conservation_violations + sr->violations;
    if (!bad)
        return beyond_grid_after(s, r, f, err);
    return smx_fail(
        err, SMX_EXIT_RUNTIME,
        "conservation violated in %d step%s%s (max weight %.3e, energy %.3e; tolerance %.0e); the "
        "result was written and records them",
        bad, bad == 1 ? "" : "s", sr->violations ? ", the scenarios' included" : "",
        fmax(r->max_weight_rel_err, sr->max_weight_rel_err),
        fmax(r->max_energy_rel_err, sr->max_energy_rel_err), SMX_CONSERVATION_TOL);
}

/* The dry run's report: what the plan would do, and on which backend. */
static int report_dry(const run_setup *s, smx_error *err)
{
    const dry_run d = { .p = &s->p,
                        .g = &s->g,
                        .t = &s->t,
                        .media = &s->media,
                        .mt = s->mtab.mt,
                        .be = s->be,
                        .gi = &s->gi,
                        .expected = simulate_expected_steps(&s->p, &s->g, &s->t) };
    const int beyond = report_dry_run(&d);
    report_scenarios_planned(&s->p);
    report_backend(&s->p, &s->gi, s->be, 1);
    if (!s->p.overwrite && access(s->p.output_file, F_OK) == 0)
        smx_warn("%s exists: the run will refuse to replace it (set output.overwrite: true or "
                 "pass --overwrite)\n",
                 s->p.output_file);
    return beyond ? refuse_beyond_grid(&s->p, err) : 0;
}

/* Only rank 0 prints the error. After an agreement err names the failed rank;
 * an error rank 0 alone met (writing) gets its rank and host here. */
static int print_error(const par_job *job, int rc, int agreed, smx_error *err)
{
    if (!rc || rc == SMX_EXIT_USAGE || job->rank != 0)
        return rc;
    if (!agreed)
        par_tag_error(job, err);
    return run_print_error(err);
}

/* What a run holds from its input to its end. */
typedef struct run_state {
    run_setup s;
    run_result r;
    par_field field;
    scenario_runs sr;
    provenance pv;
    output *out;
    spot_progress progress_job;
    spot_progress *progress; /* the (scenario, spot) pairs' count (NULL: none) */
    smx_error err;
    int agreed; /* err came from par_agree and names its rank */
} run_state;

/* Transport: lookup tables, initial psi, the step loop on the backend; in an
 * MPI job, this rank's share: rank 0 the field's total dose, each rank its
 * block of the per-spot rows (src/parallel/spot_block.c); then this rank's
 * share of the scenarios. Returns the time the scenarios took. */
static int transport(run_state *st, const par_job *job, double *scen_s)
{
    const int writer = job->rank == 0;
    run_setup *s = &st->s;
    smx_info("smx2d-sim %s: %s -> %s\n", SMX_VERSION, s->p.path, s->p.output_file);
    report_backend(&s->p, &s->gi, s->be, 0);
    const snapshot_sink snaps = { write_snapshot, st->out };
    const sim_media sm = run_setup_media(s);
    const sim_input in = { &s->p, &s->g, &s->t, &sm };
    int rc = par_divide_field(job, &st->field, &st->err);
    /* One count over every scenario's pairs, from the nominal's start. */
    if (!rc && (st->progress =
                    scenarios_progress_begin(&st->progress_job, job, &st->field, stepper_now_s())))
        spot_progress_scenario(st->progress, 0);
    sim_part part = st->field.part;
    part.progress = st->progress;
    if (!rc && (writer || part.spot_count > 0)) {
        rc = simulate_part(&in, s->be, writer ? &snaps : NULL, &part, &st->r, &st->err);
        if (rc)
            plan_word_error(&s->p, &st->err);
        else
            par_field_ran(&st->field, &st->r);
    }
    dose_figures fig;
    if (writer && rc == SMX_EXIT_INTERRUPTED && s->p.keep_partial && st->r.dose_MeV &&
        !figures_of(s, &st->r, &fig, &(smx_error){ 0 }))
        output_write_result(st->out, &(output_run){ &s->p, &s->g, &st->r }, &fig, &st->pv,
                            &(smx_error){ 0 });
    const double t_scen = stepper_now_s();
    if (!rc && st->sr.rs)
        rc = scenarios_run(s, &(scenario_job){ job, &st->field, NULL, &st->sr, st->progress },
                           &st->err);
    *scen_s = stepper_now_s() - t_scen;
    return rc;
}

/* After the transport: every rank's rows and facts to rank 0 (nothing to do
 * in one process), the scenarios written, and rank 0's result. */
static int finish_run(run_state *st, const par_job *job, int rc, double scen_s)
{
    run_setup *s = &st->s;
    const int n_scen = plan_scenario_count(&s->p);
    provenance_finish(&st->pv);
    const double t_wait = stepper_now_s();
    if ((rc = agree(job, rc, &st->err, &st->agreed)) ||
        (rc = par_gather_field(job, &st->field, t_wait, &st->pv, &st->r, &st->err)))
        return rc;
    const double t_scen = stepper_now_s();
    const scenario_job sj = { job, &st->field, st->out, &st->sr, st->progress };
    if (st->sr.rs && (rc = scenarios_write(s, &sj, &st->err, &st->agreed)))
        return rc;
    if (job->rank != 0)
        return 0;
    if (n_scen > 1 && !st->sr.rs && (rc = scenarios_run(s, &sj, &st->err)))
        return rc;
    /* The scenarios' set-up apart from their transport: what a scenario
     * costs beyond its steps (docs/planning.md). */
    if (n_scen > 1) {
        run_result_phase(&st->r, "scenario setup", st->sr.setup_s);
        run_result_phase(&st->r, "scenarios", scen_s + stepper_now_s() - t_scen - st->sr.setup_s);
    }
    return write_result(&st->out, s, &st->r, &st->pv, &st->sr, &st->err);
}

static int run_from_input(run_state *st, const cli *c, const par_job *job, double t_start)
{
    /* An MPI job (docs/mpi.md): every rank reads the input; rank 0 alone
     * writes the result file. Until the result is gathered, a failure goes to
     * the next agreement, which every rank reaches. */
    int rc = read_input(c, job, &st->s, &st->field, &st->err);
    if (!rc && !c->dry_run)
        rc = open_result(job, &st->s, &st->out, &st->pv, &st->err);
    if ((rc = agree(job, rc, &st->err, &st->agreed)))
        return rc;
    if (c->dry_run) {
        return job->rank == 0 ? report_dry(&st->s, &st->err) : 0;
    }
    run_result_phase(&st->r, "input", stepper_now_s() - t_start);
    /* Scenarios divided over several ranks keep their results until the gather. */
    const int divided = plan_scenario_count(&st->s.p) > 1 && job->size > 1;
    if ((rc = scenario_runs_init(&st->sr, &st->s.p, divided, &st->err)))
        return rc;
    double scen_s = 0.0;
    rc = transport(st, job, &scen_s);
    return finish_run(st, job, rc, scen_s);
}

int run_plan(const cli *c, const par_job *job, int argc, char **argv)
{
    const double t_start = stepper_now_s();
    run_state st = { 0 };
    provenance_init(&st.pv, argc, argv);
    run_result_init(&st.r);
    par_set_cleanup(abort_output, &st.out);
    int rc = run_from_input(&st, c, job, t_start);
    if (st.out)
        output_abort(st.out, st.s.p.keep_partial);
    par_set_cleanup(NULL, NULL);
    if (rc)
        plan_word_error(&st.s.p, &st.err); /* any error at a key not yet worded */
    rc = print_error(job, rc, st.agreed, &st.err);
    par_field_free(&st.field);
    scenario_runs_free(&st.sr, &st.s.p);
    provenance_free(&st.pv);
    run_result_free(&st.r);
    run_setup_free(&st.s);
    return rc;
}
