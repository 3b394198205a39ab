/* The passes a run makes over a robust plan's scenarios 1.. (run/scenario.h
 * builds each from the loaded set-up): their check before any work, their
 * transport (in one process, or this rank's share in an MPI job), and in an
 * MPI job the gather and writing of each after the agreement. */
#ifndef SMX_RUN_SCENARIO_RUNS_H
#define SMX_RUN_SCENARIO_RUNS_H

#include "io/output.h"
#include "parallel/parallel.h"
#include "report/analysis.h"
#include "run/scenario.h"

/* What the scenarios leave for the end: each one's figures (fig[0] the
 * nominal's, filled by the caller) and their conservation. */
typedef struct scenario_runs {
    dose_figures *fig; /* [plan_scenario_count] */
    run_result *rs; /* [plan_scenario_count] this rank's share of each, kept until the
                       gather when an MPI job divides the scenarios; NULL otherwise */
    int violations; /* steps that broke conservation, over every scenario 1.. */
    double setup_s; /* this process's scenarios' set-up: each one's build from the loaded
                       set-up, lookup tables and backend set-up (the phases "tables" and
                       "setup" of its run), beyond its transport */
    double max_weight_rel_err, max_energy_rel_err;
} scenario_runs;

/* Allocates sr for the plan of s; divided: results kept until the gather. */
int scenario_runs_init(scenario_runs *sr, const plan *p, int divided, smx_error *err);
void scenario_runs_free(scenario_runs *sr, const plan *p);

/* Every scenario built as its run will build it, so that a plan the reader
 * and the dry run accept does not fail after hours of other scenarios; each
 * one's cost goes to f (par_field_cost), on which an MPI job's division of
 * the (scenario, spot) pairs rests; dry: also the tables and sources
 * (simulate_check). */
int scenarios_check(const run_setup *s, par_field *f, int dry, smx_error *err);

/* Where a run's scenarios are run and go: this process in its job, the
 * field's division over the job, the open result (NULL: none yet), what
 * the scenarios leave for the end and the count of the (scenario, spot)
 * pairs their per-spot rows add to (NULL: no per-spot rows). */
typedef struct scenario_job {
    const par_job *job;
    par_field *f;
    output *out;
    scenario_runs *sr;
    spot_progress *progress;
} scenario_job;

/* Begins the count of this process's (scenario, spot) pairs in a plan with
 * scenarios and per-spot rows (its block of f's division: all of them in one
 * process) at now and returns it; NULL, with nothing begun, for a plan
 * without either. The scenarios it runs: every one on rank 0 (their totals),
 * those its block reaches on another rank. */
spot_progress *scenarios_progress_begin(spot_progress *sp, const par_job *job, const par_field *f,
                                        double now);

/* This process's share of every scenario on s's backend: in one process the
 * whole of each (total and rows), written into the open result j->out as
 * soon as it is done; in a divided MPI job (j->sr->rs) this rank's share,
 * kept for scenarios_write. */
int scenarios_run(const run_setup *s, const scenario_job *j, smx_error *err);

/* After the agreement, in a divided MPI job: scenario by scenario, every
 * rank's rows to rank 0, which writes it as one process does; each ends with
 * an agreement (*agreed: err came from it), so that rank 0's failure to
 * write one stops every rank before the next gather. */
int scenarios_write(const run_setup *s, const scenario_job *j, smx_error *err, int *agreed);

#endif
