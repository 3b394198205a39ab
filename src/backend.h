/* The backend table: every backend (CPU reference, CUDA) implements the same
 * few entry points; the host loop, lookup tables, tallies and output are shared. */
#ifndef SMX_BACKEND_H
#define SMX_BACKEND_H

#include <stdint.h>

#include "error.h"
#include "grid.h"
#include "lut_angle.h"
#include "lut_energy.h"
#include "lut_stream.h"
#include "plan.h"
#include "run.h"
#include "tally.h"

/* Everything built once on the host before the step loop. */
typedef struct sim_tables {
    const plan *p;
    const grid *g;
    energy_lut el;
    angle_kernels ak;
    stream_table st;
    double *boundary_frac;   /* window mode: [n_kernels][nth] share of source bin i scattered outside */
    int energy_gather;       /* 1 = gather LUT, 0 = scatter (chosen by plan and LUT validity) */
    int stream_gather;       /* 1 = gather, 0 = scatter */
} sim_tables;

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err);
void sim_tables_free(sim_tables *s);

typedef struct backend_ops {
    const char *name;
    int (*setup)(void **ctx, const sim_tables *s, smx_error *err);
    /* Initial state; the backend records its weight and energy as the first step's input. */
    int (*upload)(void *ctx, const float *psi0, smx_error *err);
    /* One step (index n from 0): psi <- ops(psi), dose accumulated, balance filled. */
    int (*step)(void *ctx, int64_t n, step_balance *b, smx_error *err);
    int (*download_psi)(void *ctx, float *psi, smx_error *err);
    /* Dose in MeV (not normalised), [nz][nx]. */
    int (*download_dose)(void *ctx, double *dose_MeV, smx_error *err);
    /* Deepest z row holding weight after the last step, -1 if none. */
    int (*front_row)(void *ctx);
    void (*describe)(void *ctx, run_result *r);
    void (*release)(void *ctx);
} backend_ops;

extern const backend_ops backend_cpu;

#endif
