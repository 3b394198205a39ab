/* smx2d-sim: plan -> material tables -> grid -> backend -> step loop -> HDF5 result.
 * The options are read here; a run is run_plan (src/run/run_plan.c), whose
 * flow docs/dev/architecture.md maps to src/; --bench is a peer of the run. */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/interrupt.h"
#include "input/cli.h"
#include "input/plan.h"
#include "parallel/parallel.h"
#include "report/report.h"
#include "run/run_plan.h"
#include "tools/bench.h"
#include "transport/simulate.h"

/* The first SIGINT/SIGTERM asks the run to stop at the next safe point (it
 * then removes its partial file and exits 130); a second one ends it at once,
 * removing the partial file first (base/interrupt.h). */
static void on_signal(int sig)
{
    if (smx_interrupted) {
        smx_interrupt_now();
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

/* --bench: the benchmark's fixed grids (BENCHMARKS.md) instead of a plan. */
static int run_bench(const cli *c)
{
    bench_options o = { c->bench_grids, c->bench_steps, c->bench_variants,
                        c->bench_json,  c->sets,        c->n_sets };
    smx_error err = { 0 };
    return bench_main(&o, &err) ? run_print_error(&err) : 0;
}

static void print_version(void)
{
    report_version();
    char mpi[256];
    par_library_version(mpi, sizeof mpi);
    if (strcmp(mpi, "none") != 0)
        printf("  MPI: %s\n", mpi);
}

/* A run, in one process or as one rank of an MPI job (docs/mpi.md). */
static int run_job(cli *c, int argc, char **argv)
{
    par_job job;
    smx_error err = { 0 };
    int rc = par_init(&job, &argc, &argv, &err);
    if (rc)
        return run_print_error(&err);
    if (job.rank > 0) {
        /* The run's log is rank 0's, warnings say whose they are; every rank
         * logs with SMX2D_RANK_LOGS=1 (docs/mpi.md: one file a rank). */
        const char *all = getenv("SMX2D_RANK_LOGS");
        smx_quiet = !(all && *all && strcmp(all, "0"));
        snprintf(smx_warn_tag, sizeof smx_warn_tag, "rank %d of %d on %s: ", job.rank, job.size,
                 job.host);
    }
    /* mpirun binds a rank to one core for -np 2 or less: its host threads
     * (a field's per-spot rows on the GPU, every step on the CPU) then share
     * that core while the host's others idle (docs/mpi.md). */
    if (job.local_rank == 0 && job.cores_allowed == 1 && job.cores_host > job.local_size)
        smx_warn("%s may run on one of the %d cores of %s (mpirun binds a rank to one core for "
                 "-np 2 or less), so its threads share that core; `mpirun --bind-to none` lets "
                 "%s the others (docs/mpi.md)\n",
                 job.local_size == 1 ? "this rank" : "each rank here", job.cores_host, job.host,
                 job.local_size == 1 ? "it use" : "them use");
    catch_interrupts();
    rc = run_plan(c, &job, argc, argv);
    par_finalize();
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    int rc = cli_parse(&c, argc, argv);
    if (rc)
        return rc;
    smx_quiet = c.quiet;
    if (c.help)
        cli_usage(stdout);
    else if (c.version)
        print_version();
    else if (c.print_schema)
        plan_write_json_schema(stdout);
    else if (c.print_reference)
        plan_write_reference(stdout);
    else if (c.bench)
        return run_bench(&c);
    else
        return run_job(&c, argc, argv);
    return 0;
}
