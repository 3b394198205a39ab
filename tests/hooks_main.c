/* smx2d-sim with its test seams installed (base/test_hooks.h): the product's
 * main (src/main.c, compiled with -Dmain=smx_product_main) behind a main
 * that reads the seams' settings from the environment, so that the
 * command-line and MPI tests (tests/cli.sh, tests/mpi.sh) drive them from a
 * shell. Built as build/tests/smx2d-sim-hooks; never installed.
 *
 *   SMX2D_TEST_PAUSE_AT=PHASE  stop when the run reaches PHASE, say so on
 *                              stderr ("smx2d-sim: test: paused at PHASE") and
 *                              wait until the interrupt flag is set (at most
 *                              60 s); the run then finds the interrupt where a
 *                              real one would be found
 *   SMX2D_TEST_FAIL_RANK=R     the process of MPI rank R (0 in a single
 *                              process) fails with exit 3 when it reaches a
 *                              fail phase, its message naming the hook
 *   SMX2D_TEST_SPOT_BAND=N     per-spot windows start with a band of N rows
 * Phases: docs/testing.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/test_hooks.h"

int smx_product_main(int argc, char **argv);

static const char *pause_at, *fail_rank;

static void pause_hook(const char *phase, volatile sig_atomic_t *flag)
{
    if (strcmp(pause_at, phase) != 0)
        return;
    fprintf(stderr, "smx2d-sim: test: paused at %s\n", phase);
    fflush(stderr);
    /* Polling a flag the handler sets works whichever thread the signal lands
     * on, and a signal that came before the loop is not missed. */
    const struct timespec tick = { 0, 10 * 1000 * 1000 };
    for (int i = 0; i < 6000 && !*flag; i++)
        nanosleep(&tick, NULL);
}

static int fail_hook(const char *phase, smx_error *err)
{
    char *end = NULL;
    long r = strtol(fail_rank, &end, 10);
    if (*end || r != smx_test_rank)
        return 0;
    return smx_fail(err, SMX_EXIT_RUNTIME, "test: failing at %s as SMX2D_TEST_FAIL_RANK=%s asks",
                    phase, fail_rank);
}

int main(int argc, char **argv)
{
    static smx_test_hooks hooks;
    pause_at = getenv("SMX2D_TEST_PAUSE_AT");
    fail_rank = getenv("SMX2D_TEST_FAIL_RANK");
    const char *band = getenv("SMX2D_TEST_SPOT_BAND");
    if (pause_at)
        hooks.pause = pause_hook;
    if (fail_rank && fail_rank[0])
        hooks.fail = fail_hook;
    hooks.spot_band = band ? atoi(band) : 0;
    smx_test_hooks_installed = &hooks;
    return smx_product_main(argc, argv);
}
