/* The processes of a job started by mpirun or srun (an MPI build, `make
 * MPI=1`; docs/mpi.md): which one this is, agreeing on failure, and bringing
 * the per-spot rows and each rank's facts to rank 0, which writes the one
 * result file. parallel_mpi.c implements it with MPI; parallel_none.c (a
 * build without MPI) is one process, for which every call is trivial.
 *
 * Every collective call (par_agree, par_gather_*) must be reached by every
 * rank, failed or not: a rank that fails carries its error to the next one. */
#ifndef SMX_PARALLEL_H
#define SMX_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "input/plan.h"
#include "io/provenance.h"
#include "physics/grid.h"
#include "physics/tables.h"
#include "transport/run.h"
#include "transport/simulate.h"

typedef struct par_job {
    int rank, size; /* this process and the job's: 0 and 1 without MPI */
    int local_rank, local_size; /* among the job's processes on this host */
    /* The cores this process may run on and the host's online cores, where
     * the job was started by an MPI launcher (0: not known, no MPI). */
    int cores_allowed, cores_host;
    char host[64];
} par_job;

/* Starts MPI (an MPI build) and fills job. */
int par_init(par_job *job, int *argc, char ***argv, smx_error *err);
/* Waits for every rank, then ends MPI; ranks that failed call it too, after
 * printing and cleaning up, so that no rank's exit cuts another's short
 * (mpirun ends the job when the first rank exits non-zero). */
void par_finalize(void);
/* An MPI call that fails (every call's code is checked) leaves the ranks
 * unable to agree: that rank prints the error, runs the cleanup set here
 * (rank 0 removes its temporary result file) and ends the job with
 * MPI_Abort (exit code 3). */
void par_set_cleanup(void (*fn)(void *ctx), void *ctx);
/* "Open MPI v4.1.4, package: ..." (the first line of MPI_Get_library_version),
 * or "none" in a build without MPI. Callable before par_init. */
void par_library_version(char *out, size_t cap);

/* Divides the per-spot rows of spots 0 .. n_spots - 1 into `size`
 * contiguous blocks in spot order, rank r's being [bound[r], bound[r + 1])
 * (bound has size + 1 entries). The blocks have about equal cost: cost[k] is
 * spot k's (its expected steps; NULL: 1 each), and rank 0's block also pays
 * `head` for the field's total dose that it runs first. The split is integer
 * arithmetic on the costs: every rank computes the same one. */
void par_spot_blocks(int n_spots, const int64_t *cost, int64_t head, int size, int *bound);

/* A field divided over the job (spot_block.c): every rank runs the same
 * flow up to the backend; rank 0 alone runs the field's total dose (and, in a
 * plan with robust scenarios, every scenario's total) and writes the file;
 * the per-spot rows are the work divided. A plan with scenarios
 * (scenarios.*, docs/planning.md) has a row per (scenario, spot) pair: the
 * work is the list of pairs, scenario-major (pair = scenario * n_spots +
 * spot), divided like a field's spots, so a rank may hold the tail of one
 * scenario and the head of the next. */
typedef struct par_field {
    int n_scenarios; /* 1 without scenarios */
    int n_spots; /* per-spot rows of each scenario; 0 without output.per_spot_dose */
    int64_t *cost; /* [n_scenarios * n_spots] each pair's expected steps (par_field_cost) */
    int64_t head; /* rank 0's totals: the sum of every scenario's expected steps */
    int *bound; /* [size + 1]: rank r's pairs are [bound[r], bound[r + 1]) */
    int *rows; /* [size + 1]: scratch, one scenario's rows per rank (par_gather_scenario) */
    sim_part part; /* this rank's share of scenario 0, the nominal */
    double threshold; /* the rows' output.per_spot_threshold, the plan's */
    char device[192]; /* this rank's backend and device, from its first run (par_field_ran) */
} par_field;

/* Sizes f for the plan p (the nominal) in a job: n_scenarios of
 * plan_scenario_count(p) and n_spots rows each, at p's threshold. Fails only when out of host
 * memory; par_field_free in any case. */
int par_field_init(const par_job *job, const plan *p, par_field *f, smx_error *err);
/* Scenario k's costs, from its own set-up (p, g, t: its densities change its
 * spots' ranges in steps): each spot's expected steps, and its total's
 * (about what its deepest spot costs) added to rank 0's head. Every rank
 * calls it for every scenario before par_divide_field. */
void par_field_cost(par_field *f, int scenario, const plan *p, const grid *g, const tables *t);
/* Divides the pairs in contiguous blocks of about equal cost in steps (rank
 * 0's block also pays the head); rank 0 logs the division. Every rank
 * computes the same one. */
int par_divide_field(const par_job *job, par_field *f, smx_error *err);
/* What `rank` runs of scenario k: the total (rank 0) and the spots of its
 * block that belong to k, for simulate_part. */
sim_part par_field_share(const par_field *f, int rank, int scenario);
/* Notes the device of a run this rank made (the first one with a backend
 * names it in /mpi: a rank may have no rows of the nominal). */
void par_field_ran(par_field *f, const run_result *r);
/* Collective, after a successful par_agree: par_gather_spots (the nominal's
 * rows) and par_gather_ranks for the field f. In a job of several ranks,
 * rank 0 then adds the phase "gather" to r, from t_wait (when its wait for
 * the other ranks began, before par_agree), and logs the wait and the rows'
 * transfer. */
int par_gather_field(const par_job *job, par_field *f, double t_wait, provenance *pv, run_result *r,
                     smx_error *err);
/* Collective, after a successful par_agree: scenario k's rows (r: this
 * rank's result of k, empty where it had no share) to rank 0's r, as
 * par_gather_spots does for the nominal's. */
int par_gather_scenario(const par_job *job, par_field *f, int scenario, run_result *r,
                        smx_error *err);
void par_field_free(par_field *f);

/* Collective. Every rank passes its own rc and err; returns 0 when all
 * succeeded, else the code of the lowest failing rank, with err (on every
 * rank) naming it: "rank R of N on HOST: message", then the ranks that
 * failed the same way and the others' different messages. */
int par_agree(const par_job *job, int rc, smx_error *err);

/* Prefixes err with this rank and host ("rank R of N on HOST: "), for an
 * error only this rank saw (rank 0 writing the file). No change with one process. */
void par_tag_error(const par_job *job, smx_error *err);

/* Collective, after a successful par_agree. Rank 0's r->per_spot becomes the
 * rows of every rank in rank order (= spot order: par_spot_blocks' bound, of
 * size + 1 entries), bound[size] rows in all, with `threshold`, and so does
 * r->per_spot_let (output.per_spot_let, the same rows' LETd x dose) where
 * any rank has it; the
 * conservation figures of every rank's steps (sum of violations, largest
 * relative errors) are added to rank 0's r. Other ranks' r are unchanged. */
int par_gather_spots(const par_job *job, const int *bound, double threshold, run_result *r,
                     smx_error *err);

/* One rank's block for /mpi: its rows of the nominal (spot_first, spot_count)
 * and its (scenario, spot) pairs (pair_first, pair_count; the same numbers
 * without scenarios). */
typedef struct par_block {
    int64_t spot_first, spot_count;
    int64_t pair_first, pair_count;
} par_block;

/* Collective. Rank 0's pv gets the job's size, MPI library and every rank's
 * host, device (text) and block. Nothing happens without MPI (pv->n_ranks stays 0). */
int par_gather_ranks(const par_job *job, const char *device, const par_block *block, provenance *pv,
                     smx_error *err);

#endif
