/* A field's per-spot doses (output.per_spot_dose): every spot on a window of
 * its own, many side by side in the slots of one state, batched by energy on
 * the energy bins a batch reaches (docs/model.md, "Spots side by side"). */
#ifndef SMX_PER_SPOT_H
#define SMX_PER_SPOT_H

#include "transport/halo_dose.h"
#include "transport/spectral_maps.h"
#include "transport/spot_progress.h"
#include "transport/stepper.h"

/* A block of a field's spots and what their runs share with the run: the
 * run's stepper settings (plan, grid, backend, collect interval; no state),
 * its tables (st) and what they were built from (t, media), the materials'
 * tables (mt: window sizes), its nuclear halo (added to each spot's dose) and
 * LET maps (output.per_spot_let), and its scratch. A spot's run differs from
 * the total's in what its own tables say (auto_stop_weight 0), never through
 * a plan of its own. */
typedef struct per_spot_job {
    const stepper *proto;
    const sim_tables *st;
    const tables *t;
    const sim_media *media;
    const tables *const *mt;
    halo_dose *halo;
    const spectral_maps *smaps;
    float *host; /* an all-zero psi of the run's grid's row 0 (grid_row0) ... */
    grid_box *occupied; /* ... and its boxes (all zero again on return) */
    int first, n; /* spots first .. first + n - 1 of the plan (n > 0) */
    const int *steps; /* [n] each one's expected steps (simulate_spot_steps): its work
                         in the progress count */
    spot_progress *progress; /* the job's count the block adds to (NULL: its own) */
} per_spot_job;

/* The block's rows into r->per_spot (in spot order; output.per_spot_let: and
 * r->per_spot_let), the steps' conservation figures into r's. */
int per_spot_runs(const per_spot_job *job, run_result *r, smx_error *err);

#endif
