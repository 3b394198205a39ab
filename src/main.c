/* smx2d-sim: plan -> material tables -> grid -> backend -> step loop -> HDF5 result.
 * The whole flow of a run is run_plan() below; docs/architecture.md maps it to src/. */
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
#include "physics/grid.h"
#include "physics/medium_plan.h"
#include "physics/medium_tables.h"
#include "physics/tables.h"
#include "report/report.h"
#include "tools/bench.h"
#include "transport/backend_select.h"
#include "transport/device_query.h"
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

/* Prefixes err with the place the plan gave `key` (file:line:col or --set). */
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

/* What /mpi records as this rank's device. */
static void describe_device(const run_result *r, char *out, size_t cap)
{
    if (!r->backend_name[0])
        snprintf(out, cap, "none (no per-spot rows to compute)");
    else if (strcmp(r->backend_name, "cuda") == 0)
        snprintf(out, cap, "cuda device %d: %.150s", gpu_selected(), r->device_name);
    else
        snprintf(out, cap, "%.24s: %.150s", r->backend_name, r->device_name);
}

/* An MPI job's division of the field's per-spot rows (docs/mpi.md):
 * contiguous blocks in spot order, of about equal cost in steps (a spot's
 * expected steps; rank 0 also runs the total, which costs about what the
 * field's deepest spot does). bound: job->size + 1 entries, or NULL when out
 * of memory. Rank 0 logs it. */
static int *divide_field(const par_job *job, const plan *p, const grid *g, const tables *t, int n_spots)
{
    int *bound = malloc((size_t)(job->size + 1) * sizeof *bound);
    int64_t *cost = malloc((size_t)(n_spots > 0 ? n_spots : 1) * sizeof *cost);
    if (!bound || !cost) {
        free(bound);
        free(cost);
        return NULL;
    }
    for (int k = 0; k < n_spots; k++)
        cost[k] = simulate_spot_steps(p, g, t, plan_spot_at(p, k).energy_MeV);
    par_spot_blocks(n_spots, cost, simulate_expected_steps(p, g, t), job->size, bound);
    free(cost);
    if (job->size == 1)
        return bound;
    if (n_spots == 0) {
        smx_info("MPI: %d ranks; this field has no per-spot dose (output.per_spot_dose), so rank 0 runs it "
                 "alone and the other ranks have nothing to do\n", job->size);
        return bound;
    }
    int least = n_spots, most = 0;
    for (int r = 0; r < job->size; r++) {
        int c = bound[r + 1] - bound[r];
        least = c < least ? c : least;
        most = c > most ? c : most;
    }
    smx_info("MPI: %d ranks; rank 0 runs the field's total dose; the %d per-spot rows are divided in contiguous "
             "blocks of about equal steps, %d to %d spots (rank 0: %d)\n", job->size, n_spots, least, most,
             bound[1]);
    return bound;
}

static int run_plan(const cli *c, const par_job *job, int argc, char **argv)
{
    const double t_start = now_s();
    provenance pv;
    provenance_init(&pv, argc, argv);
    plan p = {0};
    tables t = {0};
    grid g = {0};
    medium_map media = {0};
    medium_tables mtab = {0};
    run_result r;
    run_result_init(&r);
    smx_error err = {0};
    output *out = NULL;
    gpu_info gi;
    const backend_ops *be = NULL;
    int rc;
    /* An MPI job (docs/mpi.md): every rank reads the input; rank 0 alone
     * writes the result file and runs the field's total dose; the per-spot
     * rows are divided in blocks. Until the result is gathered, a failure
     * goes to the next agreement, which every rank reaches. */
    const int writer = job->rank == 0;
    int n_spots = 0, first = 0, count = 0, *bound = NULL;
    int agreed = 0; /* err came from par_agree and names its rank */
    par_set_cleanup(abort_output, &out);

    catch_interrupts();
    /* Input: the plan, the material it names, the grid it asks for, a backend. */
    if ((rc = plan_load(&p, c->plan_path, c->sets, c->n_sets, &err)))
        goto agree_input;
    smx_test_pause("input", &smx_interrupted);
    if ((rc = tables_load(&t, p.table_path, &err))) {
        rc = plan_blame_key(&p, "material.table_file", rc, &err);
        goto agree_input;
    }
    if ((rc = grid_build(&g, &p, &t, &err)))
        goto agree_input;
    /* What each cell is made of (docs/geometry.md): the one map the run
     * transports, the result file records and the dry run lists. */
    if ((rc = medium_map_build(&media, &p, &g, &err)) ||
        (rc = medium_tables_load(&mtab, &media, &t, &err)))
        goto agree_input;
    gpu_query(&gi);
    /* The ranks of a host share its GPUs in turn (0 without MPI). */
    if (gi.count > 0 && job->local_rank % gi.count != 0) {
        gpu_select(job->local_rank % gi.count);
        gpu_query(&gi);
    }
    if ((rc = backend_choose(&p, &gi, &be, &err)) ||
        (rc = backend_check_host_memory(&p, &g, be, &err)))
        goto agree_input;
    /* The output path is checked before any work, and by the dry run too. */
    if (writer && (rc = output_check_target(p.output_file, p.overwrite, &err))) {
        rc = plan_blame_key(&p, "output.file", rc, &err);
        goto agree_input;
    }
    /* The dry run builds what the run builds before its first step, so that
     * a plan it calls valid does not fail at once. */
    if (c->dry_run && (rc = simulate_check(&p, &g, &t, &(sim_media){&media, mtab.mt}, &err)))
        goto agree_input;
    if ((rc = check_interrupt("while reading the input", &err)) || c->dry_run)
        goto agree_input;

    if (writer) {
        sha256_hex(p.yaml_text, p.yaml_len, pv.plan_sha256);
        memcpy(pv.table_sha256, t.sha256, sizeof pv.table_sha256);
        if ((rc = output_open(&out, p.output_file, p.overwrite, &err)) ||
            (rc = output_write_setup(out, &p, &g, &t, &err)) ||
            (rc = output_write_geometry(out, &media, &err)))
            goto agree_input;
    }
    smx_test_pause("setup", &smx_interrupted);
    rc = check_interrupt("during setup", &err);
agree_input:
    if ((rc = par_agree(job, rc, &err))) {
        agreed = 1;
        goto end;
    }
    if (c->dry_run) {
        if (writer) {
            report_dry_run(&p, &g, &t, &media, mtab.mt, be, &gi, simulate_expected_steps(&p, &g, &t));
            report_backend(&p, &gi, be, 1);
        }
        goto end;
    }

    run_result_phase(&r, "input", now_s() - t_start);

    /* Transport: lookup tables, initial psi, the step loop on the backend;
     * in an MPI job, this rank's share. */
    smx_info("smx2d-sim %s: %s -> %s\n", SMX_VERSION, p.path, p.output_file);
    report_backend(&p, &gi, be, 0);
    n_spots = p.per_spot_dose ? plan_spot_count(&p) : 0;
    if (!(bound = divide_field(job, &p, &g, &t, n_spots)))
        rc = smx_fail(&err, SMX_EXIT_RUNTIME, "out of host memory dividing %d spots over %d ranks", n_spots,
                      job->size);
    else {
        first = bound[job->rank];
        count = bound[job->rank + 1] - first;
    }
    const sim_part part = {writer, first, count};
    snapshot_sink snaps = {write_snapshot, out};
    sim_media sm = {&media, mtab.mt};
    if (!rc && (writer || count > 0))
        rc = simulate_part(&p, &g, &t, &sm, be, writer ? &snaps : NULL, &part, &r, &err);
    provenance_finish(&pv);
    if (writer && rc == SMX_EXIT_INTERRUPTED && p.keep_partial && r.dose_MeV) {
        smx_error ignored = {0};
        output_write_result(out, &p, &g, &r, &pv, &ignored);
    }
    /* "gather": waiting for the other ranks' blocks, then receiving them. */
    double t_gather = now_s();
    if ((rc = par_agree(job, rc, &err))) {
        agreed = 1;
        goto end;
    }
    /* Every rank's rows and facts to rank 0 (nothing to do in one process). */
    char device[192];
    describe_device(&r, device, sizeof device);
    const double t_rows = now_s();
    if ((rc = par_gather_spots(job, bound, p.per_spot_threshold, &r, &err)) ||
        (rc = par_gather_ranks(job, device, first, count, &pv, &err)) || !writer)
        goto end;
    if (job->size > 1) {
        const double t_end = now_s();
        run_result_phase(&r, "gather", t_end - t_gather);
        const spot_dose *sd = &r.per_spot;
        const double mb = sd->indptr ? 1e-6 * ((double)sd->nnz * (sizeof *sd->values + sizeof *sd->indices) +
                                               (double)sd->n_spots * (sizeof *sd->indptr + 2 * sizeof(double)))
                                     : 0.0;
        smx_info("MPI: waited %.3f s for the other ranks, then gathered the %d ranks' rows (%.1f MB in all) in "
                 "%.3f s\n", t_rows - t_gather, job->size, mb, t_end - t_rows);
    }

    /* Result: dose, tallies and provenance written, then renamed into place;
     * an interrupt until the rename leaves nothing under the final name. */
    smx_test_pause("writing", &smx_interrupted);
    double t_out = now_s();
    if ((rc = output_write_result(out, &p, &g, &r, &pv, &err)) ||
        (rc = check_interrupt("while writing the result", &err)) ||
        (rc = output_commit(out, &err)))
        goto end;
    out = NULL;
    run_result_phase(&r, "output", now_s() - t_out);
    report_summary(&g, &media, &r);
    if (r.conservation_violations)
        rc = smx_fail(&err, SMX_EXIT_RUNTIME,
                      "conservation violated in %d step%s (max weight %.3e, energy %.3e; "
                      "tolerance %.0e); the result was written and records them",
                      r.conservation_violations, r.conservation_violations == 1 ? "" : "s",
                      r.max_weight_rel_err, r.max_energy_rel_err,
                      SMX_CONSERVATION_TOL);
end:
    if (out)
        output_abort(out, p.keep_partial);
    par_set_cleanup(NULL, NULL);
    /* After an agreement err names the failed rank; an error rank 0 alone
     * met (writing) gets its rank and host here. Only rank 0 prints. */
    if (rc && rc != SMX_EXIT_USAGE && writer) {
        if (!agreed)
            par_tag_error(job, &err);
        rc = fail(&err);
    }
    free(bound);
    provenance_free(&pv);
    run_result_free(&r);
    medium_tables_free(&mtab);
    medium_map_free(&media);
    grid_free(&g);
    tables_free(&t);
    plan_free(&p);
    return rc;
}

/* --bench: a peer of the run, on the benchmark's fixed grids (BENCHMARKS.md)
 * instead of a plan. */
static int run_bench(const cli *c)
{
    bench_options o = {c->bench_grids, c->bench_steps, c->bench_variants, c->bench_json, c->sets,
                       c->n_sets};
    smx_error err = {0};
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
        smx_error err = {0};
        if ((rc = par_init(&job, &argc, &argv, &err)))
            return fail(&err);
        if (job.rank > 0) {
            smx_quiet = 1; /* the run's log is rank 0's; warnings say whose they are */
            snprintf(smx_warn_tag, sizeof smx_warn_tag, "rank %d of %d on %s: ", job.rank, job.size, job.host);
        }
        rc = run_plan(&c, &job, argc, argv);
        par_finalize();
        return rc;
    }
    return 0;
}
