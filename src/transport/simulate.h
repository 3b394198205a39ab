/* The step loop: tables -> initial psi -> steps on a backend -> dose, tallies
 * and snapshots. Shared by every backend. */
#ifndef SMX_SIMULATE_H
#define SMX_SIMULATE_H

#include <signal.h>

#include "transport/backend.h"

/* Set by the SIGINT/SIGTERM handler; the loop stops at the next step boundary. */
extern volatile sig_atomic_t smx_interrupted;

/* Conservation tolerance per step (relative, in double; docs/physics.md). */
#define SMX_CONSERVATION_TOL 1e-6

/* Where the loop hands the psi snapshots the plan asks for (the result file's
 * writer, in a run); the loop itself knows nothing of files. */
typedef struct snapshot_sink {
    int (*write)(void *ctx, const grid *g, int step, const float *psi, smx_error *err);
    void *ctx;
} snapshot_sink;

/* Runs the plan on backend `be`. `snaps` may be NULL (no snapshots taken).
 * On success r holds the per-step balances and the normalised dose. */
int simulate(const plan *p, const grid *g, const tables *t, const backend_ops *be,
             const snapshot_sink *snaps, run_result *r, smx_error *err);

/* What a heterogeneous run transports: the medium of every cell and the
 * table of every material (mt[k] for mm->materials[k]; mt[0] is simulate's t). */
typedef struct sim_media {
    const medium_map *mm;
    const tables *const *mt;
    const tables *water; /* output.dose_to_water: water's table (NULL: none loaded) */
} sim_media;

/* simulate() through the media of `media` (NULL: the plan's material everywhere). */
int simulate_media(const plan *p, const grid *g, const tables *t, const sim_media *media,
                   const backend_ops *be, const snapshot_sink *snaps, run_result *r,
                   smx_error *err);

/* The lookup tables of a run (physics/sim_tables.h), with the media of
 * `media` when there are any (NULL: the plan's material everywhere): what
 * simulate_part, the dry run's check, the benchmark and the tests' backend
 * runner step from. Nothing is left to free after an error. */
int simulate_tables_build(sim_tables *st, const plan *p, const grid *g, const tables *t,
                          const sim_media *media, smx_error *err);

/* The share of a run one process computes when an MPI job divides a field
 * (src/parallel/, docs/mpi.md): whether it runs the whole field (total dose,
 * snapshots, the step log), and which per-spot rows (output.per_spot_dose) it
 * transports: spots [spot_first, spot_first + spot_count) of the plan, its
 * rows 0 .. spot_count - 1 of r->per_spot. */
typedef struct sim_part {
    int total;
    int spot_first, spot_count;
} sim_part;

/* simulate_media() of one share; part NULL: the whole run (total and every
 * spot). Without the total, r holds the per-spot rows, their steps'
 * conservation figures and the backend's description. */
int simulate_part(const plan *p, const grid *g, const tables *t, const sim_media *media,
                  const backend_ops *be, const snapshot_sink *snaps, const sim_part *part,
                  run_result *r, smx_error *err);

/* What simulate_part builds before its first step and can refuse: the
 * lookup tables (with media) and every spot's source profile, built and
 * freed, with the errors the run would give (the dry run's check). */
int simulate_check(const plan *p, const grid *g, const tables *t, const sim_media *media,
                   smx_error *err);

/* Steps needed for the slowest particle to stop (for ETA and sizing). */
int simulate_expected_steps(const plan *p, const grid *g, const tables *t);
/* The same for one particle of energy_MeV (a spot's own run; the cost of its
 * per-spot row when an MPI job divides the field). */
int simulate_spot_steps(const plan *p, const grid *g, const tables *t, double energy_MeV);

#endif
