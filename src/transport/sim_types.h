/* What the step loop (simulate.h) and the backend states it steps on
 * (stepper.h) both speak of: the interrupt flag, the conservation
 * tolerance, where snapshots go, the media of a run and the share of a run
 * one process computes. Its own header, so that the lower stepper needs
 * nothing of the loop above it. */
#ifndef SMX_SIM_TYPES_H
#define SMX_SIM_TYPES_H

#include <signal.h>

#include "transport/backend.h"
#include "transport/spot_progress.h"

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

/* What a heterogeneous run transports: the medium of every cell and the
 * table of every material (mt[k] for mm->materials[k]; mt[0] is simulate's t). */
typedef struct sim_media {
    const medium_map *mm;
    const tables *const *mt;
    const tables *water; /* output.dose_to_water: water's table (NULL: none loaded) */
} sim_media;

/* What a run transports: the plan, its grid, the tables of the plan's
 * material and the media (NULL: the plan's material everywhere). */
typedef struct sim_input {
    const plan *p;
    const grid *g;
    const tables *t;
    const sim_media *media;
} sim_input;

/* The share of a run one process computes when an MPI job divides a field
 * (src/parallel/, docs/mpi.md): whether it runs the whole field (total dose,
 * snapshots, the step log), and which per-spot rows (output.per_spot_dose) it
 * transports: spots [spot_first, spot_first + spot_count) of the plan, its
 * rows 0 .. spot_count - 1 of r->per_spot; progress: the job's count of
 * (scenario, spot) pairs these rows add to (NULL: the rows count alone). */
typedef struct sim_part {
    int total;
    int spot_first, spot_count;
    spot_progress *progress;
} sim_part;

#endif
