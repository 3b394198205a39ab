/* Runs a plan in-process on the CPU backend for the physics tests: a base plan
 * text plus --set style overrides, no output file. */
#ifndef SMX_TEST_SIM_FIXTURE_H
#define SMX_TEST_SIM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/plan_access.h"
#include "transport/backend.h"
#include "run/run_setup.h"
#include "transport/simulate.h"

typedef struct fixture {
    plan p;
    tables t;
    grid g;
    run_result r;
    smx_error err;
} fixture;

/* A 2-D water phantom with a forward pencil beam; tests override what they vary. */
static const char *const FIXTURE_BASE_PLAN =
    "grid:\n"
    "  energy: {kind: range, E_min_MeV: 1.0, E_max_MeV: 100.0, E_cutoff_MeV: 1.0}\n"
    "  angle: {mode: window, n_bins: 41, centre_deg: 90.0, half_width_deg: 20.0}\n"
    "  space: {nx: 81, nz: 170, dx_mm: 0.5, dz_mm: 0.5}\n"
    "material: {table_file: pstar_water.h5}\n"
    "beam: {energy_MeV: 100.0}\n"
    "transport: {step_mm: 0.5, steps: auto}\n"
    "output: {file: unused.h5, snapshot_final: false}\n";

/* Loads plan, tables and grid; does not run. Returns 0 or the error code. */
static inline int fixture_load(fixture *f, const char *yaml, const char *const *sets, int nsets)
{
    memset(f, 0, sizeof *f);
    run_result_init(&f->r);
    smx_quiet = 1; /* the step log would bury the test output */
    setenv("SMX2D_DATA_DIR", "data", 1); /* tests run from the repository root */
    const run_setup_options o = { .plan_text = yaml ? yaml : FIXTURE_BASE_PLAN,
                                  .sets = sets,
                                  .n_sets = nsets };
    int rc = run_setup_input(&f->p, &f->t, &f->g, &o, &f->err);
    if (rc)
        fprintf(stderr, "fixture: %s\n", f->err.msg);
    return rc;
}

static inline int fixture_run(fixture *f, const char *yaml, const char *const *sets, int nsets)
{
    int rc = fixture_load(f, yaml, sets, nsets);
    if (!rc)
        rc =
            simulate(&(sim_input){ &f->p, &f->g, &f->t, NULL }, &backend_cpu, NULL, &f->r, &f->err);
    if (rc)
        plan_word_error(&f->p, &f->err);
    if (rc)
        fprintf(stderr, "fixture: %s\n", f->err.msg);
    return rc;
}

static inline void fixture_free(fixture *f)
{
    run_result_free(&f->r);
    grid_free(&f->g);
    tables_free(&f->t);
    plan_free(&f->p);
}

#endif
