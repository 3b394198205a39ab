/* The step loop: tables -> initial psi -> steps on a backend -> dose, tallies
 * and snapshots. Shared by every backend. */
#ifndef SMX_SIMULATE_H
#define SMX_SIMULATE_H

#include <signal.h>

#include "io/output.h"
#include "transport/backend.h"

/* Set by the SIGINT/SIGTERM handler; the loop stops at the next step boundary. */
extern volatile sig_atomic_t smx_interrupted;

/* Conservation tolerance per step (DESIGN section 2, relative, in double). */
#define SMX_CONSERVATION_TOL 1e-6

/* Runs the plan on backend `be`. `out` may be NULL (no snapshots written).
 * On success r holds the per-step balances and the normalised dose. */
int simulate(const plan *p, const grid *g, const tables *t, const backend_ops *be, output *out,
             run_result *r, smx_error *err);

/* Steps needed for the slowest particle to stop (for ETA and sizing). */
int simulate_expected_steps(const plan *p, const grid *g, const tables *t);

#endif
