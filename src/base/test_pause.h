/* A hook for tests that interrupt a run at a known point.
 *
 * With SMX2D_TEST_PAUSE_AT=PHASE in the environment, the program stops when it
 * reaches PHASE, says so on stderr ("smx2d-sim: test: paused at PHASE"), and
 * waits until *flag is set (by the SIGINT/SIGTERM handler), at most 60 s; then
 * it carries on, and finds the interrupt where a real one would be found.
 * Without the variable it does nothing. Phases: docs/testing.md. */
#ifndef SMX_TEST_PAUSE_H
#define SMX_TEST_PAUSE_H

#include <signal.h>

void smx_test_pause(const char *phase, volatile sig_atomic_t *flag);

#endif
