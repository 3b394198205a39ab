/* A field's spots over the ranks of a job: the deterministic division, each
 * rank's share, and the rows brought back to rank 0. */
#include "parallel/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int par_divide_field(const par_job *job, const plan *p, const grid *g, const tables *t,
                     par_field *f, smx_error *err)
{
    const int n_spots = p->per_spot_dose ? plan_spot_count(p) : 0;
    f->part = (sim_part){ job->rank == 0, 0, 0 };
    f->bound = malloc((size_t)(job->size + 1) * sizeof *f->bound);
    int64_t *cost = malloc((size_t)(n_spots > 0 ? n_spots : 1) * sizeof *cost);
    if (!f->bound || !cost) {
        free(cost);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory dividing %d spots over %d ranks",
                        n_spots, job->size);
    }
    for (int k = 0; k < n_spots; k++)
        cost[k] = simulate_spot_steps(p, g, t, plan_spot_at(p, k).energy_MeV);
    par_spot_blocks(n_spots, cost, simulate_expected_steps(p, g, t), job->size, f->bound);
    free(cost);
    f->part.spot_first = f->bound[job->rank];
    f->part.spot_count = f->bound[job->rank + 1] - f->part.spot_first;
    if (job->size == 1)
        return 0;
    if (n_spots == 0) {
        smx_info(
            "MPI: %d ranks; this field has no per-spot dose (output.per_spot_dose), so rank 0 runs it "
            "alone and the other ranks have nothing to do\n",
            job->size);
        return 0;
    }
    int least = n_spots, most = 0;
    for (int r = 0; r < job->size; r++) {
        int c = f->bound[r + 1] - f->bound[r];
        least = c < least ? c : least;
        most = c > most ? c : most;
    }
    smx_info(
        "MPI: %d ranks; rank 0 runs the field's total dose; the %d per-spot rows are divided in contiguous "
        "blocks of about equal steps, %d to %d spots (rank 0: %d)\n",
        job->size, n_spots, least, most, f->bound[1]);
    return 0;
}

void par_field_free(par_field *f)
{
    free(f->bound);
    f->bound = NULL;
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

int par_gather_field(const par_job *job, const par_field *f, double threshold, double t_wait,
                     provenance *pv, run_result *r, smx_error *err)
{
    char device[192];
    describe_device(r, device, sizeof device);
    const double t_rows = now_s();
    int rc = par_gather_spots(job, f->bound, threshold, r, err);
    if (!rc)
        rc = par_gather_ranks(job, device, f->part.spot_first, f->part.spot_count, pv, err);
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
