/* A run of a plan, from the command line to the renamed result file
 * (docs/architecture.md "The flow of a run"), in one process or as one rank
 * of an MPI job: the program's whole work besides its options. */
#ifndef SMX_RUN_PLAN_H
#define SMX_RUN_PLAN_H

#include <stdio.h>

#include "base/error.h"
#include "input/cli.h"
#include "parallel/parallel.h"

/* Runs (or with --dry-run checks) the plan c names; argv is recorded in the
 * result's provenance. Prints the error (rank 0) and returns the exit code. */
int run_plan(const cli *c, const par_job *job, int argc, char **argv);

/* "smx2d-sim: error: MSG" on stderr; returns err's exit code. */
int run_print_error(const smx_error *err);

#endif
