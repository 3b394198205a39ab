/* The step loop's result: what the result writer (io/output_*.c) writes and the summary reports. */
#ifndef SMX_RUN_H
#define SMX_RUN_H

#include <stdint.h>

#include "physics/grid.h"
#include "physics/tables.h"
#include "transport/tally.h"

enum run_stop_reason {
    STOP_STEPS_DONE = 0, /* fixed number of steps reached */
    STOP_WEIGHT_BELOW = 1, /* steps: auto and the remaining weight fell below the threshold */
    STOP_MAX_STEPS = 2, /* steps: auto hit max_steps first */
    STOP_INTERRUPTED = 3, /* SIGINT / SIGTERM */
    STOP_FAILED = 4
};

#define RUN_MAX_PHASES 12

/* Per-spot dose (output.per_spot_dose): one row per spot, one column per dose
 * cell (z * nx + x), compressed sparse rows. A spot's values below threshold
 * times its largest value are not stored; their sum is kept in dropped. */
typedef struct spot_dose {
    int n_spots; /* rows filled so far */
    int64_t nnz, cap;
    int64_t *indptr; /* [n_spots + 1] */
    int32_t *indices; /* [nnz] cell index z * nx + x */
    float *values; /* [nnz] MeV per unit initial weight of the spot */
    double *dropped; /* [n_spots] sum of the values not stored, same unit; where cells
                           differ in density, each value counted as if its cell had the
                           reference density (times to_reference) */
    double *weight; /* [n_spots] the spot run's initial weight */
    double threshold; /* relative to the spot's largest value */
    const double *to_reference; /* [cells] reference density / the cell's (NULL: one density);
                                   not owned */
} spot_dose;

typedef struct run_result {
    int n_steps; /* steps taken */
    int capacity;
    step_balance *steps; /* per step, n_steps of them */
    double *step_ms; /* wall time of each step */
    double *front_depth_mm; /* deepest z centre holding weight after each step */
    step_tally cumulative; /* sum over steps */
    double initial_weight; /* sum of psi after the source */
    double initial_energy_MeV; /* sum of psi * E after the source */
    double max_weight_rel_err, max_energy_rel_err;
    int conservation_violations; /* steps whose balance exceeded the tolerance */
    /* Steps whose weight in flight was below SMX_BALANCE_FLOOR of the initial
     * weight (the deep tail that only fixed step counts and a spot's run to
     * the last of its weight reach): their balance, kept apart from the
     * figures above and never a violation (tally.h). */
    int tail_steps;
    double tail_max_weight_rel_err, tail_max_energy_rel_err;
    int stop_reason; /* enum run_stop_reason */
    double *dose_MeV; /* [nz][nx] MeV deposited per unit initial weight */
    /* transport.nuclear: halo, per unit initial weight: the MeV non-elastic
     * events handed to secondary protons, and of it what their kernel put on
     * the grid (part of dose_MeV; the rest left the grid). 0 otherwise. */
    double halo_released_MeV, halo_deposited_MeV;
    spot_dose per_spot; /* empty unless the plan asks for it */
    /* output.let: the primaries' dose-averaged and track-averaged LET per
     * cell, keV/um ([nz][nx]; 0 where no primary lost energy). */
    double *let_d, *let_t;
    /* output.per_spot_let: each spot's LETd times its dose, on the cells of
     * its per_spot row (MeV keV/um per unit initial weight). */
    spot_dose per_spot_let;
    /* output.dose_to_water: dose_MeV times each cell's water/medium factor. */
    double *dose_water_MeV;
    char backend_name[32];
    char device_name[256];
    char compute_capability[16];
    char kernel_variants[1024]; /* "energy=gather stream=gather angular=direct ..." */
    /* output.per_spot_dose: the kernel_variants of the first per-spot state
     * after its first upload (the spots' steps may take another pipeline than
     * the total's: slots side by side, a source of a few rows). */
    char spot_kernel_variants[1024];
    /* The total's window (transport/window.h): rows and columns of the
     * state, and how often it moved; per-spot: the spots' windows' size and
     * all their moves. */
    int window_nz, window_nx, window_moves, window_band;
    double window_moves_s; /* host seconds of the total's moves (the device waits) */
    int spot_window_nz, spot_window_nx, spot_window_moves, spot_window_band;
    int spot_slots; /* spots stepped at once, side by side in one state */
    int spot_window_grew; /* batches run again on a larger window (window.h, window_spot_band) */
    int spot_classes; /* per-spot states built, each on the energy bins its batches need */
    int spot_bins_first, spot_bins_last; /* energy bins of the first and the last of them */
    int n_phases;
    const char *phase_name[RUN_MAX_PHASES];
    double phase_s[RUN_MAX_PHASES];
} run_result;

void run_result_init(run_result *r);
void run_result_free(run_result *r);
/* Appends one step; grows the arrays (outside the backend's hot path). A
 * step of the deep tail (run_result_in_tail) counts in the tail's figures. */
int run_result_push(run_result *r, const step_balance *b, double ms, double front_mm);
/* Step b's weight in flight (in and out) was below SMX_BALANCE_FLOOR of r's
 * initial weight. */
static inline int run_result_in_tail(const run_result *r, const step_balance *b)
{
    const double w = b->weight_in > b->weight_out ? b->weight_in : b->weight_out;
    return w < SMX_BALANCE_FLOOR * r->initial_weight;
}
void run_result_phase(run_result *r, const char *name, double seconds);
/* r's steps and balance figures started anew for a source of weight w0 and
 * energy e0 (its arrays kept for reuse): one batch of a field's spots after
 * another in one record. */
void run_result_restart(run_result *r, double w0, double e0);
/* from's balance figures joined into into's: violations and deep-tail steps
 * added, the largest relative errors kept. */
void run_result_add_balance(run_result *into, const run_result *from);
/* Appends one spot's row from its dose per unit weight (cells values);
 * n_spots is the number of rows the caller will append (sizes the arrays on
 * the first call). */
int spot_dose_append(spot_dose *sd, int n_spots, const double *dose, int64_t cells, double weight);
/* The cells of a dose map ([..][nx]) a row is read from: rows z0..z1,
 * columns x0..x1 (a window's part of the grid). */
typedef struct spot_box {
    int64_t nx;
    int z0, z1, x0, x1;
} spot_box;
/* What a row is read from: a spot's dose map per unit weight ([..][box.nx]),
 * the box of it the row takes, and the spot's weight. */
typedef struct spot_row_src {
    const double *dose;
    spot_box box;
    double weight;
} spot_row_src;
/* A row on the cells of row `row` of `like` (whose indices ascend), valued
 * src->dose[i] * factor[i]; the rest of src's box is dropped. */
int spot_dose_append_like(spot_dose *sd, int n_spots, const spot_dose *like, int row,
                          const spot_row_src *src, const double *factor);
/* A row of src's dose where it is zero outside src's box: only its cells are read. */
int spot_dose_append_box(spot_dose *sd, int n_spots, const spot_row_src *src);
/* Appends the one row of each of rows[0 .. count) (each a spot_dose of one
 * spot) as sd's next rows, in that order. */
int spot_dose_take_rows(spot_dose *sd, int n_spots, const spot_dose *rows, int count);
void spot_dose_free(spot_dose *sd);

#endif
