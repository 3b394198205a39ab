/* What a run builds before its first step, written once for the program, the
 * benchmark and the tests, and loaded once per run: plan -> material tables
 * -> grid -> medium map and its materials' tables -> backend; the lookup
 * tables every backend steps from follow, built by simulate_tables_build
 * (transport/stepper.c), which the step loop calls. A robust plan's
 * scenarios are transformations of this set-up (run/scenario.h), not new
 * loads. This layer owns the plan: every error of the chain is worded here,
 * with the plan's file, line and column, the key (material.table_file,
 * backend.device, ...) or the file that could not be read. */
#ifndef SMX_RUN_SETUP_H
#define SMX_RUN_SETUP_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/medium_tables.h"
#include "physics/tables.h"
#include "transport/backend.h"
#include "transport/device_query.h"
#include "transport/simulate.h"

/* What to build, and from which plan. */
typedef struct run_setup_options {
    const char *plan_path; /* the plan file; NULL: plan_text */
    const char *plan_text; /* the plan's YAML held in memory (the benchmark, tests) */
    const char *const *sets; /* --set overrides, applied after the file */
    int n_sets;
    int media; /* 1: the medium map (docs/geometry.md) and its materials' tables */
    int backend; /* 1: the backend backend.device chooses (transport/backend_select.h) */
    int check_memory; /* with backend: refuse a plan this machine cannot hold (a run) */
    int local_rank; /* with backend: this process's rank on its host; the ranks of a
                       host share its GPUs in turn (0 without MPI) */
} run_setup_options;

/* The chain as built; what options left out stays zero. */
typedef struct run_setup {
    plan p;
    tables t; /* the plan's material (medium 0) */
    grid g;
    medium_map media; /* with options.media */
    medium_tables mtab; /* with options.media: the table of each of media's materials */
    gpu_info gi; /* with options.backend: the GPU this process uses, if any */
    const backend_ops *be; /* with options.backend; NULL otherwise */
    int check_memory; /* options.check_memory, for the scenarios built from it */
} run_setup;

/* Builds the chain in order, stopping at the first error (err says what
 * failed; tables errors are put at material.table_file). run_setup_free
 * releases what was built, after an error too. */
int run_setup_init(run_setup *s, const run_setup_options *o, smx_error *err);
void run_setup_free(run_setup *s);

/* The chain's first links alone, into the caller's own objects: the plan, its
 * material's tables and the grid, as run_setup_init builds them (options'
 * media and backend are ignored). After an error the caller frees the three
 * (each free is safe on what was not built). */
int run_setup_input(plan *p, tables *t, grid *g, const run_setup_options *o, smx_error *err);

/* The media a run transports (simulate.h), from a set-up built with media. */
static inline sim_media run_setup_media(const run_setup *s)
{
    return (sim_media){ &s->media, s->mtab.mt, s->mtab.water };
}

#endif
