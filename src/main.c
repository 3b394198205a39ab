/* smx2d-sim: plan -> material tables -> grid -> backend -> step loop -> HDF5 result.
 * The whole flow of a run is run_plan() below; docs/architecture.md maps it to src/. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/sha256.h"
#include "base/test_pause.h"
#include "buildinfo.h"
#include "input/cli.h"
#include "input/plan.h"
#include "io/output.h"
#include "io/provenance.h"
#include "parallel/parallel.h"
#include "report/report.h"
#include "tools/bench.h"
#include "transport/run_setup.h"
#include "transport/simulate.h"

/* The first SIGINT/SIGTERM asks the run to stop at the next safe point (it
 * then removes its partial file and exits 130); a second one ends it at once,
 * and the next run reports the partial file it leaves. */
static void on_signal(int sig)
{
    if (smx_interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    smx_interrupted = 1;
}

static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* a write in progress completes */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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

static int fail(const smx_error *err)
{
    fprintf(stderr, "smx2d-sim: error: %s\n", err->msg);
    return err->code ? err->code : SMX_EXIT_RUNTIME;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
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

/* Input: the plan, the material it names, the grid it asks for, the media of
 * its cells, a backend (transport/run_setup.h). The output path is checked
 * before any work, and by the dry run too, which also builds what the run
 * builds before its first step, so that a plan it calls valid does not fail
 * at once. */
static run_setup_options setup_options(const cli *c, const par_job *job, int scenario)
{
    return (run_setup_options){ .plan_path = c->plan_path,
                                .sets = c->sets,
                                .n_sets = c->n_sets,
                                .media = 1,
                                .backend = 1,
                                .check_memory = 1,
                                .local_rank = job->local_rank,
                                .scenario = scenario };
}

/* Names scenario k in err's message ("scenario 2 (range +3.5 %, shift +0 mm):
 * ..."). smx_fail keeps the first error, so the code is cleared first. */
static int scenario_error(const plan *p, int k, smx_error *err)
{
    const plan_scenario sc = plan_scenario_at(p, k);
    plan_word_error(p, err);
    const smx_error inner = *err;
    err->code = 0;
    return smx_fail(err, inner.code, "scenario %d (range %+g %%, shift %+g mm): %s", k,
                    sc.range_error_percent, sc.shift_mm, inner.msg);
}

/* Scenarios 1.. of a robust plan (scenarios.*), each built as its run will
 * build it (its grid, media and tables), so that a plan the reader and the
 * dry run accept does not fail after hours of other scenarios. Every rank of
 * an MPI job builds each one here, which also gives the costs the job's
 * division of the (scenario, spot) pairs rests on (par_field_cost). */
static int check_scenarios(const cli *c, const par_job *job, const plan *p, par_field *f,
                           smx_error *err)
{
    const int n = plan_scenario_count(p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        run_setup s;
        run_setup_options o = setup_options(c, job, k);
        o.backend = 0;
        rc = run_setup_init(&s, &o, err);
        const sim_media sm = run_setup_media(&s);
        if (!rc && c->dry_run)
            rc = simulate_check(&s.p, &s.g, &s.t, &sm, err);
        if (!rc)
            par_field_cost(f, k, &s.p, &s.g, &s.t);
        if (rc)
            scenario_error(p, k, err);
        run_setup_free(&s);
    }
    return rc;
}

static int read_input(const cli *c, const par_job *job, run_setup *s, par_field *f, smx_error *err)
{
    const run_setup_options o = setup_options(c, job, 0);
    int rc = run_setup_init(s, &o, err);
    if (!rc && !(rc = par_field_init(job, &s->p, f, err)))
        par_field_cost(f, 0, &s->p, &s->g, &s->t);
    if (!rc)
        rc = check_scenarios(c, job, &s->p, f, err);
    if (!rc && job->rank == 0 && (rc = output_check_target(s->p.output_file, s->p.overwrite, err)))
        rc = plan_blame_key(&s->p, "output.file", rc, err);
    const sim_media sm = run_setup_media(s);
    if (!rc && c->dry_run)
        rc = simulate_check(&s->p, &s->g, &s->t, &sm, err);
    if (rc)
        plan_word_error(&s->p, err);
    return rc ? rc : check_interrupt("while reading the input", err);
}

/* Rank 0 opens the result file under a temporary name and writes what the
 * run starts from: plan, grid, tables, medium map. */
static int open_result(const par_job *job, const run_setup *s, output **out, provenance *pv,
                       smx_error *err)
{
    int rc;
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

/* Result: dose, tallies and provenance written, then renamed into place (*out
 * is NULL then); an interrupt until the rename leaves nothing under the final
 * name. Then the summary, and a failure for a step that broke conservation. */
/* The dose's figures (R80, peak, width), worked out once for the file and the summary. */
static int figures_of(const run_setup *s, const run_result *r, dose_figures *f, smx_error *err)
{
    if (dose_figures_of(&s->g, r->dose_MeV, &s->media, f))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory working out the dose's figures");
    return 0;
}

/* What the scenarios of a robust plan leave for the end: each one's figures
 * (fig[0] the nominal's, filled by write_result) and their conservation. */
typedef struct scenario_runs {
    dose_figures *fig; /* [plan_scenario_count] */
    int violations; /* steps that broke conservation, over every scenario 1.. */
    double max_weight_rel_err, max_energy_rel_err;
} scenario_runs;

/* Scenario k's result, its total and rows complete: its figures, its dose
 * and rows written into the open result, its conservation counted. */
static int finish_scenario(output *out, int k, const run_setup *s, const run_result *r,
                           scenario_runs *sr, smx_error *err)
{
    int rc = figures_of(s, r, &sr->fig[k], err);
    if (!rc)
        rc = output_write_scenario(out, k, &s->p, &s->g, &s->media, r, err);
    if (!rc && r->conservation_violations) {
        sr->violations += r->conservation_violations;
        sr->max_weight_rel_err = fmax(sr->max_weight_rel_err, r->max_weight_rel_err);
        sr->max_energy_rel_err = fmax(sr->max_energy_rel_err, r->max_energy_rel_err);
    }
    return rc;
}

static void log_scenario(const plan *p, int k)
{
    const plan_scenario sc = plan_scenario_at(p, k);
    smx_info("\nscenario %d of %d: range error %+g %%, shift %+g mm\n", k,
             plan_scenario_count(p) - 1, sc.range_error_percent, sc.shift_mm);
}

/* Scenarios 1.. of a robust plan (scenarios.*; scenario 0, the nominal, is
 * the run itself) in one process: each its own set-up (densities, beam
 * positions, grid, media, tables) on the same kind of backend, the whole
 * field and its spots, written into the open result as soon as it is done,
 * and freed before the next. */
static int run_scenarios(const cli *c, const par_job *job, const plan *p, output *out,
                         scenario_runs *sr, smx_error *err)
{
    const int n = plan_scenario_count(p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        run_setup s;
        run_result r;
        run_result_init(&r);
        const run_setup_options o = setup_options(c, job, k);
        log_scenario(p, k);
        rc = run_setup_init(&s, &o, err);
        const sim_media sm = run_setup_media(&s);
        if (!rc)
            rc = simulate_part(&s.p, &s.g, &s.t, &sm, s.be, NULL, NULL, &r, err);
        if (!rc)
            rc = finish_scenario(out, k, &s, &r, sr, err);
        run_result_free(&r);
        run_setup_free(&s);
    }
    return rc;
}

/* Scenarios 1.. in an MPI job of several ranks (docs/mpi.md): this rank's
 * share of each, run now; written after the agreement by write_scenarios.
 * Rank 0 runs every scenario's total (as it runs the nominal's), each rank
 * its pairs' rows (par_field_share). A rank builds only the scenarios it has
 * a share of, on its backend, and frees each before the next: rs[k] keeps the
 * result (rank 0: the total and its rows; others: their rows) until the
 * gather, which every rank reaches only after the agreement, so that a
 * failure anywhere never leaves a rank waiting in a gather. */
static int run_scenario_shares(const cli *c, const par_job *job, const plan *p, par_field *f,
                               run_result *rs, smx_error *err)
{
    const int n = plan_scenario_count(p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        const sim_part part = par_field_share(f, job->rank, k);
        if (!part.total && part.spot_count == 0)
            continue;
        log_scenario(p, k);
        run_setup s;
        const run_setup_options o = setup_options(c, job, k);
        rc = run_setup_init(&s, &o, err);
        const sim_media sm = run_setup_media(&s);
        if (!rc)
            rc = simulate_part(&s.p, &s.g, &s.t, &sm, s.be, NULL, &part, &rs[k], err);
        if (!rc)
            par_field_ran(f, &rs[k]);
        /* The file's /let is the nominal's alone (docs/planning.md): a
         * scenario's LET rows are not written, so they do not wait or travel. */
        spot_dose_free(&rs[k].per_spot_let);
        if (rc && rc != SMX_EXIT_INTERRUPTED)
            scenario_error(p, k, err);
        run_setup_free(&s);
    }
    return rc;
}

/* After the agreement: scenario by scenario, every rank's rows of it to rank
 * 0 (par_gather_scenario), which writes it as a single process does. The
 * set-up that writing needs (the scenario's grid and the densities of its
 * cells) was freed after the run; rank 0 builds it again without a backend,
 * as check_scenarios did, rather than hold every scenario's tables at once.
 * Each scenario ends with an agreement, so that rank 0's failure to write one
 * stops every rank before the next gather. */
static int write_scenarios(const cli *c, const par_job *job, const plan *p, par_field *f,
                           output *out, run_result *rs, scenario_runs *sr, smx_error *err,
                           int *agreed)
{
    const int n = plan_scenario_count(p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        rc = par_gather_scenario(job, f, k, p->per_spot_threshold, &rs[k], err);
        if (rc)
            break; /* every rank failed alike: rank 0 could not take the rows */
        if (job->rank == 0) {
            run_setup s;
            run_setup_options o = setup_options(c, job, k);
            o.backend = 0;
            rc = run_setup_init(&s, &o, err);
            if (!rc)
                rc = finish_scenario(out, k, &s, &rs[k], sr, err);
            run_setup_free(&s);
        }
        run_result_free(&rs[k]);
        run_result_init(&rs[k]);
        rc = agree(job, rc, err, agreed);
    }
    return rc;
}

static int write_result(output **out, const run_setup *s, run_result *r, const provenance *pv,
                        scenario_runs *sr, smx_error *err)
{
    smx_test_pause("writing", &smx_interrupted);
    const double t_out = now_s();
    dose_figures *f = &sr->fig[0];
    int rc;
    if ((rc = figures_of(s, r, f, err)) ||
        (rc = output_write_result(*out, &s->p, &s->g, r, f, pv, err)) ||
        (rc = output_write_scenario_index(*out, &s->p, err)) ||
        (rc = check_interrupt("while writing the result", err)) || (rc = output_commit(*out, err)))
        return rc;
    *out = NULL;
    run_result_phase(r, "output", now_s() - t_out);
    report_summary(r, f);
    report_scenarios(&s->p, sr->fig);
    const int bad = r->conservation_violations + sr->violations;
    if (!bad)
        return 0;
    return smx_fail(
        err, SMX_EXIT_RUNTIME,
        "conservation violated in %d step%s%s (max weight %.3e, energy %.3e; tolerance %.0e); the "
        "result was written and records them",
        bad, bad == 1 ? "" : "s", sr->violations ? ", the scenarios' included" : "",
        fmax(r->max_weight_rel_err, sr->max_weight_rel_err),
        fmax(r->max_energy_rel_err, sr->max_energy_rel_err), SMX_CONSERVATION_TOL);
}

/* The dry run's report: what the plan would do, and on which backend. */
static void report_dry(const run_setup *s)
{
    report_dry_run(&s->p, &s->g, &s->t, &s->media, s->mtab.mt, s->be, &s->gi,
                   simulate_expected_steps(&s->p, &s->g, &s->t));
    report_scenarios_planned(&s->p);
    report_backend(&s->p, &s->gi, s->be, 1);
}

/* Only rank 0 prints the error. After an agreement err names the failed rank;
 * an error rank 0 alone met (writing) gets its rank and host here. */
static int print_error(const par_job *job, int rc, int agreed, smx_error *err)
{
    if (!rc || rc == SMX_EXIT_USAGE || job->rank != 0)
        return rc;
    if (!agreed)
        par_tag_error(job, err);
    return fail(err);
}

static int run_plan(const cli *c, const par_job *job, int argc, char **argv)
{
    const double t_start = now_s();
    const int writer = job->rank == 0;
    provenance pv;
    provenance_init(&pv, argc, argv);
    run_setup s = { 0 };
    run_result r;
    run_result_init(&r);
    par_field field = { 0 };
    scenario_runs sr = { 0 };
    run_result *rs = NULL; /* [scenarios]: this rank's share of each, when divided */
    smx_error err = { 0 };
    output *out = NULL;
    int agreed = 0; /* err came from par_agree and names its rank */
    par_set_cleanup(abort_output, &out);
    catch_interrupts();

    /* An MPI job (docs/mpi.md): every rank reads the input; rank 0 alone
     * writes the result file. Until the result is gathered, a failure goes to
     * the next agreement, which every rank reaches. */
    int rc = read_input(c, job, &s, &field, &err);
    if (!rc && !c->dry_run)
        rc = open_result(job, &s, &out, &pv, &err);
    if ((rc = agree(job, rc, &err, &agreed)))
        goto end;
    if (c->dry_run) {
        if (writer)
            report_dry(&s);
        goto end;
    }
    run_result_phase(&r, "input", now_s() - t_start);
    const int n_scen = plan_scenario_count(&s.p);
    /* Scenarios divided over several ranks keep their results until the gather. */
    const int divided = n_scen > 1 && job->size > 1;
    sr.fig = calloc((size_t)n_scen, sizeof *sr.fig);
    if (divided && (rs = malloc((size_t)n_scen * sizeof *rs)))
        for (int k = 0; k < n_scen; k++)
            run_result_init(&rs[k]);
    if (!sr.fig || (divided && !rs)) {
        rc = smx_fail(&err, SMX_EXIT_RUNTIME, "out of memory for %d scenarios",
                      plan_scenario_count(&s.p));
        goto end;
    }

    /* Transport: lookup tables, initial psi, the step loop on the backend;
     * in an MPI job, this rank's share: rank 0 the field's total dose, each
     * rank its block of the per-spot rows (src/parallel/spot_block.c). */
    smx_info("smx2d-sim %s: %s -> %s\n", SMX_VERSION, s.p.path, s.p.output_file);
    report_backend(&s.p, &s.gi, s.be, 0);
    const snapshot_sink snaps = { write_snapshot, out };
    const sim_media sm = run_setup_media(&s);
    if (!(rc = par_divide_field(job, &field, &err)) && (writer || field.part.spot_count > 0)) {
        rc = simulate_part(&s.p, &s.g, &s.t, &sm, s.be, writer ? &snaps : NULL, &field.part, &r,
                           &err);
        if (!rc)
            par_field_ran(&field, &r);
        else
            plan_word_error(&s.p, &err); /* before the agreement, which sends the message alone */
    }
    dose_figures fig;
    if (writer && rc == SMX_EXIT_INTERRUPTED && s.p.keep_partial && r.dose_MeV &&
        !figures_of(&s, &r, &fig, &(smx_error){ 0 }))
        output_write_result(out, &s.p, &s.g, &r, &fig, &pv, &(smx_error){ 0 });
    double t_scen = now_s();
    if (!rc && divided)
        rc = run_scenario_shares(c, job, &s.p, &field, rs, &err);
    double scen_s = now_s() - t_scen;
    provenance_finish(&pv);
    /* Every rank's rows and facts to rank 0 (nothing to do in one process). */
    const double t_wait = now_s();
    if ((rc = agree(job, rc, &err, &agreed)) ||
        (rc = par_gather_field(job, &field, s.p.per_spot_threshold, t_wait, &pv, &r, &err)))
        goto end;
    t_scen = now_s();
    if (divided && (rc = write_scenarios(c, job, &s.p, &field, out, rs, &sr, &err, &agreed)))
        goto end;
    if (!writer)
        goto end;
    if (n_scen > 1 && !divided && (rc = run_scenarios(c, job, &s.p, out, &sr, &err)))
        goto end;
    if (n_scen > 1)
        run_result_phase(&r, "scenarios", scen_s + now_s() - t_scen);
    rc = write_result(&out, &s, &r, &pv, &sr, &err);
end:
    if (out)
        output_abort(out, s.p.keep_partial);
    par_set_cleanup(NULL, NULL);
    plan_word_error(&s.p, &err);
    rc = print_error(job, rc, agreed, &err);
    par_field_free(&field);
    for (int k = 0; rs && k < plan_scenario_count(&s.p); k++)
        run_result_free(&rs[k]);
    free(rs);
    free(sr.fig);
    provenance_free(&pv);
    run_result_free(&r);
    run_setup_free(&s);
    return rc;
}

/* --bench: a peer of the run, on the benchmark's fixed grids (BENCHMARKS.md)
 * instead of a plan. */
static int run_bench(const cli *c)
{
    bench_options o = { c->bench_grids, c->bench_steps, c->bench_variants,
                        c->bench_json,  c->sets,        c->n_sets };
    smx_error err = { 0 };
    return bench_main(&o, &err) ? fail(&err) : 0;
}

int main(int argc, char **argv)
{
    cli c;
    int rc = cli_parse(&c, argc, argv);
    if (rc)
        return rc;
    if (c.help)
        cli_usage(stdout);
    else if (c.version) {
        report_version();
        char mpi[256];
        par_library_version(mpi, sizeof mpi);
        if (strcmp(mpi, "none") != 0)
            printf("  MPI: %s\n", mpi);
    } else if (c.print_schema)
        plan_write_json_schema(stdout);
    else if (c.print_reference)
        plan_write_reference(stdout);
    else {
        smx_quiet = c.quiet;
        if (c.bench)
            return run_bench(&c);
        par_job job;
        smx_error err = { 0 };
        if ((rc = par_init(&job, &argc, &argv, &err)))
            return fail(&err);
        if (job.rank > 0) {
            smx_quiet = 1; /* the run's log is rank 0's; warnings say whose they are */
            snprintf(smx_warn_tag, sizeof smx_warn_tag, "rank %d of %d on %s: ", job.rank, job.size,
                     job.host);
        }
        rc = run_plan(&c, &job, argc, argv);
        par_finalize();
        return rc;
    }
    return 0;
}
