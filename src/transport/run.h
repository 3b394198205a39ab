/* The step loop's result: what the result writer (io/output_*.c) writes and the summary reports. */
#ifndef SMX_RUN_H
#define SMX_RUN_H

#include <stdint.h>

#include "input/plan.h"
#include "physics/grid.h"
#include "physics/tables.h"
#include "transport/tally.h"

enum run_stop_reason {
    STOP_STEPS_DONE = 0,    /* fixed number of steps reached */
    STOP_WEIGHT_BELOW = 1,  /* steps: auto and the remaining weight fell below the threshold */
    STOP_MAX_STEPS = 2,     /* steps: auto hit max_steps first */
    STOP_INTERRUPTED = 3,   /* SIGINT / SIGTERM */
    STOP_FAILED = 4
};

#define RUN_MAX_PHASES 8

typedef struct run_result {
    int n_steps;                 /* steps taken */
    int capacity;
    step_balance *steps;         /* per step, n_steps of them */
    double *step_ms;             /* wall time of each step */
    double *front_depth_mm;      /* deepest z centre holding weight after each step */
    step_tally cumulative;       /* sum over steps */
    double initial_weight;       /* sum of psi after the source */
    double initial_energy_MeV;   /* sum of psi * E after the source */
    double max_weight_rel_err, max_energy_rel_err;
    int conservation_violations; /* steps whose balance exceeded the tolerance */
    int stop_reason;             /* enum run_stop_reason */
    double *dose_MeV;            /* [nz][nx] MeV deposited per unit initial weight */
    char backend_name[32];
    char device_name[256];
    char compute_capability[16];
    char kernel_variants[1024];  /* "energy=gather stream=gather angular=direct ..." */
    int n_phases;
    const char *phase_name[RUN_MAX_PHASES];
    double phase_s[RUN_MAX_PHASES];
} run_result;

void run_result_init(run_result *r);
void run_result_free(run_result *r);
/* Appends one step; grows the arrays (outside the backend's hot path). */
int run_result_push(run_result *r, const step_balance *b, double ms, double front_mm);
void run_result_phase(run_result *r, const char *name, double seconds);

#endif
