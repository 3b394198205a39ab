/* A field's spots (a robust plan's (scenario, spot) pairs) over the ranks of
 * a job: the deterministic division, each rank's share, and the rows brought
 * back to rank 0. */
#include "parallel/parallel.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input/plan_access.h"
#include "transport/device_query.h"

void par_spot_blocks(int n_spots, const int64_t *cost, int64_t head, int size, int *bound)
{
    if (n_spots < 0)
        n_spots = 0;
    if (head < 0)
        head = 0;
    int64_t total = head;
    for (int k = 0; k < n_spots; k++)
        total += cost ? (cost[k] > 0 ? cost[k] : 1) : 1;
    /* Boundary r: where the running cost (the head, then the spots in order)
     * comes closest to r / size of the total, the earlier spot on a tie. */
    bound[0] = 0;
    int k = 0;
    int64_t before = head; /* cost of the head and the spots before k */
    for (int r = 1; r < size; r++) {
        const int64_t target =
            total / size * r + total % size * r / size; /* total * r / size, no overflow */
        while (k < n_spots) {
            const int64_t c = cost ? (cost[k] > 0 ? cost[k] : 1) : 1;
            if (before + c > target && (before + c - target) >= (target - before))
                break;
            before += c;
            k++;
        }
        bound[r] = k;
    }
    if (size > 0)
        bound[size] = n_spots;
}

int par_field_init(const par_job *job, const plan *p, par_field *f, smx_error *err)
{
    memset(f, 0, sizeof *f);
    f->n_scenarios = plan_scenario_count(p);
    f->n_spots = p->per_spot_dose ? plan_spot_count(p) : 0;
    f->part = (sim_part){ job->rank == 0, 0, 0, NULL };
    f->threshold = p->per_spot_threshold;
    const int64_t pairs = (int64_t)f->n_scenarios * f->n_spots;
    if (pairs > INT_MAX)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%d scenarios of %d per-spot rows: %lld rows in all, more than %d",
                        f->n_scenarios, f->n_spots, (long long)pairs, INT_MAX);
    f->bound = malloc((size_t)(job->size + 1) * sizeof *f->bound);
    f->rows = malloc((size_t)(job->size + 1) * sizeof *f->rows);
    f->cost = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *f->cost);
    if (!f->bound || !f->rows || !f->cost)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "out of host memory dividing %lld rows over %d ranks", (long long)pairs,
                        job->size);
    for (int64_t k = 0; k < pairs; k++)
        f->cost[k] = 1;
    return 0;
}

void par_field_cost(par_field *f, int scenario, const plan *p, const grid *g, const tables *t)
{
    if (scenario < 0 || scenario >= f->n_scenarios || !f->cost)
        return;
    int64_t *cost = f->cost + (int64_t)scenario * f->n_spots;
    const int n = plan_spot_count(p) < f->n_spots ? plan_spot_count(p) : f->n_spots;
    for (int k = 0; k < n; k++)
        cost[k] = simulate_spot_steps(p, g, t, plan_spot_at(p, k).energy_MeV);
    f->head += simulate_expected_steps(p, g, t);
}

/* bound[] over the pairs clipped to scenario k's: each rank's rows of k, in
 * the scenario's own spot numbers (contiguous, in rank order, covering 0 ..
 * n_spots - 1). */
static void scenario_rows(const par_field *f, int size, int scenario, int *rows)
{
    const int64_t lo = (int64_t)scenario * f->n_spots;
    for (int r = 0; r <= size; r++) {
        int64_t b = f->bound[r] - lo;
        rows[r] = (int)(b < 0 ? 0 : b > f->n_spots ? f->n_spots : b);
    }
}

sim_part par_field_share(const par_field *f, int rank, int scenario)
{
    /* scenario_rows' clipping: a rank without rows of k starts where they end
     * before it, so that the blocks stay contiguous in /mpi. */
    const int64_t lo = (int64_t)scenario * f->n_spots;
    int64_t a = f->bound[rank] - lo, b = f->bound[rank + 1] - lo;
    a = a < 0 ? 0 : a > f->n_spots ? f->n_spots : a;
    b = b < 0 ? 0 : b > f->n_spots ? f->n_spots : b;
    return (sim_part){ rank == 0, (int)a, (int)(b - a), NULL };
}

int par_divide_field(const par_job *job, par_field *f, smx_error *err)
{
    (void)err;
    const int pairs = f->n_scenarios * f->n_spots;
    par_spot_blocks(pairs, f->cost, f->head, job->size, f->bound);
    f->part = par_field_share(f, job->rank, 0);
    if (job->size == 1)
        return 0;
    if (pairs == 0) {
        smx_info(
            "MPI: %d ranks; this field has no per-spot dose (output.per_spot_dose), so rank 0 runs it "
            "alone and the other ranks have nothing to do\n",
            job->size);
        return 0;
    }
    int least = pairs, most = 0;
    for (int r = 0; r < job->size; r++) {
        int c = f->bound[r + 1] - f->bound[r];
        least = c < least ? c : least;
        most = c > most ? c : most;
    }
    if (f->n_scenarios == 1)
        smx_info(
            "MPI: %d ranks; rank 0 runs the field's total dose; the %d per-spot rows are divided in "
            "contiguous blocks of about equal steps, %d to %d spots (rank 0: %d)\n",
            job->size, pairs, least, most, f->bound[1]);
    else
        smx_info(
            "MPI: %d ranks; rank 0 runs the total dose of each of the %d scenarios; their %d per-spot "
            "rows (%d spots each) are divided in contiguous blocks of about equal steps in scenario "
            "order, %d to %d rows (rank 0: %d)\n",
            job->size, f->n_scenarios, pairs, f->n_spots, least, most, f->bound[1]);
    return 0;
}

void par_field_free(par_field *f)
{
    free(f->bound);
    free(f->rows);
    free(f->cost);
    f->bound = f->rows = NULL;
    f->cost = NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* What /mpi records as this rank's device. */
static void describe_device(const run_result *r, char *out, size_t cap)
{
    if (!r->backend_name[0])
        snprintf(out, cap, "none (no per-spot rows to compute)");
    else if (strcmp(r->backend_name, "cuda") == 0)
        snprintf(out, cap, "cuda device %d: %.150s", gpu_selected(), r->device_name);
    else
        snprintf(out, cap, "%.24s: %.150s", r->backend_name, r->device_name);
}

void par_field_ran(par_field *f, const run_result *r)
{
    if (!f->device[0] && r->backend_name[0])
        describe_device(r, f->device, sizeof f->device);
}

int par_gather_field(const par_job *job, par_field *f, double t_wait, provenance *pv, run_result *r,
                     smx_error *err)
{
    char device[192];
    par_field_ran(f, r);
    if (f->device[0])
        snprintf(device, sizeof device, "%s", f->device);
    else
        describe_device(r, device, sizeof device);
    const double t_rows = now_s();
    scenario_rows(f, job->size, 0, f->rows);
    int rc = par_gather_spots(job, f->rows, f->threshold, r, err);
    const par_block block = { f->part.spot_first, f->part.spot_count, f->bound[job->rank],
                              f->bound[job->rank + 1] - f->bound[job->rank] };
    if (!rc)
        rc = par_gather_ranks(job, device, &block, pv, err);
    if (!rc && pv->n_ranks > 0) {
        pv->mpi_scenarios = f->n_scenarios;
        pv->mpi_spots = f->n_spots;
    }
    if (rc || job->rank != 0 || job->size == 1)
        return rc;
    const double t_end = now_s();
    run_result_phase(r, "gather", t_end - t_wait);
    const spot_dose *sd = &r->per_spot;
    const double mb = sd->indptr
                          ? 1e-6 * ((double)sd->nnz * (sizeof *sd->values + sizeof *sd->indices) +
                                    (double)sd->n_spots * (sizeof *sd->indptr + 2 * sizeof(double)))
                          : 0.0;
    smx_info(
        "MPI: waited %.3f s for the other ranks, then gathered the %d ranks' rows (%.1f MB in all) in "
        "%.3f s\n",
        t_rows - t_wait, job->size, mb, t_end - t_rows);
    return 0;
}

int par_gather_scenario(const par_job *job, par_field *f, int scenario, run_result *r,
                        smx_error *err)
{
    scenario_rows(f, job->size, scenario, f->rows);
    return par_gather_spots(job, f->rows, f->threshold, r, err);
}
