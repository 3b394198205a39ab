/* Runs a plan in-process on the CPU backend for the physics tests: a base plan
 * text plus --set style overrides, no output file. */
#ifndef SMX_TEST_SIM_FIXTURE_H
#define SMX_TEST_SIM_FIXTURE_H

#include <math.h>
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

/* The --set lines of a zero-width pencil of E MeV in water on cells and steps
 * of d mm under `scheme`: +-(4 sigma95 + 2 mm) wide, sigma95 its lateral
 * width at 95 % of its range (an odd count: the beam on a centre), deep
 * enough for its range and fall-off. set[] points into line[]. */
typedef struct pencil_sets {
    char line[8][64];
    const char *set[8];
} pencil_sets;

static inline void pencil_sets_fill(pencil_sets *p, double E, double d, const char *scheme,
                                    double sigma95_mm)
{
    const double R = 40.8 * pow(E / 70.0, 1.75); /* mm, rough: sizes the grid only */
    snprintf(p->line[0], sizeof p->line[0], "grid.energy.E_max_MeV=%g", E);
    snprintf(p->line[1], sizeof p->line[1], "beam.energy_MeV=%g", E);
    snprintf(p->line[2], sizeof p->line[2], "grid.space.nx=%d",
             2 * (int)ceil((4.0 * sigma95_mm + 2.0) / d) + 1);
    snprintf(p->line[3], sizeof p->line[3], "grid.space.nz=%d", (int)((R * 1.05 + 6.0) / d));
    snprintf(p->line[4], sizeof p->line[4], "grid.space.dx_mm=%g", d);
    snprintf(p->line[5], sizeof p->line[5], "grid.space.dz_mm=%g", d);
    snprintf(p->line[6], sizeof p->line[6], "transport.step_mm=%g", d);
    snprintf(p->line[7], sizeof p->line[7], "transport.streaming_scheme=%s", scheme);
    for (int i = 0; i < 8; i++)
        p->set[i] = p->line[i];
}

static inline void fixture_free(fixture *f)
{
    run_result_free(&f->r);
    grid_free(&f->g);
    tables_free(&f->t);
    plan_free(&f->p);
}

#endif
