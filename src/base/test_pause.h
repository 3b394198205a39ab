/* A hook for tests that interrupt a run at a known point.
 *
 * With SMX2D_TEST_PAUSE_AT=PHASE in the environment, the program stops when it
 * reaches PHASE, says so on stderr ("smx2d-sim: test: paused at PHASE"), and
 * waits until *flag is set (by the SIGINT/SIGTERM handler), at most 60 s; then
 * it carries on, and finds the interrupt where a real one would be found.
 * Without the variable it does nothing. Phases: docs/dev/testing.md. */
#ifndef SMX_TEST_PAUSE_H
#define SMX_TEST_PAUSE_H

#include <signal.h>

#include "base/error.h"

void smx_test_pause(const char *phase, volatile sig_atomic_t *flag);

/* A hook for tests of how a job ends when one of its processes fails. With
 * SMX2D_TEST_FAIL_RANK=R in the environment, the process whose smx_test_rank
 * is R (its MPI rank, set by src/parallel/; 0 in a single process) fails when
 * it reaches `phase`: err gets a message naming the hook, and its code
 * (SMX_EXIT_RUNTIME) is returned. Otherwise it returns 0. Phases: docs/dev/testing.md. */
extern int smx_test_rank;
int smx_test_fail(const char *phase, smx_error *err);

/* A hook for tests of the CUDA backend's two paths for runs with media: with
 * SMX2D_TEST_MEDIA_ONE_PASS=1 in the environment every such run steps in one
 * pass where it can, with -1 never; otherwise (0) the backend chooses per
 * source (backend_options, transport/backend.h). */
int smx_test_media_one_pass(void);

/* A hook for tests of the CUDA one-pass step's per-slot boxes: with
 * SMX2D_TEST_SLOT_BOXES=0 in the environment spots side by side step on the
 * union of their boxes (0 returned); otherwise each on its slot's (1). */
int smx_test_slot_boxes(void);

/* A hook for tests of the per-spot windows' regrowth (transport/window.h):
 * with SMX2D_TEST_SPOT_BAND=N (N >= 1) in the environment a batch's windows
 * start with a band of N rows instead of `band`, so that a small test's
 * batches outgrow it; otherwise `band`. */
int smx_test_spot_band(int band);

#endif
