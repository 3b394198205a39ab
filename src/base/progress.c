#include "base/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

#define PROGRESS_DELAY_S 0.5 /* short operations draw nothing */
#define PROGRESS_PERIOD_S 0.2 /* redraws at most 5 times a second */

static struct {
    int active, tty;
    char what[160];
    double t0, last;
    int drawn; /* the line is on screen */
} pr;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int progress_terminal(void)
{
    /* What Open MPI's mpirun, PMI launchers (MPICH/Intel mpiexec, srun
     * --mpi=pmi2) and PMIx ones (srun --mpi=pmix) put in every rank's
     * environment, before MPI_Init. */
    static const char *const job_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK" };
    for (size_t i = 0; i < sizeof job_vars / sizeof job_vars[0]; i++)
        if (getenv(job_vars[i]))
            return 0;
    return isatty(STDOUT_FILENO);
}

void progress_begin(const char *what)
{
    pr.active = 1;
    pr.tty = !smx_quiet && progress_terminal();
    snprintf(pr.what, sizeof pr.what, "%s", what);
    pr.t0 = pr.last = now_s();
    pr.drawn = 0;
}

void progress_update(double done, double total)
{
    if (!pr.active || !pr.tty)
        return;
    double t = now_s();
    if (t - pr.t0 < PROGRESS_DELAY_S || t - pr.last < PROGRESS_PERIOD_S)
        return;
    pr.last = t;
    double pct = total > 0.0 ? 100.0 * done / total : 0.0;
    /* \033[K clears the rest of the line (a longer step log line may be there). */
    printf("\r\033[K  %s: %3.0f %% (%.1f s)", pr.what, pct, t - pr.t0);
    fflush(stdout);
    pr.drawn = 1;
}

void progress_end(void)
{
    if (pr.active && pr.tty && pr.drawn) {
        fputs("\r\033[K", stdout);
        fflush(stdout);
    }
    pr.active = 0;
    pr.drawn = 0;
}
