/* A backend state set up for a plan (a stepper): its window of the grid,
 * its tables on that window and the loop that steps a source uploaded to it,
 * with its records, the window's moves and the snapshots the plan asks for.
 * The run's total (simulate.c) and a field's per-spot batches (per_spot.c)
 * step on one each. */
#ifndef SMX_STEPPER_H
#define SMX_STEPPER_H

#include "transport/sim_types.h"
#include "transport/window.h"

/* The lookup tables of a run (physics/sim_tables.h), with the media of
 * `media` when there are any (NULL: the plan's material everywhere): what
 * simulate_part, the dry run's check, the benchmark and the tests' backend
 * runner step from. Nothing is left to free after an error. */
int simulate_tables_build(sim_tables *st, const plan *p, const grid *g, const tables *t,
                          const sim_media *media, smx_error *err);

/* A backend set up for a plan, and what every run of a source on it shares. */
typedef struct stepper {
    const plan *p;
    const grid *g; /* the run's grid */
    const backend_ops *be;
    sim_tables st; /* the run's tables on the window's grid and medium map */
    void *ctx;
    step_record *recs;
    int every_collect;
    int expected; /* steps the slowest particle needs (ETA, log rate) */
    window win; /* the part of g the state holds (transport/window.h) */
    float *wpsi; /* [win.wg.cells] all zero: a source on the window; NULL when it is g */
    grid_box *wocc; /* [ne] its boxes */
    double moves_s; /* host seconds the last stepper_run spent moving the window */
} stepper;

/* A snapshot copied out by the backend but not yet written: writing it waits
 * for the copy, so it is done as late as possible (next snapshot, or the end)
 * while the device keeps stepping. */
typedef struct pending_snapshot {
    int active;
    int step;
} pending_snapshot;

/* Where a run's psi snapshots go and how far they have got: the sink, the
 * snapshot copied out but not yet written, and the seconds that waiting for
 * the copies and writing them took (the "snapshots" phase, kept out of the
 * step times). */
typedef struct snapshot_out {
    const snapshot_sink *sink;
    pending_snapshot pending;
    double write_s;
} snapshot_out;

/* Seconds of a monotonic clock. */
double stepper_now_s(void);
/* The plan asks for a psi snapshot after step `step`. */
int stepper_wants_snapshot(const plan *p, int step);
/* Hands one snapshot to the sink (announce: on a line of its own). */
int stepper_snapshot_write(const snapshot_sink *out, const grid *g, int step, const float *psi,
                           int announce, smx_error *err);
/* Waits for the pending snapshot's copy from sp's backend and writes it to
 * so's sink (up to last_step); the time both take is added to so->write_s. */
int stepper_snapshot_flush(const stepper *sp, snapshot_out *so, int last_step, int announce,
                           smx_error *err);
/* sp's window is the whole grid. */
int stepper_holds_grid(const stepper *sp);
/* sp's window of shape ws and the tables pointing to it (a shallow copy of
 * st); sp->ctx is not set up. The window's host psi (wpsi, wocc: calloc'd,
 * only the sources' rows are ever written) is allocated where the window is
 * not the grid, or always with own_psi (sources gathered into slots). */
int stepper_window(stepper *sp, const sim_tables *st, const window_shape *ws, int own_psi,
                   smx_error *err);
void stepper_free(stepper *sp);
/* Steps the uploaded source to the end of the run into r (balances,
 * conservation), the snapshots to so (NULL: none; the last one taken may be
 * left pending), the step log when log is set; snapshot writing time is
 * added to so->write_s. */
int stepper_run(stepper *sp, run_result *r, snapshot_out *so, int log, smx_error *err);
/* sp's window moves as the beam goes, or need not. */
int stepper_moves_ok(const stepper *sp);

#endif
