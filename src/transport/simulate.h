/* The step loop: tables -> initial psi -> steps on a backend -> dose, tallies
 * and snapshots. Shared by every backend. */
#ifndef SMX_SIMULATE_H
#define SMX_SIMULATE_H

#include "transport/backend.h"
#include "transport/sim_types.h"

/* Runs the plan on backend `be` through the media of `in` (in->media NULL:
 * the plan's material everywhere). `snaps` may be NULL (no snapshots taken).
 * On success r holds the per-step balances and the normalised dose. */
int simulate(const sim_input *in, const backend_ops *be, const snapshot_sink *snaps, run_result *r,
             smx_error *err);

/* simulate() of one share; part NULL: the whole run (total and every
 * spot). Without the total, r holds the per-spot rows, their steps'
 * conservation figures and the backend's description. */
int simulate_part(const sim_input *in, const backend_ops *be, const snapshot_sink *snaps,
                  const sim_part *part, run_result *r, smx_error *err);

/* What simulate_part builds before its first step and can refuse: the
 * lookup tables (with media) and every spot's source profile, built and
 * freed, with the errors the run would give (the dry run's check). */
int simulate_check(const sim_input *in, smx_error *err);

/* Steps needed for the slowest particle to stop (for ETA and sizing). */
int simulate_expected_steps(const plan *p, const grid *g, const tables *t);
/* The same for one particle of energy_MeV (a spot's own run; the cost of its
 * per-spot row when an MPI job divides the field). */
int simulate_spot_steps(const plan *p, const grid *g, const tables *t, double energy_MeV);

#endif
