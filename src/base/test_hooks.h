/* Test seams: points where a test may pause a run, make a process fail or
 * shrink a size, so that it can reach states a real run reaches only by
 * chance. The product never installs them: smx_test_hooks_installed is NULL
 * and every call below does nothing (returns its default). A test program
 * installs a table: tests/hooks_main.c (build/tests/smx2d-sim-hooks, the
 * program with hooks that the command-line and MPI tests run), or a unit
 * test directly. No environment variable reaches the product through here. */
#ifndef SMX_TEST_HOOKS_H
#define SMX_TEST_HOOKS_H

#include <signal.h>

#include "base/error.h"

typedef struct smx_test_hooks {
    /* Called when a run reaches `phase` (docs/testing.md lists them); may
     * wait until *flag (the SIGINT/SIGTERM handler's) is set, so that a test
     * interrupts the run there. NULL: nothing. */
    void (*pause)(const char *phase, volatile sig_atomic_t *flag);
    /* Called when a run reaches `phase`; a non-zero return (with err set)
     * fails the run there, as a real failure would. NULL: nothing. */
    int (*fail)(const char *phase, smx_error *err);
    /* >= 1: the per-spot windows start with a band of this many rows instead
     * of window_spot_band's (transport/window.h), so that a small test's
     * batches outgrow it; 0: the product's band. */
    int spot_band;
} smx_test_hooks;

extern const smx_test_hooks *smx_test_hooks_installed;

/* The process's MPI rank (set by src/parallel/; 0 in a single process), for a
 * fail hook that fails one rank of a job. */
extern int smx_test_rank;

static inline void smx_test_pause(const char *phase, volatile sig_atomic_t *flag)
{
    const smx_test_hooks *h = smx_test_hooks_installed;
    if (h && h->pause)
        h->pause(phase, flag);
}

static inline int smx_test_fail(const char *phase, smx_error *err)
{
    const smx_test_hooks *h = smx_test_hooks_installed;
    return h && h->fail ? h->fail(phase, err) : 0;
}

static inline int smx_test_spot_band(int band)
{
    const smx_test_hooks *h = smx_test_hooks_installed;
    return h && h->spot_band >= 1 ? h->spot_band : band;
}

#endif
