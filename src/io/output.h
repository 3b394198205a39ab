/* HDF5 result file (layout: schemas/output.md) and its XDMF sidecar.
 *
 * Safe writing: everything goes to "<final>.partial-<pid>" in the same directory;
 * output_commit() marks it complete and renames it into place (atomic on POSIX),
 * output_abort() removes it, or keeps it as "<final>.incomplete.h5" with
 * attribute complete = 0 when the plan asks to keep partial results.
 * An existing final file is never replaced unless overwrite is set. */
#ifndef SMX_OUTPUT_H
#define SMX_OUTPUT_H

#include "base/error.h"
#include "input/plan.h"
#include "io/provenance.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/tables.h"
#include "report/analysis.h"
#include "transport/run.h"

#define OUTPUT_FILETYPE "smx2d-sim result"
#define OUTPUT_FORMAT_VERSION "1.5"

typedef struct output output;

/* A run as the writer writes its result: the plan, its grid and what the
 * run computed. */
typedef struct output_run {
    const plan *p;
    const grid *g;
    const run_result *r;
} output_run;

/* Fails (SMX_EXIT_INPUT) before any work if final_path exists and !overwrite,
 * or if its directory is not writable. */
int output_check_target(const char *final_path, int overwrite, smx_error *err);
int output_open(output **o, const char *final_path, int overwrite, smx_error *err);
/* Axes, plan text and resolved plan: written once after the grid is built. */
int output_write_setup(output *o, const plan *p, const grid *g, const tables *t, smx_error *err);
/* The medium map transported: /geometry (material index and density per cell,
 * the materials with their tables, the rule); after output_write_setup. */
int output_write_geometry(output *o, const medium_map *m, smx_error *err);
/* One psi snapshot after `step` steps (0 = initial state). */
int output_write_snapshot(output *o, const grid *g, int step, const float *psi, smx_error *err);
/* Dose, tallies, run summary (fig: the dose's figures, dose_figures_of) and provenance. */
int output_write_result(output *o, const output_run *run, const dose_figures *fig,
                        const provenance *pv, smx_error *err);
/* Scenario `index` (1 .. plan_scenario_count - 1) of a robust plan, from its
 * own set-up (run's p and g, media: the scenario's plan, grid and medium map) and run:
 * /scenarios/NNN/dose laid out as /dose, /scenarios/NNN/per_spot as
 * /dose/per_spot. After output_write_setup. */
int output_write_scenario(output *o, int index, const output_run *run, const medium_map *media,
                          smx_error *err);
/* /scenarios/range_error_percent and shift_mm (row 0 the nominal) and
 * /scenarios/000, hard links to the nominal's /dose and /dose/per_spot; after
 * output_write_result. Nothing for a plan without scenarios. */
int output_write_scenario_index(output *o, const plan *p, smx_error *err);
/* Closes, renames into place and writes the XDMF sidecar "<final minus .h5>.xdmf". */
int output_commit(output *o, smx_error *err);
void output_abort(output *o, int keep_partial);

/* Path of the temporary file (for tests and messages). */
const char *output_temp_path(const output *o);

#endif
